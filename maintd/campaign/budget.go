package campaign

import (
	"fmt"
	"math"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	api "github.com/sentinel-go/sentinel/maintd/api/v1alpha1"
)

// BudgetNodes is how many of a campaign's total nodes its budget lets a
// wave take: a count, or a percentage of total rounded down and at least
// one; total when the budget names none.
func BudgetNodes(b *api.CampaignBudget, total int) int {
	if b == nil || b.Nodes == nil {
		return total
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(b.Nodes, total, false)
	if err != nil {
		return 1 // the CRD admits no other form; one at a time is the safe reading
	}
	return max(1, min(n, total))
}

// Domain is a node's topology domain under the budget's key ("" without
// the label, or without a key).
func Domain(b *api.CampaignBudget, n *corev1.Node) string {
	if b == nil || b.TopologyKey == "" || n == nil {
		return ""
	}
	return n.Labels[b.TopologyKey]
}

// waveNodes picks, in order, the remaining nodes a wave may take: at most
// limit (the budget's count when byCount, else the free slots), and under
// a topology key at most the budget's per domain (or all of the first
// remaining node's domain). Why says what of the budget bound the wave, ""
// when it did not.
func waveNodes(remaining []string, limit int, byCount bool, b *api.CampaignBudget, nodes map[string]*corev1.Node) (picked []string, why string) {
	perDomain := math.MaxInt
	if b != nil && b.TopologyKey != "" {
		perDomain = int(max(b.MaxPerDomain, 1))
		if b.OneDomainAtATime && b.MaxPerDomain == 0 {
			perDomain = math.MaxInt
		}
	}
	count := map[string]int{}
	first, skipped := "", 0
	for _, name := range remaining {
		if len(picked) == limit {
			break
		}
		d := Domain(b, nodes[name])
		if b != nil && b.OneDomainAtATime && len(picked) > 0 && d != first {
			skipped++
			continue
		}
		if count[d] >= perDomain {
			skipped++
			continue
		}
		if len(picked) == 0 {
			first = d
		}
		count[d]++
		picked = append(picked, name)
	}
	switch {
	case skipped > 0 && b.OneDomainAtATime:
		why = fmt.Sprintf("one %s at a time (%s=%q)", b.TopologyKey, b.TopologyKey, first)
	case skipped > 0:
		why = fmt.Sprintf("at most %d node(s) per %s", perDomain, b.TopologyKey)
	case byCount && len(picked) == limit && limit < len(remaining):
		why = fmt.Sprintf("at most %d node(s) at once", limit)
	}
	return picked, why
}
