// Package verify replays the API server's audit log against the plans'
// ledgers of forced deletes (status.forced): every pod maintd deleted under
// a MaintenanceOverride was written to a ledger first, with the UID it
// deleted, under an approval in force, by someone other than the plan's
// requester; every ledger entry that says deleted has its one DELETE; the
// override was created by the approver the entry names; and maintd wrote
// no node whose cordon another user held. Replay is a pure function of the
// events, the plans and maintd's user name.
package verify

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/sentinel-go/sentinel/plumbing/auditlog"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
)

// DefaultMaintdUser is the user maintd runs as when installed from
// maintd/deploy: its ServiceAccount maintd in maintd-system.
const DefaultMaintdUser = "system:serviceaccount:maintd-system:maintd"

// CreatedByAnnotation is the annotation naming a plan's requester
// (kubectl maint drain writes it; plan.CreatedByAnnotation).
const CreatedByAnnotation = "maintenance.sentinel.dev/created-by"

// Skew is how far a ledger entry's recordedAt (maintd's clock) may be after
// the DELETE's requestReceivedTimestamp (the API server's clock) and still
// count as written before it: on one machine the clocks agree, across
// machines they drift by milliseconds when synchronised; a second is
// generous for that and still far below the time between two deletes.
const Skew = time.Second

// Checks, as named in a Mismatch.
const (
	CheckDelete   = "delete"   // a DELETE by maintd and its ledger entry
	CheckEntry    = "entry"    // a ledger entry and its DELETEs
	CheckApprover = "approver" // the override's creator and the entry's approver
	CheckNode     = "node"     // maintd's node writes and other users' cordons
)

// Mismatch is one disagreement between the log and a ledger.
type Mismatch struct {
	Check string
	// Line of the audit event in the log (0 when the mismatch is a ledger
	// entry's alone).
	Line int
	// Plan and Entry (namespace/pod) of the ledger entry, when there is one.
	Plan, Entry string
	Message     string
}

func (m Mismatch) String() string {
	where := ""
	if m.Plan != "" {
		where = "plan " + m.Plan + " entry " + m.Entry
	}
	if m.Line > 0 {
		if where != "" {
			where += ", "
		}
		where += fmt.Sprintf("audit log line %d", m.Line)
	}
	return fmt.Sprintf("%s: %s: %s", m.Check, where, m.Message)
}

// Result is what Replay found: the mismatches, and what it checked.
type Result struct {
	Mismatches []Mismatch
	// Entries are the ledger entries checked; Outside those written
	// outside the log's time span (before its first event or after its
	// last), whose DELETEs the log cannot show.
	Entries, Outside int
	// Deletes are maintd's successful pod DELETEs in the log.
	Deletes int
	// Creates are the overrides' creates found for entries.
	Creates int
	// NodeWrites are maintd's node writes checked; NodesUnchecked the
	// node writes (by anyone) whose body the log does not have (level
	// Metadata): after one, that node's cordon is unknown.
	NodeWrites, NodesUnchecked int
}

// entry is a ledger entry with its plan.
type entry struct {
	plan *api.MaintenancePlan
	e    *api.ForcedDelete
	// deletes are the successful DELETEs of its pod and UID by maintd.
	deletes []*auditlog.Event
}

func (en *entry) key() string { return en.e.Namespace + "/" + en.e.Pod }

func (en *entry) mismatch(check string, line int, format string, args ...any) Mismatch {
	return Mismatch{Check: check, Line: line, Plan: en.plan.Name, Entry: en.key(), Message: fmt.Sprintf(format, args...)}
}

// Replay checks events (an audit log, in its order) against the ledgers
// of plans; user is maintd's user name.
func Replay(events []auditlog.Event, plans []api.MaintenancePlan, user string) Result {
	var r Result
	byPod := map[string][]*entry{}
	var entries []*entry
	for i := range plans {
		p := &plans[i]
		for j := range p.Status.Forced {
			en := &entry{plan: p, e: &p.Status.Forced[j]}
			byPod[en.key()] = append(byPod[en.key()], en)
			entries = append(entries, en)
		}
	}
	var first, last time.Time
	for i := range events {
		if t := events[i].Received; !t.IsZero() {
			if first.IsZero() || t.Before(first) {
				first = t
			}
			if t.After(last) {
				last = t
			}
		}
	}
	creates := map[string][]*auditlog.Event{}
	for i := range events {
		ev := &events[i]
		switch {
		case podDelete(ev, user):
			r.Deletes++
			r.Mismatches = append(r.Mismatches, checkDelete(ev, byPod[ev.Namespace+"/"+ev.Name])...)
		case ev.Resource == "maintenanceoverrides" && ev.Verb == "create" && ev.Sub == "" && ev.Succeeded() && !ev.DryRun:
			creates[ev.Name] = append(creates[ev.Name], ev)
		}
	}
	for _, en := range entries {
		r.Entries++
		outside := first.IsZero() || en.e.RecordedAt.Time.Before(first.Add(-Skew)) || en.e.RecordedAt.Time.After(last.Add(Skew))
		if outside && len(en.deletes) == 0 {
			r.Outside++
		} else {
			r.Mismatches = append(r.Mismatches, checkEntry(en)...)
		}
		if cs := creates[en.e.Override]; len(cs) > 0 {
			r.Creates++
			c := cs[len(cs)-1]
			if c.User != en.e.ApprovedBy {
				r.Mismatches = append(r.Mismatches, en.mismatch(CheckApprover, c.Line,
					"override %s was created by %s, but the entry says it was approved by %s", en.e.Override, c.User, en.e.ApprovedBy))
			}
		}
	}
	nodes := checkNodes(events, user, &r)
	r.Mismatches = append(r.Mismatches, nodes...)
	slices.SortStableFunc(r.Mismatches, func(a, b Mismatch) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Plan, b.Plan), cmp.Compare(a.Entry, b.Entry))
	})
	return r
}

// podDelete reports whether ev is a DELETE of a pod by user that the API
// server accepted (200: deleting with a grace period or gone; 202: accepted,
// finalizers pending), not a dry run.
func podDelete(ev *auditlog.Event, user string) bool {
	return ev.Verb == "delete" && ev.Resource == "pods" && ev.Sub == "" && ev.User == user && ev.Complete() &&
		(ev.Code == 200 || ev.Code == 202) && !ev.DryRun
}

// checkDelete matches one DELETE by maintd with its ledger entry among
// those of its pod (cands), and checks the entry.
func checkDelete(ev *auditlog.Event, cands []*entry) []Mismatch {
	pod := ev.Namespace + "/" + ev.Name
	at := ev.Received
	miss := func(format string, args ...any) []Mismatch {
		return []Mismatch{{Check: CheckDelete, Line: ev.Line, Message: fmt.Sprintf("DELETE of pod %s at %s: ", pod, stamp(at)) + fmt.Sprintf(format, args...)}}
	}
	if len(cands) == 0 {
		return miss("no ledger entry for the pod")
	}
	if ev.UID == "" {
		return miss("sent without a UID precondition (the ledger has %s)", uids(cands))
	}
	var en *entry
	for _, c := range cands {
		if string(c.e.UID) == ev.UID {
			en = c
		}
	}
	if en == nil {
		return miss("its UID precondition %s is in no ledger entry of the pod (the ledger has %s)", ev.UID, uids(cands))
	}
	en.deletes = append(en.deletes, ev)
	var out []Mismatch
	add := func(format string, args ...any) {
		out = append(out, en.mismatch(CheckDelete, ev.Line, "DELETE at %s: %s", stamp(at), fmt.Sprintf(format, args...)))
	}
	e := en.e
	if e.RecordedAt.Time.After(at.Add(Skew)) {
		add("the entry was recorded at %s, after the DELETE", stamp(e.RecordedAt.Time))
	}
	if at.Before(e.ApprovedAt.Time) || !at.Before(e.ExpiresAt.Time) {
		add("override %s was not in force (approved %s, expires %s)", e.Override, stamp(e.ApprovedAt.Time), stamp(e.ExpiresAt.Time))
	}
	if by := en.plan.Annotations[CreatedByAnnotation]; by != "" && by == e.ApprovedBy {
		add("approved by %s, who requested the plan", by)
	}
	if g := ev.GracePeriodSeconds; g != nil && *g != e.GracePeriodSeconds {
		add("grace period %ds, the entry says %ds", *g, e.GracePeriodSeconds)
	}
	return out
}

// checkEntry counts an entry's DELETEs: one for outcome deleted, at most
// one otherwise.
func checkEntry(en *entry) []Mismatch {
	n := len(en.deletes)
	switch {
	case n == 0 && en.e.Outcome == api.ForcedDeleted:
		return []Mismatch{en.mismatch(CheckEntry, 0, "entry without its DELETE: outcome deleted, recorded %s, but no DELETE of uid %s by maintd in the log", stamp(en.e.RecordedAt.Time), en.e.UID)}
	case n > 1:
		lines := make([]string, n)
		for i, d := range en.deletes {
			lines[i] = fmt.Sprint(d.Line)
		}
		return []Mismatch{en.mismatch(CheckEntry, en.deletes[1].Line, "deleted twice: %d DELETEs of uid %s (audit log lines %v)", n, en.e.UID, lines)}
	}
	return nil
}

// checkNodes replays the cordons of each node: a node write by maintd
// while another user's cordon stands (the last write setting
// spec.unschedulable true was theirs, no uncordon since) is a mismatch.
// Writes whose body the log lacks are counted in r.NodesUnchecked; after
// one, the node's cordon is unknown until a write that says.
func checkNodes(events []auditlog.Event, user string, r *Result) []Mismatch {
	type held struct {
		by, owner string
		line      int
		known     bool
	}
	nodes := map[string]*held{}
	var out []Mismatch
	for i := range events {
		ev := &events[i]
		if ev.Resource != "nodes" || ev.Sub != "" || ev.Name == "" || (ev.Verb != "patch" && ev.Verb != "update") || !ev.Succeeded() || ev.DryRun {
			continue
		}
		h := nodes[ev.Name]
		if h == nil {
			h = &held{known: true}
			nodes[ev.Name] = h
		}
		c, ok := ev.Cordon()
		if !ok {
			r.NodesUnchecked++
		}
		if ev.User == user {
			if ok {
				r.NodeWrites++
			}
			if h.known && h.by != "" && h.by != user {
				owner := ""
				if h.owner != "" {
					owner = fmt.Sprintf(" (owner %s)", h.owner)
				}
				out = append(out, Mismatch{Check: CheckNode, Line: ev.Line, Message: fmt.Sprintf("node %s written by %s (%s) while cordoned by %s%s at audit log line %d",
					ev.Name, user, c, h.by, owner, h.line)})
			}
		}
		switch {
		case !ok:
			*h = held{}
		case c.Unschedulable != nil && *c.Unschedulable:
			*h = held{by: ev.User, line: ev.Line, known: true}
			if c.Owner != nil {
				h.owner = *c.Owner
			}
		case c.Unschedulable != nil:
			*h = held{known: true}
		}
	}
	return out
}

func uids(es []*entry) string {
	s := ""
	for i, e := range es {
		if i > 0 {
			s += ", "
		}
		s += "uid " + string(e.e.UID)
	}
	return s
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "(no time)"
	}
	return t.UTC().Format("2006-01-02T15:04:05.000000Z")
}
