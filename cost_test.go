package streamrules

import (
	"regexp"
	"strings"
	"testing"

	"github.com/streamrules/streamrules/internal/multimatch"
)

// TestCostBoundAdmitsWordLists: a list of words, the commonest rule there is, keeps no
// thread alive between its literals and validates however many branches it has.
func TestCostBoundAdmitsWordLists(t *testing.T) {
	t.Parallel()
	for _, p := range []string{
		`(?i)\b(damn|hell|crap|bloody|bugger|bollocks|arse|wanker|tosser|git)\b`,
		`(?i)\b(ignore (all )?previous instructions|disregard the system prompt|you are now DAN|jailbreak)\b`,
	} {
		if err := checkRegex("condition", p); err != nil {
			t.Errorf("%q: %v", p, err)
		}
	}
}

// TestRefusalsTeach: a refused regex is told why in terms of what it wrote: the construct
// that costs (its largest repetition), what it costs (a DFA's construction in ms, or
// regexp's threads), and what lowers it.
func TestRefusalsTeach(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, pattern string
		want          []string
	}{
		{"construction", `(a|aa){400}b`, []string{"DFA of 410 states", "construction costs about", "(a(?:(?:)|a)){400}", "a smaller count"}},
		{"threads", `\b(?:\d[ -]?){13,16}\b`, []string{"no small DFA", "also pruned by simulation", "15 threads", "(?:[0-9][ \\-]?){13,16}", "a shorter count"}},
		// Pruned by simulation from 976 states to 368, still 10.8 ms of construction.
		{"simulated", `-----BEGIN[ A-Z0-9_-]{0,20}PRIVATE KEY`, []string{"DFA of 368 states (pruned by simulation", "construction costs about", "a smaller count"}},
		{"wide", `e\w{200}\d`, []string{"[0-9A-Z_a-z]{200}", "at most 128 may match letters or spaces unless the pattern's DFA is small"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := checkRegex("condition", tt.pattern)
			if err == nil {
				t.Fatalf("%q validated", tt.pattern)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q: %v\nwant it to say %q", tt.pattern, err, w)
				}
			}
		})
	}
}

// TestSimulationAdmits: patterns whose plain DFA is past the bound validate once their
// DFA is pruned by simulation (lazydfa.DFA.Simulate), their owned DFA is the simulated
// one, and they judge as regexp does. Their first answers: TestFirstAnswerWithinBound.
func TestSimulationAdmits(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		pattern string
		texts   []string
	}{
		{`-----BEGIN[ A-Z0-9_-]{0,18}PRIVATE KEY`, []string{"-----BEGIN RSA PRIVATE KEY", "-----BEGIN PRIVATE KEY", "-----BEGIN " + strings.Repeat("A", 19) + "PRIVATE KEY", "-----BEGIN PRIVATE PRIVATE KEY", "-----BEGIN private key"}},
		{`e\w{20}`, []string{"e" + strings.Repeat("x", 20), "e" + strings.Repeat("e", 19) + " ", strings.Repeat("ee ", 30), "é" + strings.Repeat("x", 20)}},
	} {
		_, c, err := analyzeRegex("condition", tt.pattern)
		if err != nil {
			t.Fatalf("%q: %v", tt.pattern, err)
		}
		if !c.worst.Simulated || !c.worst.Complete {
			t.Errorf("%q: %+v, want a complete simulated DFA", tt.pattern, c.worst)
		}
		re := regexp.MustCompile(tt.pattern)
		j := mustJudge(t, textRule("sim", tt.pattern))
		for _, text := range tt.texts {
			if got, want := j.Check(text, nil).Status == StatusViolation, re.MatchString(text); got != want {
				t.Errorf("%q on %q: %v, regexp %v", tt.pattern, text, got, want)
			}
		}
	}
}

// TestSimulationNeverRaisesCost: patterns whose plain DFA is past the limit and whose
// pruned one is complete but costly to build keep regexp's estimate, as before
// simulation, and the cost is the same however often, and in whatever order, it is
// computed, on the same analysis or a fresh one.
func TestSimulationNeverRaisesCost(t *testing.T) {
	t.Parallel()
	for _, p := range []string{`\n(?:\w+\s+){25,}e`, `"[a-z]{46,}\S{36,}e(?:\S+\s*)+`} {
		fresh := func() *multimatch.Analysis {
			a, err := multimatch.Analyze(p)
			if err != nil {
				t.Fatal(err)
			}
			return a
		}
		if w := fresh().WorstCase(exploreStates); !w.Simulated {
			t.Fatalf("%q: %+v, want a DFA complete only simulated (the case this test is for)", p, w)
		}
		a := fresh()
		want := patternCost(a, false)
		for i, c := range []regexCost{patternCost(a, true), patternCost(a, true), patternCost(fresh(), true)} {
			if c.ns != want.ns || c.build != want.build || c.worst.Complete {
				t.Errorf("%q: cost %d is %.0f ns/byte and %.1f ms (%+v), want regexp's %.0f ns/byte", p, i, c.ns, c.build/1e6, c.worst, want.ns)
			}
		}
		_, c, err := analyzeRegex("condition", p)
		if err != nil || !fits(c.ns, c.build) || c.ns != want.ns {
			t.Errorf("%q: %v, %.0f ns/byte", p, err, c.ns)
		}
	}
}
