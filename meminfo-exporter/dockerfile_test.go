package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sentinel-go/sentinel/plumbing/deploytest"
)

// TestDockerfile: deploy/Dockerfile builds a static binary (CGO off,
// GOWORK off, as its RUN line says: checked by building the same way here)
// and runs it as a non-root user on an empty image.
func TestDockerfile(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("deploy", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	df := string(data)
	var froms []string
	for _, m := range regexp.MustCompile(`(?m)^FROM (\S+)`).FindAllStringSubmatch(df, -1) {
		froms = append(froms, m[1])
	}
	if len(froms) < 2 || froms[len(froms)-1] != "scratch" {
		t.Errorf("stages %v: want a build stage and a final FROM scratch", froms)
	}
	user := regexp.MustCompile(`(?m)^USER (\d+)(:\d+)?$`).FindStringSubmatch(df)
	if user == nil || user[1] == "0" {
		t.Errorf("USER %v: want a numeric non-root user", user)
	}
	for _, want := range []string{"CGO_ENABLED=0", "GOWORK=off", `ENTRYPOINT ["/meminfo-exporter"]`} {
		if !strings.Contains(df, want) {
			t.Errorf("Dockerfile lacks %s", want)
		}
	}

	bin := filepath.Join(t.TempDir(), "meminfo-exporter")
	cmd := exec.CommandContext(t.Context(), "go", "build", "-trimpath", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("static build: %v\n%s", err, out)
	}
	if err := deploytest.Static(bin); err != nil {
		t.Error(err)
	}
}
