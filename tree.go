package streamrules

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// predOp is the operation of a node of a compiled tree. The trees are evaluated from the
// verdicts of the group's one matcher.
type predOp uint8

const (
	opMatch predOp = iota // a pattern of the group's matcher matches (contains, starts, ends)
	opNoMatch
	opMaxWords
	opMinWords
	opMaxChars
	opAll
	opAny
	opNot
	// context atoms (context.go): never in the group's matcher, evaluated when reached
	opInputMatch
	opInputNoMatch
	opToolCalled
	opToolSucceeded
	opToolFailed
	opEditedUnchecked
)

// predNode is a compiled Predicate. Its regexes live in the matcher of the rule group the
// tree belongs to, so one prefilter pass over the target serves every tree and every plain
// condition of the group; a node only looks its pattern up among the matched indices.
type predNode struct {
	op   predOp
	pat  int // opMatch, opNoMatch: index in the group's patterns
	n    int // opMaxWords, opMinWords, opMaxChars
	kids []predNode
	atom *contextAtom // the context atoms' operands (context.go)
}

// patterns collects a rule group's regexes for one matcher, each distinct one once.
type patterns struct {
	list  []string
	index map[string]int
}

func (ps *patterns) add(re string) int {
	if i, ok := ps.index[re]; ok {
		return i
	}
	if ps.index == nil {
		ps.index = map[string]int{}
	}
	ps.list = append(ps.list, re)
	ps.index[re] = len(ps.list) - 1
	return len(ps.list) - 1
}

// compilePredicate registers p's regexes in ps and returns the node tree. p is valid.
// Anchoring is done in the pattern, so a starts/ends node costs the same prefilter pass as
// a contains node: \A(?:re) and (?:re)\z mean "a match at the start" and "a match at the end".
func compilePredicate(p *Predicate, ps *patterns) predNode {
	switch {
	case p.ContainsRegex != "":
		return predNode{op: opMatch, pat: ps.add(p.ContainsRegex)}
	case p.NotContainsRegex != "":
		return predNode{op: opNoMatch, pat: ps.add(p.NotContainsRegex)}
	case p.StartsWithRegex != "":
		return predNode{op: opMatch, pat: ps.add(anchorStart(p.StartsWithRegex))}
	case p.EndsWithRegex != "":
		return predNode{op: opMatch, pat: ps.add(anchorEnd(p.EndsWithRegex))}
	case p.MaxWords != nil:
		return predNode{op: opMaxWords, n: *p.MaxWords}
	case p.MinWords != nil:
		return predNode{op: opMinWords, n: *p.MinWords}
	case p.MaxChars != nil:
		return predNode{op: opMaxChars, n: *p.MaxChars}
	case p.isContext():
		return compileContext(p) // context.go
	}
	op, list := opAll, p.AllOf
	switch {
	case p.AnyOf != nil:
		op, list = opAny, p.AnyOf
	case p.Not != nil:
		op, list = opNot, []Predicate{*p.Not}
	}
	if op == opAny {
		list = flatAny(list)
		if alt, first, ok := wordAlternation(list); ok {
			// One pattern for the plain contains atoms: the matcher runs one alternation
			// where it would verify each atom apart (64 word atoms in windows of their
			// own cost 50 times the alternation on a text packed with them). An any_of
			// holds exactly when one of its atoms matches, which is when the alternation
			// does.
			n := predNode{op: op}
			for i := range list {
				switch {
				case i == first:
					n.kids = append(n.kids, predNode{op: opMatch, pat: ps.add(alt)})
				case !mergeable(&list[i]):
					n.kids = append(n.kids, compilePredicate(&list[i], ps))
				}
			}
			return n
		}
	}
	n := predNode{op: op, kids: make([]predNode, len(list))}
	for i := range list {
		n.kids[i] = compilePredicate(&list[i], ps)
	}
	return n
}

// flatAny returns the branches of an any_of as the matcher may run them: an any_of
// nested in it gives its branches, and an all_of or any_of of one branch, or a not_ of a
// not_, is that branch, so the contains atoms of any_of(any_of(a, b), all_of(c)) go into
// one alternation as those of any_of(a, b, c) do (the tree holds exactly when one branch
// does). The list is returned as it is when nothing changes.
func flatAny(list []Predicate) []Predicate {
	var out []Predicate
	changed := false
	var add func(p *Predicate)
	add = func(p *Predicate) {
		switch {
		case p.isCombinator() && p.AnyOf != nil:
			changed = true
			for i := range p.AnyOf {
				add(&p.AnyOf[i])
			}
		case p.isCombinator() && p.AllOf != nil && len(p.AllOf) == 1:
			changed = true
			add(&p.AllOf[0])
		case p.isCombinator() && p.Not != nil && p.Not.isCombinator() && p.Not.Not != nil:
			changed = true
			add(p.Not.Not)
		default:
			out = append(out, *p)
		}
	}
	for i := range list {
		add(&list[i])
	}
	if !changed {
		return list
	}
	return out
}

// mergeable reports whether p is a contains_regex atom an any_of may run as a branch of
// one alternation: no counted repetition (whose copies could take the alternation past
// the instruction limit), and short.
func mergeable(p *Predicate) bool {
	return p.ContainsRegex != "" && len(p.ContainsRegex) <= MaxConditionBytes/8 &&
		!strings.Contains(p.ContainsRegex, "{")
}

// wordAlternation returns the alternation of an any_of's mergeable atoms, (?:a)|(?:b)|…
// (each in its own group, so its flags end with it), and the index of the first of them;
// ok is false when fewer than two are mergeable or the alternation would be longer than a
// condition may be.
func wordAlternation(list []Predicate) (alt string, first int, ok bool) {
	var b strings.Builder
	n := 0
	first = -1
	for i := range list {
		if !mergeable(&list[i]) {
			continue
		}
		if n > 0 {
			b.WriteByte('|')
		} else {
			first = i
		}
		b.WriteString("(?:")
		b.WriteString(list[i].ContainsRegex)
		b.WriteByte(')')
		n++
	}
	if n < 2 || b.Len() > MaxConditionBytes {
		return "", -1, false
	}
	return b.String(), first, true
}

// regexesOf calls add with every regex of r that a reload analyses: the condition, each
// regex of its trees as validated and as the matcher runs it (compilePredicate anchors
// starts_with and ends_with), and its fix's pattern.
func regexesOf(r *Rule, add func(string)) {
	add(r.Condition)
	var walk func(p *Predicate)
	walk = func(p *Predicate) {
		for _, re := range []string{p.ContainsRegex, p.NotContainsRegex, p.StartsWithRegex, p.EndsWithRegex, p.InputContainsRegex, p.InputNotContainsRegex} {
			if re != "" {
				add(re)
			}
		}
		for i := range p.AllOf {
			walk(&p.AllOf[i])
		}
		for i := range p.AnyOf {
			walk(&p.AnyOf[i])
		}
		if p.Not != nil {
			walk(p.Not)
		}
	}
	for _, p := range []*Predicate{r.Predicate, r.AppliesWhen} {
		if p != nil {
			walk(p)
			var ps patterns
			compilePredicate(p, &ps)
			for _, re := range ps.list {
				add(re)
			}
		}
	}
	if r.Fix != nil && r.Fix.ReplaceRegex != nil {
		add(r.Fix.ReplaceRegex.Pattern)
	}
}

// target is one text under judgement: the matcher's verdicts on it, and its word and
// character counts, computed on first need (most trees never count).
type target struct {
	text    string
	matched []int // ascending pattern indices
	words   int
	chars   int
	counted bool
	facts   *Facts // what context atoms read (context.go); nil: none given
	unknown bool   // a context atom reached context the judge was not given
}

func (t *target) has(pat int) bool {
	_, ok := slices.BinarySearch(t.matched, pat)
	return ok
}

func (t *target) count() {
	if !t.counted {
		t.words, t.chars = countWords(t.text)
		t.counted = true
	}
}

// countWords counts what strings.Fields would return (runs of non-space, unicode.IsSpace)
// and the runes, in one pass and without building the list of words.
func countWords(s string) (words, chars int) {
	in := false
	for _, r := range s {
		chars++
		var space bool
		if r < utf8.RuneSelf {
			space = asciiSpace[r]
		} else {
			space = unicode.IsSpace(r)
		}
		if !space && !in {
			words++
		}
		in = !space
	}
	return words, chars
}

var asciiSpace = [utf8.RuneSelf]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}

func (n *predNode) eval(t *target) bool {
	switch n.op {
	case opMatch:
		return t.has(n.pat)
	case opNoMatch:
		return !t.has(n.pat)
	case opMaxWords:
		t.count()
		return t.words <= n.n
	case opMinWords:
		t.count()
		return t.words >= n.n
	case opMaxChars:
		t.count()
		return t.chars <= n.n
	case opAll:
		for i := range n.kids {
			if !n.kids[i].eval(t) {
				return false
			}
		}
		return true
	case opAny:
		for i := range n.kids {
			if n.kids[i].eval(t) {
				return true
			}
		}
		return false
	case opNot:
		return !n.kids[0].eval(t)
	}
	return n.evalContext(t) // context.go

}
