package multimatch

import (
	"regexp/syntax"
	"strings"
	"testing"
)

// renderGroups shows the required groups of a pattern: groups joined by
// " & ", alternatives by "|", case-sensitive letters as =X=, and "*" when the
// pattern must always be run.
func renderGroups(t testing.TB, pattern string) string {
	t.Helper()
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		t.Fatalf("parse %q: %v", pattern, err)
	}
	groups, ok := requiredGroups(re.Simplify())
	if !ok {
		return "*"
	}
	parts := make([]string, len(groups))
	for i, g := range groups {
		els := make([]string, len(g))
		for j, l := range g {
			els[j] = l.String()
		}
		parts[i] = strings.Join(els, "|")
	}
	return strings.Join(parts, " & ")
}

// String renders l for test output: case-sensitive letters are wrapped as
// =X=; everything else is shown as stored.
func (l lit) String() string {
	if l.m == "" {
		return l.s
	}
	var b strings.Builder
	for i := 0; i < len(l.s); i++ {
		if l.m[i] == 1 {
			b.WriteByte('=')
			b.WriteByte(l.s[i])
			b.WriteByte('=')
		} else {
			b.WriteByte(l.s[i])
		}
	}
	return b.String()
}
