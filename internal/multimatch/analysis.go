package multimatch

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/streamrules/streamrules/internal/lazydfa"
)

// Analysis is what New learns about one pattern: the form that runs (its lazy DFA
// and regexp are made when it is first verified), the literals a match requires, and where around a literal a match can lie. It
// depends on the pattern's text alone, so a caller that rebuilds sets often
// (a rule engine on every edit) can keep analyses by pattern and pass them to
// Build: one edited pattern then costs one analysis plus the automaton.
// An Analysis is immutable and may be shared by any number of sets.
type Analysis struct {
	pattern string
	// runText is the pattern that is run: the pattern with its unbounded edges
	// cut (see trim). The two match the same texts, and the cut one has a
	// bounded width more often and keeps fewer threads alive. Its lazy DFA and,
	// where that gives up, its regexp are compiled when first needed (see lazy,
	// regexp): most patterns are never candidates, and a cold load of 10,000
	// patterns spent a quarter of its time in regexp.Compile.
	runText string
	runOnce sync.Once
	run     *regexp.Regexp

	groups [][]lit // required groups: a text lacking one cannot match
	anchor []lit   // window anchor: every match holds one of these within [before, after]
	// A match containing an anchor occurrence [s, e) lies within
	// [e-before, s+after]; -1: unbounded on that side.
	before, after int
	// anchorCost is the expected cost of verifying around the anchor, in bytes run per
	// byte of text (1: as much as the whole text; see chooseAnchor).
	anchorCost float64
	ctx        ctxFlags
	// fromBody, when set, is the pattern preceded by (?s:.){0,k}; from0 (\A and
	// it) and from1 (\A, one character, and it) are run anchored just before
	// each anchor occurrence when only before is bounded (see verifyFrom).
	fromBody     string
	fromOnce     sync.Once
	from0, from1 *regexp.Regexp
	// The lazy DFAs of run, from0 and from1 (see matches), made on first use.
	dfaOnce         sync.Once
	dfa, dfa0, dfa1 *lazydfa.DFA
	direct          bool // run on every text without the prefilter (anchored at the start)
	prefix          bool // the regexp starts with a case-sensitive literal (regexp skips ahead with strings.Index)
	insts           int  // instructions of the compiled program of run
	live            int  // threads the program keeps alive on ordinary text (see liveThreads)
	restart         int  // threads woken behind a frequent narrow character (see restartThreads)
	wide            int  // wide instructions (see WideInsts)
	rarePrefix      bool // every match starts with a rare literal (see RarePrefix)
}

// maxAnchoredBefore bounds the distance that anchored runs (from0, from1)
// allow between a match's start and its anchor literal.
const maxAnchoredBefore = 64

// anchoredSlack widens the start range of an anchored run so that one run
// also covers the occurrences that follow within that many bytes (the digits
// of one number, say).
const anchoredSlack = 12

// ctxFlags say which empty-width assertions a pattern uses; a window must
// start and end where they read the same in the window as in the text.
type ctxFlags uint8

const (
	ctxBeginText ctxFlags = 1 << iota
	ctxEndText
	ctxBeginLine
	ctxEndLine
	ctxWord
)

// Pattern returns the pattern the analysis is of.
func (a *Analysis) Pattern() string { return a.pattern }

// Insts returns the size of the program run for the pattern, in instructions.
func (a *Analysis) Insts() int { return a.insts }

// LiveThreads returns how many threads the pattern's program keeps alive at
// once while it scans ordinary text: the instructions reachable from the
// start through wide classes alone (., \w, \s, [^x] …). The time regexp
// spends per byte grows with it.
func (a *Analysis) LiveThreads() int { return a.live }

// WideInsts returns how many instructions of the pattern's program match
// letters or spaces (., [^x], \S, \w, \s): on text where the literals before
// them occur often, up to that many threads.
func (a *Analysis) WideInsts() int { return a.wide }

// RarePrefix reports whether every match starts with a literal that is rare
// in ordinary text (such as "github_pat_"): its wide instructions then wake
// only where the literal occurs.
func (a *Analysis) RarePrefix() bool { return a.rarePrefix }

// rarePrefixCost is the most often per byte a literal may be expected to
// occur (letter frequencies taken as independent) to count as rare.
const rarePrefixCost = 1e-6

func rarePrefix(m *memo) bool {
	for i, e := range m.elems {
		switch e.Op {
		case syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
			syntax.OpWordBoundary, syntax.OpNoWordBoundary, syntax.OpEmptyMatch:
			continue
		}
		g := m.bestGroup(m.part(i))
		return g != nil && m.cost(g) <= rarePrefixCost
	}
	return false
}

// Anchored reports whether every match starts at the start of the text: the
// regexp then tries one position only, and its cost does not grow with the text.
func (a *Analysis) Anchored() bool { return a.direct }

// Run returns the regexp the set runs for the pattern: the pattern with
// unbounded repetitions at its edges cut, which matches the same texts.
func (a *Analysis) Run() string { return a.runText }

// regexp returns the compiled regexp of runText, compiling it on first use.
func (a *Analysis) regexp() *regexp.Regexp {
	a.runOnce.Do(func() {
		var err error
		if a.run, err = regexp.Compile(a.runText); err != nil {
			// A cut pattern always prints back (TestPrintTree); if not, the original
			// matches the same texts, and it compiled in Analyze's parse.
			a.run = regexp.MustCompile(a.pattern)
		}
	})
	return a.run
}

// Analyze parses and compiles one pattern (Go regexp syntax).
func Analyze(pattern string) (*Analysis, error) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil, err
	}
	a := &Analysis{pattern: pattern, before: -1, after: -1}
	re = stripCaptures(re)
	q := trimRight(trimLeft(re))
	qstr := pattern // printing a tree is costly (case folding); skip it when nothing was cut
	if q != re {
		qstr = printTree(q)
	}
	a.runText = qstr
	qs := q.Simplify()
	prog, err := syntax.Compile(qs)
	if err != nil {
		return nil, err
	}
	pb := progBufPool.Get().(*progBuf)
	pb.prog = prog
	a.insts = len(prog.Inst)
	a.live = pb.liveThreads()
	a.restart = pb.restartThreads()
	a.wide = wideInsts(prog)
	p, _ := prog.Prefix()
	pb.release()
	m := newMemo(qs)
	defer m.release()
	a.rarePrefix = rarePrefix(m)
	a.ctx = contextOf(qs)
	if startsAnchored(qs) {
		// regexp tries such a pattern at position 0 only: cheaper than any scan.
		a.direct = true
		return a, nil
	}
	if len(p) >= 2 {
		a.prefix = true
	}
	groups, ok := m.requiredGroups(m.whole())
	if ok {
		a.groups = groups
	}
	a.chooseAnchor(m)
	if !ok && a.anchor != nil {
		a.groups = [][]lit{a.anchor}
	}
	if a.anchor != nil && a.before >= 0 && a.after < 0 && a.before <= maxAnchoredBefore {
		// Bounded before the literal only: verify with a run anchored a
		// little before each occurrence, which stops as soon as no thread
		// is left (see verifyFrom). The first form starts at the text's
		// start; the second reads one character of context first, so that
		// assertions at the window's start see the text's character.
		// Compiled when first needed (most patterns never are candidates).
		a.fromBody = fmt.Sprintf(`(?s:.){0,%d}(?:%s)`, a.before+utf8.UTFMax-1+anchoredSlack, qstr)
	}
	clipGroups(a) // the analysis outlives the sets it was made from
	return a, nil
}

// chooseAnchor picks the literal set around whose occurrences a match must
// lie within known distances: a required set of an element (or a run of up
// to four elements) of the top-level concatenation, the one whose
// occurrences are expected to cost least to verify (see verify).
func (a *Analysis) chooseAnchor(m *memo) {
	elems := m.elems
	widths := make([]int, len(elems))
	for i, e := range elems {
		widths[i] = maxWidth(e)
	}
	sum := func(ws []int, extra int) int {
		if extra < 0 {
			return -1
		}
		t := extra
		for _, w := range ws {
			if w < 0 {
				return -1
			}
			t += w
		}
		return t
	}
	// Expected cost: how often the literals occur, times what verifying an
	// occurrence costs: a window when both sides are bounded, an anchored
	// run when only the side before is, most of the text otherwise.
	// In bytes run per byte of text: c occurrences per byte, each a window
	// of before+after bytes or an anchored run of before bytes and a few
	// more, plus a call's overhead; half the text for a region that is
	// bounded on one side; the whole text when not bounded.
	expected := func(c float64, before, after int) float64 {
		switch {
		case before >= 0 && after >= 0:
			return min(1, c*float64(before+after+windowCost))
		case before >= 0:
			return min(1, c*float64(before+2*windowCost))
		case after >= 0:
			return 0.5
		}
		return 1
	}
	best := 0.0
	consider := func(g []lit, before, after int) {
		if len(g) == 0 || hasEmpty(g) {
			return
		}
		c := m.cost(g)
		if c > groupCostLimit {
			return
		}
		if c = expected(c, before, after); a.anchor == nil || c < best {
			a.anchor, a.before, a.after = g, before, after
			best = c
			a.anchorCost = c
		}
	}
	for i, e := range elems {
		x := m.whole()
		if len(elems) > 1 {
			x = m.part(i)
		}
		g := m.bestGroup(x)
		consider(g, sum(widths[:i], edgeWidth(e, true)), sum(widths[i+1:], edgeWidth(e, false)))
		// Runs of elements: parsing splits (?:date|dob) into d(?:ate|ob),
		// whose literals only the run has whole.
		for j := i + 2; e.Op == syntax.OpLiteral && j <= min(len(elems), i+4); j++ {
			w := sum(widths[i:j], 0)
			consider(m.bestGroup(m.run(i, j)), sum(widths[:i], w), sum(widths[j:], w))
		}
	}
	if len(elems) > 1 {
		// The whole pattern as one element: its own best group.
		w := sum(widths, 0)
		consider(m.bestGroup(m.whole()), w, w)
	}
}

// edgeWidth bounds how far into a match of e (from its start when head, else
// from its end) an occurrence of one of e's required literals must end: the
// width of e, or for x+ and x{n,} the width of x, whose first (last) copy
// holds the literal too. -1: unbounded.
func edgeWidth(e *syntax.Regexp, head bool) int {
	if w := maxWidth(e); w >= 0 {
		return w
	}
	switch e.Op {
	case syntax.OpPlus:
		return edgeWidth(e.Sub[0], head)
	case syntax.OpRepeat:
		if e.Min >= 1 {
			return edgeWidth(e.Sub[0], head)
		}
	case syntax.OpCapture:
		return edgeWidth(e.Sub[0], head)
	}
	return -1
}

// bestGroup returns the cheapest useful required group of x, minimized through m.
func (m *memo) bestGroup(x *info) []lit {
	var best []lit
	bestCost := 0.0
	for i := range x.numGroups() {
		g := x.group(i)
		if len(g) == 0 || hasEmpty(g) {
			continue
		}
		if c := m.cost(g); best == nil || c < bestCost {
			best, bestCost = g, c
		}
	}
	if best == nil || bestCost > 4*groupCostLimit {
		return nil
	}
	return m.minimize(best)
}

// anchored returns the anchored forms, compiling them on first use; nil when
// the pattern has none (or they do not compile, which cannot happen: then the
// windows are not used).
func (a *Analysis) anchored() (from0, from1 *regexp.Regexp) {
	if a.fromBody == "" {
		return nil, nil
	}
	a.fromOnce.Do(func() {
		f0, err0 := regexp.Compile(`\A` + a.fromBody)
		f1, err1 := regexp.Compile(`\A(?s:.)` + a.fromBody)
		if err0 == nil && err1 == nil {
			a.from0, a.from1 = f0, f1
		}
	})
	return a.from0, a.from1
}

// matches reports whether run matches text, as run.MatchString does: through the
// pattern's lazy DFA, which costs one table step per byte however many threads the
// regexp would keep alive, or through regexp where the DFA gives up (a pattern whose
// DFA would need a new state every few bytes of this text).
func (a *Analysis) matches(text string) bool {
	if d := a.lazy(); d != nil {
		if m, ok := d.Match(text); ok {
			return m
		}
	}
	return a.regexp().MatchString(text)
}

// matchesFrom is matches for the anchored forms (from1 when context is set), also
// saying how much of text it read: the run stops when no thread is left. Only for a
// pattern whose anchored forms compiled (hasFrom).
func (a *Analysis) matchesFrom(text string, context bool, rd *strings.Reader) (matched bool, read int) {
	d := a.dfa0
	if context {
		d = a.dfa1
	}
	if m, n, ok := d.MatchRead(text); ok {
		return m, n
	}
	re, re1 := a.anchored()
	if context {
		re = re1
	}
	// A reader keeps regexp on its NFA, which reads no further than threads live; on a
	// string it may pick the backtracker, whose set-up costs the length of the text.
	rd.Reset(text)
	m := re.MatchReader(rd)
	return m, len(text) - rd.Len()
}

// hasFrom reports whether the pattern is verified by anchored runs (see verifyFrom).
func (a *Analysis) hasFrom() bool {
	a.lazy()
	return a.dfa0 != nil
}

// lazy returns the DFA of run, making the DFAs on first use (most patterns are never
// candidates). Nil when it does not compile, which cannot happen: run compiled.
func (a *Analysis) lazy() *lazydfa.DFA {
	a.dfaOnce.Do(func() {
		a.dfa, _ = lazydfa.Compile(a.runText)
		if a.fromBody != "" {
			d0, err0 := lazydfa.Compile(`\A` + a.fromBody)
			d1, err1 := lazydfa.Compile(`\A(?s:.)` + a.fromBody)
			if err0 == nil && err1 == nil {
				a.dfa0, a.dfa1 = d0, d1
			}
		}
	})
	return a.dfa
}

// ---- cutting the edges ----

// A text has a match of L·P if and only if it has one of L'·P when every
// match of L has a suffix that is a match of L' and every match of L' is one
// of L (and likewise on the right). trimLeft and trimRight apply that to the
// unbounded or optional repetitions at the edges of a pattern: x* and x? at
// an edge become empty, x+ becomes x, x{n,m} becomes x{n}. The verdict of
// MatchString is unchanged; the width often becomes bounded.

func emptyMatch() *syntax.Regexp { return &syntax.Regexp{Op: syntax.OpEmptyMatch} }

func stripCaptures(re *syntax.Regexp) *syntax.Regexp {
	for re.Op == syntax.OpCapture {
		re = re.Sub[0]
	}
	for i, s := range re.Sub {
		re.Sub[i] = stripCaptures(s)
	}
	return re
}

func trimLeft(re *syntax.Regexp) *syntax.Regexp { return trimEdge(re, true) }

func trimRight(re *syntax.Regexp) *syntax.Regexp { return trimEdge(re, false) }

func trimEdge(re *syntax.Regexp, left bool) *syntax.Regexp {
	switch re.Op {
	case syntax.OpStar, syntax.OpQuest:
		return emptyMatch()
	case syntax.OpPlus:
		return trimEdge(re.Sub[0], left)
	case syntax.OpRepeat:
		switch {
		case re.Min == 0:
			return emptyMatch()
		case re.Min == 1:
			return trimEdge(re.Sub[0], left)
		case re.Max != re.Min:
			c := *re // a copy: the caller's tree stays as parsed
			c.Max = c.Min
			return &c
		}
		return re
	case syntax.OpConcat:
		subs := slices.Clone(re.Sub)
		changed := false
		for len(subs) > 0 {
			i := 0
			if !left {
				i = len(subs) - 1
			}
			t := trimEdge(subs[i], left)
			if t.Op != syntax.OpEmptyMatch {
				changed = changed || t != subs[i]
				subs[i] = t
				break
			}
			changed = true
			subs = slices.Delete(subs, i, i+1)
		}
		if !changed {
			return re
		}
		switch len(subs) {
		case 0:
			return emptyMatch()
		case 1:
			return subs[0]
		}
		c := *re
		c.Sub = subs
		return &c
	case syntax.OpAlternate:
		subs := make([]*syntax.Regexp, len(re.Sub))
		changed := false
		for i, s := range re.Sub {
			subs[i] = trimEdge(s, left)
			if subs[i].Op == syntax.OpEmptyMatch {
				// (|B)·P matches where P does, and B·P contains a P.
				return emptyMatch()
			}
			changed = changed || subs[i] != s
		}
		if !changed {
			return re
		}
		c := *re
		c.Sub = subs
		return &c
	}
	return re
}

// ---- width and context ----

// maxWidth returns the most bytes a match of re can span, or -1 when that is
// unbounded.
func maxWidth(re *syntax.Regexp) int {
	const limit = 1 << 20
	w := 0
	switch re.Op {
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			n := runeWidth(r)
			if re.Flags&syntax.FoldCase != 0 {
				for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
					n = max(n, runeWidth(f))
				}
			}
			w += n
		}
	case syntax.OpCharClass:
		if len(re.Rune) > 0 {
			w = runeWidth(re.Rune[len(re.Rune)-1])
		}
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		w = utf8.UTFMax
	case syntax.OpCapture, syntax.OpQuest:
		w = maxWidth(re.Sub[0])
	case syntax.OpStar, syntax.OpPlus:
		if maxWidth(re.Sub[0]) != 0 {
			return -1
		}
	case syntax.OpRepeat:
		s := maxWidth(re.Sub[0])
		switch {
		case s == 0:
		case s < 0 || re.Max < 0:
			return -1
		default:
			w = s * re.Max
		}
	case syntax.OpConcat:
		for _, s := range re.Sub {
			x := maxWidth(s)
			if x < 0 {
				return -1
			}
			w += x
		}
	case syntax.OpAlternate:
		for _, s := range re.Sub {
			x := maxWidth(s)
			if x < 0 {
				return -1
			}
			w = max(w, x)
		}
	}
	if w > limit {
		return -1
	}
	return w
}

// runeWidth is the most bytes the regexp engine matches for rune r: its
// encoding, and 3 for U+FFFD (which also matches a single invalid byte).
func runeWidth(r rune) int {
	switch {
	case r < 0x80:
		return 1
	case r < 0x800:
		return 2
	case r < 0x10000:
		return 3
	}
	return 4
}

func contextOf(re *syntax.Regexp) ctxFlags {
	var f ctxFlags
	switch re.Op {
	case syntax.OpBeginText:
		f = ctxBeginText
	case syntax.OpEndText:
		f = ctxEndText
	case syntax.OpBeginLine:
		f = ctxBeginLine
	case syntax.OpEndLine:
		f = ctxEndLine
	case syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		f = ctxWord
	}
	for _, s := range re.Sub {
		f |= contextOf(s)
	}
	return f
}

// startsAnchored reports whether every match of re starts at the beginning of the text.
func startsAnchored(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpBeginText:
		return true
	case syntax.OpConcat:
		return len(re.Sub) > 0 && startsAnchored(re.Sub[0])
	case syntax.OpCapture:
		return startsAnchored(re.Sub[0])
	case syntax.OpAlternate:
		for _, s := range re.Sub {
			if !startsAnchored(s) {
				return false
			}
		}
		return len(re.Sub) > 0
	}
	return false
}

// ---- cost ----

// A wide instruction is a class of letters or of spaces, which prose is made
// of (., [^"], \S, \w, [a-z], \s): a thread waiting on it, in a loop or a
// counted repetition, survives most bytes. Narrow ones (literals, \d,
// [\p{So}], [A-Z]) let a thread through only where the text has their runes.
func wide(in *syntax.Inst) bool {
	switch in.Op {
	case syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
		return true
	case syntax.InstRune:
		n := 0
		for i := 0; i+1 < len(in.Rune) && n < 16 && in.Op == syntax.InstRune; i += 2 {
			n += int(in.Rune[i+1]-in.Rune[i]) + 1
		}
		return n >= 16 && in.MatchRune('e') || n >= 4 && in.MatchRune(' ')
	}
	return false
}

// progBuf is a pattern's compiled program (syntax.Compile) and the working memory of
// the walks over it; the memory is kept from pattern to pattern in progBufPool.
type progBuf struct {
	prog  *syntax.Prog
	seen  []bool
	stack []uint32
}

var progBufPool = sync.Pool{New: func() any { return new(progBuf) }}

// maxPooledInsts bounds the walk memory that goes back to the pool: a rare huge
// program's is left to the garbage collector rather than kept.
const maxPooledInsts = 1 << 16

// release drops the program and returns the walk memory to the pool.
func (b *progBuf) release() {
	b.prog = nil
	if cap(b.seen) > maxPooledInsts || cap(b.stack) > maxPooledInsts {
		return
	}
	progBufPool.Put(b)
}

// liveThreads counts the rune instructions reachable from the start of the
// unanchored program through wide instructions (and \B): the threads that stay alive on ordinary text,
// each costing the regexp engine a step on every byte. [\s\S]{0,1000} at the
// start of a pattern keeps 1,000; a literal first keeps about none.
// It reads b.prog and works in b's memory.
func (b *progBuf) liveThreads() int {
	prog := b.prog
	seen := slices.Grow(b.seen[:0], len(prog.Inst))[:len(prog.Inst)]
	clear(seen)
	count := 0
	stack := append(b.stack[:0], uint32(prog.Start))
	for len(stack) > 0 {
		pc := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[pc] {
			continue
		}
		seen[pc] = true
		in := &prog.Inst[pc]
		switch in.Op {
		case syntax.InstAlt, syntax.InstAltMatch:
			stack = append(stack, in.Out, in.Arg)
		case syntax.InstCapture, syntax.InstNop:
			stack = append(stack, in.Out)
		case syntax.InstEmptyWidth:
			// \A, ^, $ and \b hold at few positions: a chain behind them
			// gets a thread now and then, not on every byte.
			if syntax.EmptyOp(in.Arg)&^syntax.EmptyNoWordBoundary == 0 {
				stack = append(stack, in.Out)
			}
		case syntax.InstRune, syntax.InstRune1, syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
			count++
			if wide(in) {
				stack = append(stack, in.Out)
			}
		}
	}
	b.seen, b.stack = seen, stack
	return count
}

// restartThreads counts the threads liveThreads misses: a narrow instruction reachable
// from the start through wide ones (the `e` of `\w*e\w{20}\d`, run as `e\w{20}\d`) gets a
// thread at every occurrence of its character, and when the instructions behind it read
// that character too, a text dense in it (`eeae…`) keeps a thread on each of them. It
// returns the most such instructions one character keeps alive, over the characters of
// the narrow instructions the start reaches.
func (b *progBuf) restartThreads() int {
	prog := b.prog
	entries := b.wideWalk([]uint32{uint32(prog.Start)}, nil)
	best := 0
	for _, pc := range entries {
		in := &prog.Inst[pc]
		for _, c := range repChars {
			if !in.MatchRune(c) {
				continue
			}
			best = max(best, b.chainOn(in.Out, c))
		}
	}
	return best
}

// repChars are the characters restartThreads tries: ASCII and two others.
var repChars = func() []rune {
	var rs []rune
	for c := rune(0); c < 0x80; c++ {
		rs = append(rs, c)
	}
	return append(rs, 0xe9, 0x4e2d)
}()

// chainOn counts the rune instructions reachable from pc through instructions that
// match c (and empty ones): the threads a run of c's keeps alive behind one start.
func (b *progBuf) chainOn(pc uint32, c rune) int {
	prog := b.prog
	seen := make([]bool, len(prog.Inst))
	n := 0
	stack := []uint32{pc}
	for len(stack) > 0 {
		pc := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[pc] {
			continue
		}
		seen[pc] = true
		in := &prog.Inst[pc]
		switch in.Op {
		case syntax.InstAlt, syntax.InstAltMatch:
			stack = append(stack, in.Out, in.Arg)
		case syntax.InstCapture, syntax.InstNop, syntax.InstEmptyWidth:
			stack = append(stack, in.Out)
		case syntax.InstRune, syntax.InstRune1, syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
			if in.MatchRune(c) {
				n++
				stack = append(stack, in.Out)
			}
		}
	}
	return n
}

// wideWalk follows the program from starts through empty and wide instructions; it
// calls each (when not nil) with every rune instruction met, and returns the narrow ones.
func (b *progBuf) wideWalk(starts []uint32, each func(pc uint32)) []uint32 {
	prog := b.prog
	seen := make([]bool, len(prog.Inst))
	var narrow []uint32
	stack := slices.Clone(starts)
	for len(stack) > 0 {
		pc := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[pc] {
			continue
		}
		seen[pc] = true
		in := &prog.Inst[pc]
		switch in.Op {
		case syntax.InstAlt, syntax.InstAltMatch:
			stack = append(stack, in.Out, in.Arg)
		case syntax.InstCapture, syntax.InstNop, syntax.InstEmptyWidth:
			stack = append(stack, in.Out)
		case syntax.InstRune, syntax.InstRune1, syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
			if each != nil {
				each(pc)
			}
			if wide(in) {
				stack = append(stack, in.Out)
			} else {
				narrow = append(narrow, pc)
			}
		}
	}
	return narrow
}

// wideInsts counts the program's wide rune instructions (see wide): the instructions
// that keep a thread alive on ordinary text.
func wideInsts(prog *syntax.Prog) int {
	n := 0
	for pc := range prog.Inst {
		if wide(&prog.Inst[pc]) {
			n++
		}
	}
	return n
}

// LargestRepeat returns the counted repetition of the pattern whose
// expansion is the biggest, as written (x{n,m}), and the instructions it
// expands to; "" when the pattern has none.
func LargestRepeat(pattern string) (string, int) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return "", 0
	}
	best, bestN := "", 0
	var walk func(*syntax.Regexp)
	walk = func(re *syntax.Regexp) {
		if re.Op == syntax.OpRepeat {
			if p, err := syntax.Compile(re.Simplify()); err == nil && len(p.Inst) > bestN {
				best, bestN = re.String(), len(p.Inst)
			}
		}
		for _, s := range re.Sub {
			walk(s)
		}
	}
	walk(re)
	return best, bestN
}

func (a *Analysis) String() string {
	return fmt.Sprintf("%q: run %q, groups %d, anchor %d lits [-%d,+%d], direct %v, insts %d, live %d",
		a.pattern, a.runText, len(a.groups), len(a.anchor), a.before, a.after, a.direct, a.insts, a.live)
}

// WorstCase bounds what the pattern's form that runs can cost on any text, adversarial
// ones included. It builds the whole DFA of that form (a DFA of its own, dropped after)
// up to limit states (none when limit is 0: the estimate alone). complete says it has them all: then states is their number, and
// threads the most rune instructions one state holds, which is the most threads regexp
// keeps alive on any text. Otherwise threads is an estimate: the live threads of
// ordinary text (LiveThreads) plus those a frequent narrow character wakes at each of
// its occurrences (restartThreads).
func (a *Analysis) WorstCase(limit int) (states, threads int, complete bool) {
	if limit <= 0 {
		return 0, a.live + a.restart, false
	}
	d, err := lazydfa.Compile(a.runText)
	if err == nil {
		states, threads, complete = d.Explore(limit)
		if complete {
			return states, threads, true
		}
	}
	return states, a.live + a.restart, false
}
