// Package snapshottest builds Snapshots for tests: from YAML manifests,
// and compared by the names they hold.
package snapshottest

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/sentinel-go/sentinel/k8s-snapshot/snapshot"
)

// Load reads a multi-document YAML file of Kubernetes objects into a
// Snapshot (in file order) and the same objects, e.g. for a fake clientset.
func Load(t testing.TB, path string) (*snapshot.Snapshot, []runtime.Object) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s, objs, err := FromManifests(data)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return s, objs
}

// FromManifests builds a Snapshot from Kubernetes objects written as YAML
// documents (separated by "---" lines), strictly decoded, in file order. It
// also returns the objects themselves, e.g. to seed a fake clientset.
func FromManifests(data []byte) (*snapshot.Snapshot, []runtime.Object, error) {
	s := snapshot.New()
	var objs []runtime.Object
	for doc := range bytes.SplitSeq(data, []byte("\n---\n")) {
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &tm); err != nil {
			return nil, nil, err
		}
		var obj runtime.Object
		var err error
		switch tm.Kind {
		case "Node":
			obj, err = add(doc, &s.Nodes)
		case "Pod":
			obj, err = add(doc, &s.Pods)
		case "ReplicaSet":
			obj, err = add(doc, &s.ReplicaSets)
		case "Deployment":
			obj, err = add(doc, &s.Deployments)
		case "StatefulSet":
			obj, err = add(doc, &s.StatefulSets)
		case "DaemonSet":
			obj, err = add(doc, &s.DaemonSets)
		case "Job":
			obj, err = add(doc, &s.Jobs)
		case "CronJob":
			obj, err = add(doc, &s.CronJobs)
		case "PodDisruptionBudget":
			obj, err = add(doc, &s.PodDisruptionBudgets)
		case "PersistentVolumeClaim":
			obj, err = add(doc, &s.PersistentVolumeClaims)
		case "PersistentVolume":
			obj, err = add(doc, &s.PersistentVolumes)
		case "StorageClass":
			obj, err = add(doc, &s.StorageClasses)
		case "HorizontalPodAutoscaler":
			obj, err = add(doc, &s.HorizontalPodAutoscalers)
		case "VolumeAttachment":
			obj, err = add(doc, &s.VolumeAttachments)
		case "CSIDriver":
			obj, err = add(doc, &s.CSIDrivers)
		case "CSINode":
			obj, err = add(doc, &s.CSINodes)
		case "Namespace":
			obj, err = add(doc, &s.Namespaces)
		default:
			return nil, nil, fmt.Errorf("unexpected kind %q", tm.Kind)
		}
		if err != nil {
			return nil, nil, err
		}
		objs = append(objs, obj)
	}
	return s, objs, nil
}

func add[T any, PT interface {
	*T
	runtime.Object
}](doc []byte, into *[]T) (runtime.Object, error) {
	var v T
	if err := yaml.UnmarshalStrict(doc, &v); err != nil {
		return nil, fmt.Errorf("decode %T: %w", v, err)
	}
	*into = append(*into, v)
	return PT(&v), nil
}

// Names is each list of s as sorted "namespace/name" strings.
func Names(s *snapshot.Snapshot) map[string][]string {
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
	each(s.VolumeAttachments, "volumeAttachments", add)
	each(s.CSIDrivers, "csiDrivers", add)
	each(s.CSINodes, "csiNodes", add)
	each(s.Namespaces, "namespaces", add)
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
