package analyze

import (
	"os/exec"
	"strings"
	"testing"
)

// transport are the packages that talk to a cluster: package analyze is pure
// and must not reach them, directly or through another package.
var transport = []string{"k8s.io/client-go/transport", "k8s.io/client-go/rest", "k8s.io/client-go/kubernetes", "k8s.io/client-go/discovery"}

// exempt are packages allowed, for now, to bring client-go in, with why.
// The test fails when an exemption is no longer needed, so that it goes.
var exempt = map[string]string{
	// snapshot.Take lives beside the Snapshot document types; once the types
	// have a package of their own, analyze imports that and this goes.
	"github.com/sentinel-go/sentinel/k8s-snapshot/snapshot": "the Snapshot types share a package with Take",
}

// TestNoClientTransport fails if package analyze, or anything it imports
// (client-go itself and the exemptions aside), imports client-go's transport
// or clients, naming the importer (go-containerregistry's depcheck idea).
func TestNoClientTransport(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	used := map[string]bool{}
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		if len(fields) == 0 || strings.HasPrefix(fields[0], "k8s.io/client-go/") {
			continue
		}
		for _, imp := range fields[1:] {
			if !isTransport(imp) {
				continue
			}
			if _, ok := exempt[fields[0]]; ok {
				used[fields[0]] = true
				continue
			}
			t.Errorf("%s imports %s: package analyze must not reach client-go's transport", fields[0], imp)
		}
	}
	for pkg, why := range exempt {
		if !used[pkg] {
			t.Errorf("%s no longer imports client-go: remove its exemption (%s)", pkg, why)
		}
	}
}

func isTransport(pkg string) bool {
	for _, f := range transport {
		if pkg == f || strings.HasPrefix(pkg, f+"/") {
			return true
		}
	}
	return false
}
