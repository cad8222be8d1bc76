package streamrules

import (
	"regexp"

	"github.com/streamrules/streamrules/internal/multimatch"
)

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

// newTextMatcher builds the engine's matcher for patterns known to be valid.
func newTextMatcher(patterns []string) textMatcher {
	as := make([]*multimatch.Analysis, len(patterns))
	for i, p := range patterns {
		a, err := multimatch.Analyze(p)
		if err != nil {
			panic(err)
		}
		as[i] = a
	}
	return buildMatcher(as)
}
