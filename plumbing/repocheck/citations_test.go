package repocheck

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/sentinel-go/sentinel/plumbing/controlplane"
)

// skipDirs are never scanned: VCS data, caches, build output, and the
// fixtures (their contents are data, not documentation).
var skipDirs = []string{".git", ".cache", "bin", "testdata"}

var (
	// mdLink is a Markdown link or image target: [text](target).
	mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	// filePath is a mention of a file of the repository: a relative path
	// ending in an extension of a file the repository keeps.
	filePath = regexp.MustCompile(`(?:^|[\s"'(\x60\[,])((?:\.\./|\./)?[A-Za-z0-9_][A-Za-z0-9_.-]*(?:/[A-Za-z0-9_.<>-]+)*\.(?:md|go|yaml|yml|sh|txtar|json|prom|mod))\b`)
)

// TestCitations fails on a reference, in a *.md file or a Go comment, to a
// file that does not exist: a Markdown link (relative to the document) or
// a path mentioned in the text, which must exist relative to the file, to
// its module, or to the repository's root.
func TestCitations(t *testing.T) {
	root, err := controlplane.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	var files int
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && slices.Contains(skipDirs, d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		var refs []ref
		switch {
		case strings.HasSuffix(path, ".md"):
			refs, err = markdownRefs(path)
		case strings.HasSuffix(path, ".go"):
			refs, err = goRefs(path)
		default:
			return nil
		}
		if err != nil {
			return err
		}
		files++
		rel, _ := filepath.Rel(root, path)
		for _, r := range refs {
			if !r.resolves(root, path) {
				t.Errorf("%s:%d: %q names no file of the repository", rel, r.line, r.target)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 50 {
		t.Fatalf("scanned %d files: not the repository?", files)
	}
}

type ref struct {
	target string
	line   int
	link   bool // a Markdown link: relative to the document only
}

// resolves reports whether r names an existing file: a link relative to
// the document; a mention relative to the file's directory, any directory
// above it up to the root, or a module's directory (a document of the
// repository may name k8s-cordon's deploy/rbac.yaml as such).
func (r ref) resolves(root, from string) bool {
	target, _, _ := strings.Cut(r.target, "#")
	if target == "" {
		return true // an anchor in the same document
	}
	if strings.Contains(target, "<") {
		// a pattern such as docs/tools/<tool>.md: its directory must exist
		target = filepath.Dir(target)
	}
	dir := filepath.Dir(from)
	if r.link {
		return exists(filepath.Join(dir, target))
	}
	for {
		if exists(filepath.Join(dir, target)) {
			return true
		}
		if dir == root || !strings.HasPrefix(dir, root) {
			break
		}
		dir = filepath.Dir(dir)
	}
	modules, _ := filepath.Glob(filepath.Join(root, "*", "go.mod"))
	for _, m := range modules {
		if exists(filepath.Join(filepath.Dir(m), target)) {
			return true
		}
	}
	return false
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func markdownRefs(path string) ([]ref, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var refs []ref
	for i, line := range strings.Split(string(data), "\n") {
		for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
			if target := m[1]; !strings.Contains(target, "://") && !strings.HasPrefix(target, "mailto:") {
				refs = append(refs, ref{target: target, line: i + 1, link: true})
			}
		}
		refs = append(refs, mentions(mdLink.ReplaceAllString(line, "]"), i+1)...)
	}
	return refs, nil
}

func goRefs(path string) ([]ref, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	var refs []ref
	for _, g := range f.Comments {
		for _, c := range g.List {
			line := fset.Position(c.Pos()).Line
			for i, text := range strings.Split(c.Text, "\n") {
				refs = append(refs, mentions(text, line+i)...)
			}
		}
	}
	return refs, nil
}

// mentions are the files named in one line of text: paths with a
// directory (deploy/rbac.yaml) and documents (CHECKS.md). A bare file name
// of another kind (snapshot.json in an example, a tool's doc.go) names no
// particular file and is left out, as are URLs, absolute paths and ~ or $
// paths.
func mentions(line string, n int) []ref {
	var refs []ref
	for _, m := range filePath.FindAllStringSubmatchIndex(line, -1) {
		start, end := m[2], m[3]
		target := line[start:end]
		if start > 0 && strings.ContainsRune("/~$", rune(line[start-1])) {
			continue
		}
		if strings.Contains(line[:start], "://") && !strings.ContainsAny(line[strings.LastIndex(line[:start], "://"):start], " \t") {
			continue // part of a URL
		}
		if !strings.Contains(strings.TrimPrefix(target, "./"), "/") && !strings.HasSuffix(target, ".md") {
			continue
		}
		refs = append(refs, ref{target: target, line: n})
	}
	return refs
}

// TestCitationRules: what counts as a reference, and what resolves, on a
// small tree of its own.
func TestCitationRules(t *testing.T) {
	root := t.TempDir()
	for _, f := range []string{"go.work", "docs/design.md", "tool/go.mod", "tool/deploy/rbac.yaml", "tool/doc.go", "tool/CHECKS.md"} {
		if err := os.MkdirAll(filepath.Join(root, filepath.Dir(f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	from := filepath.Join(root, "tool", "doc.go")
	tests := map[string]struct {
		line string
		want []string // the references that do not resolve
	}{
		"notes not in the tree": {"see NOTES.md §3 and notes/eviction.md", []string{"NOTES.md", "notes/eviction.md"}},
		"a folder outside":      {"in ../outside/notes.md", []string{"../outside/notes.md"}},
		"the repository's":      {"see docs/design.md and CHECKS.md; `deploy/rbac.yaml`", nil},
		"from the root":         {"(tool/deploy/rbac.yaml)", nil},
		"a missing path":        {"deploy/role.yaml grants it", []string{"deploy/role.yaml"}},
		"pattern":               {"docs/tools/<tool>.md", []string{"docs/tools/<tool>.md"}},
		"pattern, dir exists":   {"docs/<name>.md", nil},
		"bare names are not":    {"k8s-snapshot > snapshot.json; a tool's doc.go; go.mod", nil},
		"urls and absolute":     {"https://example.com/x/y.md /proc/self/cgroup.yaml ~/x/y.yaml $HOME/a/b.yaml", nil},
		"a link outside a url":  {"https://kubernetes.io/docs and api/types.go", []string{"api/types.go"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, r := range mentions(tc.line, 1) {
				if !r.resolves(root, from) {
					got = append(got, r.target)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("unresolved in %q = %q, want %q", tc.line, got, tc.want)
			}
		})
	}
	for target, want := range map[string]bool{"../deploy/rbac.yaml": false, "deploy/rbac.yaml": true, "#options": true, "CHECKS.md#x": true} {
		if got := (ref{target: target, link: true}).resolves(root, from); got != want {
			t.Errorf("link %q from tool/doc.go resolves = %t, want %t", target, got, want)
		}
	}
}
