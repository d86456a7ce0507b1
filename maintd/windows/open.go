package windows

import (
	"slices"
	"time"
)

// chunk is the stretch of time computed at once.
const chunk = 24 * time.Hour

// maxCalls bounds the work of one query (Open, Next, Fits, Continue, or
// one window of Plan) in schedule look-ups, about 0.2 s where a schedule
// fires every minute: a query that would need more finds no window (Open:
// closed; Next: none), or a window shorter than it is (the end where the
// work stopped). Only specs that keep closed for weeks windows that come
// every minute need so many.
const maxCalls = 250_000

// scan is one query's search, with what is left of its work.
type scan struct {
	*Windows
	left int
}

func (w *Windows) scan() *scan { return &scan{Windows: w, left: maxCalls} }

// norm drops the monotonic reading (windows are wall-clock facts) and puts
// t in the windows' zone.
func (w *Windows) norm(t time.Time) time.Time { return t.Round(0).In(w.loc) }

// Open reports whether t is in an open window (in an allow window, or
// anywhere if there are none; in no deny window; on no excluded date), and
// when that open time ends: the first instant after t that is closed, or
// MaxSpan after t at most. A nil *Windows is always open, with a zero end.
func (w *Windows) Open(t time.Time) (open bool, end time.Time) {
	if w == nil {
		return true, time.Time{}
	}
	t = w.norm(t)
	iv, ok := w.scan().first(t, t.Add(time.Nanosecond))
	if !ok || iv.Start.After(t) {
		return false, time.Time{}
	}
	return true, iv.End
}

// Next is the next window that opens after t (strictly): after the one t
// is in, if it is open. False if none opens within Lookahead (or for a nil
// *Windows).
func (w *Windows) Next(t time.Time) (Interval, bool) {
	if w == nil {
		return Interval{}, false
	}
	t = w.norm(t)
	from := t
	if open, end := w.Open(t); open {
		from = end
	}
	return w.scan().first(from, t.Add(Lookahead))
}

// Fits reports whether work on a node whose forecast is p90 may start at
// t: t is open and p90 plus the margin fits in the time left, t+need <=
// end. A nil *Windows always fits.
func (w *Windows) Fits(t time.Time, p90 time.Duration) bool {
	if w == nil {
		return true
	}
	open, end := w.Open(t)
	return open && !w.norm(t).Add(w.Need(p90)).After(end)
}

// Continue reports whether work on a node begun at started may go on at t,
// and until when: while a window is open, to its end plus MaxOverrun; once
// the last window the node was in progress in (the one it began in, or a
// later one it went on in) has closed, for MaxOverrun past that end. With
// MaxOverrun 0 the node pauses at the window's end, and goes on in the next
// window. A nil *Windows always goes on, with a zero time.
func (w *Windows) Continue(t, started time.Time) (bool, time.Time) {
	if w == nil {
		return true, time.Time{}
	}
	t, started = w.norm(t), w.norm(started)
	if open, end := w.Open(t); open {
		return true, end.Add(w.maxOverrun)
	}
	if w.maxOverrun == 0 {
		return false, time.Time{}
	}
	from := t.Add(-w.maxOverrun)
	if started.After(from) {
		from = started
	}
	var last time.Time
	sc := w.scan()
	for a := from; a.Before(t); {
		iv, ok := sc.first(a, t)
		if !ok {
			break
		}
		last, a = iv.End, iv.End
	}
	if last.IsZero() {
		return false, time.Time{}
	}
	until := last.Add(w.maxOverrun)
	return t.Before(until), until
}

// first is the first open interval that reaches past from, its start
// clipped to from, its end where it closes or MaxSpan after its start;
// false if none starts before limit.
func (w *scan) first(from, limit time.Time) (Interval, bool) {
	for a := from; a.Before(limit); {
		b := a.Add(chunk)
		got := w.open(a, b)
		if w.left <= 0 {
			return Interval{}, false
		}
		if len(got) == 0 {
			a = w.skip(b, limit)
			continue
		}
		iv := got[0]
		if !iv.Start.Before(limit) {
			return Interval{}, false
		}
		for iv.End.Equal(b) && b.Before(iv.Start.Add(MaxSpan)) {
			a, b = b, b.Add(chunk)
			more := w.open(a, b)
			if w.left <= 0 || len(more) == 0 || !more[0].Start.Equal(a) {
				break
			}
			iv.End = more[0].End
		}
		if cap := iv.Start.Add(MaxSpan); iv.End.After(cap) {
			iv.End = cap
		}
		return iv, true
	}
	return Interval{}, false
}

// skip is where to look next after [.., b) had no open time: the first
// allow window that reaches past b (b itself if no allow entry, or one
// covers b), limit if none.
func (w *scan) skip(b, limit time.Time) time.Time {
	if len(w.allow) == 0 {
		return b
	}
	next := limit
	for _, e := range w.allow {
		if !w.latest(e, b).IsZero() {
			return b
		}
		if s := w.next(e, b); !s.IsZero() && s.Before(next) {
			next = s
		}
	}
	return next
}

// open is the open time in [a, b): allow minus deny minus exclude, sorted,
// merged.
func (w *scan) open(a, b time.Time) []Interval {
	var closed []Interval
	for _, e := range w.deny {
		closed = append(closed, w.spans(e, a, b)...)
	}
	for _, d := range w.exclude {
		if d.Start.Before(b) && d.End.After(a) {
			closed = append(closed, clip(d, a, b))
		}
	}
	closed = merge(closed)
	if len(closed) == 1 && !closed[0].Start.After(a) && !closed[0].End.Before(b) {
		return nil
	}
	var allow []Interval
	if len(w.allow) == 0 {
		allow = []Interval{{a, b}}
	}
	for _, e := range w.allow {
		allow = append(allow, w.spans(e, a, b)...)
	}
	return subtract(merge(allow), closed)
}

// next is e's first start after t (strictly), in the windows' zone, a
// start at a wall-clock time that repeats (the second 01:30 when the
// clocks go back) skipped; zero if none in 5 years.
func (w *scan) next(e entry, t time.Time) time.Time {
	for w.left > 0 {
		w.left--
		s := e.sched.Next(t)
		if s.IsZero() {
			return s
		}
		s = s.In(e.sched.Location)
		if !repeated(s) {
			return s
		}
		t = s
	}
	return time.Time{}
}

// repeated reports whether the wall-clock time of s was already shown
// before it: s is within the first hour (the offset's change) after the
// clocks went back.
func repeated(s time.Time) bool {
	start, _ := s.ZoneBounds()
	if start.IsZero() {
		return false
	}
	_, off := s.Zone()
	_, before := start.Add(-time.Nanosecond).Zone()
	back := time.Duration(before-off) * time.Second
	return back > 0 && s.Sub(start) < back
}

// latest is e's latest start s with x-d < s <= x (its window covers x),
// zero if none.
func (w *scan) latest(e entry, x time.Time) time.Time {
	lo := x.Add(-e.d)
	s := w.next(e, lo)
	if s.IsZero() || s.After(x) {
		return time.Time{}
	}
	if n := w.next(e, s); n.IsZero() || n.After(x) {
		return s
	}
	// next(lo) <= x < next(x), and next is monotone: narrow lo to the
	// second before the latest start (starts are whole minutes).
	hi := x
	for hi.Sub(lo) > time.Second {
		mid := lo.Add(hi.Sub(lo) / 2)
		if n := w.next(e, mid); !n.IsZero() && !n.After(x) {
			lo, s = mid, n
		} else {
			hi = mid
		}
	}
	return s
}

// spans are e's windows within [a, b), those that overlap or touch merged.
func (w *scan) spans(e entry, a, b time.Time) []Interval {
	var out []Interval
	s := w.latest(e, a)
	if s.IsZero() {
		s = w.next(e, a)
	}
	for !s.IsZero() && s.Before(b) {
		first, end := s, s.Add(e.d)
		for end.Before(b) {
			if n := w.next(e, s); n.IsZero() || n.After(end) {
				break
			}
			s = w.latest(e, end)
			end = s.Add(e.d)
		}
		out = append(out, clip(Interval{first, end}, a, b))
		if !end.Before(b) {
			break
		}
		s = w.next(e, end)
	}
	return out
}

func clip(iv Interval, a, b time.Time) Interval {
	if iv.Start.Before(a) {
		iv.Start = a
	}
	if iv.End.After(b) {
		iv.End = b
	}
	return iv
}

// merge sorts ivs and joins those that overlap or touch.
func merge(ivs []Interval) []Interval {
	slices.SortFunc(ivs, func(x, y Interval) int { return x.Start.Compare(y.Start) })
	var out []Interval
	for _, iv := range ivs {
		if !iv.Start.Before(iv.End) {
			continue
		}
		if n := len(out); n > 0 && !iv.Start.After(out[n-1].End) {
			if iv.End.After(out[n-1].End) {
				out[n-1].End = iv.End
			}
			continue
		}
		out = append(out, iv)
	}
	return out
}

// subtract is allow minus closed, both sorted and merged.
func subtract(allow, closed []Interval) []Interval {
	var out []Interval
	for _, iv := range allow {
		for _, c := range closed {
			if !c.End.After(iv.Start) {
				continue
			}
			if !c.Start.Before(iv.End) {
				break
			}
			if c.Start.After(iv.Start) {
				out = append(out, Interval{iv.Start, c.Start})
			}
			iv.Start = c.End
			if !iv.Start.Before(iv.End) {
				break
			}
		}
		if iv.Start.Before(iv.End) {
			out = append(out, iv)
		}
	}
	return out
}
