package streamrules_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/seeds"
)

// The release's soundness, proven by test: random rule sets (the seeds, random regexes
// with and without fixes, negates, anchors, trees) judge random answers streamed in
// random chunks. The oracle is "hold everything, then judge" (CheckAnswer on the whole
// answer): whatever Release let go must be a prefix of what the client is finally given
// (the answer, or its repair), and a discarded answer must have had nothing let go.

var relAtoms = []string{
	"a", "b", "!", `\(`, `\)`, `\[`, `\]`, " ", "#", "↩", "1", `\n`, "👍",
	`[^)\s]`, `[^\]]`, `\d`, `\s`, `\S`, ".", `\w`, "[ab]", `\p{So}`,
}

func relPattern(r *rand.Rand, depth int) string {
	if depth > 2 || r.IntN(3) == 0 {
		var b strings.Builder
		for n := 1 + r.IntN(3); n > 0; n-- {
			b.WriteString(relAtoms[r.IntN(len(relAtoms))])
		}
		return b.String()
	}
	switch r.IntN(6) {
	case 0:
		return relPattern(r, depth+1) + "|" + relPattern(r, depth+1)
	case 1:
		return "(?:" + relPattern(r, depth+1) + ")" + []string{"*", "+", "?", "{0,2}"}[r.IntN(4)]
	case 2:
		return "^" + relPattern(r, depth+1)
	case 3:
		return relPattern(r, depth+1) + `\s*$`
	case 4:
		return `\b` + relPattern(r, depth+1)
	}
	return relPattern(r, depth+1) + relPattern(r, depth+1)
}

func relPredicate(r *rand.Rand, depth int) streamrules.Predicate {
	if depth > 1 || r.IntN(2) == 0 {
		switch r.IntN(11) {
		case 9:
			return streamrules.MinWords(1 + r.IntN(4))
		case 10:
			return streamrules.MaxChars(2 + r.IntN(12))
		case 6:
			return relContext(r)
		case 0:
			return streamrules.NotContains(relPattern(r, 1))
		case 1:
			return streamrules.StartsWith(relPattern(r, 1))
		case 2:
			return streamrules.EndsWith(relPattern(r, 1))
		case 3:
			return streamrules.MaxWords(1 + r.IntN(4))
		}
		return streamrules.Contains(relPattern(r, 1))
	}
	kids := []streamrules.Predicate{relPredicate(r, depth+1), relPredicate(r, depth+1)}
	switch r.IntN(3) {
	case 0:
		return streamrules.AllOf(kids...)
	case 1:
		return streamrules.AnyOf(kids...)
	}
	return streamrules.Not(kids[0])
}

// relTools are the tools of the random tool records and context atoms.
var relTools = []string{"generate_speech", "write_file", "run_tests"}

// relContext returns a random context atom (its value is constant during one answer, so
// the release folds it: release_context.go).
func relContext(r *rand.Rand) streamrules.Predicate {
	tool := relTools[r.IntN(len(relTools))]
	switch r.IntN(6) {
	case 0:
		return streamrules.InputContains("[ab]")
	case 1:
		return streamrules.InputNotContains("a")
	case 2:
		return streamrules.ToolCalled(tool)
	case 3:
		return streamrules.ToolFailed(tool)
	case 4:
		return streamrules.EditedUncheckedBy([]string{"write_file"}, []string{"run_tests"})
	}
	return streamrules.ToolSucceeded(tool)
}

// relFacts gives the move random context: an input or none, and a few tool calls.
func relFacts(ctx context.Context, r *rand.Rand, move *streamrules.Move) {
	if r.IntN(3) > 0 {
		move.SetInput([]string{"", "a", "b", "xyz"}[r.IntN(4)])
	}
	for n := r.IntN(4); n > 0; n-- {
		tool := relTools[r.IntN(len(relTools))]
		if r.IntN(3) == 0 {
			move.ToolError(tool)
		} else {
			move.ToolReminders(ctx, tool, "{}")
		}
	}
}

func relRule(r *rand.Rand, i int) streamrules.Rule {
	rule := streamrules.Rule{Name: fmt.Sprintf("r%02d", i), Scope: "text", Text: "no", When: []string{"telegram"}}
	switch r.IntN(8) {
	case 0:
		p := relPredicate(r, 0)
		rule.Predicate = &p
	case 1:
		rule.Condition = relPattern(r, 0)
		a := relPredicate(r, 1)
		rule.AppliesWhen = &a
	default:
		rule.Condition = relPattern(r, 0)
	}
	rule.Negate = r.IntN(3) == 0
	switch r.IntN(6) {
	case 0:
		rule.Fix = &streamrules.Fix{AppendIfMissing: []string{"\n\n↩ #{{message_id}}", " ↩ #1", "{{unset}}!", ")"}[r.IntN(4)]}
	case 1:
		rule.Fix = &streamrules.Fix{PrependIfMissing: "a "}
	case 2:
		// A replace over the rule's own condition, its group the replacement: the image
		// rule's shape, on other patterns.
		inner := relPattern(r, 1)
		rule.Condition = relPattern(r, 2) + "(?:" + inner + ")" + relPattern(r, 2)
		rule.Predicate, rule.AppliesWhen, rule.Negate = nil, nil, false
		rule.Fix = &streamrules.Fix{ReplaceRegex: &streamrules.ReplaceRegex{
			Pattern: strings.Replace(rule.Condition, "(?:"+inner+")", "("+inner+")", 1), With: "$1"}}
	case 3:
		rule.Fix = &streamrules.Fix{ReplaceRegex: &streamrules.ReplaceRegex{Pattern: relPattern(r, 1), With: "x"}}
	case 4:
		// The claim's shape: a literal, maybe led by \b, maybe run on by a class, replaced
		// by a plain text; the rule fires on the literal, maybe gated by context.
		lit := []string{"a b", "(?i)ab", "!a", "#1", "b)"}[r.IntN(5)]
		if r.IntN(2) == 0 {
			lit = `\b` + lit
		}
		cond := streamrules.Contains(lit)
		if r.IntN(2) == 0 {
			cond = streamrules.AllOf(cond, streamrules.Not(relContext(r)))
		}
		rule.Condition, rule.Predicate, rule.AppliesWhen, rule.Negate = "", &cond, nil, false
		rule.Fix = &streamrules.Fix{ReplaceRegex: &streamrules.ReplaceRegex{
			Pattern: lit + []string{"", `[^\n]*`, `[^\n↩]*`, `[a ]*`}[r.IntN(4)], With: []string{"x", "no.", "b", "a b!"}[r.IntN(4)]}}
	}
	if r.IntN(8) == 0 {
		rule.Shadow = true
	}
	rule.Early = r.IntN(3) == 0 // early cuts and release share the scanner: a cut must find nothing shown
	return rule
}

var relPieces = []string{
	"![a](b)", "![x](![y](z))", "!![a]([b](c))", "![", "](", "↩ #42", "↩ #", "👍", " ", "\n", "ab", "a b",
	"!", "(", ")", "[", "]", "1", "#", "word ", "🙂", "done ", "Audio saved: a.ogg", "xaudio saved:",
	"\u00a0", "\u3000", "\u202f", "é", // multi-byte, spaces among them: the chunks cut inside them
	"cannot view the picture", "I ", "![p](q.jpg)", // a refusal another rule's repair may undo
	"so the stream goes on past the early scan's batch of bytes. ",
}

func relAnswer(r *rand.Rand) string {
	var b strings.Builder
	for n := r.IntN(12); n >= 0; n-- {
		b.WriteString(relPieces[r.IntN(len(relPieces))])
	}
	if r.IntN(2) == 0 {
		// Long enough for the early scan's batch (earlyBatchBytes): what came before is
		// scanned while the answer still streams.
		b.WriteString(strings.Repeat(relPieces[len(relPieces)-1], 2))
	}
	return b.String()
}

func seedRules(t testing.TB) []streamrules.Rule {
	set, err := seeds.Default()
	if err != nil {
		t.Fatal(err)
	}
	var out []streamrules.Rule
	for _, name := range set.Names() {
		r, _ := set.Rule(name)
		r.Repeat = ""
		out = append(out, r)
	}
	return out
}

// checkRelease streams answer in random chunks through a held scanner of a fresh move
// and judges it whole; it reports what went wrong, or "".
func checkRelease(t testing.TB, eng *streamrules.Engine, r *rand.Rand, answer string, setVar bool, env ...string) string {
	ctx := context.Background()
	if env == nil {
		env = []string{"telegram"}
	}
	begin := func(chat string, facts uint64) *streamrules.Move {
		_, move := eng.BeginMove(ctx, chat, env...)
		if setVar {
			move.SetVar("message_id", "42")
		}
		relFacts(ctx, rand.New(rand.NewPCG(facts, 1)), move)
		return move
	}
	facts := r.Uint64()
	move := begin("c", facts)
	if !move.Armed() {
		return ""
	}
	s := move.HeldScanner()
	var text, released []byte
	for i := 0; i < len(answer); {
		n := 1 + r.IntN(8)
		text = append(text, answer[i:min(i+n, len(answer))]...)
		i += n
		if v, cut := s.Scan(ctx, text); cut {
			if len(released) > 0 {
				return fmt.Sprintf("cut early (%v) after %q was released", v.Rules, released)
			}
			// An early cut must be a verdict the whole answer reaches too, other rules'
			// fixes applied: judged whole in a move with the same facts, it is discarded
			// for the rules the cut named.
			relStats.cuts.Add(1)
			whole := begin("w", facts).CheckAnswer(ctx, answer)
			for _, rule := range v.Rules {
				if !whole.Discard || !slices.Contains(whole.Rules, rule) {
					return fmt.Sprintf("cut early at %d bytes on %v; judged whole: %+v", len(text), v.Rules, whole)
				}
			}
			return ""
		}
		got := s.Release(text)
		if !strings.HasPrefix(string(got), string(released)) {
			return fmt.Sprintf("release went back: %q after %q", got, released)
		}
		if !utf8.Valid(got) {
			return fmt.Sprintf("released part of a rune: %q", got)
		}
		released = append(released[:0], got...)
	}
	v := move.CheckAnswer(ctx, answer)
	relStats.checks.Add(1)
	if len(released) > 0 {
		relStats.released.Add(1)
		if v.Fixed != "" {
			relStats.fixed.Add(1)
		}
	}
	if v.Discard {
		if len(released) > 0 {
			return fmt.Sprintf("discarded (%v) after %q was released", v.Rules, released)
		}
		return ""
	}
	final := answer
	if v.Fixed != "" {
		final = v.Fixed
	}
	if !strings.HasPrefix(final, string(released)) {
		return fmt.Sprintf("released %q, final %q (rules %v)", released, final, v.Rules)
	}
	return ""
}

func runReleaseCase(t testing.TB, seed uint64) {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var rules []streamrules.Rule
	if r.IntN(2) == 0 {
		for _, s := range seedRules(t) {
			if r.IntN(4) > 0 {
				rules = append(rules, s)
			}
		}
	}
	for i := r.IntN(4); i >= 0; i-- {
		rule := relRule(r, i)
		if _, err := regexp.Compile(rule.Condition); err != nil {
			continue
		}
		if streamrules.Validate(&rule, seeds.Environments()) != nil {
			continue
		}
		rules = append(rules, rule)
	}
	cfg := &streamrules.Config{EarlyInterrupt: r.IntN(3) == 0}
	if r.IntN(5) == 0 {
		cfg.MaxRetriesPerMove = -1 // replays off: only the fixes can change an answer
	}
	eng := quietEngine(t, cfg, rules...) // gate_test.go
	for range 20 {
		answer := relAnswer(r)
		env := []string{"telegram"}
		switch r.IntN(4) {
		case 0:
			env = []string{"picture"} // a tour without the Telegram rules: the claim streams alone
		case 1:
			env = []string{"telegram", "picture"} // look_before_refusing beside the Telegram repairs
		}
		if msg := checkRelease(t, eng, r, answer, r.IntN(4) > 0, env...); msg != "" {
			var desc []string
			for _, rule := range rules {
				desc = append(desc, fmt.Sprintf("%s neg=%v cond=%q pred=%v applies=%v fix=%+v", rule.Name, rule.Negate, rule.Condition, rule.Predicate, rule.AppliesWhen, rule.Fix))
			}
			t.Fatalf("seed %d, answer %q: %s\nrules:\n%s", seed, answer, msg, strings.Join(desc, "\n"))
		}
	}
}

var relStats struct{ checks, released, fixed, cuts atomic.Int64 }

// TestReleaseSound runs the differential over a fixed series of random rule sets. It
// fails too when the release never let anything go, or never through a fix: a proof
// that holds everything proves nothing.
func TestReleaseSound(t *testing.T) {
	n := uint64(400)
	if testing.Short() {
		n = 60
	}
	c0, r0, f0, k0 := relStats.checks.Load(), relStats.released.Load(), relStats.fixed.Load(), relStats.cuts.Load()
	for seed := range n {
		runReleaseCase(t, seed)
	}
	c, rel, fx, k := relStats.checks.Load()-c0, relStats.released.Load()-r0, relStats.fixed.Load()-f0, relStats.cuts.Load()-k0
	t.Logf("%d answers judged, %d with speech released early, %d of them repaired; %d cut early", c, rel, fx, k)
	if rel < c/10 || fx == 0 || k == 0 {
		t.Errorf("too little released or cut to prove anything: %d of %d answers, %d repaired, %d cut", rel, c, fx, k)
	}
}

// FuzzReleaseSound is TestReleaseSound over the fuzzer's seeds:
//
//	go test . -run '^$' -fuzz FuzzReleaseSound -fuzztime 60s
func FuzzReleaseSound(f *testing.F) {
	for s := range uint64(8) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, seed uint64) { runReleaseCase(t, seed) })
}
