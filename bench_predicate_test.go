package streamrules

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	corpus "github.com/streamrules/streamrules/internal/workload"
)

// treeRules returns n text rules of the realistic mix, a quarter of them trees: each tree
// holds its rule's own pattern, one more pattern negated and a word count, so a tree that
// does not fire still reads three verdicts and counts words.
func treeRules(n int) []Rule {
	patterns := corpus.RealisticPatterns(2*n, 1)
	rules := textRules(patterns[:n])
	for i := range rules {
		if i%4 != 3 {
			continue
		}
		p := AnyOf(Contains(patterns[i]), AllOf(NotContains(patterns[n+i]), MinWords(5000)), EndsWith(patterns[n+i-1]))
		rules[i].Condition, rules[i].Predicate = "", &p
	}
	return rules
}

// naiveRule is a rule as the obvious evaluator holds it: its own compiled regexps.
type naiveRule func(text string) bool

func naiveTree(p *Predicate) naiveRule {
	regex := func(s string) naiveRule { return regexp.MustCompile(s).MatchString }
	switch {
	case p.ContainsRegex != "":
		return regex(p.ContainsRegex)
	case p.NotContainsRegex != "":
		re := regex(p.NotContainsRegex)
		return func(s string) bool { return !re(s) }
	case p.StartsWithRegex != "":
		return regex(`\A(?:` + p.StartsWithRegex + `)`)
	case p.EndsWithRegex != "":
		return regex(`(?:` + p.EndsWithRegex + `)\z`)
	case p.MaxWords != nil:
		n := *p.MaxWords
		return func(s string) bool { return len(strings.Fields(s)) <= n }
	case p.MinWords != nil:
		n := *p.MinWords
		return func(s string) bool { return len(strings.Fields(s)) >= n }
	case p.MaxChars != nil:
		n := *p.MaxChars
		return func(s string) bool { return utf8.RuneCountInString(s) <= n }
	case p.Not != nil:
		k := naiveTree(p.Not)
		return func(s string) bool { return !k(s) }
	}
	all, list := p.AllOf != nil, p.AllOf
	if !all {
		list = p.AnyOf
	}
	kids := make([]naiveRule, len(list))
	for i := range list {
		kids[i] = naiveTree(&list[i])
	}
	return func(s string) bool {
		for _, k := range kids {
			if k(s) != all {
				return !all
			}
		}
		return all
	}
}

func naiveRules(rules []Rule) []naiveRule {
	out := make([]naiveRule, len(rules))
	for i, r := range rules {
		if r.Predicate != nil {
			out[i] = naiveTree(r.Predicate)
		} else {
			out[i] = regexp.MustCompile(r.Condition).MatchString
		}
	}
	return out
}

// BenchmarkTreeCheck judges one 4 KB answer against 1,000 text rules, a quarter of them
// trees: the engine (every tree regex in the one prefilter pass) against the naive loop
// (each rule evaluated on its own, every regexp run), in the same run.
func BenchmarkTreeCheck(b *testing.B) {
	const n, size = 1000, 4096
	rules := treeRules(n)
	naive := naiveRules(rules)
	eng := benchEngine(b, rules)
	var plain *Engine
	for _, kind := range []string{"none", "one"} {
		fire := ""
		if kind == "one" {
			fire = corpus.FireText
		}
		text := corpus.RealisticText(size, size, fire)
		name := fmt.Sprintf("rules=%d/trees=%d/text=%d/%s", n, n/4, size, kind)
		var want []string
		for i, r := range naive {
			if r(text) {
				want = append(want, rules[i].Name)
			}
		}
		b.Run("engine/"+name, func(b *testing.B) {
			_, m := eng.BeginMove(context.Background(), "bench")
			if v := m.CheckAnswer(context.Background(), text); strings.Join(v.Rules, ",") != strings.Join(want, ",") {
				b.Fatalf("engine fired %v, naive %v", v.Rules, want)
			}
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				resetMove(m)
				m.CheckAnswer(context.Background(), text)
			}
		})
		b.Run("plain/"+name, func(b *testing.B) {
			// The same 1,000 rules with no tree (each rule its own pattern only): the
			// plain hard check, the floor the trees are measured against.
			if plain == nil {
				plain = benchEngine(b, textRules(corpus.RealisticPatterns(n, 1)))
			}
			_, m := plain.BeginMove(context.Background(), "bench")
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				resetMove(m)
				m.CheckAnswer(context.Background(), text)
			}
		})
		b.Run("naive/"+name, func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				var hits []int
				for i, r := range naive {
					if r(text) {
						hits = append(hits, i)
					}
				}
				_ = hits
			}
		})
	}
}

// BenchmarkFix repairs a 4 KB Telegram answer with the seeded fixes (the markdown image
// replaced, the tail appended): the whole verdict, with the second check of every rule
// and the diff, against the same verdict on an answer that passes (the floor), and the
// replay a fix saves (one more model call: not benchmarked, it is seconds).
func BenchmarkFix(b *testing.B) {
	rules := []Rule{
		with(tailRule(), func(r *Rule) { r.When = []string{envTelegram} }),
		with(imageRule(), func(r *Rule) { r.When = []string{envTelegram} }),
		with(textRule("look_before_refusing", `(?i)\b(?:can'?t|cannot|unable to)\b[^.!?\n]{0,40}\b(?:see|view|open)\s+(?:the\s+)?(?:image|picture|photo)s?\b`), nil2),
		with(textRule("telegram_react_not_emoji", `^\s*(?:[\p{So}\x{1F3FB}-\x{1F3FF}\x{200D}\x{FE0F}]\s*)+(?:↩ #\d+)?\s*$`), nil2),
	}
	eng := benchEngine(b, rules)
	body := corpus.RealisticText(4000, 4, "")
	draft := body + "\nHere: ![chart](https://example.org/chart.png)"
	clean := body + "\nHere: https://example.org/chart.png\n\n↩ #4711"
	for _, c := range []struct{ name, text, want string }{
		{"repair/text=4096", draft, clean},
		{"pass/text=4096", clean, ""},
	} {
		b.Run(c.name, func(b *testing.B) {
			_, m := eng.BeginMove(context.Background(), "bench", envTelegram)
			m.SetVar("message_id", "4711")
			if v := m.CheckAnswer(context.Background(), c.text); v.Fixed != c.want || v.Discard {
				b.Fatalf("verdict %+v", v)
			}
			b.SetBytes(int64(len(c.text)))
			b.ReportAllocs()
			for b.Loop() {
				resetMove(m)
				m.CheckAnswer(context.Background(), c.text)
			}
		})
	}
	// The fixes alone (both applied, then the diff), without the checks around them.
	b.Run("apply_and_diff/text=4096", func(b *testing.B) {
		img, tail := compileFix(imageRule().Fix), compileFix(tailRule().Fix)
		vars := map[string]string{"message_id": "4711"}
		b.SetBytes(int64(len(draft)))
		b.ReportAllocs()
		for b.Loop() {
			out, _ := img.apply(draft, vars)
			out, _ = tail.apply(out, vars)
			if len(Diff(draft, out)) != 3 {
				b.Fatal("diff")
			}
		}
	})
}

func nil2(*Rule) {}
