package analyze

import (
	"os"
	"regexp"
	"testing"
)

// TestChecksDocumented keeps CHECKS.md and Checks in step: every code is
// documented once, with its severity.
func TestChecksDocumented(t *testing.T) {
	doc, err := os.ReadFile("../CHECKS.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[Code]Severity{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z0-9-]+)` \\| (low|medium|high) \\|").FindAllStringSubmatch(string(doc), -1) {
		if _, dup := rows[Code(m[1])]; dup {
			t.Errorf("CHECKS.md documents %s twice", m[1])
		}
		rows[Code(m[1])] = Severity(m[2])
	}
	for _, c := range Checks() {
		got, ok := rows[c.Code]
		switch {
		case !ok:
			t.Errorf("CHECKS.md does not document %s", c.Code)
		case got != c.Severity:
			t.Errorf("CHECKS.md gives %s severity %s, the code says %s", c.Code, got, c.Severity)
		}
		delete(rows, c.Code)
	}
	for code := range rows {
		t.Errorf("CHECKS.md documents %s, which is not a check", code)
	}
}
