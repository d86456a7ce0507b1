package slots

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
)

func plan(name, node string, uid types.UID, phase api.Phase) *api.MaintenancePlan {
	return &api.MaintenancePlan{ObjectMeta: metav1.ObjectMeta{Name: name, UID: uid},
		Spec: api.MaintenancePlanSpec{NodeName: node}, Status: api.MaintenancePlanStatus{Phase: phase}}
}

func TestHeld(t *testing.T) {
	a := plan("a", "n1", "uid-a", api.Draining)
	b := plan("b", "n2", "uid-b", api.Cordoning)
	recreated := plan("c", "n3", "uid-c2", api.Pending) // the annotation names uid-c1
	done := plan("d", "n4", "uid-d", api.Completed)
	landed := plan("e", "n5", "uid-e", api.Cordoning) // Cordoning, and its cordon is seen
	// Failed at its deadline while cordoning: its cordon may have landed
	// (a lagging cache shows neither), unless it was refused.
	failed := plan("f", "n6", "uid-f", api.Failed)
	failed.Status.Reason = api.DeadlineExceeded
	failed.Status.History = []api.Transition{{Phase: api.Cordoning, Reason: api.CordonSubmitted}, {Phase: api.Failed, Reason: api.DeadlineExceeded}}
	refused := failed.DeepCopy()
	refused.Name, refused.UID, refused.Spec.NodeName = "g", "uid-g", "n7"
	refused.Status.Conditions = []metav1.Condition{{Type: api.ConditionRefused, Status: metav1.ConditionFalse}} // turned False as it failed
	drained := failed.DeepCopy()
	drained.Name, drained.UID, drained.Spec.NodeName = "h", "uid-h", "n8"
	drained.Status.History[0].Phase = api.Draining
	tests := []struct {
		name   string
		plans  []*api.MaintenancePlan
		owners map[string]string
		want   []string // node/plan/landed
	}{
		{name: "nothing", want: []string{}},
		{name: "an annotation that names an existing plan holds",
			plans: []*api.MaintenancePlan{a}, owners: map[string]string{"n1": "maintenanceplan/a/uid-a"}, want: []string{"n1/a/true"}},
		{name: "a plan cordoning holds its node before the annotation lands",
			plans: []*api.MaintenancePlan{b}, want: []string{"n2/b/false"}},
		{name: "an annotation of a plan re-created under the same name holds nothing",
			plans: []*api.MaintenancePlan{recreated}, owners: map[string]string{"n3": "maintenanceplan/c/uid-c1"}, want: []string{}},
		{name: "an annotation of a plan that is gone holds nothing",
			owners: map[string]string{"n1": "maintenanceplan/a/uid-a"}, want: []string{}},
		{name: "another owner's cordon is not a maintenance slot",
			plans: []*api.MaintenancePlan{a}, owners: map[string]string{"n1": "change-4711"}, want: []string{}},
		{name: "a plan that is Draining without its annotation (uncordoned by hand) holds nothing",
			plans: []*api.MaintenancePlan{a}, want: []string{}},
		{name: "a Completed plan whose annotation is still there holds it until it is lifted",
			plans: []*api.MaintenancePlan{done}, owners: map[string]string{"n4": "maintenanceplan/d/uid-d"}, want: []string{"n4/d/true"}},
		{name: "a node counts once, landed",
			plans: []*api.MaintenancePlan{landed}, owners: map[string]string{"n5": "maintenanceplan/e/uid-e"}, want: []string{"n5/e/true"}},
		{name: "a plan that failed while cordoning holds its node: its cordon may have landed (seed 186)",
			plans: []*api.MaintenancePlan{failed}, want: []string{"n6/f/false"}},
		{name: "one whose cordon was refused does not",
			plans: []*api.MaintenancePlan{refused}, want: []string{}},
		{name: "nor one that failed draining, its annotation gone",
			plans: []*api.MaintenancePlan{drained}, want: []string{}},
		{name: "in node order",
			plans:  []*api.MaintenancePlan{landed, b, a},
			owners: map[string]string{"n1": "maintenanceplan/a/uid-a", "n5": "maintenanceplan/e/uid-e"},
			want:   []string{"n1/a/true", "n2/b/false", "n5/e/true"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := []string{}
			for _, h := range Held(tc.plans, tc.owners) {
				got = append(got, h.Node+"/"+h.Plan.Name+"/"+map[bool]string{true: "true", false: "false"}[h.Landed])
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Held (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOthers(t *testing.T) {
	a, b := plan("a", "n1", "uid-a", api.Cordoning), plan("b", "n2", "uid-b", api.Cordoning)
	held := Held([]*api.MaintenancePlan{a, b}, nil)
	if got := Nodes(Others(held, a)); !cmp.Equal(got, []string{"n2"}) {
		t.Errorf("Others(a) = %v, want [n2]", got)
	}
	if got := Nodes(held); !cmp.Equal(got, []string{"n1", "n2"}) {
		t.Errorf("Others must not change held: %v", got)
	}
}
