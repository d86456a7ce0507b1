package analyze

import (
	"os"
	"regexp"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestNeverReasonsDocumented keeps NeverReasons and CHECKS.md in step: the
// reasons it documents with the verdict never (the drain forecast's and the
// capacity check's) are NeverReasons, each once.
func TestNeverReasonsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../CHECKS.md")
	if err != nil {
		t.Fatal(err)
	}
	var documented []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z0-9-]+)` \\| never \\|").FindAllStringSubmatch(string(doc), -1) {
		documented = append(documented, m[1])
	}
	slices.Sort(documented)
	documented = slices.Compact(documented)
	got := NeverReasons()
	slices.Sort(got)
	if diff := cmp.Diff(documented, got); diff != "" {
		t.Errorf("NeverReasons against CHECKS.md's never causes (-want +got):\n%s", diff)
	}
}
