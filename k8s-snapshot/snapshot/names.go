package snapshot

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Names is each list of s as sorted "namespace/name" strings.
func Names(s *Snapshot) map[string][]string {
	out := map[string][]string{}
	add := func(kind string, m metav1.Object) {
		n := m.GetName()
		if m.GetNamespace() != "" {
			n = m.GetNamespace() + "/" + n
		}
		out[kind] = append(out[kind], n)
	}
	each(s.Nodes, "nodes", add)
	each(s.Pods, "pods", add)
	each(s.ReplicaSets, "replicaSets", add)
	each(s.Deployments, "deployments", add)
	each(s.StatefulSets, "statefulSets", add)
	each(s.DaemonSets, "daemonSets", add)
	each(s.Jobs, "jobs", add)
	each(s.CronJobs, "cronJobs", add)
	each(s.PodDisruptionBudgets, "podDisruptionBudgets", add)
	each(s.PersistentVolumeClaims, "persistentVolumeClaims", add)
	each(s.PersistentVolumes, "persistentVolumes", add)
	each(s.StorageClasses, "storageClasses", add)
	each(s.HorizontalPodAutoscalers, "horizontalPodAutoscalers", add)
	for _, v := range out {
		slices.Sort(v)
	}
	return out
}

func each[T any, PT interface {
	*T
	metav1.Object
}](items []T, kind string, f func(string, metav1.Object)) {
	for i := range items {
		f(kind, PT(&items[i]))
	}
}
