package drain

import (
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sentinel-go/sentinel/k8s-analyze/analyze"
	"github.com/sentinel-go/sentinel/k8s-cordon/cordon"
	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
)

var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

// world is a plan for node n1 that allows Deployment shop/web, whose two
// pods web-1 and web-2 run on n1 under PDB shop/web (1 disruption allowed).
type world struct {
	plan  *api.MaintenancePlan
	facts Facts
}

func newWorld() *world {
	p := &api.MaintenancePlan{
		ObjectMeta: metav1.ObjectMeta{Name: "p1", UID: "plan-uid", Generation: 1, CreationTimestamp: metav1.NewTime(t0)},
		Spec: api.MaintenancePlanSpec{NodeName: "n1", Reason: "kernel",
			Workloads: []api.WorkloadRef{{Kind: "Deployment", Namespace: "shop", Name: "web"}}},
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", UID: "node-uid", Annotations: map[string]string{}}}
	f := Facts{
		Node:      node,
		Analysis:  &analyze.Node{Name: "n1", UID: "node-uid", Risk: analyze.Low},
		Pods:      map[types.UID]Pod{},
		PDBs:      map[string]PDB{"shop/web": {ResourceVersion: "10", Generation: 1, ObservedGeneration: 1, DisruptionsAllowed: 1, CurrentHealthy: 8, DesiredHealthy: 7}},
		Workloads: map[api.WorkloadRef]types.UID{{Kind: "Deployment", Namespace: "shop", Name: "web"}: "dep-uid"},
		MaxNodes:  1,
	}
	w := &world{plan: p, facts: f}
	w.addPod("web-1", "pod-1")
	w.addPod("web-2", "pod-2")
	return w
}

func (w *world) addPod(name string, uid types.UID) *analyze.PodVerdict {
	w.facts.Pods[uid] = Pod{Namespace: "shop", Name: name}
	w.facts.Analysis.Pods = append(w.facts.Analysis.Pods, analyze.PodVerdict{
		Namespace: "shop", Name: name, UID: uid, Action: analyze.Evict,
		Owners: []analyze.OwnerHop{{Kind: "ReplicaSet", Name: "web-abc", UID: "rs-uid", Verified: true}, {Kind: "Deployment", Name: "web", UID: "dep-uid", Verified: true}},
		PDBs:   []analyze.Ref{{Namespace: "shop", Name: "web", UID: "pdb-uid"}},
		EvictableNow: analyze.Prediction{Allowed: true, Outcome: analyze.OutcomeAccepted, HTTPStatus: http.StatusCreated,
			Rule: analyze.RuleBudgetAvailable, PDB: "web", UsesBudget: true},
	})
	return &w.facts.Analysis.Pods[len(w.facts.Analysis.Pods)-1]
}

func (w *world) pod(name string) *analyze.PodVerdict {
	for i := range w.facts.Analysis.Pods {
		if w.facts.Analysis.Pods[i].Name == name {
			return &w.facts.Analysis.Pods[i]
		}
	}
	panic(name)
}

func (w *world) removePod(uid types.UID) {
	delete(w.facts.Pods, uid)
	pods := w.facts.Analysis.Pods[:0]
	for _, v := range w.facts.Analysis.Pods {
		if v.UID != uid {
			pods = append(pods, v)
		}
	}
	w.facts.Analysis.Pods = pods
}

// terminate marks a pod as being deleted: the analysis skips it.
func (w *world) terminate(uid types.UID) {
	p := w.facts.Pods[uid]
	p.Terminating = true
	w.facts.Pods[uid] = p
	for i := range w.facts.Analysis.Pods {
		if w.facts.Analysis.Pods[i].UID == uid {
			w.facts.Analysis.Pods[i].Action = analyze.Skip
		}
	}
}

func (w *world) cordoned() {
	w.facts.Node.Spec.Unschedulable = true
	w.facts.Node.Annotations[cordon.OwnerAnnotation] = Owner(w.plan)
}

// started puts the plan in phase, with the drain started at t0.
func (w *world) started(phase api.Phase, reason api.Reason) {
	w.plan.Status.Phase, w.plan.Status.Reason = phase, reason
	w.plan.Status.NodeUID = "node-uid"
	w.plan.Status.EvictionProgress = &api.EvictionProgress{
		PlanGeneration: 1, Scope: Scope(w.plan.Spec), NodeUID: "node-uid",
		WorkloadUIDs: []api.WorkloadUID{{WorkloadRef: api.WorkloadRef{Kind: "Deployment", Namespace: "shop", Name: "web"}, UID: "dep-uid"}},
		StartedAt:    timePtr(t0), Deadline: timePtr(t0.Add(time.Hour)),
	}
	if phase != api.Cordoning {
		w.cordoned()
	}
}

func (w *world) active(name string, uid types.UID, outcome string, rv string) {
	ep := w.plan.Status.EvictionProgress
	ep.ActivePods = append(ep.ActivePods, api.ActivePod{Namespace: "shop", Name: name, UID: uid, PDB: "web",
		PDBResourceVersion: rv, RequestedAt: metav1.NewTime(t0), Outcome: outcome})
}

// cooldown records an answer's cooldown (a refusal: Attempts 1).
func (w *world) cooldown(key string, reason api.Reason, until time.Time, rv string) {
	ep := w.plan.Status.EvictionProgress
	ep.Cooldowns = append(ep.Cooldowns, api.Cooldown{PDB: key, Reason: reason, NextActionAt: metav1.NewTime(until), ResourceVersion: rv, Message: "earlier refusal", Attempts: 1})
}

func (w *world) setPDB(key string, f func(*PDB)) {
	p := w.facts.PDBs[key]
	f(&p)
	w.facts.PDBs[key] = p
}

type want struct {
	phase   api.Phase
	reason  api.Reason
	action  Action
	targets []string // namespace/name
	message string   // a part of status.message
	requeue time.Duration
}

func TestDecide(t *testing.T) {
	now := t0.Add(time.Minute)
	tests := map[string]struct {
		setup func(w *world)
		want  want
	}{
		// Before any write.
		"new plan cordons": {
			setup: func(w *world) {},
			want:  want{phase: api.Cordoning, reason: api.CordonSubmitted, action: Cordon, message: "cordoning node n1"},
		},
		"new plan with no slot waits": {
			setup: func(w *world) { w.facts.Holders = 1 },
			want:  want{phase: api.Pending, reason: api.WaitingForSlot, message: "1 of 1 nodes are in maintenance"},
		},
		"two slots, one used: cordons": {
			setup: func(w *world) { w.facts.Holders, w.facts.MaxNodes = 1, 2 },
			want:  want{phase: api.Cordoning, reason: api.CordonSubmitted, action: Cordon},
		},
		"node not found": {
			setup: func(w *world) { w.facts.Node, w.facts.Analysis = nil, nil },
			want:  want{phase: api.Blocked, reason: api.NodeNotFound, message: "node n1 not found"},
		},
		"node cordoned by another owner: untouched": {
			setup: func(w *world) {
				w.facts.Node.Spec.Unschedulable = true
				w.facts.Node.Annotations[cordon.OwnerAnnotation] = "change-42"
			},
			want: want{phase: api.Blocked, reason: api.NodeOccupied, message: "cordoned by change-42"},
		},
		"node cordoned without owner: untouched": {
			setup: func(w *world) { w.facts.Node.Spec.Unschedulable = true },
			want:  want{phase: api.Blocked, reason: api.NodeOccupied, message: "without an owner annotation"},
		},
		"node claimed by another plan's annotation": {
			setup: func(w *world) { w.facts.Node.Annotations[cordon.OwnerAnnotation] = "maintenanceplan/other/uid-9" },
			want:  want{phase: api.Blocked, reason: api.NodeOccupied, message: "maintenanceplan/other/uid-9"},
		},
		"an older plan owns the node": {
			setup: func(w *world) { w.facts.Rivals = []string{"p0"} },
			want:  want{phase: api.Blocked, reason: api.NodeOccupied, message: "belongs to plan p0"},
		},
		"unknown pod blocks before the cordon": {
			setup: func(w *world) {
				v := w.addPod("batch-1", "pod-9")
				v.Owners = []analyze.OwnerHop{{Kind: "Job", Name: "nightly", UID: "job-uid", Verified: true}}
			},
			want: want{phase: api.Blocked, reason: api.UnknownPodsOnNode, message: "shop/batch-1 (Job nightly)"},
		},
		"bare pod is unknown even with allowAllWorkloads": {
			setup: func(w *world) {
				w.plan.Spec.Workloads, w.plan.Spec.AllowAllWorkloads = nil, true
				v := w.addPod("bare", "pod-9")
				v.Owners = nil
			},
			want: want{phase: api.Blocked, reason: api.UnknownPodsOnNode, message: "shop/bare (no owner)"},
		},
		"allowAllWorkloads allows owned pods": {
			setup: func(w *world) {
				w.plan.Spec.Workloads, w.plan.Spec.AllowAllWorkloads = nil, true
				v := w.addPod("batch-1", "pod-9")
				v.Owners = []analyze.OwnerHop{{Kind: "Job", Name: "nightly", UID: "job-uid", Verified: true}}
			},
			want: want{phase: api.Cordoning, reason: api.CordonSubmitted, action: Cordon},
		},
		"impostor owner is not the allowed workload": {
			setup: func(w *world) { w.pod("web-2").Owners[1].UID = "dep-old" },
			want:  want{phase: api.Blocked, reason: api.UnknownPodsOnNode, message: "shop/web-2"},
		},
		"unverified owner chain is unknown": {
			setup: func(w *world) { w.pod("web-2").Owners[0].Verified = false },
			want:  want{phase: api.Blocked, reason: api.UnknownPodsOnNode},
		},
		"daemonset and mirror pods stay": {
			setup: func(w *world) {
				v := w.addPod("ds-1", "pod-8")
				v.Action, v.Owners = analyze.Skip, []analyze.OwnerHop{{Kind: "DaemonSet", Name: "agent", UID: "ds", Verified: true}}
				v = w.addPod("mirror", "pod-7")
				v.Action, v.Owners = analyze.Skip, nil
			},
			want: want{phase: api.Cordoning, reason: api.CordonSubmitted, action: Cordon},
		},
		"high finding blocks before the cordon": {
			setup: func(w *world) { w.pod("web-1").Reasons = []analyze.Code{analyze.RWOReattach} },
			want:  want{phase: api.Blocked, reason: api.PreflightHighRisk, message: "shop/web-1: rwo-reattach"},
		},
		"accepted risk lets the plan go on": {
			setup: func(w *world) {
				w.pod("web-1").Reasons = []analyze.Code{analyze.RWOReattach}
				w.plan.Spec.AcceptedRisks = []string{"rwo-reattach"}
			},
			want: want{phase: api.Cordoning, reason: api.CordonSubmitted, action: Cordon},
		},
		"medium finding does not block": {
			setup: func(w *world) {
				w.pod("web-1").Reasons = []analyze.Code{analyze.EmptyDirDataLoss, analyze.PDBInsufficientForNode}
			},
			want: want{phase: api.Cordoning, reason: api.CordonSubmitted, action: Cordon},
		},
		"overlapping PDBs block naming both": {
			setup: func(w *world) {
				v := w.pod("web-1")
				v.Reasons = []analyze.Code{analyze.PDBOverlap}
				v.PDBs = append(v.PDBs, analyze.Ref{Namespace: "shop", Name: "all"})
			},
			want: want{phase: api.Blocked, reason: api.PDBOverlap, message: "shop/web, shop/all"},
		},
		"misconfigured PDB blocks with its numbers": {
			setup: func(w *world) {
				w.pod("web-1").Reasons = []analyze.Code{analyze.PDBZeroSpec}
				w.facts.Analysis.PDBs = []analyze.PDBBudget{{Namespace: "shop", Name: "web", DesiredHealthy: 2, CurrentHealthy: 2}}
			},
			want: want{phase: api.Blocked, reason: api.PDBMisconfigured, message: "PDB shop/web needs 2 healthy, has 2"},
		},
		"blocked plan goes on once the cause is gone": {
			setup: func(w *world) {
				w.plan.Status.Phase, w.plan.Status.Reason = api.Blocked, api.NodeOccupied
			},
			want: want{phase: api.Cordoning, reason: api.CordonSubmitted, action: Cordon},
		},
		"dry run evicts nothing for real": {
			setup: func(w *world) { w.plan.Spec.DryRun = true },
			want:  want{phase: api.Pending, reason: api.DryRunDone, action: DryRunEvict, targets: []string{"shop/web-1", "shop/web-2"}},
		},
		"dry run runs once per generation": {
			setup: func(w *world) {
				w.plan.Spec.DryRun = true
				w.plan.Status.Phase, w.plan.Status.Reason = api.Pending, api.DryRunDone
				w.plan.Status.ObservedGeneration = w.plan.Generation
				w.plan.Status.EvictionProgress = &api.EvictionProgress{}
			},
			want: want{phase: api.Pending, reason: api.DryRunDone},
		},
		"dry run runs again after a spec change": {
			setup: func(w *world) {
				w.plan.Spec.DryRun = true
				w.plan.Status.Phase, w.plan.Status.Reason = api.Pending, api.DryRunDone
				w.plan.Status.ObservedGeneration = w.plan.Generation - 1
				w.plan.Status.EvictionProgress = &api.EvictionProgress{}
			},
			want: want{phase: api.Pending, reason: api.DryRunDone, action: DryRunEvict, targets: []string{"shop/web-1", "shop/web-2"}},
		},
		"dry run still reports blocking findings": {
			setup: func(w *world) {
				w.plan.Spec.DryRun = true
				w.pod("web-1").Reasons = []analyze.Code{analyze.LocalPVPinned}
			},
			want: want{phase: api.Blocked, reason: api.PreflightHighRisk, message: "local-pv-pinned"},
		},

		// Cordon.
		"cordon submitted, not yet seen: send again": {
			setup: func(w *world) { w.started(api.Cordoning, api.CordonSubmitted) },
			want:  want{phase: api.Cordoning, reason: api.CordonSubmitted, action: Cordon},
		},
		"cordon observed": {
			setup: func(w *world) { w.started(api.Cordoning, api.CordonSubmitted); w.cordoned() },
			want:  want{phase: api.Cordoned, reason: api.CordonObserved, requeue: time.Nanosecond},
		},
		"someone else cordoned first": {
			setup: func(w *world) {
				w.started(api.Cordoning, api.CordonSubmitted)
				w.facts.Node.Spec.Unschedulable = true
				w.facts.Node.Annotations[cordon.OwnerAnnotation] = "change-42"
			},
			want: want{phase: api.Blocked, reason: api.NodeOccupied, message: "change-42"},
		},
		"uncordoned outside the plan: never cordon again": {
			setup: func(w *world) {
				w.started(api.Draining, api.EvictionAccepted)
				w.facts.Node.Spec.Unschedulable = false
			},
			want: want{phase: api.Blocked, reason: api.NodeUncordonedExternally, message: "does not cordon it again"},
		},
		"owner annotation removed outside the plan": {
			setup: func(w *world) {
				w.started(api.Draining, api.EvictionAccepted)
				delete(w.facts.Node.Annotations, cordon.OwnerAnnotation)
			},
			want: want{phase: api.Blocked, reason: api.NodeUncordonedExternally},
		},

		// Draining.
		"cordoned: evict what the budget allows": {
			setup: func(w *world) { w.started(api.Cordoned, api.CordonObserved) },
			want:  want{phase: api.Draining, reason: api.EvictionRequested, action: Evict, targets: []string{"shop/web-1"}},
		},
		"budget of 2: both pods at once": {
			setup: func(w *world) {
				w.started(api.Cordoned, api.CordonObserved)
				w.setPDB("shop/web", func(p *PDB) { p.DisruptionsAllowed = 2 })
			},
			want: want{phase: api.Draining, reason: api.EvictionRequested, action: Evict, targets: []string{"shop/web-1", "shop/web-2"}},
		},
		"maxConcurrentEvictions bounds the batch": {
			setup: func(w *world) {
				w.started(api.Cordoned, api.CordonObserved)
				w.plan.Spec.MaxConcurrentEvictions = 1
				w.setPDB("shop/web", func(p *PDB) { p.DisruptionsAllowed = 2 })
			},
			want: want{phase: api.Draining, reason: api.EvictionRequested, action: Evict, targets: []string{"shop/web-1"}},
		},
		"pods without a PDB go at once": {
			setup: func(w *world) {
				w.started(api.Cordoned, api.CordonObserved)
				for i := range w.facts.Analysis.Pods {
					w.facts.Analysis.Pods[i].EvictableNow = analyze.Prediction{Allowed: true, Outcome: analyze.OutcomeAccepted, Rule: analyze.RuleNoPDB}
				}
			},
			want: want{phase: api.Draining, reason: api.EvictionRequested, action: Evict, targets: []string{"shop/web-1", "shop/web-2"}},
		},
		"budget exhausted in the cache: no request, cooldown": {
			setup: func(w *world) {
				w.started(api.Cordoned, api.CordonObserved)
				w.setPDB("shop/web", func(p *PDB) { p.DisruptionsAllowed, p.CurrentHealthy = 0, 7 })
				for i := range w.facts.Analysis.Pods {
					w.facts.Analysis.Pods[i].EvictableNow = analyze.Prediction{Outcome: analyze.OutcomeBudgetExhausted, HTTPStatus: 429, PDB: "web",
						Rule: analyze.RuleBudgetExhausted, Message: "The disruption budget web needs 7 healthy pods and has 7 currently"}
				}
			},
			want: want{phase: api.CoolingDown, reason: api.BudgetExhausted, message: "needs 7 healthy pods and has 7", requeue: time.Minute},
		},
		"stale PDB in the cache: no request": {
			setup: func(w *world) {
				w.started(api.Cordoned, api.CordonObserved)
				w.setPDB("shop/web", func(p *PDB) { p.Generation = 2 })
				for i := range w.facts.Analysis.Pods {
					w.facts.Analysis.Pods[i].EvictableNow = analyze.Prediction{Outcome: analyze.OutcomePDBStale, HTTPStatus: 429, PDB: "web", Rule: analyze.RulePDBStale, Message: "still being processed"}
				}
			},
			want: want{phase: api.CoolingDown, reason: api.PDBStale, message: "still being processed"},
		},
		"accepted, pod still there: wait for it": {
			setup: func(w *world) {
				w.started(api.Draining, api.EvictionAccepted)
				w.active("web-1", "pod-1", Accepted, "10")
				w.terminate("pod-1")
			},
			want: want{phase: api.Draining, reason: api.WaitingForPodExit, message: "shop/web-1"},
		},
		"accepted, budget not yet showing it: no second eviction": {
			setup: func(w *world) {
				w.started(api.Draining, api.EvictionAccepted)
				w.active("web-1", "pod-1", Accepted, "10")
				w.plan.Status.EvictionProgress.ActivePods[0].RequestedAt = metav1.NewTime(now.Add(-10 * time.Second))
				w.removePod("pod-1")
			},
			want: want{phase: api.CoolingDown, reason: api.BudgetExhausted, message: "not yet counted"},
		},
		"gone for maxCooldown and its PDB never changed: it spent no budget": {
			setup: func(w *world) {
				w.started(api.Draining, api.EvictionAccepted)
				w.active("web-1", "pod-1", Accepted, "10")
				w.removePod("pod-1")
			},
			want: want{phase: api.Draining, reason: api.EvictionRequested, action: Evict, targets: []string{"shop/web-2"}},
		},
		"another plan's eviction under the PDB not yet shown: no request": {
			setup: func(w *world) {
				w.started(api.Cordoned, api.CordonObserved)
				w.facts.Pods["pod-9"] = Pod{Namespace: "shop", Name: "web-9"}
				w.facts.Others = []api.ActivePod{{Namespace: "shop", Name: "web-9", UID: "pod-9", PDB: "web", PDBResourceVersion: "10", Outcome: Requested}}
			},
			want: want{phase: api.CoolingDown, reason: api.BudgetExhausted, message: "1 evictions (of this plan and others) are not yet counted"},
		},
		"another plan's eviction shown in the PDB: evict": {
			setup: func(w *world) {
				w.started(api.Cordoned, api.CordonObserved)
				w.setPDB("shop/web", func(p *PDB) { p.ResourceVersion = "11" })
				w.facts.Others = []api.ActivePod{{Namespace: "shop", Name: "web-9", UID: "pod-9", PDB: "web", PDBResourceVersion: "10", Outcome: Accepted}}
			},
			want: want{phase: api.Draining, reason: api.EvictionRequested, action: Evict, targets: []string{"shop/web-1"}},
		},
		"accepted and gone, budget recovered: next pod": {
			setup: func(w *world) {
				w.started(api.Draining, api.WaitingForPodExit)
				w.active("web-1", "pod-1", Accepted, "10")
				w.removePod("pod-1")
				w.setPDB("shop/web", func(p *PDB) { p.ResourceVersion = "12" })
			},
			want: want{phase: api.Draining, reason: api.EvictionRequested, action: Evict, targets: []string{"shop/web-2"}},
		},
		"budget shows the eviction (disruptedPods): the pod may still exit": {
			setup: func(w *world) {
				w.started(api.Draining, api.EvictionAccepted)
				w.active("web-1", "pod-1", Accepted, "10")
				w.setPDB("shop/web", func(p *PDB) {
					p.ResourceVersion, p.DisruptionsAllowed, p.DisruptedPods = "11", 0, map[string]bool{"web-1": true}
				})
				for i := range w.facts.Analysis.Pods {
					w.facts.Analysis.Pods[i].EvictableNow = analyze.Prediction{Outcome: analyze.OutcomeBudgetExhausted, HTTPStatus: 429, PDB: "web", Rule: analyze.RuleBudgetExhausted, Message: "needs 7"}
				}
			},
			want: want{phase: api.Draining, reason: api.WaitingForPodExit, message: "shop/web-1"},
		},
		"cooldown for the PDB: no request even on an event": {
			setup: func(w *world) {
				w.started(api.CoolingDown, api.BudgetExhausted)
				w.cooldown("shop/web", api.BudgetExhausted, now.Add(30*time.Second), "10")
			},
			want: want{phase: api.CoolingDown, reason: api.BudgetExhausted, requeue: 30 * time.Second},
		},
		"cooldown ends early on a newer status that allows": {
			setup: func(w *world) {
				w.started(api.CoolingDown, api.BudgetExhausted)
				w.cooldown("shop/web", api.BudgetExhausted, now.Add(30*time.Second), "10")
				w.setPDB("shop/web", func(p *PDB) { p.ResourceVersion = "11" })
			},
			// The recovery and the eviction it allows in one write; the
			// history keeps the recovery (checked below).
			want: want{phase: api.Draining, reason: api.EvictionRequested, action: Evict, targets: []string{"shop/web-1"}, message: "evicting shop/web-1"},
		},
		"cooldown does not end on a stale generation": {
			setup: func(w *world) {
				w.started(api.CoolingDown, api.BudgetExhausted)
				w.cooldown("shop/web", api.BudgetExhausted, now.Add(30*time.Second), "10")
				w.setPDB("shop/web", func(p *PDB) { p.ResourceVersion, p.Generation = "11", 2 })
			},
			want: want{phase: api.CoolingDown, reason: api.BudgetExhausted},
		},
		"a predicted wait ends when the evictions it counted stop counting": {
			setup: func(w *world) {
				w.started(api.CoolingDown, api.BudgetExhausted)
				ep := w.plan.Status.EvictionProgress
				ep.Cooldowns = append(ep.Cooldowns, api.Cooldown{PDB: "shop/web", Reason: api.BudgetExhausted,
					NextActionAt: metav1.NewTime(now.Add(time.Minute)), ResourceVersion: "10", Message: "1 eviction not yet counted"})
			},
			want: want{phase: api.Draining, reason: api.EvictionRequested, action: Evict, targets: []string{"shop/web-1"}, message: "evicting shop/web-1"},
		},
		"another plan's throttle holds this plan's evictions": {
			setup: func(w *world) {
				w.started(api.Cordoned, api.CordonObserved)
				w.facts.ThrottledUntil = now.Add(2 * time.Second)
			},
			want: want{phase: api.CoolingDown, reason: api.EvictionThrottled, message: "throttled another plan's eviction", requeue: 2 * time.Second},
		},
		"a budget's cooldown whose wait ran out only re-checks": {
			setup: func(w *world) {
				w.started(api.CoolingDown, api.BudgetExhausted)
				w.cooldown("shop/web", api.BudgetExhausted, now, "10")
			},
			want: want{phase: api.CoolingDown, reason: api.BudgetExhausted, requeue: DefaultMaxCooldown},
		},
		"pdb-stale cooldown ends when the generation is observed": {
			setup: func(w *world) {
				w.started(api.CoolingDown, api.PDBStale)
				w.cooldown("shop/web", api.PDBStale, now.Add(5*time.Second), "10")
				w.setPDB("shop/web", func(p *PDB) { p.ResourceVersion, p.Generation, p.ObservedGeneration = "11", 2, 2 })
			},
			want: want{phase: api.Draining, reason: api.EvictionRequested, action: Evict, targets: []string{"shop/web-1"}, message: "evicting shop/web-1"},
		},
		"throttled: the whole API cools down": {
			setup: func(w *world) {
				w.started(api.CoolingDown, api.EvictionThrottled)
				w.cooldown(GlobalKey, api.EvictionThrottled, now.Add(3*time.Second), "")
			},
			want: want{phase: api.CoolingDown, reason: api.EvictionThrottled, requeue: 3 * time.Second},
		},
		"forbidden holds the plan blocked until the retry": {
			setup: func(w *world) {
				w.started(api.Blocked, api.EvictionForbidden)
				w.cooldown(GlobalKey, api.EvictionForbidden, now.Add(time.Minute), "")
			},
			want: want{phase: api.Blocked, reason: api.EvictionForbidden, message: "tries again"},
		},
		"requested before a restart, pod terminating: counted as accepted": {
			setup: func(w *world) {
				w.started(api.Draining, api.EvictionRequested)
				w.active("web-1", "pod-1", Requested, "10")
				w.terminate("pod-1")
			},
			want: want{phase: api.Draining, reason: api.WaitingForPodExit},
		},
		"requested before a restart, pod untouched: asked again after the timeout": {
			setup: func(w *world) {
				w.started(api.Draining, api.EvictionRequested)
				w.active("web-1", "pod-1", Requested, "10")
			},
			want: want{phase: api.Draining, reason: api.EvictionRequested, action: Evict, targets: []string{"shop/web-1"}},
		},
		"requested before a restart, pod untouched: the cooldown its decision predicted goes with it": {
			setup: func(w *world) {
				w.started(api.Draining, api.EvictionRequested)
				w.active("web-1", "pod-1", Requested, "10")
				w.cooldown("shop/web", api.BudgetExhausted, t0.Add(DefaultMaxCooldown), "10")
			},
			want: want{phase: api.Draining, reason: api.EvictionRequested, action: Evict, targets: []string{"shop/web-1"}},
		},
		"requested before a restart, pod untouched: a cooldown from a later answer stays": {
			setup: func(w *world) {
				w.started(api.Draining, api.EvictionRequested)
				w.active("web-1", "pod-1", Requested, "10")
				w.cooldown("shop/web", api.BudgetExhausted, t0.Add(10*time.Second+DefaultMaxCooldown), "10")
			},
			want: want{phase: api.CoolingDown, reason: api.BudgetExhausted},
		},
		"unknown answer, within the timeout: wait": {
			setup: func(w *world) {
				w.started(api.Draining, api.EvictionRequested)
				w.active("web-1", "pod-1", Unknown, "10")
				w.plan.Status.EvictionProgress.ActivePods[0].RequestedAt = metav1.NewTime(now.Add(-2 * time.Second))
			},
			want: want{phase: api.Draining, reason: api.WaitingForPodExit, requeue: 8 * time.Second},
		},
		"all gone and shown: drained": {
			setup: func(w *world) {
				w.started(api.Draining, api.WaitingForPodExit)
				w.plan.Status.Pods.Evicted = 1
				w.active("web-2", "pod-2", Accepted, "10")
				w.removePod("pod-1")
				w.removePod("pod-2")
				w.setPDB("shop/web", func(p *PDB) { p.ResourceVersion = "14" })
			},
			want: want{phase: api.Drained, reason: api.ReasonDrained, message: "2 pods evicted"},
		},
		"pods gone, a volume still attached: waits for its detach": {
			setup: func(w *world) {
				w.started(api.Draining, api.WaitingForPodExit)
				w.plan.Status.Pods.Evicted = 2
				w.removePod("pod-1")
				w.removePod("pod-2")
				w.facts.Attachments = []analyze.Attachment{{VolumeAttachment: "csi-1", PV: "pv-1", Driver: "ebs.csi.aws.com", Attached: true}}
			},
			want: want{phase: api.Draining, reason: api.WaitingForVolumeDetach, message: "VolumeAttachment csi-1 (PV pv-1, driver ebs.csi.aws.com)", requeue: DefaultVolumeDetachTimeout},
		},
		"a volume another pod on the node still uses does not hold the drain": {
			setup: func(w *world) {
				w.started(api.Draining, api.WaitingForPodExit)
				w.plan.Status.Pods.Evicted = 2
				w.removePod("pod-1")
				w.removePod("pod-2")
				w.facts.Attachments = []analyze.Attachment{{VolumeAttachment: "csi-1", PV: "pv-1", Driver: "d", Attached: true, Pods: []string{"kube-system/agent-x"}}}
			},
			want: want{phase: api.Drained, reason: api.ReasonDrained, message: "their volumes detached"},
		},
		"a detach past spec.volumeDetachTimeout is stuck, named with its error": {
			setup: func(w *world) {
				w.started(api.Draining, api.WaitingForVolumeDetach)
				w.plan.Spec.VolumeDetachTimeout = &metav1.Duration{Duration: 30 * time.Second}
				w.removePod("pod-1")
				w.removePod("pod-2")
				w.plan.Status.EvictionProgress.Detaches = []api.Detach{{VolumeAttachment: "csi-1", PersistentVolume: "pv-1", Driver: "d", Since: metav1.NewTime(now.Add(-30 * time.Second))}}
				w.facts.Attachments = []analyze.Attachment{{VolumeAttachment: "csi-1", PV: "pv-1", Driver: "d", Attached: true, Detaching: true, DetachError: "rpc error: volume is busy"}}
			},
			want: want{phase: api.Blocked, reason: api.VolumeDetachStuck, message: "VolumeAttachment csi-1 (PV pv-1, driver d), waiting since 2026-12-01T10:00:30Z: detach error: rpc error: volume is busy"},
		},
		"a detach within its bound waits until the bound": {
			setup: func(w *world) {
				w.started(api.Draining, api.WaitingForVolumeDetach)
				w.plan.Spec.VolumeDetachTimeout = &metav1.Duration{Duration: 30 * time.Second}
				w.removePod("pod-1")
				w.removePod("pod-2")
				w.plan.Status.EvictionProgress.Detaches = []api.Detach{{VolumeAttachment: "csi-1", PersistentVolume: "pv-1", Driver: "d", Since: metav1.NewTime(now.Add(-20 * time.Second))}}
				w.facts.Attachments = []analyze.Attachment{{VolumeAttachment: "csi-1", PV: "pv-1", Driver: "d", Attached: true, Detaching: true}}
			},
			want: want{phase: api.Draining, reason: api.WaitingForVolumeDetach, requeue: 10 * time.Second},
		},
		"a leaked attachment blocks, named with its reason": {
			setup: func(w *world) {
				w.started(api.Draining, api.WaitingForPodExit)
				w.removePod("pod-1")
				w.removePod("pod-2")
				w.facts.Attachments = []analyze.Attachment{{VolumeAttachment: "csi-9", PV: "pv-9", Driver: "d", Attached: true, Leaked: analyze.LeakPVGone}}
			},
			want: want{phase: api.Blocked, reason: api.VolumeAttachmentLeaked, message: "VolumeAttachment csi-9 (PV pv-9, driver d) (pv-gone)"},
		},
		"a storage provider waits while its consumer is on the node": {
			setup: func(w *world) {
				w.started(api.Draining, api.EvictionRequested)
				w.facts.Groups = []analyze.DrainGroup{
					{Order: 0, Behavior: analyze.BehaviorDrain, Why: "default", Pods: []string{"shop/web-1"}},
					{Order: 1, Behavior: analyze.BehaviorDrain, Why: "storage provider of driver d for 1 pods", Pods: []string{"shop/web-2"}, WaitsFor: []string{"csi-1"}},
				}
			},
			want: want{phase: api.Draining, reason: api.EvictionRequested, action: Evict, targets: []string{"shop/web-1"}},
		},
		"a storage provider waits for its consumers' volumes to detach": {
			setup: func(w *world) {
				w.started(api.Draining, api.WaitingForPodExit)
				w.plan.Status.Pods.Evicted = 1
				w.removePod("pod-1")
				w.facts.Groups = []analyze.DrainGroup{{Order: 1, Behavior: analyze.BehaviorDrain, Why: "storage provider of driver d for 1 pods", Pods: []string{"shop/web-2"}, WaitsFor: []string{"csi-1"}}}
			},
			want: want{phase: api.Draining, reason: api.WaitingForDrainGroup, message: "storage providers shop/web-2 wait for the volumes they serve to detach from node n1: csi-1"},
		},
		"a Skip rule keeps its pod out of the drain": {
			setup: func(w *world) {
				w.started(api.Draining, api.WaitingForPodExit)
				w.plan.Status.Pods.Evicted = 1
				w.removePod("pod-1")
				w.facts.Groups = []analyze.DrainGroup{{Order: 0, Behavior: analyze.BehaviorSkip, Why: "rule keep", Pods: []string{"shop/web-2"}}}
			},
			want: want{phase: api.Drained, reason: api.ReasonDrained},
		},
		"a bare pod a Skip rule leaves alone does not block the plan": {
			setup: func(w *world) {
				v := w.addPod("debug", "pod-9")
				v.Owners = nil
				w.facts.Groups = []analyze.DrainGroup{{Order: 0, Behavior: analyze.BehaviorSkip, Why: "rule keep-debug", Pods: []string{"shop/debug"}}}
			},
			want: want{phase: api.Cordoning, reason: api.CordonSubmitted, action: Cordon},
		},
		"a WaitCompleted pod is waited for, never evicted": {
			setup: func(w *world) {
				w.started(api.Draining, api.WaitingForPodExit)
				w.plan.Status.Pods.Evicted = 1
				w.removePod("pod-1")
				w.facts.Groups = []analyze.DrainGroup{{Order: 0, Behavior: analyze.BehaviorWaitCompleted, Why: "annotation", Pods: []string{"shop/web-2"}}}
			},
			want: want{phase: api.Draining, reason: api.WaitingForCompletion, message: "waiting for shop/web-2 to complete"},
		},
		"a lower order goes first": {
			setup: func(w *world) {
				w.started(api.Draining, api.EvictionRequested)
				w.facts.Groups = []analyze.DrainGroup{
					{Order: -5, Behavior: analyze.BehaviorDrain, Why: "rule front", Pods: []string{"shop/web-2"}},
					{Order: 0, Behavior: analyze.BehaviorDrain, Why: "default", Pods: []string{"shop/web-1"}},
				}
			},
			want: want{phase: api.Draining, reason: api.EvictionRequested, action: Evict, targets: []string{"shop/web-2"}},
		},
		"a lower order's evicted pod holds back the next group until it is gone": {
			setup: func(w *world) {
				w.started(api.Draining, api.EvictionAccepted)
				w.plan.Status.Pods.Evicted = 1
				w.active("web-2", "pod-2", Accepted, "10")
				w.terminate("pod-2")
				w.setPDB("shop/web", func(p *PDB) { p.DisruptionsAllowed = 2 }) // the budget would allow web-1
				w.facts.Groups = []analyze.DrainGroup{
					{Order: -5, Behavior: analyze.BehaviorDrain, Why: "rule front", Pods: []string{"shop/web-2"}},
					{Order: 0, Behavior: analyze.BehaviorDrain, Why: "default", Pods: []string{"shop/web-1"}},
				}
			},
			want: want{phase: api.Draining, reason: api.WaitingForPodExit, message: "shop/web-2"},
		},
		"drained waits for release": {
			setup: func(w *world) {
				w.started(api.Drained, api.ReasonDrained)
				w.removePod("pod-1")
				w.removePod("pod-2")
			},
			want: want{phase: api.Drained, reason: api.ReasonDrained},
		},
		"new unknown pod mid-drain blocks, cordon kept": {
			setup: func(w *world) {
				w.started(api.Draining, api.EvictionAccepted)
				v := w.addPod("intruder", "pod-9")
				v.Owners = nil
			},
			want: want{phase: api.Blocked, reason: api.UnknownPodsOnNode, message: "shop/intruder"},
		},
		"high finding mid-drain blocks": {
			setup: func(w *world) {
				w.started(api.Draining, api.EvictionAccepted)
				w.pod("web-2").Reasons = []analyze.Code{analyze.AllReplicasOnNode}
			},
			want: want{phase: api.Blocked, reason: api.PreflightHighRisk, message: "all-replicas-on-node"},
		},

		// Contracts.
		"spec change mid-drain is final": {
			setup: func(w *world) {
				w.started(api.Draining, api.EvictionAccepted)
				w.plan.Spec.AcceptedRisks = []string{"hostpath"}
				w.plan.Generation = 2
			},
			want: want{phase: api.Blocked, reason: api.PlanSpecChanged, message: "create a new plan"},
		},
		"a change of maxCooldown mid-drain is fine": {
			setup: func(w *world) {
				w.started(api.Cordoned, api.CordonObserved)
				w.plan.Spec.MaxCooldown = &metav1.Duration{Duration: time.Second}
				w.plan.Generation = 2
			},
			want: want{phase: api.Draining, reason: api.EvictionRequested, action: Evict, targets: []string{"shop/web-1"}},
		},
		"node re-created mid-drain": {
			setup: func(w *world) {
				w.started(api.Draining, api.EvictionAccepted)
				w.facts.Node.UID = "node-uid-2"
			},
			want: want{phase: api.Blocked, reason: api.TargetReplaced, message: "node n1 was re-created"},
		},
		"workload re-created mid-drain": {
			setup: func(w *world) {
				w.started(api.Draining, api.EvictionAccepted)
				w.facts.Workloads[api.WorkloadRef{Kind: "Deployment", Namespace: "shop", Name: "web"}] = "dep-uid-2"
			},
			want: want{phase: api.Blocked, reason: api.TargetReplaced, message: "uid is now dep-uid-2"},
		},
		"workload deleted mid-drain": {
			setup: func(w *world) {
				w.started(api.Draining, api.EvictionAccepted)
				w.facts.Workloads = map[api.WorkloadRef]types.UID{}
			},
			want: want{phase: api.Blocked, reason: api.TargetReplaced, message: "no longer exists"},
		},
		"final blocked stays": {
			setup: func(w *world) { w.started(api.Blocked, api.PlanSpecChanged) },
			want:  want{phase: api.Blocked, reason: api.PlanSpecChanged},
		},
		"deadline passed: failed, cordon kept": {
			setup: func(w *world) {
				w.started(api.CoolingDown, api.BudgetExhausted)
				w.plan.Spec.Deadline = &metav1.Duration{Duration: 30 * time.Second}
			},
			want: want{phase: api.Failed, reason: api.DeadlineExceeded, message: "stays cordoned"},
		},
		"cordoning past the deadline: failed, the cordon never seen": {
			setup: func(w *world) {
				w.started(api.Cordoning, api.CordonSubmitted)
				w.plan.Spec.Deadline = &metav1.Duration{Duration: 30 * time.Second}
			},
			want: want{phase: api.Failed, reason: api.DeadlineExceeded, message: "its cordon of node n1 was never seen"},
		},
		"deadline requeues the plan": {
			setup: func(w *world) {
				w.started(api.Draining, api.EvictionAccepted)
				w.plan.Spec.Deadline = &metav1.Duration{Duration: 90 * time.Second}
				w.active("web-1", "pod-1", Accepted, "10")
				w.terminate("pod-1")
			},
			want: want{phase: api.Draining, reason: api.WaitingForPodExit, requeue: 30 * time.Second},
		},
		"failed is final": {
			setup: func(w *world) { w.started(api.Failed, api.DeadlineExceeded) },
			want:  want{phase: api.Failed, reason: api.DeadlineExceeded},
		},
		"drained plan does not fail on the deadline": {
			setup: func(w *world) {
				w.started(api.Drained, api.ReasonDrained)
				w.plan.Spec.Deadline = &metav1.Duration{Duration: time.Second}
				w.removePod("pod-1")
				w.removePod("pod-2")
			},
			want: want{phase: api.Drained, reason: api.ReasonDrained},
		},

		// Release.
		"release uncordons our node": {
			setup: func(w *world) { w.started(api.Drained, api.ReasonDrained); w.plan.Spec.Release = true },
			want:  want{phase: api.Uncordoning, reason: api.UncordonSubmitted, action: Uncordon},
		},
		"released: the cache shows no cordon, the uncordon still goes through the live node": {
			setup: func(w *world) {
				w.started(api.Uncordoning, api.UncordonSubmitted)
				w.plan.Spec.Release = true
				w.facts.Node.Spec.Unschedulable = false
				delete(w.facts.Node.Annotations, cordon.OwnerAnnotation)
			},
			want: want{phase: api.Uncordoning, reason: api.UncordonSubmitted, action: Uncordon},
		},
		// The start-by: creation (t0) plus startWithin (1h by default).
		"not started within startWithin: expired, the node untouched": {
			setup: func(w *world) { w.plan.CreationTimestamp = metav1.NewTime(now.Add(-time.Hour)) },
			want:  want{phase: api.Completed, reason: api.Expired, message: "did not start by"},
		},
		"before its start-by: requeued at it": {
			setup: func(w *world) {
				w.facts.Holders = 1
				w.plan.Spec.StartWithin = &metav1.Duration{Duration: 5 * time.Minute}
			},
			want: want{phase: api.Pending, reason: api.WaitingForSlot, requeue: 4 * time.Minute},
		},
		"waiting for a slot past its start-by: expired": {
			setup: func(w *world) {
				w.plan.Spec.StartWithin = &metav1.Duration{Duration: time.Minute}
				w.plan.Status.Phase, w.plan.Status.Reason = api.Pending, api.WaitingForSlot
				w.facts.Holders = 1
			},
			want: want{phase: api.Completed, reason: api.Expired, message: "was pending (waiting-for-slot)"},
		},
		"blocked before the start and past its start-by: expired when the cause clears": {
			setup: func(w *world) {
				w.plan.Spec.StartWithin = &metav1.Duration{Duration: 30 * time.Second}
				w.plan.Status.Phase, w.plan.Status.Reason = api.Blocked, api.UnknownPodsOnNode
			},
			want: want{phase: api.Completed, reason: api.Expired, message: "was blocked (unknown-pods-on-node)"},
		},
		"paused past its start-by: expired": {
			setup: func(w *world) {
				w.plan.Spec.StartWithin = &metav1.Duration{Duration: time.Minute}
				w.facts.Pause = &Pause{Object: "maintd-system/maintd-pause", Since: t0}
			},
			want: want{phase: api.Completed, reason: api.Expired},
		},
		"dry run past its start-by: expired": {
			setup: func(w *world) {
				w.plan.Spec.StartWithin = &metav1.Duration{Duration: time.Minute}
				w.plan.Spec.DryRun = true
			},
			want: want{phase: api.Completed, reason: api.Expired},
		},
		"started plan past its start-by goes on": {
			setup: func(w *world) {
				w.plan.Spec.StartWithin = &metav1.Duration{Duration: time.Second}
				w.started(api.Cordoned, api.CordonObserved)
			},
			want: want{phase: api.Draining, reason: api.EvictionRequested, action: Evict, targets: []string{"shop/web-1"}},
		},
		"release before the cordon: nothing to undo": {
			setup: func(w *world) { w.plan.Spec.Release = true },
			want:  want{phase: api.Completed, reason: api.ReleasedBeforeWork},
		},
		"release of a node someone else cordoned: their cordon stays": {
			setup: func(w *world) {
				w.started(api.Blocked, api.NodeUncordonedExternally)
				w.plan.Spec.Release = true
				w.facts.Node.Annotations[cordon.OwnerAnnotation] = "change-42"
			},
			want: want{phase: api.Uncordoning, reason: api.UncordonSubmitted, action: Uncordon},
		},
		"release mid-drain stops evicting and uncordons": {
			setup: func(w *world) { w.started(api.CoolingDown, api.BudgetExhausted); w.plan.Spec.Release = true },
			want:  want{phase: api.Uncordoning, reason: api.UncordonSubmitted, action: Uncordon},
		},
		"completed is final": {
			setup: func(w *world) { w.started(api.Completed, api.Uncordoned); w.plan.Spec.Release = true },
			want:  want{phase: api.Completed, reason: api.Uncordoned},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			w := newWorld()
			tc.setup(w)
			before := w.plan.DeepCopy()
			d := Decide(w.facts, w.plan, now)
			if diff := cmp.Diff(before, w.plan); diff != "" {
				t.Fatalf("Decide changed its input (-before +after):\n%s", diff)
			}
			var targets []string
			for _, t := range d.Targets {
				targets = append(targets, t.Namespace+"/"+t.Name)
			}
			got := want{phase: d.Status.Phase, reason: d.Status.Reason, action: d.Action, targets: targets, requeue: tc.want.requeue}
			if tc.want.requeue != 0 {
				got.requeue = d.Requeue
			}
			got.message = tc.want.message
			if !strings.Contains(d.Status.Message, tc.want.message) {
				got.message = d.Status.Message
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("Decide (-want +got):\n%s\nmessage: %s", diff, d.Status.Message)
			}
			if n := len(d.Status.History); n == 0 || d.Status.History[n-1].Phase != d.Status.Phase || d.Status.History[n-1].Reason != d.Status.Reason {
				t.Errorf("history does not end with the new phase: %+v", d.Status.History)
			}
			if strings.Contains(name, "ends") && tc.want.reason == api.EvictionRequested {
				if n := len(d.Status.History); n < 2 || d.Status.History[n-2].Reason != api.BudgetRecovered || !strings.Contains(d.Status.History[n-2].Message, "PDB shop/web ") {
					t.Errorf("the recovery is not in the history before the eviction: %+v", d.Status.History)
				}
			}
			checkInvariants(t, w, d, now)
		})
	}
}

// checkInvariants holds for every decision.
func checkInvariants(t *testing.T, w *world, d Decision, now time.Time) {
	t.Helper()
	st := d.Status
	if st.ObservedGeneration != w.plan.Generation {
		t.Errorf("observedGeneration = %d, want %d", st.ObservedGeneration, w.plan.Generation)
	}
	if st.Pods.Total != st.Pods.Evicted+st.Pods.Remaining {
		t.Errorf("pods %+v: total is not evicted + remaining", st.Pods)
	}
	for _, tg := range d.Targets {
		if p, ok := w.facts.Pods[tg.UID]; !ok || p.Terminating {
			t.Errorf("target %s/%s is gone or going, yet asked for", tg.Namespace, tg.Name)
		}
		if w.plan.Status.EvictionProgress == nil {
			continue
		}
		for _, c := range w.plan.Status.EvictionProgress.Cooldowns {
			if (c.PDB == "shop/"+tg.PDB || c.PDB == GlobalKey) && c.NextActionAt.After(t0.Add(time.Minute)) && st.Phase != api.Draining {
				t.Errorf("target %s/%s asked for during cooldown %+v", tg.Namespace, tg.Name, c)
			}
		}
	}
	if d.Action == Evict {
		active := map[types.UID]string{}
		for _, a := range st.EvictionProgress.ActivePods {
			active[a.UID] = a.Outcome
		}
		for _, tg := range d.Targets {
			if active[tg.UID] != Requested {
				t.Errorf("target %s/%s: the intent is not in status before the request (%q)", tg.Namespace, tg.Name, active[tg.UID])
			}
		}
	}
	if blocked := cond(st, api.ConditionBlocked); blocked != (st.Phase == api.Blocked || st.Phase == api.Failed) {
		t.Errorf("Blocked condition %t in phase %s", blocked, st.Phase)
	}
	if ready := cond(st, api.ConditionReady); ready != (st.Phase == api.Drained || st.Phase == api.Completed) {
		t.Errorf("Ready condition %t in phase %s", ready, st.Phase)
	}
	if Final(&w.plan.Status) && (d.Action != None || !cmp.Equal(w.plan.Status.Phase, st.Phase)) {
		t.Errorf("a final plan acted or moved: %s -> %s", w.plan.Status.Phase, st.Phase)
	}
	// The start-by, from the plan's own record: its creation and spec.
	within := time.Hour
	if w.plan.Spec.StartWithin != nil {
		within = w.plan.Spec.StartWithin.Duration
	}
	if ep := w.plan.Status.EvictionProgress; (ep == nil || ep.Scope == "") && !now.Before(w.plan.CreationTimestamp.Add(within)) && d.Action != None {
		t.Errorf("plan created %s with startWithin %s acted (%v) at %s, past its start-by, before its start", w.plan.CreationTimestamp, within, d.Action, now)
	}
	if d.Action == Cordon && w.facts.Node.Annotations[cordon.OwnerAnnotation] != "" && w.facts.Node.Annotations[cordon.OwnerAnnotation] != Owner(w.plan) {
		t.Errorf("cordon over another owner's annotation")
	}
}

func cond(st api.MaintenancePlanStatus, typ string) bool {
	for _, c := range st.Conditions {
		if c.Type == typ {
			return c.Status == metav1.ConditionTrue
		}
	}
	return false
}

func TestDecideKeepsStartAndDeadline(t *testing.T) {
	w := newWorld()
	w.started(api.Draining, api.EvictionAccepted)
	w.plan.Spec.Deadline = &metav1.Duration{Duration: 2 * time.Hour}
	d := Decide(w.facts, w.plan, t0.Add(10*time.Minute))
	ep := d.Status.EvictionProgress
	if !ep.StartedAt.Equal(&metav1.Time{Time: t0}) || !ep.Deadline.Time.Equal(t0.Add(2*time.Hour)) {
		t.Errorf("startedAt %s deadline %s, want %s and %s", ep.StartedAt, ep.Deadline, t0, t0.Add(2*time.Hour))
	}
}

func TestHistoryIsBounded(t *testing.T) {
	st := api.MaintenancePlanStatus{}
	for i := range 30 {
		st.Phase, st.Reason = api.Draining, api.Reason("r"+string(rune('a'+i)))
		Remember(&st, t0.Add(time.Duration(i)*time.Second))
	}
	if len(st.History) != HistoryLength || string(st.History[HistoryLength-1].Reason) != "r"+string(rune(97+29)) {
		t.Errorf("history: %d entries, last %+v", len(st.History), st.History[len(st.History)-1])
	}
	Remember(&st, t0.Add(time.Hour))
	if len(st.History) != HistoryLength {
		t.Errorf("the same phase and reason were recorded twice")
	}
}

func TestScope(t *testing.T) {
	a := api.MaintenancePlanSpec{NodeName: "n1", AcceptedRisks: []string{"b", "a"}}
	b := api.MaintenancePlanSpec{NodeName: "n1", AcceptedRisks: []string{"a", "b"}, Release: true, DryRun: true,
		MaxCooldown: &metav1.Duration{Duration: time.Second}}
	if Scope(a) != Scope(b) {
		t.Errorf("scope depends on the order of risks or on fields that may change")
	}
	b.AllowAllWorkloads = true
	if Scope(a) == Scope(b) {
		t.Errorf("scope ignores allowAllWorkloads")
	}
}

func TestCamel(t *testing.T) {
	for in, want := range map[string]string{"pdb-budget-exhausted": "PdbBudgetExhausted", "Drained": "Drained", "dry-run": "DryRun"} {
		if got := Camel(in); got != want {
			t.Errorf("Camel(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestPureImports fences the package: no client-go transport.
func TestPureImports(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "k8s.io/client-go") {
			t.Errorf("package drain depends on %s", pkg)
		}
	}
}

func timePtr(t time.Time) *metav1.Time {
	m := metav1.NewTime(t)
	return &m
}

// TestRefused: a cordon the API keeps refusing is the Refused condition,
// with the API's message and the time of the first refusal; once the
// cordon is seen, the condition turns False.
func TestRefused(t *testing.T) {
	w := newWorld()
	w.started(api.Cordoning, api.CordonSubmitted)
	const msg = `admission webhook "freeze.example.com" denied the request: change freeze`
	st := Refused(w.plan, w.plan.Status, "cordon", msg, t0.Add(10*time.Second))
	st = Refused(w.plan, st, "cordon", msg, t0.Add(20*time.Second))
	c := meta.FindStatusCondition(st.Conditions, api.ConditionRefused)
	if c == nil || c.Status != metav1.ConditionTrue || c.Reason != "CordonRefused" || !strings.Contains(c.Message, msg) || !c.LastTransitionTime.Time.Equal(t0.Add(10*time.Second)) {
		t.Fatalf("after two refusals: %+v", c)
	}
	if st.Phase != api.Cordoning || st.Reason != api.CordonSubmitted {
		t.Errorf("a refusal moved the plan: %s/%s", st.Phase, st.Reason)
	}
	w.plan.Status = st
	w.cordoned()
	d := Decide(w.facts, w.plan, t0.Add(time.Minute))
	if c := meta.FindStatusCondition(d.Status.Conditions, api.ConditionRefused); c == nil || c.Status != metav1.ConditionFalse || d.Status.Phase != api.Cordoned {
		t.Errorf("the cordon seen (%s): %+v", d.Status.Phase, c)
	}
}
