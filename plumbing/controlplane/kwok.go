package controlplane

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// PodReadyDelayAnnotation on a pod delays its Ready condition by the given
// duration ("2s") after it is scheduled.
const PodReadyDelayAnnotation = "pod-ready.stage.kwok.x-k8s.io/delay"

// PodReadyJitterAnnotation on a pod with PodReadyDelayAnnotation makes its
// Ready delay a random one between the two ("2s" and "3s": 2-3 s), drawn by
// kwok for each pod: the jitter of a real workload's start.
const PodReadyJitterAnnotation = "pod-ready.stage.kwok.x-k8s.io/jitter"

// PodDeleteDelayAnnotation on a pod delays its removal by the given
// duration ("5s") after it is deleted: a pod that takes that long to exit
// (give it at least that grace). Without it a deleted pod goes at once.
const PodDeleteDelayAnnotation = "pod-delete.stage.kwok.x-k8s.io/delay"

// PodWaitForAttachLabel "true" on a pod (with Options.Volumes) holds its
// Ready, as a kubelet would, until the pod is annotated
// PodVolumesAttachedAnnotation "true": package attacher does that once each
// CSI volume of its driver the pod uses is attached to the pod's node. The
// pod-ready delay (PodReadyDelayAnnotation) counts from then.
const (
	PodWaitForAttachLabel        = "attacher.sentinel.dev/wait-for-attach"
	PodVolumesAttachedAnnotation = "attacher.sentinel.dev/volumes-attached"
)

// PoolLabel groups the nodes of one test (or of the demo).
const PoolLabel = "sentinel.dev/pool"

// Node heartbeats. kwok renews each node's lease every quarter of
// nodeLeaseDuration (as a kubelet renews its 40 s lease every 10 s), so a
// cluster of N nodes costs 4N/nodeLeaseDuration lease writes a second:
// about 17 at 1,000 nodes, against 100 with a kubelet's 40 s. The node
// lifecycle controller marks a node Unknown, and every pod on it not Ready
// for good (kwok does not make them Ready again), once it has seen no
// renewal for nodeMonitorGracePeriod: the grace must exceed the renewal
// interval (60 s) by however far kwok falls behind on a busy machine; it
// leaves three renewals' slack. No test waits for the controller to notice
// a silent node: tests that want a node NotReady set its condition
// themselves, so the long grace costs them nothing.
const (
	nodeLeaseDuration      = 240 * time.Second
	nodeMonitorGracePeriod = nodeLeaseDuration
)

// writeKwokConfig takes kwok's published stages and gives the pod-ready
// and pod-delete stages a per-pod delay read from PodReadyDelayAnnotation
// and PodDeleteDelayAnnotation.
func (cp *ControlPlane) writeKwokConfig() error {
	data, err := os.ReadFile(cp.bin("kwok-stages.yaml"))
	if err != nil {
		return err
	}
	var out bytes.Buffer
	found := 0
	for doc := range bytes.SplitSeq(data, []byte("\n---")) {
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		var stage map[string]any
		if err := yaml.Unmarshal(doc, &stage); err != nil {
			return fmt.Errorf("kwok stages: %w", err)
		}
		meta, _ := stage["metadata"].(map[string]any)
		spec, _ := stage["spec"].(map[string]any)
		if meta != nil && spec != nil {
			if annotation, ok := map[any]string{"pod-ready": PodReadyDelayAnnotation, "pod-delete": PodDeleteDelayAnnotation}[meta["name"]]; ok {
				delay := map[string]any{
					"durationMilliseconds": 0,
					"durationFrom":         map[string]any{"expressionFrom": `.metadata.annotations["` + annotation + `"]`},
				}
				if meta["name"] == "pod-ready" {
					// Without the annotation, kwok takes the delay alone.
					delay["jitterDurationFrom"] = map[string]any{"expressionFrom": `.metadata.annotations["` + PodReadyJitterAnnotation + `"]`}
				}
				spec["delay"] = delay
				found++
			}
			if meta["name"] == "pod-ready" && cp.volumes {
				selector, _ := spec["selector"].(map[string]any)
				if selector == nil {
					return fmt.Errorf("kwok stages: the pod-ready stage has no selector")
				}
				exprs, _ := selector["matchExpressions"].([]any)
				selector["matchExpressions"] = append(exprs, map[string]any{
					"key":      `.metadata.labels["` + PodWaitForAttachLabel + `"] != "true" or .metadata.annotations["` + PodVolumesAttachedAnnotation + `"] == "true"`,
					"operator": "In",
					"values":   []any{"true"},
				})
			}
		}
		b, err := yaml.Marshal(stage)
		if err != nil {
			return err
		}
		out.WriteString("---\n")
		out.Write(b)
	}
	if found != 2 {
		return fmt.Errorf("kwok stages: no pod-ready or pod-delete stage in %s", cp.bin("kwok-stages.yaml"))
	}
	return os.WriteFile(filepath.Join(cp.dir, "kwok.yaml"), out.Bytes(), 0o644)
}

// CreateNodes creates kwok nodes with the given names, labelled with pool,
// and waits until each is Ready and free of the not-ready taints. With
// Options.Volumes each is annotated ControllerManagedAttachAnnotation.
func (cp *ControlPlane) CreateNodes(ctx context.Context, pool string, names ...string) error {
	nodes := cp.Clientset(Admin).CoreV1().Nodes()
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("32"),
		corev1.ResourceMemory: resource.MustParse("256Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	for _, name := range names {
		node := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{
				Name:        name,
				Labels:      map[string]string{"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "type": "kwok", PoolLabel: pool},
				Annotations: map[string]string{"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"},
			},
			Status: corev1.NodeStatus{Capacity: capacity, Allocatable: capacity},
		}
		if cp.volumes {
			node.Annotations[ControllerManagedAttachAnnotation] = "true"
		}
		if _, err := nodes.Create(ctx, node, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create node %s: %w", name, err)
		}
	}
	ctx, cancel := withDefaultTimeout(ctx)
	defer cancel()
	return cp.poll(ctx, "kwok", func(ctx context.Context) (bool, error) {
		list, err := nodes.List(ctx, metav1.ListOptions{LabelSelector: PoolLabel + "=" + pool})
		if err != nil {
			return false, nil
		}
		ready := 0
		for _, n := range list.Items {
			if slices.Contains(names, n.Name) && NodeReady(&n) {
				ready++
			}
		}
		return ready == len(names), nil
	})
}

// NodeReady is true when node is Ready and has no not-ready/unreachable taint.
func NodeReady(node *corev1.Node) bool {
	for _, t := range node.Spec.Taints {
		if t.Key == corev1.TaintNodeNotReady || t.Key == corev1.TaintNodeUnreachable {
			return false
		}
	}
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
