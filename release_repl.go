package streamrules

import (
	"regexp"
	"regexp/syntax"
	"strconv"
	"unicode/utf8"

	"github.com/streamrules/streamrules/internal/lazydfa"
	"github.com/streamrules/streamrules/internal/rxprog"
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
	all          []*syntax.Inst  // every rune instruction (replsApart)
	grp          int             // the fewest runes the kept group consumes
	wb           bool            // a claim-shaped pattern led by \b (release_lit.go): see valid
	lit          []rune          // a claim-shaped fix's plain replacement (release_lit.go)
	first        *rxprog.ByteSet // the bytes a match can start with (nil: unknown): the fast path's skip
	starts       *rxprog.ByteSet // first, or for a pattern led by \b the bytes after it: where a start is tried
	cap          int             // the group the replacement is (-1: with is expanded as regexp does)
	one          onePass         // finds the group without regexp (nil: not of that shape)
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
	if err1 != nil || err2 != nil || rxprog.StripCaptures(a.Simplify()).String() != rxprog.StripCaptures(b.Simplify()).String() {
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
	if rxprog.HasAssertion(tree) || tree.Op != syntax.OpConcat {
		return nil
	}
	name := ref[1] + ref[2]
	others, found, grp := 0, false, 0
	for _, s := range tree.Sub {
		if s.Op == syntax.OpCapture && !found && (s.Name == name || name == strconv.Itoa(s.Cap)) {
			found, grp = true, rxprog.MinLen(s)
			continue
		}
		others += rxprog.MinLen(s)
	}
	if !found || others == 0 {
		return nil
	}
	p := compileRepl(f, tree)
	if p != nil {
		p.grp = grp
		p.cap = p.anchored.SubexpIndex(ref[2])
		if ref[1] != "" {
			p.cap, _ = strconv.Atoi(ref[1])
		}
		p.one = planOnePass(tree, p.cap)
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
	first := rxprog.FirstBytes(prog)
	return &replPlan{re: regexp.MustCompile(f.Pattern), anchored: anchored, with: f.With, dfa: d, un: lazydfa.New(prog), last: rxprog.LastInsts(prog), all: rxprog.RuneInsts(prog), first: first, starts: rxprog.StartBytes(tree, first), cap: -1}
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
		if rxprog.Meet(q.all, p.all) || q.grp == 0 || p.grp == 0 || q.wb || p.wb || reads(q, p.lit) || reads(p, q.lit) {
			return false
		}
	}
	return true
}

var groupRefRE = regexp.MustCompile(`^\$(?:([0-9]+)|\{([A-Za-z_][A-Za-z0-9_]*)\})$`)

// normalForm rewrites the leftmost match again and again until none is left. Each
// rewrite shortens the text, so it ends; the result has no match.
func (p *replPlan) normalForm(text string) string {
	x := replState{p: p, ls: -1, ufrom: -1, end: true}
	x.feed([]byte(text))
	x.flush()
	return string(x.out[:x.g])
}

// replState streams a replace fix in normal form. The text it has made of the answer so
// far is out[:g] followed by out[rd:]: out[:g] has every certain rewrite made, out[rd:] is
// the rest of the answer, not read that far yet. out[:r] is final (r <= g): no match can
// start there, whatever comes, and no rewrite to come can reach it.
//
// Why r is not just the earliest live start e: a rewrite at e puts its replacement where
// the match was, and a match could then start before e and run into the replacement (the
// nested image ![a](![b](c)) becomes ![b](c), then c). Such a match reads out[a:e] first,
// so a must be a live start of out[:e] cut at e; r is the fixed point of that, and nothing
// before it is ever rewritten.
//
// Why the gap: a rewrite shortens the text where the match was. Moving the whole rest of
// the answer down after each rewrite cost a copy of the tail per match, quadratic in the
// matches (a reply of 8,000 images took 120 ms); a rewrite moves only what was read past
// its match (out[match end:g]), and the rest is moved once, when it is read (pull). For
// the same reason r moves on after each rewrite (to the fixed point above), so the next
// match is looked for from there, not from where the batch began.
type replState struct {
	p     *replPlan
	out   []byte
	g, rd int // out[:g] is the text made so far, out[rd:] the answer not read yet (g <= rd)
	in    int // bytes of the answer taken into out
	r     int
	// alias: nothing was rewritten yet, so out is the answer itself (the caller's buffer,
	// read only, g == rd): no copy is made per batch. The first rewrite copies it.
	alias bool
	// end: the answer is whole (flush): a match that could still grow is as long as it gets.
	end bool
	// The fast path: the unanchored DFA, fed the text from r on. While it has no thread
	// alive and has seen no match, no start from r on is live: r moves to the end at the
	// cost of a DFA step a byte (and the skip to the pattern's first literal), not a run per
	// start.
	u     lazydfa.Cursor
	ufrom int // where u started (-1: not started)
	ufed  int // bytes of the text fed to u
	uhit  bool
	// The live start found last, and its anchored cursor: an open match (an image whose
	// alt text goes on) is read on from where it was, not from its start at each batch.
	ls   int // -1: none
	lc   lazydfa.Cursor
	lfed int
	lhit bool
	lhi  int    // just past where lc last saw a match: a certain match lies in text[ls:lhi]
	with []byte // the replacement being made (kept from rewrite to rewrite)
	// The match earliest read one-pass (oneAt -1: none): it starts at oneAt, is oneEnd
	// long, and its group is [oneG0, oneG1) within it. Only the rewrite that follows reads it.
	oneAt, oneEnd, oneG0, oneG1 int
	// work counts the bytes the repair read, moved and handed to regexp, for the tests
	// that hold it linear in the answer.
	work int
}

func (x *replState) feed(text []byte) {
	if x.out == nil {
		x.alias = true
	}
	if x.alias {
		x.out = text[:len(text):len(text)] // full: an append never writes into the caller's buffer
		x.rd = x.g
	} else {
		x.out = append(x.out, text[x.in:]...)
	}
	x.in = len(text)
	x.scan()
}

// size is the length of the text made so far.
func (x *replState) size() int { return x.g + len(x.out) - x.rd }

// at returns the byte of the text at i.
func (x *replState) at(i int) byte {
	if i < x.g {
		return x.out[i]
	}
	return x.out[i-x.g+x.rd]
}

// span returns text[from:to] in at most two pieces.
func (x *replState) span(from, to int) (a, b []byte) {
	switch {
	case to <= x.g:
		return x.out[from:to], nil
	case from >= x.g:
		return x.out[from-x.g+x.rd : to-x.g+x.rd], nil
	}
	return x.out[from:x.g], x.out[x.rd : to-x.g+x.rd]
}

// pull makes text[:to] contiguous in out[:g], moving the answer's bytes down to the gap.
func (x *replState) pull(to int) {
	if to <= x.g {
		return
	}
	n := to - x.g
	if x.rd != x.g {
		copy(x.out[x.g:], x.out[x.rd:x.rd+n])
		x.work += n
	}
	x.g, x.rd = x.g+n, x.rd+n
}

// scan makes every rewrite that is certain and moves r as far as it can go.
func (x *replState) scan() {
	for {
		n := x.size()
		if x.ufrom != x.r || x.ufed < x.r {
			x.u, x.ufrom, x.ufed, x.uhit = x.p.un.Start(), x.r, x.r, false
		}
		if !x.uhit {
			if f := x.p.first; f != nil && !x.p.wb && !x.u.Pending() && x.none(f, x.ufed, n) {
				// No thread alive and no byte a match can start with: the cursor stays as it
				// is (no assertion in the pattern), without a DFA call.
				x.ufed = n
				x.settle(n)
				return
			}
			x.feedFast(n)
			if !x.uhit && !x.u.Pending() {
				// Nothing alive: the cursor is as good as a fresh one at the end (the pattern
				// has no assertion, so what came before does not matter).
				x.settle(n)
				return
			}
		}
		e, match := x.earliest(x.r, n)
		if !match {
			x.settle(x.closure(e))
			return
		}
		if !x.rewrite(e) {
			x.ufrom = -1
			return
		}
		x.ufrom = -1 // the text after r changed: the fast path starts again from r
		x.settle(x.closure(e))
	}
}

// settle makes r the final point p.
func (x *replState) settle(p int) {
	x.pull(p)
	x.r = p
	if x.ufrom >= 0 && x.ufrom != p {
		x.ufrom = -1
	}
}

// feedFast feeds the fast path's cursor on to n.
func (x *replState) feedFast(n int) {
	a, b := x.span(x.ufed, n)
	for _, q := range [2][]byte{a, b} {
		for len(q) > 0 && !x.uhit {
			o, rest, ok := x.p.un.Feed(&x.u, q)
			if !ok {
				x.uhit = true // gave up: take the slow path from now on
				break
			}
			x.work += len(q) - len(rest)
			x.uhit = o != nil
			q = rest
		}
	}
	x.ufed = n
}

// indexIn returns the offset from from of the first byte of text[from:to] in f (the
// text may lie on both sides of the gap), or -1.
func (x *replState) indexIn(f *rxprog.ByteSet, from, to int) int {
	a, b := x.span(from, to)
	if k := f.Index(a); k >= 0 {
		return k
	}
	if k := f.Index(b); k >= 0 {
		return k + len(a)
	}
	return -1
}

// none reports whether no byte of text[from:to] is in f.
func (x *replState) none(f *rxprog.ByteSet, from, to int) bool {
	k := x.indexIn(f, from, to)
	if k < 0 {
		x.work += to - from
		return true
	}
	x.work += k + 1
	return false
}

// next returns the first start in text[from:to] where a match may start (valid, and a
// byte of the plan's start bytes), or to.
func (x *replState) next(from, to int) int {
	for s := from; s < to; s++ {
		if f := x.p.starts; f != nil {
			k := x.indexIn(f, s, to)
			if k < 0 {
				x.work += to - s
				return to
			}
			x.work += k
			s += k
		}
		x.work++
		if x.valid(s) {
			return s
		}
	}
	return to
}

// cut returns how many bytes at the end of text[:to] are a rune not complete yet (none
// once the answer is whole: regexp reads such bytes as they are).
func (x *replState) cut(to int) int {
	if x.end {
		return 0
	}
	var tail [utf8.UTFMax]byte
	k := min(to, utf8.UTFMax)
	for i := range k {
		tail[i] = x.at(to - k + i)
	}
	return cutRune(tail[:k])
}

// earliest returns the first start in text[from:to] from which a match is still possible
// (not match) or certain (match: it can no longer change; it lies in text[e:x.lhi]), or
// to - a cut rune.
func (x *replState) earliest(from, to int) (int, bool) {
	end := to - x.cut(to)
	for s := x.next(from, end); s < end; s = x.next(s+1, end) {
		if x.p.one.closed() {
			// A one-pass pattern ending in a fixed part matches from s in one way only, so
			// a match read here is certain whatever comes (text[s:end] holds no cut rune).
			// Otherwise the DFA decides.
			if a, b := x.span(s, end); b == nil {
				if n, g0, g1, ok := x.p.one.match(a); ok {
					x.work += n
					x.ls, x.lhi = -1, s+n
					x.oneAt, x.oneEnd, x.oneG0, x.oneG1 = s, n, g0, g1 // rewrite takes them
					return s, true
				}
			}
		}
		var ok bool
		if s == x.ls && x.lfed <= to {
			ok = x.run(&x.lc, x.lfed, to, &x.lhi)
			x.lhit, x.lfed = x.lhit || x.lhi > s, to
		} else {
			x.lc, x.lhi = x.p.dfa.Start(), s
			ok = x.run(&x.lc, s, to, &x.lhi)
			x.ls, x.lfed, x.lhit = s, to, x.lhi > s
		}
		if ok && x.end && x.lc.Pending() {
			// The answer is whole: what the cursor still waits for never comes.
			out, endOK := x.p.dfa.End(&x.lc)
			if endOK && out != nil {
				x.lhit, x.lhi = true, to
			}
			ok = endOK
			x.lc = x.p.dfa.Start() // settled: not read on
			x.ls = -1
			if ok {
				if x.lhit {
					return s, true
				}
				continue
			}
		}
		if !ok {
			x.ls = -1
			if x.end {
				// The DFA gave up on the whole answer: regexp decides this start.
				x.pull(to)
				x.work += to - s
				if loc := x.p.anchored.FindIndex(x.out[s:to]); loc != nil {
					x.lhi = to
					return s, true
				}
				continue
			}
			return s, false
		}
		if x.lc.Pending() {
			return s, false
		}
		x.ls = -1
		if x.lhit {
			return s, true
		}
	}
	return end, false
}

// closure returns the fixed point r of live starts before e (see replState).
func (x *replState) closure(e int) int {
	for {
		a := x.viable(x.r, e)
		if a == e {
			return e
		}
		e = a
	}
}

// viable returns the first start in text[from:e] that is a live start of text[:e], or e.
func (x *replState) viable(from, e int) int {
	for a := x.next(from, e); a < e; a = x.next(a+1, e) {
		c, hi := x.p.dfa.Start(), a
		ok := x.run(&c, a, e, &hi)
		if !ok || hi > a || c.Pending() {
			return a
		}
	}
	return e
}

// run feeds c on over text[from:to] until it dies; hi is moved just past the character
// where c last saw a match. ok is false when the DFA gave up. The text goes in growing
// pieces: a cursor that dies reads the rest of its piece as is, so the bytes counted
// (work) are at most twice those really read.
func (x *replState) run(c *lazydfa.Cursor, from, to int, hi *int) (ok bool) {
	a, b := x.span(from, to)
	at, piece := from, 16
	for _, p := range [2][]byte{a, b} {
		for len(p) > 0 && !c.Dead() {
			q := p[:min(piece, len(p))]
			piece *= 2
			o, rest, ok := x.p.dfa.Feed(c, q)
			if !ok {
				return false
			}
			n := len(q) - len(rest)
			x.work += n
			at += n
			if o != nil {
				*hi = at
			}
			p = p[n:]
		}
	}
	return true
}

// rewrite replaces the certain match at text[at:x.lhi] (see earliest). It reports false
// when regexp finds none there.
func (x *replState) rewrite(at int) bool {
	hi := x.lhi
	x.ls = -1
	oneAt := x.oneAt
	x.oneAt = -1 // read once (a zero state's oneEnd 0 never fits: a match is not empty)
	x.pull(hi)
	x.work += hi - at
	// The match is text[at:at+m1] and the kept group text[at+g0:at+g1] (cap >= 0).
	var m1, g0, g1 int
	var rep []byte
	if oneAt == at && x.oneEnd == hi-at {
		// earliest read this very match one-pass, and the text has not changed since.
		m1, g0, g1 = x.oneEnd, x.oneG0, x.oneG1
	} else if end, a, b, ok := x.p.one.match(x.out[at:hi]); ok {
		// The one way the pattern matches here (see onePass), which is regexp's too.
		m1, g0, g1 = end, a, b
	} else {
		// The unanchored regexp, on text[at:hi]: its leftmost match starts at at (no match
		// starts earlier in it, and one starts there), and it runs faster than the anchored
		// one.
		loc := x.p.re.FindSubmatchIndex(x.out[at:hi])
		if loc == nil || loc[0] != 0 {
			return false
		}
		m1 = loc[1]
		if c := x.p.cap; c >= 0 {
			g0, g1 = loc[2*c], loc[2*c+1]
		} else {
			x.with = x.p.anchored.Expand(x.with[:0], []byte(x.p.with), x.out[at:hi], loc)
			rep = x.with
		}
	}
	if x.p.cap >= 0 {
		rep = x.out[at+g0 : at+g1] // the group: within the match
	}
	if x.alias {
		// The first rewrite: out becomes the releaser's own copy.
		x.alias = false
		out := make([]byte, len(x.out), max(2048, 2*len(x.out)))
		copy(out, x.out)
		x.out = out
		x.work += len(out)
		if x.p.cap >= 0 {
			rep = x.out[at+g0 : at+g1]
		}
	}
	x.splice(at, at+m1, rep)
	return true
}

// splice replaces text[m0:m1] (within out[:g]) with rep, which lies within the match or
// apart from out. Only what was read past the match moves, unless rep is longer than the
// match and the gap (a claim's plain replacement): then the buffer grows by a quarter at
// least, so growing stays linear.
func (x *replState) splice(m0, m1 int, rep []byte) {
	g := m0 + len(rep) + x.g - m1
	x.work += len(rep) + x.g - m1
	switch {
	case len(rep) <= m1-m0:
		copy(x.out[m0:], rep) // first: the tail's new place may overlap rep's old one
		copy(x.out[m0+len(rep):], x.out[m1:x.g])
	case g <= x.rd:
		copy(x.out[m0+len(rep):], x.out[m1:x.g])
		copy(x.out[m0:], rep)
	default:
		gap := max(g-x.rd, len(x.out)/4, 64)
		out := make([]byte, len(x.out)+gap, cap(x.out)+gap)
		n := copy(out, x.out[:m0])
		n += copy(out[n:], rep)
		copy(out[n:], x.out[m1:x.g])
		copy(out[x.rd+gap:], x.out[x.rd:])
		x.work += len(out)
		x.out, x.rd = out, x.rd+gap
	}
	x.g = g
}

// valid reports whether a match may start at text[s]: a rune starts there and, for a
// pattern led by \b (whose literal starts with a word rune), the rune before is no word
// rune. The anchored DFA and regexp read a start as the start of the text, so this is
// the \b they cannot see.
func (x *replState) valid(s int) bool {
	return utf8.RuneStart(x.at(s)) && !(x.p.wb && s > 0 && asciiWord[x.at(s-1)])
}

var asciiWord = func() (t [256]bool) {
	for b := range 128 {
		t[b] = syntax.IsWordChar(rune(b))
	}
	return t
}()

// flush rewrites what is left at the end of the answer, leftmost match first.
func (x *replState) flush() {
	x.end = true
	x.ufrom = -1 // the fast path's cursor read a stream; it now reads a whole text
	x.scan()
	x.pull(x.size())
	x.r = x.g
}
