package controller

import (
	"testing"
	"time"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestVolumeTimes: attaches and detaches are timed from what the watch
// showed, per driver, their median the driver's time; a VolumeAttachment
// listed attached or already being deleted times nothing.
func TestVolumeTimes(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	v := newVolumeTimes()
	va := func(uid, driver string, attached, deleting bool) *storagev1.VolumeAttachment {
		o := &storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid)}, Spec: storagev1.VolumeAttachmentSpec{Attacher: driver}}
		o.Status.Attached = attached
		if deleting {
			o.DeletionTimestamp = &metav1.Time{Time: t0}
		}
		return o
	}
	// Three volumes of driver d: attached 1 s, 2 s and 9 s after they were
	// made, detached 3 s, 4 s and 30 s after their deletion began.
	for i, d := range []struct{ attach, detach time.Duration }{{time.Second, 3 * time.Second}, {2 * time.Second, 4 * time.Second}, {9 * time.Second, 30 * time.Second}} {
		uid := string(rune('a' + i))
		at := t0.Add(time.Duration(i) * time.Minute)
		v.observe(nil, va(uid, "d", false, false), at)
		v.observe(va(uid, "d", false, false), va(uid, "d", true, false), at.Add(d.attach))
		v.observe(va(uid, "d", true, false), va(uid, "d", true, true), at.Add(10*time.Second))
		v.observe(va(uid, "d", true, true), nil, at.Add(10*time.Second+d.detach))
	}
	// Listed already attached, then deleted: its attach is not timed; one
	// listed being deleted: its detach is not.
	v.observe(nil, va("x", "d", true, false), t0)
	v.observe(va("x", "d", true, false), va("x", "d", true, true), t0.Add(time.Hour))
	v.observe(va("x", "d", true, true), nil, t0.Add(time.Hour+time.Second))
	v.observe(nil, va("y", "e", true, true), t0)
	v.observe(va("y", "e", true, true), nil, t0.Add(time.Hour))
	if detach, attach := v.of([]string{"d"}); detach != 4*time.Second || attach != 2*time.Second {
		t.Errorf("driver d: detach %v, attach %v; want the medians 4s and 2s", detach, attach)
	}
	if detach, attach := v.of([]string{"e"}); detach != 0 || attach != 0 {
		t.Errorf("driver e: detach %v, attach %v; want nothing timed", detach, attach)
	}
	// x's detach (1 s) was timed: it is the 4th of d's; the median of 3, 4,
	// 30 and 1 s is the upper middle, 4 s.
	var nilTimes *volumeTimes
	if detach, attach := nilTimes.of([]string{"d"}); detach != 0 || attach != 0 {
		t.Errorf("no times: %v, %v", detach, attach)
	}
}
