package streamrules

import (
	"context"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestTextMatcherAgreesWithNaive pins the matcher's exact verdicts against running each
// regexp in turn, for whatever matcher newTextMatcher builds.
func TestTextMatcherAgreesWithNaive(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 200; round++ {
		patterns := randomPatterns(rng)
		fast := newTextMatcher(patterns)
		naive := make([]*regexp.Regexp, len(patterns))
		for i, p := range patterns {
			naive[i] = regexp.MustCompile(p)
		}
		for k := 0; k < 50; k++ {
			text := randomText(rng)
			var want []int
			for i, re := range naive {
				if re.MatchString(text) {
					want = append(want, i)
				}
			}
			got := fast.Match(text, nil)
			if !slices.Equal(got, want) {
				t.Fatalf("patterns %q on %q: matcher %v, naive %v", patterns, text, got, want)
			}
			// Match appends to dst and leaves what dst held.
			prefix := []int{-7}
			got = fast.Match(text, prefix)
			if len(got) == 0 || got[0] != -7 || !slices.Equal(got[1:], want) {
				t.Fatalf("Match(%q, [-7]) = %v, want [-7]+%v", text, got, want)
			}
		}
	}
}

// TestCheckAnswerAgreesWithNaive: the engine's verdict on random answers is exactly the
// naive loop's (regexp per rule, negate, rule-name order).
func TestCheckAnswerAgreesWithNaive(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	for round := 0; round < 40; round++ {
		patterns := randomPatterns(rng)
		var rules []Rule
		type oracle struct {
			name   string
			re     *regexp.Regexp
			negate bool
		}
		var naive []oracle
		for i, p := range patterns {
			negate := p != "" && rng.IntN(3) == 0
			name := fmt.Sprintf("r%02d", i)
			rules = append(rules, with(textRule(name, p), func(r *Rule) { r.Negate = negate }))
			naive = append(naive, oracle{name, regexp.MustCompile(p), negate})
		}
		f := newFixture(t, rules, &Config{MaxRetriesPerMove: 1000})
		for k := 0; k < 30; k++ {
			text := randomText(rng)
			var want []string
			if strings.TrimSpace(text) != "" {
				for _, o := range naive {
					if o.re.MatchString(text) != o.negate {
						want = append(want, o.name)
					}
				}
			}
			ctx, m := f.eng.BeginMove(context.Background(), fmt.Sprint("c", round, "-", k))
			v := m.CheckAnswer(ctx, text)
			if !slices.Equal(v.Rules, want) || v.Discard != (len(want) > 0) {
				t.Fatalf("patterns %q (negate per rule) on %q: verdict %+v, naive %v", patterns, text, v, want)
			}
		}
	}
}

var patternPool = []string{
	"", "a", "foo", "(?i)hello", "^foo", "bar$", `\bword\b`, `(?m)^line$`, `[а-я]+`, `\d{3}`,
	`(?s)a.b`, `a.b`, `↩ #\d+\s*$`, `!\[[^\]]*\]\([^)]*\)`, `\p{So}`, `^\s*$`, `x*`, `(?i)can'?t (see|look)`,
	`\.`, `a|b|c`, `[^\x00-\x7f]`, `^.{0,3}$`, `ab+c`, `(foo|foobar)baz`, `\x{FFFD}`, `(?i)ЖЖ`, `^$`,
	`(?U)a+?`, `[[:upper:]]{2}`, `\Aend\z`, `🙂$`, `(?i)K`, `(?i)s`, `\n`, `(?i)FOO|bar|baz`, `\Bar`,
	`(?i)ſ`, `(a|ab)(c|bcd)(d*)`, `[\x{80}-\x{10FFFF}]`, `^(?:\p{Lu}\p{Ll}+ ?)+$`,
	`(?i)k`, `(?i)σ`, `(?i)straße`, `(?i)hello world`, `hel+o`, `(?i)ab|cd`, `(?m)foo$`, `foo\z`, `[\x{FFFD}]`,
	`(?i)[a-c]bar`, `\Qa.b\E`, `(?i)Ж+`, `fo{2,}`, `(?:)`, `\S+@\S+`, `(?i)can.t`, `...`,
}

var textPool = []string{
	"a", "b", "c", "foo", "bar", "baz", "hello", "HELLO", "word", "words", "line", "\n", " ", "\t",
	"↩ #12", "↩ #", "жж", "ЖЖ", "🙂", "\xff", "\xe2\x86", "can't see", "can't look", "cant see", "!", "[x](y)",
	"![alt](http://x/y.png)", ".", "123", "end", "K", "k", "s", "S", "ſ", "Abc ", "\ufffd", "ab", "bcd", "d",
	"\u212a", "σ", "ς", "Σ", "STRASSE", "straße", "STRAẞE", "hello world", "HELLO  WORLD", "helllo", "cd", "x@y",
	"a.b", "fooo", "Жж", "\r\n", "\x00", "can’t",
}

func randomPatterns(rng *rand.Rand) []string {
	n := 1 + rng.IntN(12)
	out := make([]string, n)
	for i := range out {
		out[i] = patternPool[rng.IntN(len(patternPool))]
	}
	return out
}

func randomText(rng *rand.Rand) string {
	var b strings.Builder
	for n := rng.IntN(8); n > 0; n-- {
		b.WriteString(textPool[rng.IntN(len(textPool))])
	}
	return b.String()
}
