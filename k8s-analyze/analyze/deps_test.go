package analyze

import (
	"os/exec"
	"strings"
	"testing"
)

// transport are the packages that talk to a cluster: package analyze is pure
// and must not reach them, directly or through another package.
var transport = []string{"k8s.io/client-go/transport", "k8s.io/client-go/rest", "k8s.io/client-go/kubernetes", "k8s.io/client-go/discovery"}

// TestNoClientTransport fails if package analyze, or anything it imports
// (client-go itself aside), imports client-go's transport or clients,
// naming the importer (go-containerregistry's depcheck idea).
func TestNoClientTransport(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		if len(fields) == 0 || strings.HasPrefix(fields[0], "k8s.io/client-go/") {
			continue
		}
		for _, imp := range fields[1:] {
			if !isTransport(imp) {
				continue
			}
			t.Errorf("%s imports %s: package analyze must not reach client-go's transport", fields[0], imp)
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
