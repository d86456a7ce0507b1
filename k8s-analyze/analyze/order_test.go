package analyze

import (
	"bytes"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sentinel-go/sentinel/k8s-analyze/decode"
	"github.com/sentinel-go/sentinel/k8s-snapshot/snapshot"
)

// storageSnapshot is testdata/storage.yaml, with edit applied.
func storageSnapshot(t *testing.T, edit func(*snapshot.Snapshot)) *snapshot.Snapshot {
	t.Helper()
	data, err := os.ReadFile("testdata/storage.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s, err := decode.Full(bytes.NewReader(data), 0)
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(s)
	}
	return s
}

const rbd = "rook-ceph.rbd.csi.ceph.com"

func TestNodeAttachments(t *testing.T) {
	s := storageSnapshot(t, nil)
	want := []Attachment{
		{Volume: "kubernetes.io/aws-ebs/aws://us-east-1a/vol-1", Driver: "kubernetes.io/aws-ebs", Attached: true},
		{Volume: "kubernetes.io/csi/ebs.csi.aws.com^vol-9", PV: "pv-ebs", Claim: "shop/logs", Driver: "ebs.csi.aws.com", Attached: true, Pods: []string{"shop/logger"}},
		{VolumeAttachment: "va-db0", Volume: "kubernetes.io/csi/" + rbd + "^h0", PV: "pv-db0", Claim: "shop/data-db-0", Driver: rbd, Attached: true, Pods: []string{"shop/db-0", "shop/done"}},
		{VolumeAttachment: "va-gone", PV: "pv-gone", Driver: rbd, Attached: true, Detaching: true, DetachError: "rpc error: volume not found", Leaked: LeakPVGone},
		{VolumeAttachment: "va-noclaim", PV: "pv-orphan", Claim: "shop/deleted", Driver: rbd, Attached: true, Leaked: LeakClaimGone},
	}
	if diff := cmp.Diff(want, NodeAttachments(s, "n1")); diff != "" {
		t.Errorf("NodeAttachments(n1) (-want +got):\n%s", diff)
	}
	want2 := []Attachment{{VolumeAttachment: "va-elsewhere", PV: "pv-db0", Claim: "shop/data-db-0", Driver: rbd}}
	if diff := cmp.Diff(want2, NodeAttachments(s, "n2")); diff != "" {
		t.Errorf("NodeAttachments(n2) (-want +got):\n%s", diff)
	}
	if got := NodeAttachments(s, "nowhere"); got != nil {
		t.Errorf("NodeAttachments(nowhere) = %v, want none", got)
	}
}

func TestNodeAttachmentsClaimReplaced(t *testing.T) {
	s := storageSnapshot(t, func(s *snapshot.Snapshot) {
		s.PersistentVolumeClaims[0].UID = "pvc-db-new" // data-db-0 deleted and made again: pv-db0 is not its volume
	})
	for _, a := range NodeAttachments(s, "n1") {
		if a.PV == "pv-db0" && a.Leaked != LeakClaimGone {
			t.Errorf("pv-db0 bound to a claim of another UID: Leaked %q, want %q", a.Leaked, LeakClaimGone)
		}
	}
}

func TestDrainOrder(t *testing.T) {
	sel := func(k, v string) *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchLabels: map[string]string{k: v}}
	}
	storageGroup := func(order int32, consumers string) DrainGroup {
		return DrainGroup{Order: order, Behavior: BehaviorDrain, Why: "storage provider of driver " + rbd + " for " + consumers,
			Pods: []string{"rook-ceph/mgr-0", "rook-ceph/osd-0"}, Drivers: []string{rbd}, WaitsFor: []string{"va-db0"}}
	}
	for name, tc := range map[string]struct {
		edit  func(*snapshot.Snapshot)
		node  string
		rules []DrainRule
		want  []DrainGroup
	}{
		"storage last by itself": {
			node: "n1",
			want: []DrainGroup{
				{Order: 0, Behavior: BehaviorDrain, Why: "default", Pods: []string{"shop/db-0", "shop/logger", "shop/web-0"}},
				storageGroup(1, "1 pod"),
			},
		},
		"a provider with no consumer on its node is an ordinary pod": {
			node: "n2",
			want: []DrainGroup{{Order: 0, Behavior: BehaviorDrain, Why: "default", Pods: []string{"longhorn-system/instance-manager-n2"}}},
		},
		"rules by pod and namespace selector, the lowest name wins, the annotation beats them": {
			node: "n1",
			edit: func(s *snapshot.Snapshot) {
				s.Pods[4].Annotations = map[string]string{DrainAnnotation: "order=-1"} // logger
			},
			rules: []DrainRule{
				{Name: "z-skip-web", Behavior: BehaviorSkip, Pods: []DrainRulePods{{Selector: sel("app", "web")}}},
				{Name: "a-web-late", Order: 5, Pods: []DrainRulePods{{Selector: sel("app", "web")}}},
				{Name: "db-wait", Behavior: BehaviorWaitCompleted, Order: 9, Pods: []DrainRulePods{{Selector: sel("app", "db"), NamespaceSelector: sel("team", "shop")}}},
				{Name: "logger-skip", Behavior: BehaviorSkip, Pods: []DrainRulePods{{Selector: sel("app", "logger")}}},
				{Name: "other-team", Behavior: BehaviorSkip, Pods: []DrainRulePods{{NamespaceSelector: sel("team", "other")}}},
			},
			want: []DrainGroup{
				{Order: -1, Behavior: BehaviorDrain, Why: "annotation", Pods: []string{"shop/logger"}},
				{Order: 0, Behavior: BehaviorWaitCompleted, Why: "rule db-wait", Pods: []string{"shop/db-0"}},
				{Order: 5, Behavior: BehaviorDrain, Why: "rule a-web-late", Pods: []string{"shop/web-0"}},
				storageGroup(6, "1 pod"),
			},
		},
		"a rule for a provider is the person's word; skipped pods come last": {
			node: "n1",
			rules: []DrainRule{
				{Name: "osd", Behavior: BehaviorSkip, Pods: []DrainRulePods{{Selector: sel("app", "rook-ceph-osd")}}},
				{Name: "web", Order: 3, Pods: []DrainRulePods{{Selector: sel("app", "web")}}},
			},
			want: []DrainGroup{
				{Order: 0, Behavior: BehaviorDrain, Why: "default", Pods: []string{"shop/db-0", "shop/logger"}},
				{Order: 3, Behavior: BehaviorDrain, Why: "rule web", Pods: []string{"shop/web-0"}},
				{Order: 4, Behavior: BehaviorDrain, Why: "storage provider of driver " + rbd + " for 1 pod", Pods: []string{"rook-ceph/mgr-0"}, Drivers: []string{rbd}, WaitsFor: []string{"va-db0"}},
				{Order: 0, Behavior: BehaviorSkip, Why: "rule osd", Pods: []string{"rook-ceph/osd-0"}},
			},
		},
		"the consumers gone, the providers wait for the attachment": {
			node: "n1",
			edit: func(s *snapshot.Snapshot) {
				s.Pods = append(s.Pods[:3], s.Pods[4:]...) // db-0 gone
			},
			want: []DrainGroup{
				{Order: 0, Behavior: BehaviorDrain, Why: "default", Pods: []string{"shop/logger", "shop/web-0"}},
				storageGroup(1, "0 pods"),
			},
		},
		"the annotation names a driver no label or plugin tells": {
			node: "n1",
			edit: func(s *snapshot.Snapshot) {
				s.Pods[5].Annotations = map[string]string{StorageProviderAnnotation: "example.com/x, ebs.csi.aws.com"} // web-0
			},
			want: []DrainGroup{
				{Order: 0, Behavior: BehaviorDrain, Why: "default", Pods: []string{"shop/db-0", "shop/logger"}},
				{Order: 1, Behavior: BehaviorDrain, Why: "storage provider of driver ebs.csi.aws.com for 1 pod; storage provider of driver " + rbd + " for 1 pod",
					Pods: []string{"rook-ceph/mgr-0", "rook-ceph/osd-0", "shop/web-0"}, Drivers: []string{"ebs.csi.aws.com", rbd},
					WaitsFor: []string{"kubernetes.io/csi/ebs.csi.aws.com^vol-9", "va-db0"}},
			},
		},
		"a provider that uses another's volume goes before it": {
			node: "n1",
			edit: func(s *snapshot.Snapshot) {
				s.Pods[4].Annotations = map[string]string{StorageProviderAnnotation: rbd} // logger serves Ceph, on EBS
				s.Pods[5].Annotations = map[string]string{StorageProviderAnnotation: "ebs.csi.aws.com"}
			},
			want: []DrainGroup{
				{Order: 0, Behavior: BehaviorDrain, Why: "default", Pods: []string{"shop/db-0"}},
				{Order: 1, Behavior: BehaviorDrain, Why: "storage provider of driver " + rbd + " for 1 pod",
					Pods: []string{"rook-ceph/mgr-0", "rook-ceph/osd-0", "shop/logger"}, Drivers: []string{rbd}, WaitsFor: []string{"va-db0"}},
				{Order: 2, Behavior: BehaviorDrain, Why: "storage provider of driver ebs.csi.aws.com for 1 pod",
					Pods: []string{"shop/web-0"}, Drivers: []string{"ebs.csi.aws.com"}, WaitsFor: []string{"kubernetes.io/csi/ebs.csi.aws.com^vol-9"}},
			},
		},
		"a bad annotation is ignored, a bad selector matches nothing": {
			node: "n1",
			edit: func(s *snapshot.Snapshot) {
				s.Pods[5].Annotations = map[string]string{DrainAnnotation: "order=soon"}
			},
			rules: []DrainRule{{Name: "bad", Behavior: BehaviorSkip, Pods: []DrainRulePods{{Selector: &metav1.LabelSelector{
				MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Bogus"}}}}}}},
			want: []DrainGroup{
				{Order: 0, Behavior: BehaviorDrain, Why: "default", Pods: []string{"shop/db-0", "shop/logger", "shop/web-0"}},
				storageGroup(1, "1 pod"),
			},
		},
	} {
		t.Run(name, func(t *testing.T) {
			s := storageSnapshot(t, tc.edit)
			if diff := cmp.Diff(tc.want, DrainOrder(s, tc.node, tc.rules)); diff != "" {
				t.Errorf("DrainOrder (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDrainOrderWithoutNamespaces: a snapshot without namespaces (older
// than the field) matches a namespace selector by the name label alone.
func TestDrainOrderWithoutNamespaces(t *testing.T) {
	s := storageSnapshot(t, func(s *snapshot.Snapshot) { s.Namespaces = nil })
	rules := []DrainRule{
		{Name: "by-name", Order: 2, Pods: []DrainRulePods{{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "shop"}}}}},
		{Name: "by-team", Behavior: BehaviorSkip, Pods: []DrainRulePods{{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "shop"}}}}},
	}
	got := DrainOrder(s, "n1", rules)
	want := []DrainGroup{
		{Order: 2, Behavior: BehaviorDrain, Why: "rule by-name", Pods: []string{"shop/db-0", "shop/logger", "shop/web-0"}},
		{Order: 3, Behavior: BehaviorDrain, Why: "storage provider of driver " + rbd + " for 1 pod", Pods: []string{"rook-ceph/mgr-0", "rook-ceph/osd-0"}, Drivers: []string{rbd}, WaitsFor: []string{"va-db0"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("DrainOrder (-want +got):\n%s", diff)
	}
}
