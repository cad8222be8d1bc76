package streamrules_test

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/streamrules/streamrules"
)

// TestReleaseTwoRepairs: two replace repairs armed in one tour stream together, each
// over the text the one before it left, when their patterns share no rune; against the
// final check on random answers (checkRelease), and with something released early. A
// third whose pattern shares runes with them is watched: its rewrite could make or break
// their matches.
func TestReleaseTwoRepairs(t *testing.T) {
	rule := func(name, pattern string) streamrules.Rule {
		return streamrules.Rule{Name: name, Scope: "text", Text: "no", When: []string{"telegram"},
			Condition: strings.ReplaceAll(strings.ReplaceAll(pattern, "(", "(?:"), `\(?:`, `\(`),
			Fix:       &streamrules.Fix{ReplaceRegex: &streamrules.ReplaceRegex{Pattern: pattern, With: "$1"}}}
	}
	pieces := []string{"<a>", "{1}", "<", ">", "{", "}", "x ", "<<b>>", "{{2}}", "a", "1", "<{1}>", "[b]", " "}
	for _, set := range [][]streamrules.Rule{
		{rule("angle", `<([a-z]+)>`), rule("curly", `\{([0-9]+)\}`)},
		{rule("angle", `<([a-z]+)>`), rule("curly", `\{([0-9]+)\}`), rule("square", `\[([a-z0-9<>]+)\]`)},
	} {
		eng := quietEngine(t, nil, set...) // gate_test.go
		r := rand.New(rand.NewPCG(1, 2))
		early := 0
		for range 2000 {
			var b strings.Builder
			for n := 1 + r.IntN(14); n > 0; n-- {
				b.WriteString(pieces[r.IntN(len(pieces))])
			}
			if msg := checkRelease(t, eng, r, b.String(), false); msg != "" {
				t.Fatalf("%d rules, answer %q: %s", len(set), b.String(), msg)
			}
			_, move := eng.BeginMove(context.Background(), "c", "telegram")
			if s := move.HeldScanner(); s != nil && released(s, b.String()+strings.Repeat(" x", 8)) != "" {
				early++
			}
		}
		if two := len(set) == 2; two != (early > 0) {
			t.Errorf("%d rules: %d of 2000 answers released early", len(set), early)
		}
		eng.Close()
	}
}

// TestReleaseClaimShapes: random claim-shaped repairs (a literal, maybe case-folded, maybe
// led by \b, maybe run on by a class, replaced by a plain text), one or two to a tour,
// against the final check on random answers; and some must stream.
func TestReleaseClaimShapes(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	lits := []string{"ab", "a b", "b:", "k:", "ba"}
	classes := []string{"", `[^\n]*`, `[a-z ]*`, `[^\n.]*`}
	withs := []string{"x", "no.", "Q", "b a", "zz", "a"}
	pieces := []string{"ab", "AB", "a b", "K:", "\u212a:", "b:", " ", "\n", "x", "za", ".", "ba", "Ba", "k"}
	streamed := 0
	for range 150 {
		var rules []streamrules.Rule
		for i := r.IntN(2); i >= 0; i-- {
			lit := lits[r.IntN(len(lits))]
			if r.IntN(2) == 0 {
				lit = "(?i)" + lit
			}
			if r.IntN(2) == 0 {
				lit = `\b` + lit
			}
			rules = append(rules, streamrules.Rule{Name: "c" + string(rune('a'+i)), Scope: "text", Text: "no", Condition: lit,
				Fix: &streamrules.Fix{ReplaceRegex: &streamrules.ReplaceRegex{Pattern: lit + classes[r.IntN(len(classes))], With: withs[r.IntN(len(withs))]}}})
		}
		eng := quietEngine(t, nil, rules...) // gate_test.go
		for range 40 {
			var b strings.Builder
			for n := 1 + r.IntN(12); n > 0; n-- {
				b.WriteString(pieces[r.IntN(len(pieces))])
			}
			if msg := checkRelease(t, eng, r, b.String(), false, "picture"); msg != "" {
				t.Fatalf("rules %+v %+v, answer %q: %s", rules[0].Fix.ReplaceRegex, rules[len(rules)-1].Fix.ReplaceRegex, b.String(), msg)
			}
			_, move := eng.BeginMove(context.Background(), "c", "picture")
			if released(move.HeldScanner(), b.String()+"\n"+strings.Repeat("x ", 12)) != "" {
				streamed++
			}
		}
		eng.Close()
	}
	if streamed == 0 {
		t.Error("no claim-shaped repair streamed")
	}
	t.Logf("%d of %d answers streamed", streamed, 150*40)
}

// TestReleaseRepairsThatMeet: two repairs whose patterns share no rune still cannot
// chain when one reads \b (the other's rewrite changes the rune before a match: <9cd
// becomes <cd, a claim) or puts a replacement the other reads (cd becomes <1>, an
// image): each pair here discards an answer, so nothing may be released before it.
func TestReleaseRepairsThatMeet(t *testing.T) {
	fix := func(name, cond, pattern, with string) streamrules.Rule {
		return streamrules.Rule{Name: name, Scope: "text", Text: "no", Condition: cond,
			Fix: &streamrules.Fix{ReplaceRegex: &streamrules.ReplaceRegex{Pattern: pattern, With: with}}}
	}
	for _, tt := range []struct {
		rules  []streamrules.Rule
		answer string
	}{
		{[]streamrules.Rule{fix("a", `(?:[<>]+)9`, `([<>]+)9`, "$1"), fix("b", `\bcd`, `\bcd`, "x")}, "<9cd"},
		{[]streamrules.Rule{fix("a", `<(?:[0-9]+)>`, `<([0-9]+)>`, "$1"), fix("b", `cd`, `cd`, "<1>")}, "cd"},
	} {
		eng := quietEngine(t, nil, tt.rules...) // gate_test.go
		ctx, move := eng.BeginMove(context.Background(), "c")
		head := strings.Repeat("Nothing here to repair, and a lot of it. ", 3)
		got := released(move.HeldScanner(), head+tt.answer)
		if v := move.CheckAnswer(ctx, head+tt.answer); !v.Discard || got != "" {
			t.Errorf("%q: released %q, verdict %+v; want a discard and nothing released", tt.answer, got, v)
		}
		eng.Close()
	}
}
