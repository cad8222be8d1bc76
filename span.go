package streamrules

// Span is a part of a target, in bytes: target[Start:End].
//
// A firing's span is the first match of the form of its regex that the matcher runs:
// the regex with the optional and unbounded repetitions at its edges cut, which matches
// the same texts (see docs/rules.md). (?s).*secret.* spans "secret", b+ one b. The cut
// form is what the cost bound charges for; the regex as written could cost far more
// ((?s)[\s\S]{0,1000}z over 64 KB: 100 ms).
type Span struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

// spanOn returns where r's first matched regex atom matched t: the plain condition, or
// the first contains/starts/ends node of its predicate, in tree order, whose pattern the
// group's matcher found, as a match of its cut form (see Span). Only firings pay for it:
// the cut form's lazy DFA runs to the first match, then its regexp over a window of twice
// the match's widest span, or 1 KB either side for a wider form, whose span is then the
// first match in that window (multimatch.Analysis.Span). An empty condition spans the whole
// target. nil for a negated plain condition and a tree with no matched regex atom.
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
	start, end, ok := m.as[pat].Span(text)
	if !ok {
		return nil
	}
	return &Span{Start: start, End: end}
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
