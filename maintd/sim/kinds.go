// The workloads beside Deployments: StatefulSets, Jobs and bare pods, their
// controllers, and what maintd promises about them.

package sim

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
)

// Workload kinds beside Deployment ("").
const (
	statefulSet = "StatefulSet"
	job         = "Job"
	barePod     = "Pod"
)

// succeedAfter is how long after it starts a Job's pod ends Succeeded
// (seconds).
const succeedAfter = "sim.sentinel.dev/succeed-after"

// drawKinds adds to a scenario, from w.kinding, the workloads of other
// kinds (1 seed in 3): a StatefulSet, a Job whose pod runs a few minutes,
// at 1 in 2 a bare pod a person deletes later, and at 1 in 2 plans that
// list the workloads they may evict (spec.workloads) instead of allowing
// all.
func (w *World) drawKinds(sc *Scenario) {
	kr := w.kinding
	if kr.IntN(3) != 0 {
		return
	}
	w.kinds = true
	sc.Workloads = append(sc.Workloads,
		Workload{Name: "db", Kind: statefulSet, Replicas: 1 + kr.IntN(3), PDB: []string{"max1", "none"}[kr.IntN(2)], ReadyAfter: kr.IntN(20)},
		Workload{Name: "batch", Kind: job, Replicas: 1, PDB: "none", ReadyAfter: 30 + kr.IntN(300)})
	if kr.IntN(2) == 0 {
		sc.Workloads = append(sc.Workloads, Workload{Name: "debug", Kind: barePod, Replicas: 1, PDB: "none", On: fmt.Sprintf("node-%d", 1+kr.IntN(sc.Nodes))})
	}
	if kr.IntN(2) == 0 {
		for i := range sc.Plans {
			var refs []api.WorkloadRef
			for _, wl := range sc.Workloads {
				if wl.Kind != barePod && kr.IntN(3) != 0 {
					refs = append(refs, api.WorkloadRef{Kind: wl.kind(), Namespace: Namespace, Name: wl.Name})
				}
			}
			if len(refs) > 0 {
				sc.Plans[i].AllowAllWorkloads, sc.Plans[i].Workloads = false, refs
			}
		}
	}
}

// kind is the workload's kind as a plan names it.
func (wl Workload) kind() string {
	if wl.Kind == "" {
		return "Deployment"
	}
	return wl.Kind
}

// other creates a workload of another kind than Deployment: a StatefulSet
// and its pods (name-0, name-1, ...), a Job and its pod, or a bare pod;
// its pods go round-robin over the nodes from node start. w.mu is held.
func (w *World) other(wl Workload, nodes, start int) {
	sel := map[string]string{"app": wl.Name}
	grace := int64(30)
	if wl.On != "" {
		fmt.Sscanf(wl.On, "node-%d", &start)
		start--
	}
	node := func(i int) string {
		if wl.Together {
			i = 0
		}
		return fmt.Sprintf("node-%d", (start+i)%nodes+1)
	}
	ann := map[string]string{readyAfter: fmt.Sprint(max(wl.ReadyAfter, 0)), exitAfter: fmt.Sprint(w.kinding.IntN(10))}
	spec := corev1.PodSpec{TerminationGracePeriodSeconds: &grace, Containers: []corev1.Container{{Name: "c", Image: wl.Name}}}
	switch wl.Kind {
	case barePod:
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: wl.Name, Labels: sel, Annotations: ann}, Spec: spec}
		pod.Spec.NodeName = node(0)
		w.must(w.s.create(podsR, pod))
	case statefulSet:
		replicas := int32(wl.Replicas)
		o, err := w.s.create(stsR, &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: wl.Name},
			Spec: appsv1.StatefulSetSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: sel}, ServiceName: wl.Name,
				PodManagementPolicy: appsv1.ParallelPodManagement,
				Template:            corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: sel, Annotations: ann}, Spec: spec}}})
		if err != nil {
			w.failf("setup: %v", err)
			return
		}
		sts := o.(*appsv1.StatefulSet)
		for i := range wl.Replicas {
			pod := statefulPod(sts, i)
			pod.Annotations[readyAfter] = "0"
			pod.Spec.NodeName = node(i)
			w.must(w.s.create(podsR, pod))
		}
		w.pdbs(wl, sel, replicas)
	case job:
		ann[succeedAfter] = fmt.Sprint(wl.ReadyAfter)
		ann[readyAfter] = "0"
		o, err := w.s.create(jobsR, &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: wl.Name},
			Spec: batchv1.JobSpec{Selector: &metav1.LabelSelector{MatchLabels: sel},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: sel, Annotations: ann}, Spec: spec}}})
		if err != nil {
			w.failf("setup: %v", err)
			return
		}
		pod := jobPod(o.(*batchv1.Job))
		pod.Spec.NodeName = node(0)
		w.must(w.s.create(podsR, pod))
	}
}

// statefulPod is ordinal i of a StatefulSet, not yet scheduled: it uses
// the claim of each of the StatefulSet's volumeClaimTemplates made for it
// (<template>-<pod>).
func statefulPod(sts *appsv1.StatefulSet, i int) *corev1.Pod {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: sts.Namespace, Name: fmt.Sprintf("%s-%d", sts.Name, i),
		Labels: sts.Spec.Template.Labels, Annotations: map[string]string{},
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(sts, appsv1.SchemeGroupVersion.WithKind("StatefulSet"))}},
		Spec: *sts.Spec.Template.Spec.DeepCopy()}
	for k, v := range sts.Spec.Template.Annotations {
		pod.Annotations[k] = v
	}
	for _, t := range sts.Spec.VolumeClaimTemplates {
		pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: t.Name,
			VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: t.Name + "-" + pod.Name}}})
	}
	return pod
}

// jobPod is a new pod of a Job, not yet scheduled.
func jobPod(j *batchv1.Job) *corev1.Pod {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: j.Namespace, GenerateName: j.Name + "-",
		Labels: j.Spec.Template.Labels, Annotations: map[string]string{},
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(j, batchv1.SchemeGroupVersion.WithKind("Job"))}},
		Spec: *j.Spec.Template.Spec.DeepCopy()}
	for k, v := range j.Spec.Template.Annotations {
		pod.Annotations[k] = v
	}
	pod.Spec.RestartPolicy = corev1.RestartPolicyNever
	return pod
}

// statefulSets makes each missing ordinal of every StatefulSet once the
// pod of that name is gone (a deleting pod still holds its name), with the
// same name and a new UID, continuing the lineage of the evicted pod of
// that name; deletes the ordinals over its count; and writes its status.
func (s *store) statefulSets(readyDelay func() string) int {
	n := 0
	for _, o := range s.list(stsR, "", nil) {
		sts := o.(*appsv1.StatefulSet)
		want := int(ptrOr(sts.Spec.Replicas, 1))
		replicas, readyN := 0, 0
		for i := 0; ; i++ {
			name := fmt.Sprintf("%s-%d", sts.Name, i)
			p, err := s.get(podsR, sts.Namespace, name)
			if err != nil {
				if i >= want {
					break
				}
				pod := statefulPod(sts, i)
				pod.Annotations[readyAfter] = readyDelay()
				if c, err := s.create(podsR, pod); err == nil {
					n++
					replicas++
					if l, ok := s.named[key(sts.Namespace, name)]; ok {
						s.lineage[c.(*corev1.Pod).UID] = l
						delete(s.named, key(sts.Namespace, name))
					}
				}
				continue
			}
			pod := p.(*corev1.Pod)
			if i >= want && pod.DeletionTimestamp == nil {
				if _, err := s.remove(podsR, pod.Namespace, pod.Name, pod.UID, true); err == nil {
					n++
				}
				continue
			}
			if pod.DeletionTimestamp == nil {
				replicas++
				if ready(pod) {
					readyN++
				}
			}
		}
		st := appsv1.StatefulSetStatus{ObservedGeneration: sts.Generation, Replicas: int32(replicas), ReadyReplicas: int32(readyN),
			CurrentReplicas: int32(replicas), UpdatedReplicas: int32(replicas), AvailableReplicas: int32(readyN)}
		if !jsonEqual(st, sts.Status) {
			sts.Status = st
			if _, err := s.update(stsR, sts, true); err == nil {
				n++
			}
		}
	}
	return n
}

// jobs runs every Job to one completion: while it has not succeeded and
// no pod of it is active (not deleting, not ended), it makes a new one,
// continuing the lineage of the evicted one; a pod that Succeeded
// completes it. It writes the Job's status.
func (s *store) jobs() int {
	n := 0
	for _, o := range s.list(jobsR, "", nil) {
		j := o.(*batchv1.Job)
		active, succeeded, failed := int32(0), j.Status.Succeeded, j.Status.Failed
		for _, p := range s.list(podsR, j.Namespace, nil) {
			pod := p.(*corev1.Pod)
			if ref := metav1.GetControllerOf(pod); ref == nil || ref.UID != j.UID {
				continue
			}
			switch {
			case pod.Status.Phase == corev1.PodSucceeded:
				succeeded = 1
			case pod.DeletionTimestamp == nil && pod.Status.Phase != corev1.PodFailed:
				active++
			}
		}
		if succeeded == 0 && active == 0 {
			if c, err := s.create(podsR, jobPod(j)); err == nil {
				n++
				active++
				failed++ // the pod it replaces was deleted before it ended
				if h := s.holes[j.UID]; len(h) > 0 {
					s.lineage[c.(*corev1.Pod).UID] = h[0]
					delete(s.holes, j.UID)
				}
			}
		}
		st := *j.Status.DeepCopy()
		st.Active, st.Succeeded, st.Failed = active, succeeded, failed
		if succeeded > 0 && st.CompletionTime == nil {
			now := s.now()
			st.CompletionTime = &now
			st.Conditions = append(st.Conditions, batchv1.JobCondition{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now})
		}
		if !jsonEqual(st, j.Status) {
			j.Status = st
			if _, err := s.update(jobsR, j, true); err == nil {
				n++
			}
		}
	}
	return n
}

// succeeded ends a running pod of a Job whose run is over (kubelet);
// false when it is not due. due is the kubelet's clock check.
func (s *store) succeeded(pod *corev1.Pod, due func(time.Time) bool) bool {
	run, err := strconv.Atoi(pod.Annotations[succeedAfter])
	if err != nil || pod.Status.StartTime == nil || pod.Status.Phase != corev1.PodRunning || !due(pod.Status.StartTime.Add(time.Duration(run)*time.Second)) {
		return false
	}
	pod.Status.Phase = corev1.PodSucceeded
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == corev1.PodReady {
			pod.Status.Conditions[i].Status, pod.Status.Conditions[i].LastTransitionTime = corev1.ConditionFalse, s.now()
		}
	}
	_, err = s.update(podsR, pod, true)
	return err == nil
}

// deleteBare plays a person who deletes a bare pod (kubectl delete pod),
// so that a plan blocked on it goes on; w.mu is held.
func (w *World) deleteBare() {
	for _, o := range w.s.list(podsR, Namespace, nil) {
		if pod := o.(*corev1.Pod); metav1.GetControllerOf(pod) == nil && pod.DeletionTimestamp == nil {
			_, err := w.s.remove(podsR, pod.Namespace, pod.Name, "", true)
			w.logf("person: delete bare pod %s -> %s", pod.Name, errText(err))
			return
		}
	}
}

// workloadOf is the workload a pod belongs to on the server, as a plan
// names it: a ReplicaSet's Deployment (or the ReplicaSet), a StatefulSet, a
// Job; ok is false for a pod without a controller. w.mu is held.
func (w *World) workloadOf(pod *corev1.Pod) (ref api.WorkloadRef, uid types.UID, ok bool) {
	c := metav1.GetControllerOf(pod)
	if c == nil {
		return ref, "", false
	}
	ref, uid = api.WorkloadRef{Kind: c.Kind, Namespace: pod.Namespace, Name: c.Name}, c.UID
	if c.Kind == "ReplicaSet" {
		if o, err := w.s.get(rsR, pod.Namespace, c.Name); err == nil {
			if d := metav1.GetControllerOf(o.(*appsv1.ReplicaSet)); d != nil && d.Kind == "Deployment" {
				ref, uid = api.WorkloadRef{Kind: d.Kind, Namespace: pod.Namespace, Name: d.Name}, d.UID
			}
		}
	}
	return ref, uid, true
}

// checkAllowed checks an eviction of maintd against what people wrote: no
// bare pod (no controller: nothing makes it again) is evicted, and a pod
// on the node of a plan that lists its workloads (spec.workloads, the
// plan whose cordon the node carries on the server) belongs to one of
// them. w.mu is held.
func (w *World) checkAllowed(in *instance, pod *corev1.Pod) {
	ref, _, ok := w.workloadOf(pod)
	if !ok {
		w.violate("%s evicted %s/%s, a bare pod (no controller makes it again)", in.name, pod.Namespace, pod.Name)
		return
	}
	p := w.cordonPlan(pod.Spec.NodeName)
	if p == nil {
		return
	}
	if len(p.Spec.Workloads) > 0 && !slices.Contains(p.Spec.Workloads, ref) {
		w.violate("%s evicted %s/%s of %s %s for plan %s, which lists only %v", in.name, pod.Namespace, pod.Name, ref.Kind, ref.Name, p.Name, p.Spec.Workloads)
	}
}
