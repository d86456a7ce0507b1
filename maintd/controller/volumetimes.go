package controller

import (
	"slices"
	"sync"
	"time"

	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/types"
)

// volumeTimes learns how long each CSI driver takes to attach and to detach
// a volume, from the VolumeAttachments maintd watches: an attach from the
// moment a VolumeAttachment is first seen to the moment it is seen
// attached, a detach from the moment its deletion is first seen to the
// moment it is gone. Only what this process saw from its start counts (a
// VolumeAttachment listed already attached, or already being deleted, says
// nothing of how long that took). The forecast times a volume's move with
// them instead of its assumed defaults.
type volumeTimes struct {
	mu       sync.Mutex
	seen     map[types.UID]time.Time // created, not yet attached
	deleting map[types.UID]time.Time // deletion seen, not yet gone
	attach   map[string][]time.Duration
	detach   map[string][]time.Duration
}

// volumeSamples is how many of each driver's last attaches and detaches are
// kept: their median is the driver's time.
const volumeSamples = 15

func newVolumeTimes() *volumeTimes {
	return &volumeTimes{seen: map[types.UID]time.Time{}, deleting: map[types.UID]time.Time{},
		attach: map[string][]time.Duration{}, detach: map[string][]time.Duration{}}
}

// observe takes an event of a VolumeAttachment (old nil for an add, va nil
// for a delete) seen at now.
func (v *volumeTimes) observe(old, va *storagev1.VolumeAttachment, now time.Time) {
	v.mu.Lock()
	defer v.mu.Unlock()
	switch {
	case va == nil && old != nil: // gone
		if at, ok := v.deleting[old.UID]; ok {
			v.detach[old.Spec.Attacher] = sample(v.detach[old.Spec.Attacher], now.Sub(at))
		}
		delete(v.deleting, old.UID)
		delete(v.seen, old.UID)
	case va == nil:
	case old == nil && !va.Status.Attached && va.DeletionTimestamp == nil:
		v.seen[va.UID] = now
	case old != nil && !old.Status.Attached && va.Status.Attached:
		if at, ok := v.seen[va.UID]; ok {
			v.attach[va.Spec.Attacher] = sample(v.attach[va.Spec.Attacher], now.Sub(at))
		}
		delete(v.seen, va.UID)
	}
	if old != nil && va != nil && old.DeletionTimestamp == nil && va.DeletionTimestamp != nil {
		v.deleting[va.UID] = now
		delete(v.seen, va.UID)
	}
}

// sample appends d to the samples s, keeping the last volumeSamples.
func sample(s []time.Duration, d time.Duration) []time.Duration {
	s = append(s, d)
	return s[max(0, len(s)-volumeSamples):]
}

// of is the slowest of the drivers' median detach and attach times: zero
// for a time none of them was seen taking (the forecast then assumes its
// default, and says so).
func (v *volumeTimes) of(drivers []string) (detach, attach time.Duration) {
	if v == nil {
		return 0, 0
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, d := range drivers {
		detach = max(detach, median(v.detach[d]))
		attach = max(attach, median(v.attach[d]))
	}
	return detach, attach
}

func median(s []time.Duration) time.Duration {
	if len(s) == 0 {
		return 0
	}
	sorted := slices.Sorted(slices.Values(s))
	return sorted[len(sorted)/2]
}
