package multimatch

import (
	"math/rand/v2"
	"regexp/syntax"
	"testing"

	"github.com/streamrules/streamrules/internal/regexgen"
)

// TestPrintTree: printTree's text compiles to the program Go's own printing of the tree
// compiles to, large classes and (?i) spans around them included.
func TestPrintTree(t *testing.T) {
	patterns := []string{
		`(?i)\b(?:password|passwd|pwd)\s*[:=]\s*["']?[^\s"']{6,}`,
		`(?i)\bmailto:[^\s)>"]+`,
		`http://[^\s)\]>"']+`,
		`(?i)ab[^\s]c(?-i:D[^x]E)f`,
		`(?i:k)[^k]\S+(?i:s)`,
		`[^\x{F0000}]x\x{F0000}`,
		`\S+\s\w+[\p{L}]+[^\p{Greek}]`,
		`(?s).[^a]{2,}`,
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		p := regexgen.Pattern(r, 0)
		if r.IntN(3) == 0 {
			p = "(?i)" + p
		}
		patterns = append(patterns, p)
	}
	prog := func(s string) string {
		re, err := syntax.Parse(s, syntax.Perl)
		if err != nil {
			t.Fatalf("parse %q: %v", s, err)
		}
		p, err := syntax.Compile(re.Simplify())
		if err != nil {
			t.Fatal(err)
		}
		return p.String()
	}
	printed := 0
	for _, p := range patterns {
		re, err := syntax.Parse(p, syntax.Perl)
		if err != nil {
			continue
		}
		q := trimRight(trimLeft(stripCaptures(re)))
		got, want := printTree(q), q.String()
		if got != want {
			printed++
		}
		if prog(got) != prog(want) {
			t.Fatalf("%q: printTree %q and String %q compile differently", p, got, want)
		}
	}
	if printed == 0 {
		t.Fatal("no pattern had a large class printed apart")
	}
}
