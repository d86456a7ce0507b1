package main

import (
	"testing"
	"time"
)

func TestQuantile(t *testing.T) {
	var sorted []time.Duration
	for i := 1; i <= 1000; i++ {
		sorted = append(sorted, time.Duration(i)*time.Millisecond)
	}
	tests := []struct {
		q    float64
		want time.Duration
	}{
		{0.5, 500 * time.Millisecond},
		{0.99, 990 * time.Millisecond},
		{0.999, 999 * time.Millisecond},
		{1, 1000 * time.Millisecond},
		{0, 1 * time.Millisecond},
	}
	for _, tc := range tests {
		if got := quantile(sorted, tc.q); got != tc.want {
			t.Errorf("quantile(%v) = %v, want %v", tc.q, got, tc.want)
		}
	}
	if got := quantile(nil, 0.99); got != 0 {
		t.Errorf("quantile(nil) = %v, want 0", got)
	}
}

func TestDue(t *testing.T) {
	start := time.Unix(1000, 0)
	if got, want := due(start, 200, 50), start.Add(250*time.Millisecond); !got.Equal(want) {
		t.Errorf("due(200/s, #50) = %v, want %v", got, want)
	}
}
