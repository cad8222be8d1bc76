package multimatch

import (
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestCombosOnGuardrails: the guardrail corpus forms combos with riders, and over the
// real answers, cut anywhere and matched again and again (the combos' DFAs cold, then
// warm), the set says what regexp says, with combo passes deciding some of it.
func TestCombosOnGuardrails(t *testing.T) {
	rules, err := ReadRules("testdata/realworld/guardrails.txt")
	if err != nil {
		t.Fatal(err)
	}
	answers, err := ReadAnswers("testdata/realworld")
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(rules)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.combos) == 0 {
		t.Fatal("no combos on the guardrail corpus")
	}
	riders := 0
	for _, r := range s.comboRider {
		if r {
			riders++
		}
	}
	if riders == 0 {
		t.Error("no riders on the guardrail corpus")
	}
	res := make([]*regexp.Regexp, len(rules))
	for i, p := range rules {
		res[i] = regexp.MustCompile(p)
	}
	r := rand.New(rand.NewPCG(5, 6))
	passes := 0
	for _, size := range []int{512, 4096, 65536} {
		for v := range answers {
			text := AnswerText(answers, size, v)
			for k := range 6 {
				sub := text
				if k > 0 {
					lo := r.IntN(len(text))
					sub = text[lo : lo+r.IntN(len(text)-lo+1)]
				}
				want := naiveMatch(res, sub)
				for range 3 {
					sc := s.pool.New().(*scratch)
					got := s.match(sub, nil, sc)
					if !slices.Equal(got, want) {
						t.Fatalf("answer %d, %d bytes from %q: got %v, regexp %v", v+1, len(sub), sub[:min(40, len(sub))], got, want)
					}
					for _, c := range sc.combo {
						if c.gen == sc.gen && c.state == comboRan {
							passes++
						}
					}
				}
			}
		}
	}
	if passes == 0 {
		t.Error("no combo pass decided anything")
	}
	t.Logf("%d combos, %d riders, %d combo passes", len(s.combos), riders, passes)
}

// TestComboGivesUpAndTurnsOff: a combo whose DFA needs new states on every text (two
// exponential patterns over random texts) gives up, its members are verified by
// themselves, and once it has mostly given up it is not tried any more.
func TestComboGivesUpAndTurnsOff(t *testing.T) {
	pats := []string{`\w*e\w{20}\d`, `\w*a\w{19}\d`}
	s, err := New(pats)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.combos) != 1 || len(s.combos[0].members) != 2 {
		t.Fatalf("want one combo of both patterns, got %d", len(s.combos))
	}
	c := s.combos[0]
	res := []*regexp.Regexp{regexp.MustCompile(pats[0]), regexp.MustCompile(pats[1])}
	r := rand.New(rand.NewPCG(7, 8))
	text := func() string {
		var b strings.Builder
		for range 3000 {
			b.WriteByte("abcde"[r.IntN(5)])
		}
		b.WriteString([]string{"1", "", " 2"}[r.IntN(3)])
		return b.String()
	}
	for range 40 {
		x := text()
		if got, want := s.Match(x, nil), naiveMatch(res, x); !slices.Equal(got, want) {
			t.Fatalf("got %v, regexp %v", got, want)
		}
	}
	runs, gaveUp := c.runs.Load(), c.gaveUp.Load()
	if gaveUp < 8 || 2*gaveUp <= runs {
		t.Fatalf("the combo ran %d times and gave up %d: want it off", runs, gaveUp)
	}
	for range 5 {
		x := text()
		if got, want := s.Match(x, nil), naiveMatch(res, x); !slices.Equal(got, want) {
			t.Fatalf("got %v, regexp %v", got, want)
		}
	}
	if c.runs.Load() != runs {
		t.Errorf("a combo that is off ran again (%d runs, was %d)", c.runs.Load(), runs)
	}
}

// TestComboBounds: combos hold at most maxComboMembers patterns and maxComboInsts
// instructions (a single pattern may exceed it alone), and only whole-prone patterns
// and riders.
func TestComboBounds(t *testing.T) {
	pats := LiteralFreePatterns(300, 3)
	s, err := New(pats)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.combos) < 300/maxComboMembers {
		t.Fatalf("%d combos for %d literal-free patterns", len(s.combos), len(pats))
	}
	for _, c := range s.combos {
		insts := 0
		for _, i := range c.members {
			insts += s.pats[i].insts
			if !s.wholeProne(int(i)) && !s.rider(int(i)) {
				t.Errorf("pattern %q in a combo", pats[i])
			}
		}
		if len(c.members) > maxComboMembers || insts > maxComboInsts && len(c.members) > 1 {
			t.Errorf("combo of %d members, %d instructions", len(c.members), insts)
		}
	}
	answers, err := ReadAnswers("testdata/realworld")
	if err != nil {
		t.Fatal(err)
	}
	naive := newNaive(pats)
	for v := range answers {
		text := AnswerText(answers, 4096, v)
		for range 2 {
			if got, want := s.Match(text, nil), naive.match(text); !slices.Equal(got, want) {
				t.Fatalf("answer %d: got %v, regexp %v", v+1, got, want)
			}
		}
	}
}

type naiveSet []*regexp.Regexp

func newNaive(pats []string) naiveSet {
	n := make(naiveSet, len(pats))
	for i, p := range pats {
		n[i] = regexp.MustCompile(p)
	}
	return n
}

func (n naiveSet) match(text string) []int { return naiveMatch(n, text) }
