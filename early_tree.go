package streamrules

import (
	"slices"

	"github.com/streamrules/streamrules/internal/lazydfa"
)

// earlyTrees are the armed early rules that a single DFA group cannot judge: those with a
// predicate tree or an applies_when. Each regex atom runs in its own DFA (release.go); a
// rule is cut once its tree is certain to fire whatever comes: a contains_regex matched,
// a starts_with_regex matched or died, combined through all_of / any_of / not_. Atoms that
// only the whole answer decides (ends_with_regex; max_words and max_chars until passed) stay open,
// so a tree that needs them waits for the end, as before.
type earlyTrees struct {
	rules []*compiledRule
	plans []*releasePlan
	base  []int
	st    relStream
}

// initTrees sets up the early trees among live, the armed rules not in shadow. A rule
// with a fix is left to the end: the fix repairs it there, which is cheaper than any cut.
// So is one whose context atoms say it cannot fire in this tour. Caller holds s.m.mu.
func (s *Scanner) initTrees(live []*compiledRule) {
	var t earlyTrees
	var atoms []*lazydfa.DFA
	var counts []relCount
	for _, r := range live {
		if !(r.Early || s.m.eng.earlyAll || r.Scope == ScopeThinking) || r.early != nil || r.Fix != nil || r.Field != "" ||
			r.Predicate == nil && r.AppliesWhen == nil {
			continue
		}
		p := r.release.get(r)
		if len(p.ctx) > 0 && p.foldContext(&s.m.facts).op == relFalse {
			continue // its context says it cannot fire in this tour (release_context.go)
		}
		t.rules = append(t.rules, r)
		t.plans = append(t.plans, p)
		t.base = append(t.base, len(atoms))
		for _, a := range p.atoms {
			atoms, counts = append(atoms, a.get()), append(counts, a.count)
		}
	}
	if len(t.rules) == 0 {
		return
	}
	t.st.init(atoms, counts)
	s.trees, s.stopped = &t, false
}

// scan feeds text's new bytes and adds the rules now certain to fire to hits.
func (t *earlyTrees) scan(text []byte, hits *[]*compiledRule) {
	if t == nil {
		return
	}
	t.st.feed(text)
	for k, p := range t.plans {
		if p.fires.eval(t.st.st[t.base[k]:]) == triTrue && !slices.Contains(*hits, t.rules[k]) {
			*hits = append(*hits, t.rules[k])
		}
	}
}

func (s *Scanner) groups() []earlyGroup {
	if s.es == nil {
		return nil
	}
	return s.es.groups
}

// Release reads text, the answer's text streamed so far (each call's text extends the
// previous one), and returns the prefix of what the client will finally get that no
// continuation can discard, repair or cut: the caller sends what it has not sent of it.
// The result only grows, and is the answer's own bytes except where a fix that streams
// (the image rule's replace) has already repaired them. nil until something is certain,
// and always from a scanner made by EarlyScanner. Per chunk it steps a DFA per open atom
// over the new bytes and allocates nothing on the steady path.
func (s *Scanner) Release(text []byte) []byte {
	if s == nil || !s.release {
		return nil
	}
	return s.rel.advance(text)
}

// earlyNever says why no prefix can ever decide r (so `early` does nothing), or "".
func earlyNever(r *Rule) string {
	switch {
	case r.Fix != nil:
		return "a rule with a fix is repaired at the end, which is cheaper than any cut"
	case r.Predicate == nil && r.AppliesWhen == nil:
		if r.Negate {
			return "a negate rule fires only when the whole answer lacks the match"
		}
		if planEarly(r) == nil {
			return "the condition can match only at the end of the answer ($ or \\z)"
		}
		return ""
	}
	p := planRelease(r)
	if !p.fires.canBeTrue() {
		return "no part of the tree can be certain before the end (ends_with_regex, max_words, max_chars, not_contains_regex)"
	}
	return ""
}

// canBeTrue reports whether the node can become certainly true on a prefix.
func (n *relNode) canBeTrue() bool {
	switch n.op {
	case relAtomOp, relTrue, relMinWords:
		return true
	case relNot:
		return n.kids[0].canBeFalse()
	case relAll:
		for i := range n.kids {
			if !n.kids[i].canBeTrue() {
				return false
			}
		}
		return true
	case relAny:
		for i := range n.kids {
			if n.kids[i].canBeTrue() {
				return true
			}
		}
	}
	return false
}

// canBeFalse reports whether the node can become certainly false on a prefix.
func (n *relNode) canBeFalse() bool {
	switch n.op {
	case relMaxWords, relMaxChars:
		return true
	case relAtomOp:
		return true // an anchored atom can die (a plain one cannot, but that is for the DFA to find)
	case relNot:
		return n.kids[0].canBeTrue()
	case relAll:
		for i := range n.kids {
			if n.kids[i].canBeFalse() {
				return true
			}
		}
	case relAny:
		for i := range n.kids {
			if !n.kids[i].canBeFalse() {
				return false
			}
		}
		return true
	}
	return false
}
