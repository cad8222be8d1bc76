package streamrules

import (
	"math/rand/v2"
	"regexp"
	"regexp/syntax"
	"strings"
	"time"
	"unicode/utf8"
)

// The adversary of the cost bound: for one pattern, a text on which regexp keeps as many
// threads alive as it can, with no match (a match would end the search early). The text
// is drawn from tokens the pattern's own program reads: a character each rune instruction
// matches, the literal runs of the program, and distinct CJK characters (which make the
// lazy DFA give up and hand the text to regexp). searchAdversary tries random weightings
// of the tokens and keeps the one whose text costs the matcher most.

// advRecipe is a weighting of tokens; text draws from it.
type advRecipe struct {
	tokens  []string // "" stands for a fresh CJK character
	weights []float64
	seed    uint64
}

// advTokens lists the tokens of pattern p's run form (the form the matcher runs).
func advTokens(p string, r *rand.Rand) []string {
	re, err := syntax.Parse(p, syntax.Perl)
	if err != nil {
		return nil
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return nil
	}
	pool := []rune{'\n', ' ', 'é', '中', 'ß'}
	for c := rune(33); c < 127; c++ {
		pool = append(pool, c)
	}
	seen := map[string]bool{"": true}
	tokens := []string{""}
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			tokens = append(tokens, s)
		}
	}
	for pc := range prog.Inst {
		in := &prog.Inst[pc]
		switch in.Op {
		case syntax.InstRune, syntax.InstRune1, syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
			var ok []rune
			for _, c := range pool {
				if in.MatchRune(c) {
					ok = append(ok, c)
				}
			}
			for k := 0; k < 2 && len(ok) > 0; k++ {
				add(string(ok[r.IntN(len(ok))]))
			}
			// A literal run: the characters of Rune1 instructions in a row.
			var b strings.Builder
			for q := in; q.Op == syntax.InstRune1 && b.Len() < 32; q = &prog.Inst[q.Out] {
				b.WriteRune(q.Rune[0])
			}
			if b.Len() > 1 {
				add(b.String())
			}
		}
	}
	return tokens
}

func newRecipe(p string, r *rand.Rand) advRecipe {
	tokens := advTokens(p, r)
	w := make([]float64, len(tokens))
	for i := range w {
		if r.IntN(3) == 0 {
			w[i] = r.Float64()
		}
	}
	w[r.IntN(len(w))] += 1 // at least one
	return advRecipe{tokens: tokens, weights: w, seed: r.Uint64()}
}

// text builds about n bytes from the recipe, then breaks every match of re (see
// breakMatches: broken says whether it broke them all within advBreakTime).
func (rc advRecipe) text(re *regexp.Regexp, n int) (text string, broken bool) {
	r := rand.New(rand.NewPCG(rc.seed, 26))
	total := 0.0
	for _, w := range rc.weights {
		total += w
	}
	var b strings.Builder
	for b.Len() < n {
		x := r.Float64() * total
		i := 0
		for ; i < len(rc.weights)-1 && x >= rc.weights[i]; i++ {
			x -= rc.weights[i]
		}
		if t := rc.tokens[i]; t != "" {
			b.WriteString(t)
		} else {
			b.WriteRune(rune(0x4e00 + r.IntN(0x5000)))
		}
	}
	return breakMatches(re, b.String())
}

// advBreakTime caps the time breakMatches spends on one text: each match costs a
// search from the match before, and a slow pattern that matches often (the random
// patterns of BenchmarkWorstRules) took minutes on 1 MB.
const advBreakTime = 3 * time.Second

// breakMatches replaces the last character of each match until none is left. It gives
// up, broken false, after advBreakTime, or at an empty match (a pattern that matches
// the empty text matches every text): the text then keeps its later matches, on which a
// rule may stop early, so what it costs there is a lower bound.
func breakMatches(re *regexp.Regexp, text string) (string, bool) {
	buf := []byte(text)
	from := 0
	deadline := time.Now().Add(advBreakTime)
	for tries := 0; tries < len(buf); tries++ {
		loc := re.FindIndex(buf[from:])
		if loc == nil {
			return string(buf), true
		}
		if loc[0] == loc[1] || time.Now().After(deadline) {
			return string(buf), false
		}
		start, end := from+loc[0], from+loc[1]
		_, size := utf8.DecodeLastRune(buf[start:end])
		// In place: the rune's first byte becomes a breaker, its other bytes spaces.
		buf[end-size] = "\x00\n #\"Z0~"[tries%8]
		for k := end - size + 1; k < end; k++ {
			buf[k] = ' '
		}
		from = start
	}
	return string(buf), re.Find(buf[from:]) == nil
}

// searchAdversary returns, of trials random recipes, the one whose 16 KB text costs
// run most, in time.
func searchAdversary(p string, trials int, seed uint64, run func(text string)) advRecipe {
	return searchAdversaryBy(p, trials, seed, func(text string) float64 {
		start := time.Now()
		run(text)
		return float64(time.Since(start))
	})
}

// searchAdversaryBy is searchAdversary ranking the texts by cost (work counted rather
// than time, for a test).
func searchAdversaryBy(p string, trials int, seed uint64, cost func(text string) float64) advRecipe {
	re := regexp.MustCompile(p)
	r := rand.New(rand.NewPCG(seed, 26))
	var best advRecipe
	bestC := -1.0
	for range trials {
		rc := newRecipe(p, r)
		text, _ := rc.text(re, 16<<10)
		if c := cost(text); c > bestC {
			best, bestC = rc, c
		}
	}
	return best
}

// wordListText is the text that once made the word list quadratic: its words
// packed between runs of word characters, so no \b holds around any and every window
// widens over the run (internal/multimatch's TestVerifyReadLinear has the same shape).
func wordListText(words []string, n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		b.WriteString(words[i*7%len(words)])
		b.WriteString("qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq")
	}
	return b.String()
}
