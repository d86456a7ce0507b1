package snapshot

import (
	"bytes"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// FromManifests builds a Snapshot from Kubernetes objects written as YAML
// documents (separated by "---" lines), strictly decoded, in file order. It
// also returns the objects themselves, e.g. to seed a fake clientset.
func FromManifests(data []byte) (*Snapshot, []runtime.Object, error) {
	s := New()
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
