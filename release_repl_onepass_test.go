package streamrules

import (
	"regexp"
	"regexp/syntax"
	"slices"
	"testing"
)

// onePassCases are patterns with their kept group: the ones of the one-pass shape, and
// near ones it must refuse (a repeat that could give runes back, case folding, a lazy
// repeat), for which regexp keeps finding the group.
var onePassCases = []struct {
	pattern string
	cap     int
	shaped  bool
}{
	{`!\[[^\]]*\]\(([^)\s]+)\)`, 1, true}, // the seeded image rule
	{`<(?P<x>[a-z]*)>`, 1, true},
	{`a(b+)`, 1, true},
	{`x([0-9]*)y[^y]`, 1, true},
	{`é([^é]*)é`, 1, true},
	{"\ufffd([a]+)", 1, true},
	{`([^;]+);[a-c]+`, 1, true},
	{`a*(a)`, 1, false},
	{`(a+)a`, 1, false},
	{`(a*)[ab]`, 1, false},
	{`(?i)ab(c)`, 1, false},
	{`a(b*?)c`, 1, false},
	{`a(b*)b*c`, 1, false},
	{`(a)(b)`, 2, false},
}

// TestOnePassShape: the plan takes exactly the patterns whose match is one-pass.
func TestOnePassShape(t *testing.T) {
	for _, c := range onePassCases {
		tree, err := syntax.Parse(c.pattern, syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		if got := planOnePass(tree.Simplify(), c.cap) != nil; got != c.shaped {
			t.Errorf("%s: one-pass %v, want %v", c.pattern, got, c.shaped)
		}
	}
	if p := nfFix(&ReplaceRegex{Pattern: onePassCases[0].pattern, With: "$1"}); p == nil || p.one == nil {
		t.Error("the image rule's repair does not find its group in one pass")
	}
}

// FuzzOnePass: where the one-pass form matches, regexp (anchored, as the repair asks it)
// finds the same match and group; where it does not, neither does regexp. Any text,
// invalid UTF-8 included.
func FuzzOnePass(f *testing.F) {
	for _, s := range []string{"![a](b)", "![a](b c)", "![]](x)", "<ab>", "<a", "abbb", "x12y!", "x12yy", "ééé", "é\xffé", "\xffaa", "\ufffdaa", "a;b;c", "a;", "![\xff](\xfe)"} {
		f.Add(s, uint8(0))
	}
	f.Fuzz(func(t *testing.T, text string, which uint8) {
		c := onePassCases[int(which)%len(onePassCases)]
		tree, err := syntax.Parse(c.pattern, syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		o := planOnePass(tree.Simplify(), c.cap)
		if o == nil {
			return
		}
		re := regexp.MustCompile(`\A(?:` + c.pattern + `)`)
		b := []byte(text)
		end, g0, g1, ok := o.match(b)
		loc := re.FindSubmatchIndex(b)
		if !ok {
			if loc != nil {
				t.Fatalf("%s on %q: one-pass finds no match, regexp %v", c.pattern, text, loc)
			}
			return
		}
		if want := []int{0, end, g0, g1}; loc == nil || !slices.Equal(loc[:2], want[:2]) || !slices.Equal(loc[2*c.cap:2*c.cap+2], want[2:]) {
			t.Fatalf("%s on %q: one-pass %v, regexp %v", c.pattern, text, want, loc)
		}
	})
}
