package streamrules

import (
	"context"
	"fmt"
	"regexp"
	"testing"

	corpus "github.com/streamrules/streamrules/internal/workload"
)

// wordListRules are the same 64 words as one rule two ways: an any_of of 64
// contains_regex atoms (64 atoms, the most a tree may have), and one alternation.
func wordListRules() (tree, alt Rule) {
	words := corpus.Words(64)
	var atoms []Predicate
	for _, w := range words {
		atoms = append(atoms, Contains(corpus.WordAtom(w)))
	}
	p := AnyOf(atoms...)
	tree = Rule{Name: "words_tree", Scope: ScopeText, Predicate: &p, Text: "Keep it clean."}
	alt = Rule{Name: "words_alternation", Scope: ScopeText, Condition: corpus.WordAlternation(words), Text: "Keep it clean."}
	return tree, alt
}

// BenchmarkWordLists judges a 4 KB real answer and 64 KB of the words packed between
// word characters (wordListText: no \b holds, so every occurrence is verified) against
// the 64 words as a tree and as an alternation, and the naive loop (each word's regexp
// in turn) in the same run.
//
//	go test -run '^$' -bench WordLists -benchmem -count 3
func BenchmarkWordLists(b *testing.B) {
	answers, err := corpus.ReadAnswers(realworld)
	if err != nil {
		b.Fatal(err)
	}
	words := corpus.Words(64)
	texts := []struct{ name, text string }{
		{"answer4KB", corpus.AnswerText(answers, 4096, 0)},
		{"packed64KB", wordListText(words, 64<<10)},
	}
	tree, alt := wordListRules()
	var naive []*regexp.Regexp
	for _, w := range words {
		naive = append(naive, regexp.MustCompile(corpus.WordAtom(w)))
	}
	for _, t := range texts {
		for _, r := range []Rule{tree, alt} {
			b.Run(fmt.Sprintf("%s/%s", r.Name, t.name), func(b *testing.B) {
				eng := benchEngine(b, []Rule{r})
				b.Cleanup(eng.Close)
				_, m := eng.BeginMove(context.Background(), "bench")
				b.SetBytes(int64(len(t.text)))
				b.ReportAllocs()
				for b.Loop() {
					resetMove(m)
					m.CheckAnswer(context.Background(), t.text)
				}
			})
		}
		b.Run("naive/"+t.name, func(b *testing.B) {
			b.SetBytes(int64(len(t.text)))
			for b.Loop() {
				for _, re := range naive {
					if re.MatchString(t.text) {
						break
					}
				}
			}
		})
	}
}

// TestWordListTreeIsAlternation: the 64-word tree validates, runs as one pattern in the
// matcher (its atoms are one alternation), and judges every text as the alternation and
// as the naive any_of do, on texts with a word, with a word glued to letters, and with
// none.
func TestWordListTreeIsAlternation(t *testing.T) {
	t.Parallel()
	tree, alt := wordListRules()
	jt, ja := mustJudge(t, tree), mustJudge(t, alt)
	if n := len(jt.match.as); n != 1 {
		t.Errorf("the tree's matcher runs %d patterns, want 1", n)
	}
	for _, text := range []string{"nothing here", "a Banned17 word", "xbanned17x glued", "banned63", "banned64 is not on the list", "中文 banned0"} {
		if got, want := jt.Check(text, nil).Status, ja.Check(text, nil).Status; got != want {
			t.Errorf("%q: tree %s, alternation %s", text, got, want)
		}
		if got := jt.Check(text, nil).Status == StatusViolation; got != naiveHolds(tree.Predicate, text) {
			t.Errorf("%q: tree fired %v, the naive any_of %v", text, got, !got)
		}
	}
}
