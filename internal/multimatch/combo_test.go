package multimatch

import (
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/streamrules/streamrules/internal/workload"
)

// TestCombosOnGuardrails: the guardrail corpus forms combos with riders, and over the
// real answers, cut anywhere and matched again and again (the combos' DFAs cold, then
// warm), the set says what regexp says, with combo passes deciding some of it.
func TestCombosOnGuardrails(t *testing.T) {
	rules, answers, s := guardrailSet(t)
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
	res := regexps(rules)
	r := rand.New(rand.NewPCG(5, 6))
	passes := 0
	for _, size := range []int{512, 4096, 65536} {
		for v := range answers {
			text := workload.AnswerText(answers, size, v)
			cuts := 6
			if size > 4096 {
				cuts = 1 // the whole text only: regexp takes a while on 64 KB
			}
			for k := range cuts {
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

// guardrailSet reads the guardrail corpus and the real answers, and compiles the
// corpus into a fresh set.
func guardrailSet(t *testing.T) (rules, answers []string, s *Set) {
	t.Helper()
	rules, err := workload.ReadRules("../workload/testdata/realworld/guardrails.txt")
	if err != nil {
		t.Fatal(err)
	}
	if answers, err = workload.ReadAnswers("../workload/testdata/realworld"); err != nil {
		t.Fatal(err)
	}
	if s, err = New(rules); err != nil {
		t.Fatal(err)
	}
	return rules, answers, s
}

// TestComboGivesUpAndTurnsOff: a combo whose DFA needs new states on every text (two
// exponential patterns over random texts) gives up, its members are verified by
// themselves, and once it has mostly given up it is tried once in comboRetry passes.
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
	res := regexps(pats)
	r := rand.New(rand.NewPCG(7, 8))
	text := func() string {
		var b strings.Builder
		for range 3000 {
			b.WriteByte("abcde"[r.IntN(5)])
		}
		b.WriteString([]string{"1", " 2", "!3"}[r.IntN(3)]) // a digit: both are candidates
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
	c.skipped.Store(0) // count the passes asked from here
	for range comboRetry - 1 {
		x := text()
		if got, want := s.Match(x, nil), naiveMatch(res, x); !slices.Equal(got, want) {
			t.Fatalf("got %v, regexp %v", got, want)
		}
	}
	if c.runs.Load() != runs {
		t.Errorf("a combo that is off ran again (%d runs, was %d)", c.runs.Load(), runs)
	}
	s.Match(text(), nil)
	if c.runs.Load() != runs+1 {
		t.Errorf("a combo that is off was not tried after %d passes (%d runs, was %d)", comboRetry, c.runs.Load(), runs)
	}
}

// TestComboBounds: combos hold at most maxComboMembers patterns and maxComboInsts
// instructions (a single pattern may exceed it alone), and only whole-prone patterns
// and riders.
func TestComboBounds(t *testing.T) {
	pats := workload.LiteralFreePatterns(300, 3)
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
	answers, err := workload.ReadAnswers("../workload/testdata/realworld")
	if err != nil {
		t.Fatal(err)
	}
	naive := regexps(pats)
	for v := range answers {
		text := workload.AnswerText(answers, 4096, v)
		for range 2 {
			if got, want := s.Match(text, nil), naiveMatch(naive, text); !slices.Equal(got, want) {
				t.Fatalf("answer %d: got %v, regexp %v", v+1, got, want)
			}
		}
	}
}

// TestComboStopsEarly: a member that matches at every other byte stops the combo's pass
// after maxComboStops matches; the members seen matching are decided, the others are
// verified by themselves.
func TestComboStopsEarly(t *testing.T) {
	pats := []string{`\pL\pN`, `\pN{3}\pL{30}`, `\pN\pL\pL\pN\pN\pN`}
	s, err := New(pats)
	if err != nil {
		t.Fatal(err)
	}
	for i := range pats {
		if !s.wholeProne(i) || s.comboOf[i] != 0 {
			t.Fatalf("%q: whole-prone %v, combo %d", pats[i], s.wholeProne(i), s.comboOf[i])
		}
	}
	naive := regexps(pats)
	for _, text := range []string{
		strings.Repeat("a1", 500),
		strings.Repeat("a1", 500) + "123" + strings.Repeat("b", 30),
		strings.Repeat("a1", 500) + "1ab123",
		"123" + strings.Repeat("b", 30) + strings.Repeat("a1", 500),
	} {
		s, _ := New(pats) // fresh: passes that stop at maxComboStops turn a combo off
		for range 3 {
			sc := s.pool.New().(*scratch)
			if got, want := s.match(text, nil, sc), naiveMatch(naive, text); !slices.Equal(got, want) {
				t.Fatalf("%.30q…: got %v, regexp %v", text, got, want)
			}
			if st := sc.combo[0].state; st != comboPartial {
				t.Errorf("%.30q…: combo state %d, want stopped early (%d)", text, st, comboPartial)
			}
		}
	}
	// Every pass stops at maxComboStops: after eight, the combo is off.
	s, _ = New(pats)
	for range 9 {
		s.Match(strings.Repeat("a1", 500), nil)
	}
	if c := s.combos[0]; c.runs.Load() != 8 {
		t.Errorf("%d passes that stopped at maxComboStops, %d gave up: want the combo off after 8", c.runs.Load(), c.gaveUp.Load())
	}
}

// TestComboStopsWhenCandidatesMatch: a pass waits only for the members that are
// candidates in this text: once they have matched, it stops, however long the text
// (a member that is no candidate cannot match: it lacks its literal).
func TestComboStopsWhenCandidatesMatch(t *testing.T) {
	pats := []string{`\pN{3}\pL{3}`, `\pL\pN{4}`, `\d+\s*zzqx`}
	s, err := New(pats)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.combos) != 1 || len(s.combos[0].members) != 3 {
		t.Fatalf("want one combo of the three patterns")
	}
	text := "abc123def a12345 " + strings.Repeat("plain words and 7 numbers, ", 10000)
	naive := regexps(pats)
	for range 3 {
		sc := s.pool.New().(*scratch)
		if got, want := s.match(text, nil, sc), naiveMatch(naive, text); !slices.Equal(got, want) {
			t.Fatalf("got %v, regexp %v", got, want)
		}
		if r := sc.combo[0]; r.state != comboPartial || r.res != 0b011 {
			t.Errorf("combo state %d, matched %b: want stopped once both candidates matched", r.state, r.res)
		}
	}
	if c := s.combos[0]; c.gaveUp.Load() != 0 {
		t.Errorf("a pass that stopped on its candidates counted as giving up (%d)", c.gaveUp.Load())
	}
}

// TestScratchGenerationWraps: when a scratch's generation counter wraps round, the
// combos' state of 2^32 matches ago is not taken for this match's.
func TestScratchGenerationWraps(t *testing.T) {
	pats := []string{`\pN{3}\pL{3}`, `\pL\pN{4}`}
	s, err := New(pats)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.combos) != 1 {
		t.Fatal("want one combo")
	}
	sc := s.pool.New().(*scratch)
	if got := s.match("x 123abc y a1234", nil, sc); !slices.Equal(got, []int{0, 1}) {
		t.Fatalf("got %v, want [0 1]", got)
	}
	sc.gen = math.MaxUint32 // the next match wraps round to generation 1 again
	if got := s.match("no digits here at all, 12 ab 3c", nil, sc); len(got) != 0 {
		t.Fatalf("after the generation wrapped: got %v, regexp finds none", got)
	}
}

// TestCombosConcurrent: goroutines matching at once on a fresh set compile and warm the
// same combos; every verdict is regexp's.
func TestCombosConcurrent(t *testing.T) {
	rules, answers, s := guardrailSet(t)
	naive := regexps(rules)
	var texts []string
	var wants [][]int
	for _, size := range []int{512, 4096} {
		for v := range answers {
			texts = append(texts, workload.AnswerText(answers, size, v))
			wants = append(wants, naiveMatch(naive, texts[len(texts)-1]))
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var dst []int
			for k := range 3 * len(texts) {
				i := (g + k) % len(texts)
				if dst = s.Match(texts[i], dst[:0]); !slices.Equal(dst, wants[i]) {
					errs <- fmt.Errorf("text %d: got %v, regexp %v", i, dst, wants[i])
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestDenseAnchorsNotRecorded: a pattern whose windows are expected to cost half the
// text or more gives up its anchor, in a combo or not, so that the scan does not record
// every space or newline of an answer; one that a combo verifies gives it up too.
func TestDenseAnchorsNotRecorded(t *testing.T) {
	rules, answers, s := guardrailSet(t)
	dense := 0
	for i := range rules {
		if s.dense(i) {
			dense++
			if s.anchor[i] != nil {
				t.Errorf("%q: dense, but its anchor is recorded", rules[i])
			}
		}
		if s.comboOf[i] >= 0 && !s.comboRider[i] && s.anchor[i] != nil {
			t.Errorf("%q: verified by a combo, but its anchor is recorded", rules[i])
		}
	}
	if dense == 0 {
		t.Fatal("no dense pattern in the guardrail corpus")
	}
	// The one-sided `(?i)\b(?:100|one\s+hundred)\s*%…` is in no combo (a rare prefix):
	// its anchor, a space or a newline, would be most of what the scan records.
	i := slices.IndexFunc(rules, func(p string) bool { return strings.Contains(p, `one\s+hundred`) })
	if i < 0 || s.comboOf[i] >= 0 || s.anchor[i] != nil {
		t.Fatalf("the one-sided rule (index %d) should be in no combo, with no anchor", i)
	}
	// It still matches where regexp does.
	text := workload.AnswerText(answers, 4096, 0) + " 100 % guaranteed."
	if got, want := slices.Contains(s.Match(text, nil), i), regexp.MustCompile(rules[i]).MatchString(text); got != want || !want {
		t.Errorf("%q over an answer that ends with it: set %v, regexp %v", rules[i], got, want)
	}
}

// TestComboCountsDecay: a combo that has passed a thousand texts still switches off
// within about comboDecay passes once its texts turn against it.
func TestComboCountsDecay(t *testing.T) {
	pats := []string{`\w*e\w{20}\d`, `\w*a\w{19}\d`}
	s, err := New(pats)
	if err != nil {
		t.Fatal(err)
	}
	c := s.combos[0]
	for range 3 * comboDecay {
		s.Match("xe1 a2", nil) // both candidates; its few states are soon all known
	}
	if c.gaveUp.Load() != 0 || c.runs.Load() >= comboDecay {
		t.Fatalf("after good passes: %d runs, %d gave up; want fewer than %d runs, none given up", c.runs.Load(), c.gaveUp.Load(), comboDecay)
	}
	r := rand.New(rand.NewPCG(3, 4))
	naive := regexps(pats)
	for n := 1; ; n++ {
		var b strings.Builder
		for range 400 {
			b.WriteByte("abcde"[r.IntN(5)])
		}
		b.WriteString(" 1")
		text := b.String()
		if got, want := s.Match(text, nil), naiveMatch(naive, text); !slices.Equal(got, want) {
			t.Fatalf("got %v, regexp %v", got, want)
		}
		if g := c.gaveUp.Load(); g >= 8 && 2*g > c.runs.Load() {
			t.Logf("off after %d texts that make it give up", n)
			break
		}
		if n > 2*comboDecay {
			t.Fatalf("still on after %d texts that make it give up (%d runs, %d gave up)", n, c.runs.Load(), c.gaveUp.Load())
		}
	}
}
