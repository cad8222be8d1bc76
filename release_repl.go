package streamrules

import (
	"regexp"
	"regexp/syntax"
	"strconv"
	"unicode"
	"unicode/utf8"

	"github.com/streamrules/streamrules/internal/lazydfa"
)

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
	all          []*syntax.Inst // every rune instruction (replsApart)
	grp          int            // the fewest runes the kept group consumes
	wb           bool           // a claim-shaped pattern led by \b (release_lit.go): see valid
	lit          []rune         // a claim-shaped fix's plain replacement (release_lit.go)
	first        *byteSet       // the bytes a match can start with (nil: unknown): the fast path's skip
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
	others, found, grp := 0, false, 0
	for _, s := range tree.Sub {
		if s.Op == syntax.OpCapture && !found && (s.Name == name || name == strconv.Itoa(s.Cap)) {
			found, grp = true, minLen(s)
			continue
		}
		others += minLen(s)
	}
	if !found || others == 0 {
		return nil
	}
	p := compileRepl(f, tree)
	if p != nil {
		p.grp = grp
	}
	return p
}

// compileRepl compiles the machines of f's plan (tree is f.Pattern parsed and simplified);
// grp, wb and lit are the caller's to set. nil where a part does not compile.
func compileRepl(f *ReplaceRegex, tree *syntax.Regexp) *replPlan {
	prog, err := syntax.Compile(tree)
	if err != nil {
		return nil
	}
	anchored, err := regexp.Compile(anchorStart(f.Pattern))
	if err != nil {
		return nil
	}
	d, err := lazydfa.Compile(anchorStart(f.Pattern))
	if err != nil {
		return nil
	}
	return &replPlan{re: regexp.MustCompile(f.Pattern), anchored: anchored, with: f.With, dfa: d, un: lazydfa.New(prog), last: lastInsts(prog), all: runeInsts(prog), first: firstBytes(prog)}
}

// replsApart reports whether the repair p can run after those of chain (each after the
// one before) with each rule's repair still what the final check makes of it: no rewrite
// may create or destroy a match of another pattern. It is proven when the patterns share
// no rune (a match of one never holds a rune of another's match, and a rewrite keeps only
// runes of its own match, or puts a plain replacement none of whose runes another
// pattern reads), every kept group or replacement has a rune (so a rewrite never joins
// the text on its two sides, which could make a match of another), and no pattern reads
// \b (a rewrite changes the rune before what follows it). Otherwise false: the rule is
// watched.
func replsApart(chain []*replState, p *replPlan) bool {
	reads := func(q *replPlan, rs []rune) bool {
		for _, r := range rs {
			for _, in := range q.all {
				if lazydfa.MatchRune(in, r) {
					return true
				}
			}
		}
		return false
	}
	for _, st := range chain {
		q := st.p
		if meet(q.all, p.all) || q.grp == 0 || p.grp == 0 || q.wb || p.wb || reads(q, p.lit) || reads(p, q.lit) {
			return false
		}
	}
	return true
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
	var w lazydfa.Walker
	for _, in := range runeInsts(prog) {
		ends := false
		w.Walk(prog, []uint32{in.Out}, func(_ uint32, x *syntax.Inst) bool {
			ends = ends || x.Op == syntax.InstMatch
			return x.Op == syntax.InstEmptyWidth
		})
		if ends {
			out = append(out, in)
		}
	}
	return out
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
	// alias: nothing was rewritten yet, so out is the answer itself (the caller's buffer,
	// read only): no copy is made per batch. The first rewrite copies it.
	alias bool
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
		x.alias = true
	}
	if x.alias {
		x.out = text[:len(text):len(text)] // full: an append never writes into the caller's buffer
	} else {
		x.out = append(x.out, text[x.in:]...)
	}
	x.in = len(text)
	if x.ufrom != x.r || x.ufed < x.r {
		x.u, x.ufrom, x.ufed, x.uhit = x.p.un.Start(), x.r, x.r, false
	}
	if f := x.p.first; f != nil && !x.p.wb && !x.uhit && !x.u.Pending() && f.none(x.out[x.ufed:]) {
		// No thread alive and no byte a match can start with: the cursor stays as it is
		// (no assertion in the pattern), without a DFA call.
		x.ufed, x.r, x.ufrom = len(x.out), len(x.out), len(x.out)
		return
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
		if !x.valid(s) {
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
		if !x.valid(a) {
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
	if x.alias {
		// The first rewrite: out becomes the releaser's own copy.
		x.alias = false
		out := make([]byte, 0, max(2048, 2*len(x.out)))
		out = append(append(append(out, x.out[:at+loc[0]]...), rep...), x.out[at+loc[1]:]...)
		x.out = out
		return true
	}
	tail := append([]byte(nil), x.out[at+loc[1]:]...)
	x.out = append(append(x.out[:at+loc[0]], rep...), tail...)
	return true
}

// valid reports whether a match may start at out[s]: a rune starts there and, for a
// pattern led by \b (whose literal starts with a word rune), the rune before is no word
// rune. The anchored DFA and regexp read a start as the start of the text, so this is
// the \b they cannot see.
func (x *replState) valid(s int) bool {
	return utf8.RuneStart(x.out[s]) && !(x.p.wb && s > 0 && asciiWord[x.out[s-1]])
}

var asciiWord = func() (t [256]bool) {
	for b := range 128 {
		t[b] = syntax.IsWordChar(rune(b))
	}
	return t
}()

// flush rewrites what is left at the end of the answer, leftmost match first.
func (x *replState) flush() {
	if x.p.wb {
		for s := x.r; s < len(x.out); s++ {
			if x.valid(s) && x.p.anchored.Match(x.out[s:]) {
				x.rewrite(s, x.p.anchored)
				s = x.r - 1
			}
		}
		return
	}
	for x.rewrite(x.r, x.p.re) {
	}
}
