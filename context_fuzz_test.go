package streamrules

import (
	"context"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// fuzzTools are the tool names of fuzzed records and context atoms.
var fuzzTools = []string{"write_file", "run_tests", "generate_speech"}

// ctxTreeFrom builds a valid tree with context atoms from bytes, consuming them; the same
// bytes build the same tree. Ops 0-6 are treeFrom's atoms, 7-12 the context atoms, 13-15
// all_of, any_of and not_.
func ctxTreeFrom(data *[]byte, depth int) Predicate {
	next := func() int { return takeByte(data) }
	op := next() % 16
	if depth >= 4 && op >= 13 {
		op %= 13
	}
	re := fuzzRegexes[next()%len(fuzzRegexes)]
	n := next()
	tool := fuzzTools[n%len(fuzzTools)]
	subset := func(bits int) []string {
		var out []string
		for i, t := range fuzzTools {
			if bits&(1<<i) != 0 {
				out = append(out, t)
			}
		}
		if out == nil {
			out = []string{fuzzTools[bits%len(fuzzTools)]}
		}
		return out
	}
	switch op {
	case 0, 1, 2, 3, 4, 5, 6:
		return textAtom(op, re, n)
	case 7:
		return InputContains(re)
	case 8:
		return InputNotContains(re)
	case 9:
		return ToolCalled(tool)
	case 10:
		return ToolSucceeded(tool)
	case 11:
		return ToolFailed(tool)
	case 12:
		return EditedUncheckedBy(subset(n), subset(n>>3))
	case 15:
		return Not(ctxTreeFrom(data, depth+1))
	}
	kids := make([]Predicate, 1+n%3)
	for i := range kids {
		kids[i] = ctxTreeFrom(data, depth+1)
	}
	if op == 13 {
		return AllOf(kids...)
	}
	return AnyOf(kids...)
}

// factsFrom builds a move's context from bytes: whether the input and the record are
// known, and the record, one call a byte (its tool and whether it returned normally).
func factsFrom(data []byte, input string) *Facts {
	if len(data) == 0 {
		return nil
	}
	f := &Facts{Input: input, HasInput: data[0]&1 != 0, HasTools: data[0]&2 != 0}
	for _, b := range data[1:min(len(data), 9)] {
		f.Tools = append(f.Tools, ToolRun{Tool: fuzzTools[int(b)%len(fuzzTools)], OK: b&0x80 == 0})
	}
	return f
}

// naiveCtx is the definition, evaluated the obvious way: each atom on its own, all_of and
// any_of left to right, stopping at the first child that decides. missing is set when an
// atom that was evaluated needed context f does not give.
func naiveCtx(p *Predicate, text string, f *Facts, missing *bool) bool {
	input := func(re string) bool {
		if f == nil || !f.HasInput {
			*missing = true
			return false
		}
		return regexp.MustCompile(re).MatchString(f.Input)
	}
	record := func() bool {
		if f == nil || !f.HasTools {
			*missing = true
			return false
		}
		return true
	}
	some := func(tool string, want func(ToolRun) bool) bool {
		return record() && slices.ContainsFunc(f.Tools, func(r ToolRun) bool { return r.Tool == tool && want(r) })
	}
	switch {
	case p.InputContainsRegex != "":
		return input(p.InputContainsRegex)
	case p.InputNotContainsRegex != "":
		ok := input(p.InputNotContainsRegex)
		return !ok && f != nil && f.HasInput
	case p.ToolCalled != "":
		return some(p.ToolCalled, func(ToolRun) bool { return true })
	case p.ToolSucceeded != "":
		return some(p.ToolSucceeded, func(r ToolRun) bool { return r.OK })
	case p.ToolFailed != "":
		return some(p.ToolFailed, func(r ToolRun) bool { return !r.OK })
	case p.EditedUnchecked != nil:
		if !record() {
			return false
		}
		// Some successful edit with no successful check anywhere after it.
		for i, r := range f.Tools {
			if !r.OK || !slices.Contains(p.EditedUnchecked.Edits, r.Tool) {
				continue
			}
			checked := slices.ContainsFunc(f.Tools[i+1:], func(c ToolRun) bool {
				return c.OK && slices.Contains(p.EditedUnchecked.Checks, c.Tool)
			})
			if !checked {
				return true
			}
		}
		return false
	case p.AllOf != nil:
		for i := range p.AllOf {
			if !naiveCtx(&p.AllOf[i], text, f, missing) {
				return false
			}
		}
		return true
	case p.AnyOf != nil:
		for i := range p.AnyOf {
			if naiveCtx(&p.AnyOf[i], text, f, missing) {
				return true
			}
		}
		return false
	case p.Not != nil:
		return !naiveCtx(p.Not, text, f, missing)
	case p.MaxWords != nil:
		return len(strings.Fields(text)) <= *p.MaxWords
	case p.MinWords != nil:
		return len(strings.Fields(text)) >= *p.MinWords
	case p.MaxChars != nil:
		return utf8.RuneCountInString(text) <= *p.MaxChars
	}
	return naiveHolds(p, text)
}

// checkCtxAgainstNaive compares the Judge's verdict with the naive evaluator's, for the
// tree as a condition and as applies_when: a verdict that needed missing context is
// not_applicable, never a pass or a violation.
func checkCtxAgainstNaive(t *testing.T, p Predicate, text string, f *Facts) {
	t.Helper()
	var missing bool
	holds := naiveCtx(&p, text, f, &missing)
	want := StatusPass
	switch {
	case missing:
		want = StatusNotApplicable
	case holds:
		want = StatusViolation
	}
	if got := mustJudge(t, treeTextRule(p)).Check(text, f).Status; got != want {
		t.Fatalf("tree %s on %q with %+v: engine %s, naive %s", p.String(), text, f, got, want)
	}
	r := textRule("scoped", "")
	r.AppliesWhen = &p
	want = StatusViolation // an empty condition fires wherever the rule applies
	if missing || !holds {
		want = StatusNotApplicable
	}
	if got := mustJudge(t, r).Check(text, f).Status; got != want {
		t.Fatalf("applies_when %s on %q with %+v: engine %s, naive %s", p.String(), text, f, got, want)
	}
}

// FuzzContextPredicate: any tree with context atoms, any text, input and record: the
// engine agrees with the naive evaluator.
func FuzzContextPredicate(f *testing.F) {
	f.Add([]byte{13, 0, 1, 0, 1, 0, 10, 0, 2}, "Audio saved: x", []byte{3, 2}, "say hi")
	f.Add([]byte{12, 0, 1}, "Done.", []byte{3, 0, 0x81, 1}, "")
	f.Add([]byte{14, 0, 2, 7, 4, 0, 11, 0, 0}, "a b", []byte{1}, "ab")
	f.Add([]byte{15, 8, 0}, "x", []byte{}, "x")
	f.Fuzz(func(t *testing.T, shape []byte, text string, record []byte, input string) {
		p := ctxTreeFrom(&shape, 0)
		checkCtxAgainstNaive(t, p, text, factsFrom(record, input))
	})
}

// TestContextPredicateRandom: the fuzz property over many seeded random trees, and the
// same trees in a real move whose record the engine kept itself (ToolReminders,
// ToolError, MarkToolFailed): the move fires the rule exactly where the Judge says
// violation.
func TestContextPredicateRandom(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(25, 3))
	texts := []string{"", "a", "ab", "ba ab", "x yz 1", "c\nd", "Done.", "Audio saved: x"}
	inputs := []string{"", "a", "x yz", "ЖЖ c"}
	ctx := context.Background()
	for i := range 1500 {
		shape := make([]byte, 24)
		for k := range shape {
			shape[k] = byte(rng.IntN(256))
		}
		record := make([]byte, rng.IntN(7))
		for k := range record {
			record[k] = byte(rng.IntN(256))
		}
		text, input := texts[rng.IntN(len(texts))], inputs[rng.IntN(len(inputs))]
		p := ctxTreeFrom(&shape, 0)
		f := factsFrom(record, input)
		checkCtxAgainstNaive(t, p, text, f)
		if i%5 != 0 {
			continue
		}
		// The same verdict from a move. A move's record is always known; its input is
		// known when set.
		if f == nil {
			f = &Facts{}
		}
		f.HasTools = true
		want := mustJudge(t, treeTextRule(p)).Check(text, f).Status == StatusViolation
		eng := newFixture(t, []Rule{treeTextRule(p)}, nil).eng
		mctx, m := eng.BeginMove(ctx, "c")
		if f.HasInput {
			m.SetInput(f.Input)
		}
		for k, r := range f.Tools {
			switch {
			case r.OK:
				m.ToolReminders(mctx, r.Tool, "{}")
			case k%2 == 0:
				m.ToolError(r.Tool)
			default:
				cctx := WithToolCall(mctx)
				MarkToolFailed(cctx)
				m.ToolReminders(cctx, r.Tool, "{}")
			}
		}
		v := m.CheckAnswer(mctx, text)
		if got := len(v.Rules) == 1; got != want && strings.TrimSpace(text) != "" {
			t.Fatalf("tree %s on %q with %+v: move fired %v, judge %v", p.String(), text, f, got, want)
		}
	}
}
