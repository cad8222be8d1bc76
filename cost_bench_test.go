package streamrules

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	corpus "github.com/streamrules/streamrules/internal/workload"
)

// worstKnown are the costliest rules found when the cost bound was first set, and their relatives. Those that validate
// run as their cut form (`(?s)[\s\S]{0,1000}z` as `z`).
var worstKnown = []string{
	`(?s)[\s\S]{0,1000}z`,
	`(\w+\s+){0,100}z`,
	`z[\s\S]{0,1000}y`,
	`(?s)z.{0,250}y`,
	`[^"]{4}x`,
	`\S{4}\s\S{4}`,
	`(?i)\b(can'?t|cannot|unable to)\b.{0,40}\b(see|view|look at)\b`,
	`(?m)^.{200,}$`,
	`(?i)\bf[\W_]*u[\W_]*c[\W_]*k\b`,
	`[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}`,
	`↩ #\d+\s*$`,
	// Exponential for a DFA (the letter 13 back must be an e): the lazy DFA gives up
	// on prose and regexp runs; these measure that fallback.
	`[a-z]*e[a-z]{12}q`,
	`\w*e\w{20}\d`,
	`(?i)[a-z]e[a-z]{8}[a-z]t\b`,
	// The rules the first live-thread estimate let through (235 and 150 ms on 1 MB).
	`the(?:\S+\s*)+\n\d{9,}`,
	`\d{0,44}\d{4,}[a-z]{2,}\n\w{31,}`,
	`\n[^"]+the\s+"(?:\w+\s+){40,}(?:[^"]{1,3}the){0,15}`,
}

// repetitionHeavy returns a random pattern built from wide classes, counted and
// unbounded repetitions, nesting and a literal or two: the shapes that make regexp slow.
func repetitionHeavy(r *rand.Rand) string {
	atoms := []string{`.`, `[\s\S]`, `\w`, `\S`, `[^"]`, `\s`, `\d`, `[a-z]`, `(?:\w+\s+)`, `(?:\S+\s*)`}
	lits := []string{`z`, `the`, `"`, `\n`, `x`, `e`}
	var b strings.Builder
	for n := 1 + r.IntN(4); n > 0; n-- {
		if r.IntN(2) == 0 {
			b.WriteString(lits[r.IntN(len(lits))])
		}
		a := atoms[r.IntN(len(atoms))]
		switch r.IntN(4) {
		case 0:
			fmt.Fprintf(&b, `%s{0,%d}`, a, 1+r.IntN(300))
		case 1:
			fmt.Fprintf(&b, `%s{%d,}`, a, 1+r.IntN(50))
		case 2:
			fmt.Fprintf(&b, `(?:%s{1,%d}%s){0,%d}`, a, 1+r.IntN(20), lits[r.IntN(len(lits))], 1+r.IntN(20))
		default:
			b.WriteString(a + "+")
		}
	}
	if r.IntN(3) == 0 {
		b.WriteString(lits[r.IntN(len(lits))])
	}
	return b.String()
}

// worstText returns the 64 KB real answer and 1 MB of tool arguments (a write_file
// call carrying real answers as its content, compact JSON).
func worstTexts(tb testing.TB) (answer, args string) {
	tb.Helper()
	answers, err := corpus.ReadAnswers(realworld)
	if err != nil {
		tb.Fatal(err)
	}
	answer = corpus.AnswerText(answers, 64<<10, 0)
	content := corpus.AnswerText(answers, 1<<20-64, 1)
	data, err := json.Marshal(map[string]string{"path": "/srv/app/README.md", "content": content})
	if err != nil {
		tb.Fatal(err)
	}
	return answer, string(data)
}

// issue26Rules are the rule shapes, found by a hardening review, that passed the per-regex bound
// and broke the bound as rules: a chain a frequent narrow character restarts, the same
// behind a cut edge, an any_of of 63 such regexes (and of 63 cheap ones), and a field
// path over 1 MB of arguments with a trivial condition (BenchmarkFieldWalk measures the
// walk alone).
func issue26Rules() []Rule {
	var heavy, light []Predicate
	for k := range 63 {
		c := string(rune('a' + k%26))
		heavy = append(heavy, Contains(fmt.Sprintf(`%s\w{20}\d{%d}`, c, 1+k/26)))
		light = append(light, Contains(fmt.Sprintf(`\bword%d\b`, k)))
	}
	anyHeavy, anyLight := AnyOf(heavy...), AnyOf(light...)
	tree := func(name string, p *Predicate) Rule {
		return Rule{Name: name, Scope: ScopeText, Predicate: p, Text: "x"}
	}
	return []Rule{
		textRule("chain126", `e\w{126}\d`),
		textRule("chain20", `\w*e\w{20}\d`),
		textRule("expo14", `a[ab]{14}c`),
		tree("any_of_63_chains", &anyHeavy),
		tree("any_of_63_words", &anyLight),
		textRule("word_list", `(?i)\b(`+strings.Join(wordListWords, "|")+`)\b`),
		with(softRule("field_trivial", "write_file", "x"), func(r *Rule) { r.Field = "a.b" }),
	}
}

// wordListWords are the words of the word list that was once quadratic, a rule `(?i)\b(damn|…|git)\b`
// whose windows were quadratic on wordListText.
var wordListWords = []string{"damn", "hell", "crap", "bloody", "bugger", "bollocks", "arse", "wanker", "tosser", "git"}

// BenchmarkWorstRules proves the cost bound per rule, on texts built against each rule:
// the worst rules known and the hardening review's shapes, plus the worst of a search over 400
// repetition-heavy patterns (ranked by their time on 16 KB of a real answer). For each
// that validates, searchAdversary builds a text against its patterns (12 random
// weightings of their own characters, literals and CJK, matches broken; the costliest on
// 16 KB kept; breaking the matches of one text is capped at advBreakTime) and the rule
// judges 64 KB of it (bound: 10 ms) and 1 MB (bound: 100 ms), beside the real 64 KB
// answer and 1 MB of tool arguments; the word list also judges wordListText. A field rule judges 1 MB
// arguments of the shapes that made decoding slow. Rules that do not validate are
// logged with the reason.
func BenchmarkWorstRules(b *testing.B) {
	answer, args := worstTexts(b)
	var rules []Rule
	for i, p := range worstKnown {
		rules = append(rules, textRule(fmt.Sprintf("known%02d", i), p))
	}
	rules = append(rules, issue26Rules()...)
	// The search: rank the patterns that validate by the matcher's time on 16 KB.
	r := rand.New(rand.NewPCG(10, 10))
	type timed struct {
		p string
		d time.Duration
	}
	var found []timed
	rejected := 0
	for i := 0; i < 400; i++ {
		p := repetitionHeavy(r)
		if checkRegex("condition", p) != nil {
			rejected++
			continue
		}
		set := newTextMatcher([]string{p})
		start := time.Now()
		set.Match(answer[:16<<10], nil)
		found = append(found, timed{p, time.Since(start)})
	}
	slices.SortFunc(found, func(x, y timed) int { return int(y.d - x.d) })
	b.Logf("search: %d of 400 rejected, %d validated", rejected, len(found))
	for i, f := range found[:min(5, len(found))] {
		rules = append(rules, textRule(fmt.Sprintf("search%d", i), f.p))
	}
	for _, rule := range rules {
		rule.Normalize()
		if err := Validate(&rule, testEnvs); err != nil {
			b.Logf("rejected %s: %v", rule.Name, err)
			continue
		}
		j := mustJudge(b, rule)
		var pats []string
		for _, n := range rulePatterns(&rule) {
			pats = append(pats, n.pattern)
		}
		b.Logf("%s validates: %s", rule.Name, strings.Join(pats, " | "))
		judge := func(text string) { j.Check(text, nil) }
		texts := []struct{ name, text string }{{"answer64KB", answer}, {"args1MB", args}}
		if rule.Field != "" {
			texts = texts[1:]
			for name, a := range fieldArgs() {
				texts = append(texts, struct{ name, text string }{"field1MB-" + name, a})
			}
		} else if len(pats) > 0 && pats[0] != "" {
			rc := searchAdversary(strings.Join(pats, "|"), 12, 26, judge)
			re := regexp.MustCompile(strings.Join(pats, "|"))
			for _, n := range []int{64 << 10, 1 << 20} {
				text, broken := rc.text(re, n)
				if !broken {
					b.Logf("%s: the adversary's %d bytes keep matches (breaking them passed %v)", rule.Name, n, advBreakTime)
				}
				texts = append(texts, struct{ name, text string }{fmt.Sprintf("adversary%dKB", n>>10), text})
			}
		}
		if rule.Name == "word_list" {
			for _, n := range []int{64 << 10, 1 << 20} {
				texts = append(texts, struct{ name, text string }{fmt.Sprintf("packed%dKB", n>>10), wordListText(wordListWords, n)})
			}
		}
		for _, t := range texts {
			b.Run(rule.Name+"/"+t.name, func(b *testing.B) {
				for b.Loop() {
					judge(t.text)
				}
			})
		}
	}
}

// TestRepetitionHeavyBound: over the same search, every pattern that validates has a
// cost bound within the limit, and every rejection names the condition and says why.
func TestRepetitionHeavyBound(t *testing.T) {
	r := rand.New(rand.NewPCG(10, 10))
	for i := 0; i < 400; i++ {
		p := repetitionHeavy(r)
		a, c, err := analyzeRegex("condition", p)
		if err != nil {
			var ve *ValidationError
			if !errors.As(err, &ve) || ve.Field != "condition" || !strings.Contains(ve.Reason, "too costly") {
				t.Errorf("%q: %v", p, err)
			}
			continue
		}
		if a.WideInsts() > maxWide && !a.Anchored() && !a.RarePrefix() && !c.worst.Complete {
			t.Errorf("%q validated with %d wide instructions and no small DFA", p, a.WideInsts())
		}
		if !fits(c.ns, c.build) || !fits(patternCost(a, true).ns, patternCost(a, true).build) {
			t.Errorf("%q validated with a bound of %.0f ns/byte and %.1f ms to build", p, c.ns, c.build/1e6)
		}
	}
}
