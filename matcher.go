package streamrules

import (
	"regexp"

	"github.com/streamrules/streamrules/internal/multimatch"
)

// textMatcher finds which text-rule conditions match an answer, exactly as running
// each regexp in turn would.
type textMatcher interface {
	Match(text string, dst []int) []int
}

// naiveMatcher runs every regexp over the text: the baseline the fast matcher must agree with.
type naiveMatcher []*regexp.Regexp

func newNaiveMatcher(patterns []string) naiveMatcher {
	m := make(naiveMatcher, len(patterns))
	for i, p := range patterns {
		m[i] = regexp.MustCompile(p)
	}
	return m
}

func (m naiveMatcher) Match(text string, dst []int) []int {
	for i, re := range m {
		if re.MatchString(text) {
			dst = append(dst, i)
		}
	}
	return dst
}

// newTextMatcher builds the literal-prefilter matcher: one Aho–Corasick pass over the
// answer finds which rules could match, and only those run their regexp. Its verdicts
// are the naive loop's, proven by differential and fuzz tests in internal/multimatch
// and here. The patterns were validated already, so an error cannot happen; should it,
// the naive matcher still gives the right verdicts.
func newTextMatcher(patterns []string) textMatcher {
	set, err := multimatch.New(patterns)
	if err != nil {
		return newNaiveMatcher(patterns)
	}
	return set
}
