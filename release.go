package streamrules

import (
	"bytes"
	"regexp"
	"regexp/syntax"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/streamrules/streamrules/internal/lazydfa"
	"github.com/streamrules/streamrules/internal/rxprog"
)

// Release: while text rules are armed, the held answer is let go as a release point that
// moves forward. The client holds exactly what no continuation of the answer could make
// the engine discard, repair or cut. The proof is per armed rule, from its compiled form,
// and combined for the tour:
//
//   - A watched rule (any rule without a fix the release can follow: plain conditions and
//     predicate trees) must be settled: it can no longer fire, whatever comes. Each regex
//     atom runs in its own lazy DFA over the stream: a match seen is a match for good
//     (true), an anchored pattern whose DFA is dead can never match (false); the tree's
//     all_of / any_of / not_ combine the three values. A rule that can still fire may still
//     discard the answer, so while one is open nothing is released ("hold"). An anchored
//     rule that dies (a bare-emoji rule once a letter comes) settles at once: that is the
//     early accept.
//   - A negate rule whose condition must hold at the end, with an append_if_missing fix
//     whose variables are set (the tail rule): whether the tail comes or the fix appends
//     it, the answer up to its trailing space is what the client gets. It is proven per
//     tour that the fix cures the rule whatever comes before the appended text, so the fix
//     never fails into a discard; trailing space is held (the fix trims it).
//   - A positive rule with a replace_regex fix over its own condition, whose replacement
//     is one of its groups (the image rule): the answer streams through the repair. The
//     text before the earliest live start of the pattern is final; a match is replaced
//     once no continuation can change it; what the replacement could join with the text
//     before it is held too (see replState). A rule whose plain-text replace fix has the
//     claim's shape streams the same way (release_lit.go).
//   - Several replace rules chain in rule-name order, each over what the one before left,
//     when no rewrite can make or break another's match (replsApart); the tail goes last.
//   - Context atoms are constants of the tour: each rule's tree is folded on the move's
//     facts when the releaser is made (release_context.go). A rule folded to false is not
//     followed at all.
//
// Every other armed rule is watched. Shadowed rules are never armed for speech.

// lazyRelease is a text rule's release plan, made at its first use.
type lazyRelease struct {
	once sync.Once
	plan *releasePlan
}

func (l *lazyRelease) get(r *compiledRule) *releasePlan {
	l.once.Do(func() { l.plan = planRelease(&r.Rule) })
	return l.plan
}

// releasePlan is how one rule is followed on a stream.
type releasePlan struct {
	fires relNode // when the rule fires: applies_when, then the condition (negate applied)
	atoms []*relAtom
	// The parts of fires, for a rule with context atoms (ctx not empty): fires is folded on
	// each tour's facts (foldContext).
	when   *relNode
	cond   relNode
	negate bool
	ctx    []predNode
	tail   *tailPlan // a negate rule that must hold at the end, with an append fix
	repl   *replPlan // a positive rule repaired by a replace fix over its own condition
	lit    *litPlan  // a rule repaired by a plain-text replace fix (release_lit.go)
	folds  foldCache // foldContext's trees by the context atoms' outcomes (release_perf.go)
	// fixRunes are the rune instructions of a replace fix's pattern (fixApart); nil: none.
	fixRunes []*syntax.Inst
}

// relAtom is one regex of a rule, run as a DFA over a stream, or a word or character
// count (count set: no DFA).
type relAtom struct {
	pattern string
	count   relCount
	once    sync.Once
	dfa     *lazydfa.DFA // nil: the pattern does not compile for the DFA (never settles)
}

func (a *relAtom) get() *lazydfa.DFA {
	a.once.Do(func() {
		if a.count.op != 0 {
			return
		}
		if d, err := lazydfa.Compile(a.pattern); err == nil {
			a.dfa = d
		}
	})
	return a.dfa
}

// relCount is a max_words, min_words or max_chars atom (op 0: not a count). A prefix of
// the stream has at most the words and characters of every text that extends it, so a
// count passed settles the atom for good: max_words and max_chars false, min_words true.
type relCount struct {
	op relOp // relMaxWords, relMinWords, relMaxChars
	n  int
}

type relOp uint8

const (
	relAtomOp relOp = iota // kids none, atom set
	relNot
	relAll
	relAny
	relOpen // decided only by the whole answer (ends_with, word and char counts)
	relTrue
	relFalse
	relCtx // a context atom (release_context.go): open until folded on a move's facts
	// Counts (relCount), atom set: settled once the stream has passed their bound.
	relMaxWords
	relMinWords
	relMaxChars
)

type relNode struct {
	op   relOp
	atom int
	kids []relNode
}

// tri is a three-valued verdict on every continuation of a stream.
type tri uint8

const (
	triOpen tri = iota
	triTrue
	triFalse
)

func (n *relNode) eval(st []tri) tri {
	switch n.op {
	case relAtomOp, relMaxWords, relMinWords, relMaxChars:
		return st[n.atom]
	case relTrue:
		return triTrue
	case relFalse:
		return triFalse
	case relNot:
		switch n.kids[0].eval(st) {
		case triTrue:
			return triFalse
		case triFalse:
			return triTrue
		}
		return triOpen
	case relAll:
		return n.evalKids(st, triFalse, triTrue)
	case relAny:
		return n.evalKids(st, triTrue, triFalse)
	}
	return triOpen
}

// evalKids is all_of (decisive triFalse, otherwise triTrue) or any_of (decisive triTrue,
// otherwise triFalse): decisive as soon as a kid is, open where a kid is open, else otherwise.
func (n *relNode) evalKids(st []tri, decisive, otherwise tri) tri {
	out := otherwise
	for i := range n.kids {
		switch n.kids[i].eval(st) {
		case decisive:
			return decisive
		case triOpen:
			out = triOpen
		}
	}
	return out
}

// planRelease makes r's release plan. r is a valid, normalised text rule.
func planRelease(r *Rule) *releasePlan {
	p := &releasePlan{}
	atom := func(re string) relNode {
		p.atoms = append(p.atoms, &relAtom{pattern: re})
		return relNode{op: relAtomOp, atom: len(p.atoms) - 1}
	}
	var tree func(q *Predicate) relNode
	tree = func(q *Predicate) relNode {
		switch {
		case q.ContainsRegex != "":
			return atom(q.ContainsRegex)
		case q.NotContainsRegex != "":
			return relNode{op: relNot, kids: []relNode{atom(q.NotContainsRegex)}}
		case q.StartsWithRegex != "":
			return atom(`\A(?:` + q.StartsWithRegex + `)`)
		case q.AllOf != nil || q.AnyOf != nil:
			n := relNode{op: relAll}
			kids := q.AllOf
			if q.AnyOf != nil {
				n.op, kids = relAny, q.AnyOf
			}
			for i := range kids {
				n.kids = append(n.kids, tree(&kids[i]))
			}
			return n
		case q.Not != nil:
			return relNode{op: relNot, kids: []relNode{tree(q.Not)}}
		case q.isContext():
			p.ctx = append(p.ctx, compileContext(q))
			return relNode{op: relCtx, atom: len(p.ctx) - 1}
		case q.MaxWords != nil || q.MinWords != nil || q.MaxChars != nil:
			c := relCount{op: relMaxChars}
			switch {
			case q.MaxWords != nil:
				c = relCount{op: relMaxWords, n: *q.MaxWords}
			case q.MinWords != nil:
				c = relCount{op: relMinWords, n: *q.MinWords}
			default:
				c.n = *q.MaxChars
			}
			p.atoms = append(p.atoms, &relAtom{count: c})
			return relNode{op: c.op, atom: len(p.atoms) - 1}
		}
		return relNode{op: relOpen}
	}
	var cond relNode
	switch {
	case r.Predicate != nil:
		cond = tree(r.Predicate)
	case r.Condition == "":
		cond = relNode{op: relTrue}
	default:
		cond = atom(r.Condition)
	}
	p.cond, p.negate = cond, r.Negate
	if r.Negate {
		cond = relNode{op: relNot, kids: []relNode{cond}}
	}
	p.fires = cond
	if r.AppliesWhen != nil {
		w := tree(r.AppliesWhen)
		p.when = &w
		p.fires = relNode{op: relAll, kids: []relNode{w, cond}}
	}
	if r.Field == "" && r.Predicate == nil && r.AppliesWhen == nil && r.Fix != nil {
		switch {
		case r.Negate && r.Fix.AppendIfMissing != "":
			p.tail = planTail(r)
		case !r.Negate && r.Fix.ReplaceRegex != nil:
			p.repl = planRepl(r)
		}
	}
	if r.Fix != nil && r.Fix.ReplaceRegex != nil {
		if tree, err := syntax.Parse(r.Fix.ReplaceRegex.Pattern, syntax.Perl); err == nil {
			if prog, err := syntax.Compile(tree.Simplify()); err == nil {
				p.fixRunes = rxprog.RuneInsts(prog)
			}
		}
	}
	if r.Fix != nil && r.Fix.ReplaceRegex != nil && p.repl == nil {
		if p.lit = planLit(r); p.lit != nil {
			p.lit.markAtoms(p.atoms)
		}
	}
	return p
}

// ---- the tail rule: negate, held at the end, append fix ----

type tailPlan struct {
	re   *regexp.Regexp
	dfa  *lazydfa.DFA
	last []*syntax.Inst // the rune instructions of the condition (for the image rule's check)
	add  *tmplSplit     // the fix's text, split at its variables (release_perf.go)
}

// planTail returns the plan of a negate rule with an append fix whose condition matches
// only at the end of the text and has no other assertion (so what precedes a match never
// matters), or nil.
func planTail(r *Rule) *tailPlan {
	tree, err := syntax.Parse(r.Condition, syntax.Perl)
	if err != nil {
		return nil
	}
	tree = tree.Simplify()
	if tree.Op != syntax.OpConcat || len(tree.Sub) < 2 || tree.Sub[len(tree.Sub)-1].Op != syntax.OpEndText {
		return nil
	}
	for _, s := range tree.Sub[:len(tree.Sub)-1] {
		if rxprog.HasAssertion(s) {
			return nil
		}
	}
	prog, err := syntax.Compile(tree)
	if err != nil {
		return nil
	}
	return &tailPlan{re: regexp.MustCompile(r.Condition), dfa: lazydfa.New(prog), last: rxprog.RuneInsts(prog), add: splitTemplate(r.Fix.AppendIfMissing)}
}

// cures reports whether appending add always cures the rule: every text ending with add
// matches the condition, and so does every text ending with add's trimmed form (what the
// fix leaves when the answer has it already, trailing space trimmed).
func (t *tailPlan) cures(add string) bool {
	return t.re.MatchString(add) && t.dfa.MatchesEvery(string(bytes.TrimSpace([]byte(add))), nil, 512)
}

// ---- per tour ----

// releaser follows one tour's answer for its release point. Not safe for concurrent use.
type releaser struct {
	watched []*compiledRule
	fires   []relNode // each watched rule's fires tree, its context folded (release_context.go)
	// in and out: the atoms of the watched rules on the answer as streamed (in) and on the
	// final text's certain prefix (out), flattened: rule k's atoms start at base[k].
	base    []int
	in, out relStream
	twin    bool // out is in (no fix the release follows: the final text is the answer)
	tail    *tailPlan
	add     string
	repl    []*replState // the replace repairs, in rule-name order
	fed     int          // bytes of the answer read
	final   []byte       // the certain prefix of the final text (aliases the answer or repl.out)
	open    bool         // some watched rule may still fire: nothing is released
	blank   bool         // final has said nothing yet
}

// releaseBatchBytes is how many bytes the release lets arrive before it reads them: the
// client is at most that many bytes (plus a chunk) behind what is certain, and the work a
// call costs is spread over several small chunks (a provider's token is a few bytes). The
// first chunk is always read, and the rest of the answer goes when it is accepted.
const releaseBatchBytes = 16

type relStream struct {
	atoms []*lazydfa.DFA
	cur   []lazydfa.Cursor
	st    []tri
	fed   int
	// The count atoms (nil: none), by atom, and the stream's counts over its complete
	// runes: words (runs of non-space, as strings.Fields), runes.
	counts      []relCount
	cfed        int
	words, nrun int
	inWord      bool
}

// init starts the stream on atoms; counts, when not nil, holds each atom's count (a count
// atom's DFA is nil).
func (s *relStream) init(atoms []*lazydfa.DFA, counts []relCount) {
	s.atoms = atoms
	s.cur = make([]lazydfa.Cursor, len(atoms))
	s.st = make([]tri, len(atoms))
	for i, d := range atoms {
		if d != nil {
			s.cur[i] = d.Start()
		}
	}
	for _, c := range counts {
		if c.op != 0 {
			s.counts = counts
			break
		}
	}
}

// feed reads text[s.fed:] into every atom not settled yet.
func (s *relStream) feed(text []byte) {
	if len(text) <= s.fed {
		return
	}
	if s.counts != nil {
		s.count(text)
	}
	p := text[s.fed:]
	s.fed = len(text)
	for i, d := range s.atoms {
		if d == nil || s.st[i] != triOpen {
			continue
		}
		c := &s.cur[i]
		for q := p; len(q) > 0; {
			o, rest, ok := d.Feed(c, q)
			if !ok {
				s.atoms[i] = nil // gave up: never settles
				break
			}
			if o != nil {
				s.st[i] = triTrue
				break
			}
			q = rest
		}
		if s.st[i] == triOpen && s.atoms[i] != nil && c.Dead() {
			s.st[i] = triFalse
		}
	}
}

// count reads text's new complete runes into the counts and settles the count atoms
// they pass.
func (s *relStream) count(text []byte) {
	end := len(text) - cutRune(text)
	for i := s.cfed; i < end; {
		r, n := rune(text[i]), 1
		if r >= utf8.RuneSelf {
			r, n = utf8.DecodeRune(text[i:end])
		}
		i += n
		s.nrun++
		if unicode.IsSpace(r) {
			s.inWord = false
		} else if !s.inWord {
			s.inWord = true
			s.words++
		}
	}
	s.cfed = max(s.cfed, end)
	for i, c := range s.counts {
		if c.op == 0 || s.st[i] != triOpen {
			continue
		}
		switch {
		case c.op == relMaxWords && s.words > c.n, c.op == relMaxChars && s.nrun > c.n:
			s.st[i] = triFalse
		case c.op == relMinWords && s.words >= c.n:
			s.st[i] = triTrue
		}
	}
}

// newReleaser returns the releaser of the armed rules (not in shadow), vars the move's
// variables and facts its context. Caller holds the move's lock.
func newReleaser(armed []*compiledRule, vars map[string]string, facts *Facts) *releaser {
	x := &releaser{blank: true}
	var tailRule *compiledRule
	var replRules []*compiledRule
	var atoms []*lazydfa.DFA
	var counts []relCount
	watch := func(r *compiledRule, fires relNode) {
		x.watched = append(x.watched, r)
		x.fires = append(x.fires, fires)
		x.base = append(x.base, len(atoms))
		for _, a := range r.release.get(r).atoms {
			atoms, counts = append(atoms, a.get()), append(counts, a.count)
		}
	}
	for _, r := range armed {
		p := r.release.get(r)
		fires := p.foldContext(facts)
		if fires.op == relFalse {
			continue // its context says it cannot fire in this tour
		}
		switch {
		case p.tail != nil && tailRule == nil:
			if add, missing := p.tail.add.expand(vars); missing == "" && p.tail.cures(add) {
				tailRule, x.tail, x.add = r, p.tail, add
				continue
			}
		case p.repl != nil && replsApart(x.repl, p.repl):
			// Repairs chain in rule-name order (armed is in that order), each over the one
			// before: it is proven that no rewrite creates or destroys a match of another.
			replRules = append(replRules, r)
			x.repl = append(x.repl, &replState{p: p.repl, ufrom: -1, ls: -1})
			continue
		case p.lit != nil && p.lit.armedOn(fires) && replsApart(x.repl, p.lit.repl):
			replRules = append(replRules, r)
			x.repl = append(x.repl, &replState{p: p.lit.repl, ufrom: -1, ls: -1})
			continue
		}
		watch(r, fires)
	}
	if x.tail != nil && len(x.repl) > 0 {
		// Both repair: the replace fixes run first (rule-name order), then the tail is
		// appended. The appended tail must not complete a match, and a match repaired must
		// not eat the tail the answer brought. Otherwise the tail rule is watched.
		ok := true
		for i, st := range x.repl {
			ok = ok && replRules[i].Name < tailRule.Name && !rxprog.Meet(st.p.last, x.tail.last)
			for _, r := range x.add {
				for _, in := range st.p.last {
					ok = ok && !lazydfa.MatchRune(in, r)
				}
			}
		}
		if !ok {
			watch(tailRule, tailRule.release.get(tailRule).fires)
			x.tail = nil
		}
	}
	x.twin = x.tail == nil && len(x.repl) == 0
	x.in.init(atoms, counts)
	if !x.twin {
		x.out.init(append([]*lazydfa.DFA(nil), atoms...), counts)
	}
	x.open = len(x.watched) > 0
	return x
}

// advance reads the answer streamed so far and returns the certain prefix of the final
// text (owned by the releaser; it only grows).
func (x *releaser) advance(text []byte) []byte {
	if len(text)-x.fed < releaseBatchBytes && x.fed > 0 {
		return x.released()
	}
	x.fed = len(text)
	certain := text
	for _, st := range x.repl {
		st.feed(certain) // each repair reads what is final of the one before
		certain = st.out[:st.r]
	}
	// Never a partial rune, whichever plan moved the point: a repair's fast path may pass a
	// cut rune (no match starts in it), and the tail's trim must see the whole rune to know
	// it is a space.
	certain = certain[:len(certain)-cutRune(certain)]
	if x.tail != nil {
		certain = trimRightSpace(certain)
	}
	if x.blank && len(bytes.TrimSpace(certain)) == 0 {
		x.final = certain[:0]
		return x.released()
	}
	x.blank = false
	x.final = certain
	if x.open {
		x.in.feed(text)
		if !x.twin {
			x.out.feed(certain)
		}
		x.open = false
		for k := range x.fires {
			if f := &x.fires[k]; f.eval(x.in.st[x.base[k]:]) != triFalse || !x.twin && f.eval(x.out.st[x.base[k]:]) != triFalse {
				x.open = true
				break
			}
		}
	}
	return x.released()
}

// finalOf is advance, returning the certain prefix of the final text whether or not it
// may be released yet (the early scan reads it).
func (x *releaser) finalOf(text []byte) []byte {
	x.advance(text)
	return x.final
}

// fixOpen reports whether a watched rule with a fix may still fire on the answer and
// could remove a match of one of hits: its repair lands only at the end, on text the
// release does not follow, so an early cut on hits could disagree with the whole verdict.
func (x *releaser) fixOpen(hits []*compiledRule) bool {
	if !x.open {
		return false
	}
	for k, r := range x.watched {
		if r.fix == nil {
			continue
		}
		if f := &x.fires[k]; f.eval(x.in.st[x.base[k]:]) == triFalse && (x.twin || f.eval(x.out.st[x.base[k]:]) == triFalse) {
			continue // settled: it does not fire, so it does not repair
		}
		for _, h := range hits {
			if !fixApart(r, h) {
				return true
			}
		}
	}
	return false
}

// fixApart reports whether r's fix can never remove a match of the early rule h: h is a
// plain condition with no assertion, and r's fix is a replace whose pattern shares no rune
// with h's, so no rewrite overlaps h's match, and nothing around a match matters to h. A
// repair that makes a new match of h only adds to the whole verdict's misses.
func fixApart(r, h *compiledRule) bool {
	if h.early == nil || h.early.asserts || r.Fix == nil || r.Fix.ReplaceRegex == nil {
		return false
	}
	p := r.release.get(r).fixRunes
	return p != nil && !rxprog.Meet(p, h.early.runes)
}

func (x *releaser) released() []byte {
	if x.open || x.blank {
		return nil
	}
	return x.final
}

// cutRune returns how many bytes at the end of p are a rune not complete yet.
func cutRune(p []byte) int {
	for k := len(p) - 1; k >= 0 && k >= len(p)-utf8.UTFMax; k-- {
		if utf8.RuneStart(p[k]) {
			if !utf8.FullRune(p[k:]) {
				return len(p) - k
			}
			return 0
		}
	}
	return 0
}
