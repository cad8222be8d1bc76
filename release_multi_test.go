package streamrules_test

import (
	"context"
	"log/slog"
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
		store, err := streamrules.NewMemoryStore(set)
		if err != nil {
			t.Fatal(err)
		}
		eng, err := streamrules.New(context.Background(), store, &streamrules.Config{Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
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
