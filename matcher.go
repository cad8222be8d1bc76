package streamrules

import "regexp"

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

func newTextMatcher(patterns []string) textMatcher { return newNaiveMatcher(patterns) }
