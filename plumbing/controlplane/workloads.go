package controlplane

import (
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// WaitWorkloadsReady waits until every Deployment, StatefulSet and DaemonSet
// in the cluster has all its replicas Ready and up to date.
func (cp *ControlPlane) WaitWorkloadsReady(ctx context.Context) error {
	apps := cp.Clientset(Admin).AppsV1()
	ctx, cancel := withDefaultTimeout(ctx)
	defer cancel()
	var waiting []string
	err := cp.poll(ctx, "kube-controller-manager", func(ctx context.Context) (bool, error) {
		waiting = waiting[:0]
		deps, err := apps.Deployments("").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		for _, d := range deps.Items {
			want := int32(1)
			if d.Spec.Replicas != nil {
				want = *d.Spec.Replicas
			}
			if d.Status.ObservedGeneration < d.Generation || d.Status.ReadyReplicas < want || d.Status.UpdatedReplicas < want {
				waiting = append(waiting, fmt.Sprintf("deployment %s/%s %d/%d", d.Namespace, d.Name, d.Status.ReadyReplicas, want))
			}
		}
		sts, err := apps.StatefulSets("").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		for _, s := range sts.Items {
			want := int32(1)
			if s.Spec.Replicas != nil {
				want = *s.Spec.Replicas
			}
			if s.Status.ObservedGeneration < s.Generation || s.Status.ReadyReplicas < want {
				waiting = append(waiting, fmt.Sprintf("statefulset %s/%s %d/%d", s.Namespace, s.Name, s.Status.ReadyReplicas, want))
			}
		}
		dss, err := apps.DaemonSets("").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		for _, d := range dss.Items {
			if d.Status.ObservedGeneration < d.Generation || d.Status.DesiredNumberScheduled == 0 || d.Status.NumberReady < d.Status.DesiredNumberScheduled {
				waiting = append(waiting, fmt.Sprintf("daemonset %s/%s %d/%d", d.Namespace, d.Name, d.Status.NumberReady, d.Status.DesiredNumberScheduled))
			}
		}
		return len(waiting) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("workloads not ready (%s): %w", strings.Join(waiting, ", "), err)
	}
	return nil
}

// ScaleDeployment is the Deployment and PodDisruptionBudget of the scale
// benchmarks and of the 1,000-node test of this package, a format for
// fmt: %[1]s the name, %[2]s the namespace, %[3]d the replicas. Its pods
// go to the nodes of pool "scale", spread one per node, and request
// 500m cpu and 512Mi.
const ScaleDeployment = `apiVersion: apps/v1
kind: Deployment
metadata: {name: %[1]s, namespace: %[2]s}
spec:
  replicas: %[3]d
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s, tier: scale}}
    spec:
      nodeSelector: {sentinel.dev/pool: scale}
      topologySpreadConstraints:
      - maxSkew: 1
        topologyKey: kubernetes.io/hostname
        whenUnsatisfiable: DoNotSchedule
        nodeTaintsPolicy: Honor
        labelSelector: {matchLabels: {app: %[1]s}}
      containers:
      - name: app
        image: registry.example/%[1]s:1
        resources: {requests: {cpu: 500m, memory: 512Mi}}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: %[1]s, namespace: %[2]s}
spec:
  maxUnavailable: 1
  selector: {matchLabels: {app: %[1]s}}
---
`
