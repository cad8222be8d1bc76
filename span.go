package streamrules

import "regexp"

// Span is a part of a target, in bytes: target[Start:End].
type Span struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

// spanOn returns where r's first matched regex atom matched t: the plain condition, or
// the first contains/starts/ends node of its predicate, in tree order, whose pattern the
// group's matcher found. Only firings pay for it: the regexp is run once more, on the
// target only. An empty condition spans the whole target. nil for a negated plain condition and a tree with no matched regex atom.
// text is t.text, passed apart: the regexp keeps its string, and taking it from t would
// make the target's scratch (the caller's stack buffer of verdicts) escape to the heap.
func (c *compiledRule) spanOn(t *target, text string, m textMatcher) *Span {
	if c.own != nil || m == nil {
		return nil
	}
	pat := -1
	if c.cond == nil && c.Condition == "" && !c.Negate {
		return &Span{Start: 0, End: len(text)} // an empty condition: the whole target fired it
	}
	if c.cond == nil {
		if !c.Negate && t.has(c.plain) {
			pat = c.plain
		}
	} else {
		pat = c.cond.firstMatched(t)
	}
	if pat < 0 || pat >= len(m.as) {
		return nil
	}
	loc := m.spanRegexp(pat).FindStringIndex(text)
	if loc == nil {
		return nil
	}
	return &Span{Start: loc[0], End: loc[1]}
}

// firstMatched returns the pattern of the first opMatch node, in tree order, that matched t; -1: none.
func (n *predNode) firstMatched(t *target) int {
	if n.op == opMatch && t.has(n.pat) {
		return n.pat
	}
	for i := range n.kids {
		if p := n.kids[i].firstMatched(t); p >= 0 {
			return p
		}
	}
	return -1
}

// spanRegexp returns the regexp of local pattern i as written (the matcher runs a cut form
// whose matches may be shorter), compiled on first need and kept.
func (m *matcher) spanRegexp(i int) *regexp.Regexp {
	if re, ok := m.spans.Load(i); ok {
		return re.(*regexp.Regexp)
	}
	re := regexp.MustCompile(m.as[i].Pattern())
	m.spans.Store(i, re)
	return re
}
