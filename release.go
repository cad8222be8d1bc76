package streamrules

import (
	"bytes"
	"regexp"
	"regexp/syntax"
	"strconv"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/streamrules/streamrules/internal/lazydfa"
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
//     before it is held too (see replState).
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
	tail  *tailPlan // a negate rule that must hold at the end, with an append fix
	repl  *replPlan // a positive rule repaired by a replace fix over its own condition
}

// relAtom is one regex of a rule, run as a DFA over a stream.
type relAtom struct {
	pattern string
	once    sync.Once
	dfa     *lazydfa.DFA // nil: the pattern does not compile for the DFA (never settles)
}

func (a *relAtom) get() *lazydfa.DFA {
	a.once.Do(func() {
		if d, err := lazydfa.Compile(a.pattern); err == nil {
			a.dfa = d
		}
	})
	return a.dfa
}

type relOp uint8

const (
	relAtomOp relOp = iota // kids none, atom set
	relNot
	relAll
	relAny
	relOpen // decided only by the whole answer (ends_with, word and char counts)
	relTrue
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
	case relAtomOp:
		return st[n.atom]
	case relTrue:
		return triTrue
	case relNot:
		switch n.kids[0].eval(st) {
		case triTrue:
			return triFalse
		case triFalse:
			return triTrue
		}
		return triOpen
	case relAll:
		out := triTrue
		for i := range n.kids {
			switch n.kids[i].eval(st) {
			case triFalse:
				return triFalse
			case triOpen:
				out = triOpen
			}
		}
		return out
	case relAny:
		out := triFalse
		for i := range n.kids {
			switch n.kids[i].eval(st) {
			case triTrue:
				return triTrue
			case triOpen:
				out = triOpen
			}
		}
		return out
	}
	return triOpen
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
	if r.Negate {
		cond = relNode{op: relNot, kids: []relNode{cond}}
	}
	p.fires = cond
	if r.AppliesWhen != nil {
		p.fires = relNode{op: relAll, kids: []relNode{tree(r.AppliesWhen), cond}}
	}
	if r.Field == "" && r.Predicate == nil && r.AppliesWhen == nil && r.Fix != nil {
		switch {
		case r.Negate && r.Fix.AppendIfMissing != "":
			p.tail = planTail(r)
		case !r.Negate && r.Fix.ReplaceRegex != nil:
			p.repl = planRepl(r)
		}
	}
	return p
}

// ---- the tail rule: negate, held at the end, append fix ----

type tailPlan struct {
	re   *regexp.Regexp
	dfa  *lazydfa.DFA
	last []*syntax.Inst // the rune instructions of the condition (for the image rule's check)
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
		if hasAssertion(s) {
			return nil
		}
	}
	prog, err := syntax.Compile(tree)
	if err != nil {
		return nil
	}
	return &tailPlan{re: regexp.MustCompile(r.Condition), dfa: lazydfa.New(prog), last: runeInsts(prog)}
}

// cures reports whether appending add always cures the rule: every text ending with add
// matches the condition, and so does every text ending with add's trimmed form (what the
// fix leaves when the answer has it already, trailing space trimmed).
func (t *tailPlan) cures(add string) bool {
	return t.re.MatchString(add) && t.dfa.MatchesEvery(string(bytes.TrimSpace([]byte(add))), nil, 512)
}

// ---- the replace rule ----

// replPlan is a replace_regex fix applied as a rewrite to normal form (see nfFix): the
// pattern has no assertion, matches no empty text, and its replacement is one of its
// groups, shorter than every match.
type replPlan struct {
	re, anchored *regexp.Regexp
	with         string
	dfa          *lazydfa.DFA // \A(?:pattern): is a start still live?
	un           *lazydfa.DFA // the pattern unanchored: is any start live? (the fast path)
	last         []*syntax.Inst
}

// planRepl returns the plan of a positive rule whose replace fix rewrites its own
// condition (the same regex up to groups) to normal form, or nil.
func planRepl(r *Rule) *replPlan {
	nf := nfFix(r.Fix.ReplaceRegex)
	if nf == nil {
		return nil
	}
	a, err1 := syntax.Parse(r.Condition, syntax.Perl)
	b, err2 := syntax.Parse(r.Fix.ReplaceRegex.Pattern, syntax.Perl)
	if err1 != nil || err2 != nil || stripCaptures(a.Simplify()).String() != stripCaptures(b.Simplify()).String() {
		return nil
	}
	return nf
}

// nfFix returns the normal-form plan of a replace fix, or nil when the fix is not of that
// shape (it is then applied once, as regexp.ReplaceAllString does).
func nfFix(f *ReplaceRegex) *replPlan {
	ref := groupRefRE.FindStringSubmatch(f.With)
	if ref == nil {
		return nil
	}
	tree, err := syntax.Parse(f.Pattern, syntax.Perl)
	if err != nil {
		return nil
	}
	tree = tree.Simplify()
	if hasAssertion(tree) || tree.Op != syntax.OpConcat {
		return nil
	}
	name := ref[1] + ref[2]
	others, found := 0, false
	for _, s := range tree.Sub {
		if s.Op == syntax.OpCapture && !found && (s.Name == name || name == strconv.Itoa(s.Cap)) {
			found = true
			continue
		}
		others += minLen(s)
	}
	if !found || others == 0 {
		return nil
	}
	prog, err := syntax.Compile(tree)
	if err != nil {
		return nil
	}
	anchored, err := regexp.Compile(`\A(?:` + f.Pattern + `)`)
	if err != nil {
		return nil
	}
	d, err := lazydfa.Compile(`\A(?:` + f.Pattern + `)`)
	if err != nil {
		return nil
	}
	return &replPlan{re: regexp.MustCompile(f.Pattern), anchored: anchored, with: f.With, dfa: d, un: lazydfa.New(prog), last: lastInsts(prog)}
}

var groupRefRE = regexp.MustCompile(`^\$(?:([0-9]+)|\{([A-Za-z_][A-Za-z0-9_]*)\})$`)

// normalForm rewrites the leftmost match again and again until none is left. Each
// rewrite shortens the text, so it ends; the result has no match.
func (p *replPlan) normalForm(text string) string {
	x := replState{p: p, out: []byte(text), ls: -1}
	x.flush()
	return string(x.out)
}

func hasAssertion(t *syntax.Regexp) bool {
	switch t.Op {
	case syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return true
	}
	for _, s := range t.Sub {
		if hasAssertion(s) {
			return true
		}
	}
	return false
}

func stripCaptures(t *syntax.Regexp) *syntax.Regexp {
	for t.Op == syntax.OpCapture {
		t = t.Sub[0]
	}
	c := *t
	c.Sub = make([]*syntax.Regexp, len(t.Sub))
	for i, s := range t.Sub {
		c.Sub[i] = stripCaptures(s)
	}
	return &c
}

// minLen is the fewest runes a match of t consumes.
func minLen(t *syntax.Regexp) int {
	switch t.Op {
	case syntax.OpLiteral:
		return len(t.Rune)
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return 1
	case syntax.OpCapture, syntax.OpPlus:
		return minLen(t.Sub[0])
	case syntax.OpRepeat:
		return t.Min * minLen(t.Sub[0])
	case syntax.OpConcat:
		n := 0
		for _, s := range t.Sub {
			n += minLen(s)
		}
		return n
	case syntax.OpAlternate:
		n := -1
		for _, s := range t.Sub {
			if m := minLen(s); n < 0 || m < n {
				n = m
			}
		}
		return max(n, 0)
	}
	return 0
}

// runeInsts returns the program's rune instructions.
func runeInsts(prog *syntax.Prog) (out []*syntax.Inst) {
	for i := range prog.Inst {
		switch in := &prog.Inst[i]; in.Op {
		case syntax.InstRune, syntax.InstRune1, syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
			out = append(out, in)
		}
	}
	return out
}

// lastInsts returns the rune instructions that can consume a match's last rune.
func lastInsts(prog *syntax.Prog) (out []*syntax.Inst) {
	for _, in := range runeInsts(prog) {
		seen := map[uint32]bool{}
		stack := []uint32{in.Out}
		for len(stack) > 0 {
			pc := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if seen[pc] {
				continue
			}
			seen[pc] = true
			switch x := &prog.Inst[pc]; x.Op {
			case syntax.InstMatch:
				out = append(out, in)
				stack = nil
			case syntax.InstAlt, syntax.InstAltMatch:
				stack = append(stack, x.Out, x.Arg)
			case syntax.InstNop, syntax.InstCapture, syntax.InstEmptyWidth:
				stack = append(stack, x.Out)
			}
		}
	}
	return out
}

func instHits(in *syntax.Inst, r rune) bool {
	switch in.Op {
	case syntax.InstRune:
		return in.MatchRune(r)
	case syntax.InstRune1:
		return r == in.Rune[0]
	case syntax.InstRuneAny:
		return true
	case syntax.InstRuneAnyNotNL:
		return r != '\n'
	}
	return false
}

// instRanges returns the runes an instruction accepts as ranges; fold: it folds case (the
// ranges are then not the whole story, and callers assume the worst).
func instRanges(in *syntax.Inst) (rs [][2]rune, fold bool) {
	switch in.Op {
	case syntax.InstRune1:
		return [][2]rune{{in.Rune[0], in.Rune[0]}}, false
	case syntax.InstRune:
		if syntax.Flags(in.Arg)&syntax.FoldCase != 0 {
			return nil, true
		}
		if len(in.Rune) == 1 {
			return [][2]rune{{in.Rune[0], in.Rune[0]}}, false
		}
		for i := 0; i+1 < len(in.Rune); i += 2 {
			rs = append(rs, [2]rune{in.Rune[i], in.Rune[i+1]})
		}
		return rs, false
	case syntax.InstRuneAnyNotNL:
		return [][2]rune{{0, '\n' - 1}, {'\n' + 1, unicode.MaxRune}}, false
	}
	return [][2]rune{{0, unicode.MaxRune}}, false
}

// meet reports whether some rune is accepted by an instruction of a and one of b (true
// when it cannot tell).
func meet(a, b []*syntax.Inst) bool {
	for _, x := range a {
		xr, xf := instRanges(x)
		for _, y := range b {
			yr, yf := instRanges(y)
			if xf || yf {
				return true
			}
			for _, p := range xr {
				for _, q := range yr {
					if p[0] <= q[1] && q[0] <= p[1] {
						return true
					}
				}
			}
		}
	}
	return false
}

// ---- per tour ----

// releaser follows one tour's answer for its release point. Not safe for concurrent use.
type releaser struct {
	watched []*compiledRule
	plans   []*releasePlan
	// in and out: the atoms of the watched rules on the answer as streamed (in) and on the
	// final text's certain prefix (out), flattened: rule k's atoms start at base[k].
	base    []int
	in, out relStream
	twin    bool // out is in (no fix the release follows: the final text is the answer)
	tail    *tailPlan
	add     string
	repl    *replState
	fed     int    // bytes of the answer read
	final   []byte // the certain prefix of the final text (aliases the answer or repl.out)
	open    bool   // some watched rule may still fire: nothing is released
	blank   bool   // final has said nothing yet
}

// ReleaseBatchBytes is how many bytes the release lets arrive before it reads them: the
// client is at most that many bytes (plus a chunk) behind what is certain, and the work a
// call costs is spread over several small chunks (a provider's token is a few bytes). The
// first chunk is always read, and the rest of the answer goes when it is accepted.
const ReleaseBatchBytes = 16

type relStream struct {
	atoms []*lazydfa.DFA
	cur   []lazydfa.Cursor
	st    []tri
	fed   int
}

func (s *relStream) init(atoms []*lazydfa.DFA) {
	s.atoms = atoms
	s.cur = make([]lazydfa.Cursor, len(atoms))
	s.st = make([]tri, len(atoms))
	for i, d := range atoms {
		if d != nil {
			s.cur[i] = d.Start()
		}
	}
}

// feed reads text[s.fed:] into every atom not settled yet.
func (s *relStream) feed(text []byte) {
	if len(text) <= s.fed {
		return
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

// newReleaser returns the releaser of the armed rules (not in shadow), vars the move's
// variables. Caller holds the move's lock.
func newReleaser(armed []*compiledRule, vars map[string]string) *releaser {
	x := &releaser{blank: true}
	var tailRule, replRule *compiledRule
	var atoms []*lazydfa.DFA
	for _, r := range armed {
		p := r.release.get(r)
		switch {
		case p.tail != nil && tailRule == nil:
			if add, missing := expand(r.Fix.AppendIfMissing, vars, nil); missing == "" && p.tail.cures(add) {
				tailRule, x.tail, x.add = r, p.tail, add
				continue
			}
		case p.repl != nil && replRule == nil:
			replRule, x.repl = r, &replState{p: p.repl, ufrom: -1, ls: -1}
			continue
		}
		x.watched = append(x.watched, r)
		x.plans = append(x.plans, p)
		x.base = append(x.base, len(atoms))
		for _, a := range p.atoms {
			atoms = append(atoms, a.get())
		}
	}
	if x.tail != nil && x.repl != nil {
		// Both repair: the image fix runs first (rule-name order), then the tail is
		// appended. The appended tail must not complete an image, and an image repaired
		// must not eat the tail the answer brought. Otherwise the tail rule is watched.
		ok := replRule.Name < tailRule.Name && !meet(x.repl.p.last, x.tail.last)
		for _, r := range x.add {
			for _, in := range x.repl.p.last {
				ok = ok && !instHits(in, r)
			}
		}
		if !ok {
			p := tailRule.release.get(tailRule)
			x.watched = append(x.watched, tailRule)
			x.plans = append(x.plans, p)
			x.base = append(x.base, len(atoms))
			for _, a := range p.atoms {
				atoms = append(atoms, a.get())
			}
			x.tail = nil
		}
	}
	x.twin = x.tail == nil && x.repl == nil
	x.in.init(atoms)
	if !x.twin {
		x.out.init(append([]*lazydfa.DFA(nil), atoms...))
	}
	x.open = len(x.watched) > 0
	return x
}

// advance reads the answer streamed so far and returns the certain prefix of the final
// text (owned by the releaser; it only grows).
func (x *releaser) advance(text []byte) []byte {
	if len(text)-x.fed < ReleaseBatchBytes && x.fed > 0 {
		return x.released()
	}
	x.fed = len(text)
	certain := text
	if x.repl != nil {
		x.repl.feed(text)
		certain = x.repl.out[:x.repl.r]
	} else {
		certain = text[:len(text)-cutRune(text)]
	}
	if x.tail != nil {
		certain = bytes.TrimRightFunc(certain, unicode.IsSpace)
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
		for k, p := range x.plans {
			if p.fires.eval(x.in.st[x.base[k]:]) != triFalse || !x.twin && p.fires.eval(x.out.st[x.base[k]:]) != triFalse {
				x.open = true
				break
			}
		}
	}
	return x.released()
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

// replState streams a replace fix in normal form. out is the answer read so far with
// every certain rewrite made; out[:r] is final: no match can start there, whatever comes,
// and no rewrite to come can reach it.
//
// Why r is not just the earliest live start e: a rewrite at e puts its replacement where
// the match was, and a match could then start before e and run into the replacement (the
// nested image ![a](![b](c)) becomes ![b](c), then c). Such a match reads out[a:e] first,
// so a must be a live start of out[:e] cut at e; r is the fixed point of that, and nothing
// before it is ever rewritten.
type replState struct {
	p   *replPlan
	out []byte
	in  int // bytes of the answer copied into out
	r   int
	// The fast path: the unanchored DFA, fed out from r on. While it has no thread alive
	// and has seen no match, no start from r on is live: r moves to the end at the cost of
	// a DFA step a byte (and the skip to the pattern's first literal), not a run per start.
	u     lazydfa.Cursor
	ufrom int // where u started (-1: not started)
	ufed  int // bytes of out fed to u
	uhit  bool
	// The live start found last, and its anchored cursor: an open match (an image whose
	// alt text goes on) is read on from where it was, not from its start at each batch.
	ls   int // -1: none
	lc   lazydfa.Cursor
	lfed int
	lhit bool
}

func (x *replState) feed(text []byte) {
	if x.out == nil {
		x.out = make([]byte, 0, max(2048, 2*len(text)))
	}
	x.out = append(x.out, text[x.in:]...)
	x.in = len(text)
	if x.ufrom != x.r || x.ufed < x.r {
		x.u, x.ufrom, x.ufed, x.uhit = x.p.un.Start(), x.r, x.r, false
	}
	for q := x.out[x.ufed:]; len(q) > 0 && !x.uhit; {
		o, rest, ok := x.p.un.Feed(&x.u, q)
		if !ok {
			x.uhit = true // gave up: take the slow path from now on
			break
		}
		x.uhit = o != nil
		q = rest
	}
	x.ufed = len(x.out)
	if !x.uhit && !x.u.Pending() {
		// Nothing alive: the cursor is as good as a fresh one at the end (the pattern has no
		// assertion, so what came before does not matter).
		x.r, x.ufrom = len(x.out), len(x.out)
		return
	}
	defer func() { x.ufrom = -1 }() // the slow path moved r or rewrote out: start again from r
	for {
		e, match := x.earliest(x.r, len(x.out))
		if match {
			if !x.rewrite(e, x.p.anchored) {
				return
			}
			continue
		}
		for {
			a := x.viable(x.r, e)
			if a == e {
				break
			}
			e = a
		}
		x.r = e
		return
	}
}

// earliest returns the first start in out[from:to] from which a match is still possible
// (not match) or certain (match: it can no longer change), or to - a cut rune.
func (x *replState) earliest(from, to int) (int, bool) {
	end := to - cutRune(x.out[:to])
	for s := from; s < end; s++ {
		if !utf8.RuneStart(x.out[s]) {
			continue
		}
		var matched, ok bool
		if s == x.ls && x.lfed <= to {
			var more bool
			more, ok = x.run(&x.lc, x.out[x.lfed:to])
			x.lhit, x.lfed = x.lhit || more, to
			matched = x.lhit
		} else {
			x.lc = x.p.dfa.Start()
			matched, ok = x.run(&x.lc, x.out[s:to])
			x.ls, x.lfed, x.lhit = s, to, matched
		}
		if !ok || x.lc.Pending() {
			if !ok {
				x.ls = -1
			}
			return s, false
		}
		x.ls = -1
		if matched {
			return s, true
		}
	}
	return end, false
}

// viable returns the first start in out[from:e] that is a live start of out[:e], or e.
func (x *replState) viable(from, e int) int {
	for a := from; a < e; a++ {
		if !utf8.RuneStart(x.out[a]) {
			continue
		}
		c := x.p.dfa.Start()
		matched, ok := x.run(&c, x.out[a:e])
		if !ok || matched || c.Pending() {
			return a
		}
	}
	return e
}

func (x *replState) run(c *lazydfa.Cursor, p []byte) (matched, ok bool) {
	for len(p) > 0 && !c.Dead() {
		o, rest, ok := x.p.dfa.Feed(c, p)
		if !ok {
			return matched, false
		}
		matched = matched || o != nil
		p = rest
	}
	return matched, true
}

// rewrite replaces the match re finds at out[at:] (anchored there, or the leftmost one
// after it). It reports false when there is none.
func (x *replState) rewrite(at int, re *regexp.Regexp) bool {
	loc := re.FindSubmatchIndex(x.out[at:])
	if loc == nil {
		return false
	}
	x.ls = -1
	rep := re.Expand(nil, []byte(x.p.with), x.out[at:], loc)
	tail := append([]byte(nil), x.out[at+loc[1]:]...)
	x.out = append(append(x.out[:at+loc[0]], rep...), tail...)
	return true
}

// flush rewrites what is left at the end of the answer, leftmost match first.
func (x *replState) flush() {
	for x.rewrite(x.r, x.p.re) {
	}
}
