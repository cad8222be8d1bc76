package streamrules

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// TestRuleReadLinear: the matcher's work on texts built against a rule grows linearly
// with the text. Work is counted, not timed: the bytes the verification reads
// (multimatch.Set.Read), whose cost per byte the bound charges. For rules whose windows
// widen over words and lines (the word list that was once quadratic, an any_of of 63 words, and the \b and
// $ rules of worstKnown), on a text searchAdversaryBy builds to make the matcher read
// most and on the packed word list, the bytes read per byte at 1 MB stay within a small
// factor of those at 64 KB, and within a few per pattern. Widening each window of the word list
// over the run of word characters around it was quadratic (3.6 s on 1 MB).
func TestRuleReadLinear(t *testing.T) {
	var rules []Rule
	for _, r := range issue26Rules() {
		if r.Name == "word_list" || r.Name == "any_of_63_words" {
			rules = append(rules, r)
		}
	}
	for i, p := range worstKnown {
		if strings.Contains(p, `\b`) || strings.HasSuffix(p, "$") {
			rules = append(rules, textRule(fmt.Sprintf("known%02d", i), p))
		}
	}
	for _, rule := range rules {
		rule.Normalize()
		if err := Validate(&rule, testEnvs); err != nil {
			continue // the bound is for the rules that validate
		}
		var pats []string
		for _, n := range rulePatterns(&rule) {
			pats = append(pats, n.pattern)
		}
		set := newTextMatcher(pats).base.set
		read := func(text string) float64 {
			_, n := set.Read(text)
			return float64(n) / float64(len(text))
		}
		joined := strings.Join(pats, "|")
		re := regexp.MustCompile(joined)
		rc := searchAdversaryBy(joined, 12, 26, read)
		build := map[string]func(n int) string{
			"adversary": func(n int) string { text, _ := rc.text(re, n); return text },
		}
		if rule.Name == "word_list" {
			build["packed"] = func(n int) string { return wordListText(wordListWords, n) }
		}
		for name, text := range build {
			small, large := read(text(64<<10)), read(text(1<<20))
			t.Logf("%s/%s: %.2f bytes read a byte on 64 KB, %.2f on 1 MB", rule.Name, name, small, large)
			if large > 2*small+0.5 || large > 3*float64(len(pats)) {
				t.Errorf("%s/%s: verification read %.2f bytes a byte on 64 KB, %.2f on 1 MB: not linear", rule.Name, name, small, large)
			}
		}
	}
}
