package lazydfa

import (
	"math/rand/v2"
	"os"
	"regexp"
	"strconv"
	"testing"

	"github.com/streamrules/streamrules/internal/regexgen"
)

// TestSimulateAgreesWithRegexp: on random patterns (regexgen: \b, \B, (?m), (?i), flags,
// non-ASCII, U+FFFD) and a few wide bounded repetitions, over random texts of the same
// runes and invalid UTF-8, the simulated DFA, the plain DFA and regexp give one verdict.
// STREAMRULES_SIM_CHECKS sets the number of checks (default 3,000,000).
func TestSimulateAgreesWithRegexp(t *testing.T) {
	want := 3_000_000
	if testing.Short() {
		want = 200_000
	}
	if s := os.Getenv("STREAMRULES_SIM_CHECKS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatal(err)
		}
		want = n
	}
	r := rand.New(rand.NewPCG(33, 34))
	wide := []string{`[ab ]{0,6}k`, `\bx[\w.-]{2,9}\b`, `(?i)-BEGIN[ a-z0-9_-]{0,8}KEY`, `(?m)^\d[ -]?\d{2,4}$`, `a[^\n]{0,5}?b`, `\B[a-z0-9]{3}\.`}
	checked, simulated := 0, 0
	for checked < want {
		var p string
		if r.IntN(8) == 0 {
			p = wide[r.IntN(len(wide))] + regexgen.Pattern(r, 2)
		} else {
			p = regexgen.Pattern(r, 0)
		}
		re, err := regexp.Compile(p)
		if err != nil {
			continue
		}
		plain, sim := mustDFA(t, p), mustDFA(t, p)
		if _, ok := sim.Simulate(); ok {
			simulated++
		}
		for range 150 {
			text := randText(r)
			w := re.MatchString(text)
			got, ok := sim.Match(text)
			if ok && got != w {
				t.Fatalf("simulated Match(%q, %q) = %v, regexp says %v", p, text, got, w)
			}
			if g, ok := plain.Match(text); ok && g != w {
				t.Fatalf("plain Match(%q, %q) = %v, regexp says %v", p, text, g, w)
			}
			checked++
		}
	}
	if simulated < checked/150*9/10 {
		t.Errorf("simulated %d patterns of %d", simulated, checked/150)
	}
	t.Logf("%d checks, %d patterns simulated", checked, simulated)
}

// TestSimulateShrinks: simulation leaves fewer states in DFAs made of copies of a wide
// class, the private-key header among them, and never more in any.
func TestSimulateShrinks(t *testing.T) {
	for _, tt := range []struct {
		pattern string
		smaller bool
	}{
		{`-----BEGIN[ A-Z0-9_-]{0,20}PRIVATE KEY`, true},
		{`(?i)-----BEGIN[ A-Z0-9_-]{0,20}PRIVATE KEY`, true},
		{`x[a-z ]{0,30}y`, true},
		{`\bfoo\b`, false},
		{`(a|b)*a(a|b){8}`, false},
	} {
		plain, sim := mustDFA(t, tt.pattern), mustDFA(t, tt.pattern)
		if _, ok := sim.Simulate(); !ok {
			t.Fatalf("%q: Simulate did nothing", tt.pattern)
		}
		a, b := plain.Explore(4000), sim.Explore(4000)
		t.Logf("%q: %d states (complete %v), simulated %d (complete %v)", tt.pattern, a.States, a.Complete, b.States, b.Complete)
		if b.States > a.States || tt.smaller && b.States*3/2 > a.States {
			t.Errorf("%q: %d states, simulated %d", tt.pattern, a.States, b.States)
		}
	}
}
