package multimatch

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/streamrules/streamrules/internal/regexgen"
)

// TestSpanCut: the span is the cut form's, not the pattern's as written.
func TestSpanCut(t *testing.T) {
	t.Parallel()
	text := strings.Repeat("a", 5000) + "z" + strings.Repeat("b", 100)
	tests := []struct {
		pattern, text string
		start, end    int
		ok            bool
	}{
		{`(?s)[\s\S]{0,1000}z`, text, 5000, 5001, true},
		{`(?s).*secret.*`, "the secret is out", 4, 10, true},
		{`b+`, "aabbbc", 2, 3, true},
		{`\bfoo\b`, "foox foo_ x foo.", 12, 15, true},
		{`(?m)^ab$`, "xab\nab\nab", 4, 6, true},
		{`x{2,5}y`, "xxxxxxy", 4, 7, true}, // cut to x{2}y
		{`zz`, "abc", 0, 0, false},
		{`é`, "aé", 1, 3, true},
		// Unbounded: the first match within spanWidthMax of the earliest match's end.
		{`z[a-y]+x`, "z" + strings.Repeat("a", 3000) + "zax", 3001, 3004, true},
		{`z[a-y]+x`, "zax", 0, 3, true},
	}
	for _, tt := range tests {
		a, err := Analyze(tt.pattern)
		if err != nil {
			t.Fatal(err)
		}
		s, e, ok := a.Span(tt.text)
		if s != tt.start || e != tt.end || ok != tt.ok {
			t.Errorf("%q on %.20q: span %d %d %v, want %d %d %v", tt.pattern, tt.text, s, e, ok, tt.start, tt.end, tt.ok)
		}
	}
}

// TestSpanRandom compares Span with regexp's FindStringIndex of the cut form on random
// patterns and texts built from them.
func TestSpanRandom(t *testing.T) {
	t.Parallel()
	iters := 3000
	if testing.Short() || raceEnabled {
		iters = 300
	}
	r := rand.New(rand.NewPCG(7, 8))
	checked := 0
	for it := 0; it < iters; it++ {
		p := regexgen.Pattern(r, 0)
		if r.IntN(3) == 0 {
			p = "(?i)" + p
		}
		if _, err := regexp.Compile(p); err != nil {
			continue
		}
		a, err := Analyze(p)
		if err != nil {
			t.Fatal(err)
		}
		re := regexp.MustCompile(a.Run())
		for k := 0; k < 6; k++ {
			s := sample(r, mustParse(p).Simplify(), 0)
			if k%3 == 1 {
				s = mutate(r, s)
			}
			text := []string{s, "x " + s + " y" + s, "\n" + s + "\n", "é" + s + "\xff", strings.Repeat("ab ", 40) + s + " " + s, s + s}[k]
			checkSpan(t, a, re, text)
			checked++
		}
	}
	t.Logf("%d texts checked", checked)
}

func checkSpan(t *testing.T, a *Analysis, re *regexp.Regexp, text string) {
	t.Helper()
	want := re.FindStringIndex(text)
	s, e, ok := a.Span(text)
	if a.width < 0 || a.width > spanWidthMax {
		// Not always the leftmost: a match within the text.
		if ok != (want != nil) || ok && (s < want[0] || e < s || e > len(text)) {
			t.Fatalf("%q (run %q) on %q: span %d %d %v, leftmost %v", a.Pattern(), a.Run(), text, s, e, ok, want)
		}
		return
	}
	if ok != (want != nil) || ok && (s != want[0] || e != want[1]) {
		t.Fatalf("%q (run %q) on %q: span %d %d %v, want %v", a.Pattern(), a.Run(), text, s, e, ok, want)
	}
}

// FuzzSpan compares Span with regexp's FindStringIndex of the cut form.
func FuzzSpan(f *testing.F) {
	f.Add(`(?s)[\s\S]{0,1000}z`, "aaz")
	f.Add(`(?i)\bkelvin\b`, "273 \u212aELVIN")
	f.Add(`(?m)^\s*#{1,6} `, "text\n  ## Title")
	f.Add(`z[a-y]+x`, "zzax")
	f.Add(`\bfoo\b`, "a foo_ foo")
	f.Fuzz(func(t *testing.T, pattern, text string) {
		if _, err := regexp.Compile(pattern); err != nil {
			return
		}
		a, err := Analyze(pattern)
		if err != nil {
			return
		}
		checkSpan(t, a, regexp.MustCompile(a.Run()), text)
	})
}
