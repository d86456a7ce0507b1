package sim

import (
	"maps"
	"slices"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Annotations on simulated pods that say how their kubelet treats them.
const (
	// readyAfter is how long after it starts a pod becomes Ready
	// (seconds); "never" keeps it unready.
	readyAfter = "sim.sentinel.dev/ready-after"
	// exitAfter is how long a deleted pod takes to go (seconds).
	exitAfter = "sim.sentinel.dev/exit-after"
)

func parseRV(rv string) (int64, error) { return strconv.ParseInt(rv, 10, 64) }

// The cluster's own controllers, each a pure step on the store at the
// simulated time: the scheduler places pods, the kubelets start, ready and
// remove them, the ReplicaSet controller replaces pods, the disruption
// controller recomputes the budgets. The world decides when each runs, so
// their lag is part of the schedule.

// schedule binds the pods without a node to the node the scheduler picks
// (cluster.place: the filters of kube-scheduler, then the fewest pods,
// then by name); a pod with nowhere to go stays Pending.
func (s *store) schedule() int {
	n := 0
	var c *cluster // read when a pod waits for a node
	for _, o := range s.list(podsR, "", nil) {
		pod := o.(*corev1.Pod)
		if pod.Spec.NodeName != "" || pod.DeletionTimestamp != nil {
			continue
		}
		if c == nil {
			c = s.readCluster()
		}
		best, _ := c.place(pod, "")
		if best == "" {
			continue
		}
		pod.Spec.NodeName = best
		if _, err := s.update(podsR, pod, false); err == nil {
			n++
		}
	}
	return n
}

// podSpec is what a controller's pod takes of its template: the grace
// period and node selector, and what else the template sets of where it
// may run (tolerations, affinity, topology spread) and of what it
// requests (its containers, when they request anything).
func podSpec(t corev1.PodSpec) corev1.PodSpec {
	out := corev1.PodSpec{TerminationGracePeriodSeconds: t.TerminationGracePeriodSeconds, NodeSelector: t.NodeSelector,
		Tolerations: t.Tolerations, Affinity: t.Affinity, TopologySpreadConstraints: t.TopologySpreadConstraints}
	for _, c := range t.Containers {
		if len(c.Resources.Requests) > 0 {
			out.Containers = t.Containers
		}
	}
	return *out.DeepCopy()
}

// kubelet starts the bound pods (once the volumes they use are attached to
// their node), makes them Ready once their readiness delay passed, and
// removes deleted pods once they exited (but a pod whose volume's storage
// providers left its node: it hangs). next is the earliest time something
// of it is due later (zero: nothing).
func (s *store) kubelet(act bool) (n int, next time.Time) {
	now := s.now().Time
	due := dueAt(now, act, &next)
	for _, o := range s.list(podsR, "", nil) {
		pod := o.(*corev1.Pod)
		switch {
		case pod.DeletionTimestamp != nil:
			if s.hung(pod) {
				if act && !s.hanging[pod.UID] {
					s.hanging[pod.UID] = true
					s.logf("kubelet: %s/%s hangs Terminating: no storage provider of its volume runs on %s", pod.Namespace, pod.Name, pod.Spec.NodeName)
				}
				continue
			}
			exit, _ := strconv.Atoi(pod.Annotations[exitAfter])
			if due(pod.DeletionTimestamp.Add(time.Duration(exit) * time.Second)) {
				pod.Finalizers = nil
				if _, err := s.remove(podsR, pod.Namespace, pod.Name, pod.UID, false); err == nil {
					n++
				}
			}
		case pod.Spec.NodeName == "", pod.Status.Phase == corev1.PodSucceeded, pod.Status.Phase == corev1.PodFailed:
		case pod.Status.Phase == "" || pod.Status.Phase == corev1.PodPending:
			if !s.mounted(pod) || !due(now) {
				continue
			}
			start := s.now()
			pod.Status.Phase, pod.Status.StartTime = corev1.PodRunning, &start
			pod.Status.Conditions = []corev1.PodCondition{
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: start},
				{Type: corev1.PodReady, Status: corev1.ConditionFalse, LastTransitionTime: start},
			}
			if _, err := s.update(podsR, pod, true); err == nil {
				n++
			}
			if delay, err := strconv.Atoi(pod.Annotations[readyAfter]); err == nil {
				due(start.Add(time.Duration(delay) * time.Second))
			}
		case pod.Annotations[succeedAfter] != "" && s.succeeded(pod, due):
			n++
		case !ready(pod) && pod.Annotations[readyAfter] != "never":
			delay, _ := strconv.Atoi(pod.Annotations[readyAfter])
			if due(pod.Status.StartTime.Add(time.Duration(delay) * time.Second)) {
				for i := range pod.Status.Conditions {
					if pod.Status.Conditions[i].Type == corev1.PodReady {
						pod.Status.Conditions[i].Status, pod.Status.Conditions[i].LastTransitionTime = corev1.ConditionTrue, s.now()
					}
				}
				if _, err := s.update(podsR, pod, true); err == nil {
					n++
				}
			}
		}
	}
	return n, next
}

// deployments sets the replica count of each Deployment's ReplicaSet to
// the Deployment's (one ReplicaSet each: no rollouts are simulated).
func (s *store) deployments() int {
	n := 0
	for _, o := range s.list(rsR, "", nil) {
		rs := o.(*appsv1.ReplicaSet)
		ref := metav1.GetControllerOf(rs)
		if ref == nil {
			continue
		}
		d, err := s.get(depsR, rs.Namespace, ref.Name)
		if err != nil || d.(*appsv1.Deployment).UID != ref.UID {
			continue
		}
		if want := ptrOr(d.(*appsv1.Deployment).Spec.Replicas, 1); ptrOr(rs.Spec.Replicas, 1) != want {
			rs.Spec.Replicas = &want
			if _, err := s.update(rsR, rs, false); err == nil {
				n++
			}
		}
	}
	return n
}

// doomed orders a ReplicaSet's pods as it deletes them on a scale-down
// (pkg/controller.ActivePods, simplified): not scheduled, then not
// running, then not Ready, then the newest first.
func doomed(a, b *corev1.Pod) int {
	rank := func(p *corev1.Pod) int {
		switch {
		case p.Spec.NodeName == "":
			return 0
		case p.Status.Phase != corev1.PodRunning:
			return 1
		case !ready(p):
			return 2
		}
		return 3
	}
	if ra, rb := rank(a), rank(b); ra != rb {
		return ra - rb
	}
	return b.CreationTimestamp.Compare(a.CreationTimestamp.Time)
}

// replicaSets creates a pod for each missing replica of every ReplicaSet
// (deleting pods do not count, as in Kubernetes), deletes the pods over
// its count (doomed first), and writes the ReplicaSets' and Deployments'
// status. A pod made for a missing replica continues the lineage of the
// oldest evicted pod of the ReplicaSet not yet replaced (store.lineage).
func (s *store) replicaSets(readyDelay func() string) int {
	n := 0
	for _, o := range s.list(rsR, "", nil) {
		rs := o.(*appsv1.ReplicaSet)
		owned, readyN := 0, 0
		var active []*corev1.Pod
		for _, p := range s.list(podsR, rs.Namespace, nil) {
			pod := p.(*corev1.Pod)
			if ref := metav1.GetControllerOf(pod); ref == nil || ref.UID != rs.UID {
				continue
			}
			if pod.DeletionTimestamp == nil {
				owned++
				active = append(active, pod)
				if ready(pod) {
					readyN++
				}
			}
		}
		want := int(ptrOr(rs.Spec.Replicas, 1))
		if owned > want {
			slices.SortStableFunc(active, doomed)
			for _, pod := range active[:owned-want] {
				if _, err := s.remove(podsR, pod.Namespace, pod.Name, pod.UID, true); err == nil {
					n++
					owned--
					if ready(pod) {
						readyN--
					}
				}
			}
		}
		// The evicted pods it replaces, oldest first: no more than the
		// replicas it misses (a scale-down meanwhile replaces none).
		holes := s.holes[rs.UID]
		holes = holes[:min(len(holes), max(0, want-owned))]
		for ; owned < want; owned++ {
			ann := maps.Clone(rs.Spec.Template.Annotations)
			if ann == nil {
				ann = map[string]string{}
			}
			ann[readyAfter] = readyDelay()
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: rs.Namespace, GenerateName: rs.Name + "-",
				Labels:          rs.Spec.Template.Labels,
				Annotations:     ann,
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(rs, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))}},
				Spec: podSpec(rs.Spec.Template.Spec)}
			if o, err := s.create(podsR, pod); err == nil {
				n++
				if len(holes) > 0 {
					s.lineage[o.(*corev1.Pod).UID], holes = holes[0], holes[1:]
				}
			}
		}
		if len(holes) == 0 {
			delete(s.holes, rs.UID)
		} else {
			s.holes[rs.UID] = holes
		}
		st := appsv1.ReplicaSetStatus{Replicas: int32(owned), ReadyReplicas: int32(readyN), AvailableReplicas: int32(readyN),
			FullyLabeledReplicas: int32(owned), ObservedGeneration: rs.Generation}
		if !jsonEqual(st, rs.Status) {
			rs.Status = st
			if _, err := s.update(rsR, rs, true); err == nil {
				n++
			}
		}
		if ref := metav1.GetControllerOf(rs); ref != nil {
			if d, err := s.get(depsR, rs.Namespace, ref.Name); err == nil {
				dep := d.(*appsv1.Deployment)
				ds := appsv1.DeploymentStatus{Replicas: st.Replicas, ReadyReplicas: st.ReadyReplicas, AvailableReplicas: st.AvailableReplicas,
					UpdatedReplicas: st.Replicas, ObservedGeneration: dep.Generation}
				if !jsonEqual(ds, dep.Status) {
					dep.Status = ds
					if _, err := s.update(depsR, dep, true); err == nil {
						n++
					}
				}
			}
		}
	}
	return n
}

func ptrOr[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

// disruption recomputes every budget's status as the disruption controller
// does (pkg/controller/disruption): integer minAvailable over the matching
// pods, integer maxUnavailable over their controllers' scale (ReplicaSets
// and StatefulSets); healthy pods
// are Ready, not deleting and not in disruptedPods; an entry of
// disruptedPods goes when its pod is gone or deleting, or after
// deletionTimeout. It writes only a status that changed.
func (s *store) disruption(act bool) (n int, next time.Time) {
	now := s.now()
	for _, o := range s.list(pdbsR, "", nil) {
		pdb := o.(*policyv1.PodDisruptionBudget)
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err != nil || pdb.Spec.Selector == nil {
			sel = labels.Nothing()
		}
		var pods []*corev1.Pod
		for _, p := range s.list(podsR, pdb.Namespace, sel) {
			pods = append(pods, p.(*corev1.Pod))
		}
		st := policyv1.PodDisruptionBudgetStatus{ObservedGeneration: pdb.Generation, DisruptedPods: map[string]metav1.Time{}}
		for name, t := range pdb.Status.DisruptedPods {
			alive := false
			for _, p := range pods {
				alive = alive || (p.Name == name && p.DeletionTimestamp == nil)
			}
			if expires := t.Add(deletionTimeout); alive && now.Time.Before(expires) {
				st.DisruptedPods[name] = t
				if next.IsZero() || expires.Before(next) {
					next = expires
				}
			}
		}
		var expected int32
		switch {
		case pdb.Spec.MinAvailable != nil:
			expected = int32(len(pods))
			st.DesiredHealthy = pdb.Spec.MinAvailable.IntVal
		case pdb.Spec.MaxUnavailable != nil:
			scales := map[string]int32{}
			for _, p := range pods {
				ref := metav1.GetControllerOf(p)
				switch {
				case ref == nil:
				case ref.Kind == "ReplicaSet":
					if r, err := s.get(rsR, p.Namespace, ref.Name); err == nil && r.(*appsv1.ReplicaSet).UID == ref.UID {
						scales[ref.Kind+"/"+ref.Name] = ptrOr(r.(*appsv1.ReplicaSet).Spec.Replicas, 1)
					}
				case ref.Kind == "StatefulSet":
					if r, err := s.get(stsR, p.Namespace, ref.Name); err == nil && r.(*appsv1.StatefulSet).UID == ref.UID {
						scales[ref.Kind+"/"+ref.Name] = ptrOr(r.(*appsv1.StatefulSet).Spec.Replicas, 1)
					}
				}
			}
			for _, v := range scales {
				expected += v
			}
			st.DesiredHealthy = max(expected-pdb.Spec.MaxUnavailable.IntVal, 0)
		}
		st.ExpectedPods = expected
		for _, p := range pods {
			if _, gone := st.DisruptedPods[p.Name]; ready(p) && p.DeletionTimestamp == nil && !gone {
				st.CurrentHealthy++
			}
		}
		if expected > 0 {
			st.DisruptionsAllowed = max(st.CurrentHealthy-st.DesiredHealthy, 0)
		}
		if len(st.DisruptedPods) == 0 {
			st.DisruptedPods = nil
		}
		st.Conditions = pdb.Status.Conditions
		if !jsonEqual(st, pdb.Status) && !act {
			next = now.Time
		} else if !jsonEqual(st, pdb.Status) {
			pdb.Status = st
			if _, err := s.update(pdbsR, pdb, true); err == nil {
				n++
			}
		}
	}
	return n, next
}

// dueAt is how an actor (a kubelet, an attacher) meets the times it waits
// for: due(t) reports whether it acts on t now (t has come, and act), and
// *next becomes the earliest time it must look again (now, for a t that has
// come when it does not act).
func dueAt(now time.Time, act bool, next *time.Time) (due func(t time.Time) bool) {
	return func(t time.Time) bool {
		if !t.After(now) {
			if !act {
				*next = now
			}
			return act
		}
		if next.IsZero() || t.Before(*next) {
			*next = t
		}
		return false
	}
}
