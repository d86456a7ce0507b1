package verify

import (
	"bytes"
	"fmt"

	"sigs.k8s.io/yaml"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
)

// ParsePlans reads plans from YAML or JSON: a MaintenancePlanList, a List
// of MaintenancePlans (kubectl get maintenanceplans -o yaml), or one
// MaintenancePlan (kubectl get maintenanceplan NAME -o yaml, kubectl maint
// uncordon -o yaml). Anything else is an error saying what it is.
func ParsePlans(data []byte) ([]api.MaintenancePlan, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("plans: empty")
	}
	var head struct {
		Kind string `json:"kind"`
	}
	if err := yaml.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("plans: %w", err)
	}
	switch head.Kind {
	case "MaintenancePlan":
		var p api.MaintenancePlan
		if err := yaml.Unmarshal(data, &p); err != nil {
			return nil, fmt.Errorf("plans: MaintenancePlan: %w", err)
		}
		if err := valid(&p, "MaintenancePlan"); err != nil {
			return nil, err
		}
		return []api.MaintenancePlan{p}, nil
	case "MaintenancePlanList", "List":
		var l api.MaintenancePlanList
		if err := yaml.Unmarshal(data, &l); err != nil {
			return nil, fmt.Errorf("plans: %s: %w", head.Kind, err)
		}
		for i := range l.Items {
			if err := valid(&l.Items[i], fmt.Sprintf("%s item %d", head.Kind, i)); err != nil {
				return nil, err
			}
		}
		return l.Items, nil
	case "":
		return nil, fmt.Errorf("plans: no kind: want a MaintenancePlanList, a List of MaintenancePlans or a MaintenancePlan (kubectl get maintenanceplans -o yaml)")
	}
	return nil, fmt.Errorf("plans: kind %s: want a MaintenancePlanList, a List of MaintenancePlans or a MaintenancePlan", head.Kind)
}

// valid checks a plan read from a file: its kind (when given) and name.
func valid(p *api.MaintenancePlan, what string) error {
	if p.Kind != "" && p.Kind != "MaintenancePlan" {
		return fmt.Errorf("plans: %s: kind %s, want MaintenancePlan", what, p.Kind)
	}
	if p.APIVersion != "" && p.APIVersion != api.SchemeGroupVersion.String() {
		return fmt.Errorf("plans: %s: apiVersion %s, want %s", what, p.APIVersion, api.SchemeGroupVersion)
	}
	if p.Name == "" {
		return fmt.Errorf("plans: %s: no metadata.name", what)
	}
	return nil
}
