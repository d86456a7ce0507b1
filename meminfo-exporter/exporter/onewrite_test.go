package exporter

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

func TestOneWrite(t *testing.T) {
	tests := map[string]struct {
		handler  http.HandlerFunc
		wantCode int
		wantBody string
	}{
		"body in several writes": {
			handler: func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "text/plain")
				for i := range 3000 {
					fmt.Fprintf(w, "line %d\n", i)
				}
			},
			wantCode: http.StatusOK,
			wantBody: func() string {
				var b strings.Builder
				for i := range 3000 {
					fmt.Fprintf(&b, "line %d\n", i)
				}
				return b.String()
			}(),
		},
		"status kept": {
			handler: func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(http.StatusServiceUnavailable)
				w.WriteHeader(http.StatusTeapot) // ignored, as net/http does
				io.WriteString(w, "down\n")
			},
			wantCode: http.StatusServiceUnavailable,
			wantBody: "down\n",
		},
		"empty": {
			handler:  func(http.ResponseWriter, *http.Request) {},
			wantCode: http.StatusOK,
		},
	}
	var b bodies
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(b.oneWrite(tc.handler))
			defer srv.Close()
			for range 2 { // the second request reuses a pooled buffer
				resp, err := http.Get(srv.URL)
				if err != nil {
					t.Fatal(err)
				}
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil {
					t.Fatal(err)
				}
				if resp.StatusCode != tc.wantCode {
					t.Errorf("status %d, want %d", resp.StatusCode, tc.wantCode)
				}
				if string(body) != tc.wantBody {
					t.Errorf("body %d bytes, want %d", len(body), len(tc.wantBody))
				}
				if got, want := resp.Header.Get("Content-Length"), strconv.Itoa(len(tc.wantBody)); got != want {
					t.Errorf("Content-Length %q, want %q", got, want)
				}
				if len(resp.TransferEncoding) != 0 {
					t.Errorf("Transfer-Encoding %v, want none", resp.TransferEncoding)
				}
			}
		})
	}
}
