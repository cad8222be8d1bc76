package multimatch

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/streamrules/streamrules/internal/lazydfa"
)

// Analysis is what New learns about one pattern: the form that runs (its lazy DFA
// and regexp are made when it is first verified), the literals a match requires, and where around a literal a match can lie. It
// depends on the pattern's text alone, so a caller that rebuilds sets often
// (a rule engine on every edit) can keep analyses by pattern and pass them to
// Build: one edited pattern then costs one analysis plus the automaton.
// An Analysis is immutable, but for Own (which only tells its DFA to keep what it builds),
// and may be shared by any number of sets.
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
	width      int // the most bytes a match of runText spans; -1: unbounded (see Span)
	// fromBody, when set, is the pattern preceded by (?s:.){0,k}; from0 (\A and
	// it) and from1 (\A, one character, and it) are run anchored just before
	// each anchor occurrence when only before is bounded (see verifyFrom).
	fromBody     string
	fromOnce     sync.Once
	from0, from1 *regexp.Regexp
	// The lazy DFAs of run, from0 and from1 (see matches), made on first use.
	dfaOnce         sync.Once
	dfa, dfa0, dfa1 *lazydfa.DFA
	dfaMade         atomic.Bool  // dfa is set
	own             atomic.Int64 // states of the DFA when owned (see Own); 0: not owned
	sim             atomic.Bool  // the DFA is owned simulated (Worst.Simulated); stored before own
	direct          bool         // run on every text without the prefilter (anchored at the start)
	prefix          bool         // the regexp starts with a case-sensitive literal (regexp skips ahead with strings.Index)
	insts           int          // instructions of the compiled program of run
	live            int          // threads the program keeps alive on ordinary text (see liveThreads)
	restart         int          // threads woken behind a frequent narrow character (see restartThreads)
	wide            int          // wide instructions (see WideInsts)
	rarePrefix      bool         // every match starts with a rare literal (see RarePrefix)
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
	a.width = maxWidth(qs)
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
	// An owned pattern's anchored forms are other DFAs, not explored: where they gave up,
	// regexp would run, and it may cost more than the bound the pattern was let in with.
	return a.dfa0 != nil && !a.owned()
}

// lazy returns the DFA of run, making the DFAs on first use (most patterns are never
// candidates). Nil when it does not compile, which cannot happen: run compiled.
func (a *Analysis) lazy() *lazydfa.DFA {
	a.dfaOnce.Do(func() {
		a.dfa, _ = lazydfa.Compile(a.runText)
		if a.dfa != nil {
			// Made, then owned: Own stores own before it reads dfaMade, so one of the two
			// sees the other.
			a.dfaMade.Store(true)
			if n := a.own.Load(); n > 0 {
				if a.sim.Load() {
					a.dfa.Simulate()
				}
				a.dfa.Own(int(n))
			}
		}
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

func (a *Analysis) String() string {
	return fmt.Sprintf("%q: run %q, groups %d, anchor %d lits [-%d,+%d], direct %v, insts %d, live %d",
		a.pattern, a.runText, len(a.groups), len(a.anchor), a.before, a.after, a.direct, a.insts, a.live)
}
