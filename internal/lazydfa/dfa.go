package lazydfa

import (
	"encoding/binary"
	"math/bits"
	"regexp/syntax"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"
	"unsafe"
)

// MaxStates is how many states a DFA keeps by default before it drops them all
// and builds again from the start state.
const MaxStates = 1024

// Memory. All DFAs of the process together keep at most the memory limit in states
// (estimated: a state's struct, its table and its key), besides each DFA's four base
// states, which are part of it like its program. A DFA that needs a state past
// the limit first drops its own states; if that is not enough, the run gives up and
// the caller asks regexp. A DFA's states are released when it is dropped.
var (
	memLimit atomic.Int64
	memHeld  atomic.Int64
)

// DefaultMemoryLimit is the memory limit until SetMemoryLimit changes it.
const DefaultMemoryLimit = 64 << 20

func init() { memLimit.Store(DefaultMemoryLimit) }

// SetMemoryLimit sets how many bytes all DFAs together may keep in states, and returns
// the previous limit.
func SetMemoryLimit(bytes int64) int64 { return memLimit.Swap(bytes) }

// MemoryHeld returns the bytes all live DFAs keep in states (estimated).
func MemoryHeld() int64 { return memHeld.Load() }

// stateOverhead is a state's memory besides its table and key: the struct, its slices'
// backing arrays and the map entry, roughly.
const stateOverhead = 160

// baseStates are the states every cache starts with (start and three idle): always made.
const baseStates = 4

// What the empty-width assertions need of the character before a position.
const (
	kindStart   uint8 = iota // no character: the start of the text
	kindNewline              // '\n'
	kindWord                 // [0-9A-Za-z_]: \b and \B are ASCII-only in Go
	kindOther
	kindEnd // no character after: the end of the text (never a state's kind)
)

// repRune is a rune of each kind, as syntax.EmptyOpContext reads it.
var repRune = [...]rune{kindStart: -1, kindNewline: '\n', kindWord: 'a', kindOther: ' ', kindEnd: -1}

func kindOf(r rune) uint8 {
	switch {
	case syntax.IsWordChar(r):
		return kindWord
	case r == '\n':
		return kindNewline
	}
	return kindOther
}

// DFA is a lazily built DFA of one or more compiled regular expressions.
type DFA struct {
	prog     *syntax.Prog // the programs laid end to end
	starts   []uint32     // each pattern's start instruction
	matchOf  []int32      // per instruction: the pattern whose InstMatch it is, else -1
	anchored bool         // every pattern matches only at the start of the text
	prefix   string       // one pattern: every match starts with this literal
	class    [utf8.RuneSelf]uint8
	nclass   int
	// Non-ASCII runes are classed too (see classifyOther): bounds are the starts of the
	// intervals in which every rune instruction matches alike, reps the representative
	// rune of each interval's class. A state's non-ASCII transitions are kept by
	// representative, so a text of many distinct runes (Chinese) finds them known.
	bounds, reps []rune
	max          int // states kept before the cache is dropped

	cache atomic.Pointer[cache]
	held  *atomic.Int64 // bytes this DFA's states hold (shared with its cleanup)
	// esc says which bytes can leave the idle states (see escape); skip, whether idle
	// runs are skipped at all: only when few printable bytes escape or a prefix is known
	// (otherwise the skip stops every few bytes and costs more than it saves).
	esc  [kindOther + 1][256]bool
	skip bool

	mu sync.Mutex // guards the cache's map, the making of transitions, and the scratch below
	// scratch of step, under mu
	seen  []uint32 // generation stamp per instruction
	gen   uint32
	stack []uint32
	pcs   []uint32
	runes []uint32 // rune instructions reached by closure
	out   []int32
	key   []byte
}

type cache struct {
	states map[string]*state
	start  *state
	idle   [kindOther + 1]*state // nothing pending, by kind: where an idle skip lands
	// The hot loop's table: per state id, a row of nclass entries, each leading to the
	// plain or idle state an ASCII class leads to (see entryIdle), or 0 (not known yet,
	// or a state with other flags: the loop leaves for the slower path). One load per
	// byte. byID maps ids back to states. Both are replaced whole when they grow (under
	// DFA.mu); an id read from any table is in every byID published after it.
	table   atomic.Pointer[[]atomic.Uint32]
	byID    atomic.Pointer[[]*state]
	idleRow [kindOther + 1]int // the idle states' rows in table
}

// A table entry: (1 + the target's row offset) << 3, then entryIdle when the target is
// an idle state (the hot loop skips on from it), and the target's kind.
const (
	entryIdle uint32 = 4
	entryKind uint32 = 3
)

// state is a DFA state: the instructions pending after a character of the given kind.
type state struct {
	cache *cache // the cache the state belongs to
	id    int32  // its row in the cache's table
	pcs   []uint32
	kind  uint8
	out   []int32 // the patterns that matched on the way into this state, ascending
	// flags: flagOut (out is not empty), flagDead (nothing pending and no pattern can
	// start again: no match from here on), flagIdle (nothing pending, no match: only a
	// new start can lead anywhere).
	flags uint8
	next  []atomic.Pointer[state]
	// other holds transitions on non-ASCII runes, sorted by rune: read without a lock,
	// replaced whole under DFA.mu.
	other atomic.Pointer[[]runeEdge]
	// end holds the patterns that match at the end of the text from here, once known.
	end atomic.Pointer[[]int32]
}

const (
	flagOut uint8 = 1 << iota
	flagDead
	flagIdle
)

// runeEdge is a transition on a non-ASCII rune.
type runeEdge struct {
	r  rune
	to *state
}

// onRune returns the known transition on the non-ASCII rune r, or nil.
func (st *state) onRune(r rune) *state {
	o := st.other.Load()
	if o == nil {
		return nil
	}
	edges := *o
	lo, hi := 0, len(edges)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		switch e := edges[m]; {
		case e.r == r:
			return e.to
		case e.r < r:
			lo = m + 1
		default:
			hi = m
		}
	}
	return nil
}

// maxOther bounds the non-ASCII transitions one state caches; a step on another rune is
// made again each time, and counts against the budget (see transition).
const maxOther = 64

// Compile compiles one pattern as regexp.Compile does (Perl syntax, simplified).
func Compile(pattern string) (*DFA, error) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil, err
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return nil, err
	}
	return New(prog), nil
}

// New makes the DFA of the programs; pattern i of its outputs is progs[i]. The
// programs must not be changed afterwards.
func New(progs ...*syntax.Prog) *DFA {
	d := &DFA{prog: &syntax.Prog{}, anchored: len(progs) > 0, max: MaxStates}
	offs := make([]uint32, len(progs))
	for i, p := range progs {
		off := uint32(len(d.prog.Inst))
		offs[i] = off
		for _, in := range p.Inst {
			in.Out += off
			if in.Op == syntax.InstAlt || in.Op == syntax.InstAltMatch {
				in.Arg += off
			}
			in.Rune = slices.Clip(in.Rune)
			d.prog.Inst = append(d.prog.Inst, in)
		}
		d.starts = append(d.starts, off+uint32(p.Start))
		d.anchored = d.anchored && p.StartCond()&syntax.EmptyBeginText != 0
	}
	d.matchOf = make([]int32, len(d.prog.Inst))
	for pc := range d.matchOf {
		d.matchOf[pc] = -1
	}
	for i, p := range progs {
		for pc, in := range p.Inst {
			if in.Op == syntax.InstMatch {
				d.matchOf[offs[i]+uint32(pc)] = int32(i)
			}
		}
	}
	if len(progs) == 1 {
		d.prefix, _ = progs[0].Prefix()
	}
	d.classify()
	d.classifyOther()
	d.held = new(atomic.Int64)
	runtime.AddCleanup(d, func(held *atomic.Int64) { memHeld.Add(-held.Load()) }, d.held)
	d.seen = make([]uint32, len(d.prog.Inst))
	d.escape()
	d.mu.Lock()
	d.reset()
	d.mu.Unlock()
	return d
}

// SetMaxStates sets how many states the DFA keeps before dropping them (at least 16).
// Call it before the DFA is used.
func (d *DFA) SetMaxStates(n int) { d.max = max(n, 16) }

// classify puts ASCII bytes into classes: two bytes share one when every rune
// instruction matches both or neither and they are of one kind.
func (d *DFA) classify() {
	var runeInsts []*syntax.Inst
	for i := range d.prog.Inst {
		switch in := &d.prog.Inst[i]; in.Op {
		case syntax.InstRune, syntax.InstRune1:
			runeInsts = append(runeInsts, in)
		}
	}
	ids := map[string]uint8{}
	sig := make([]byte, 1+(len(runeInsts)+7)/8)
	for b := range utf8.RuneSelf {
		clear(sig)
		sig[0] = kindOf(rune(b))
		for k, in := range runeInsts {
			if MatchRune(in, rune(b)) {
				sig[1+k/8] |= 1 << (k % 8)
			}
		}
		id, ok := ids[string(sig)]
		if !ok {
			id = uint8(len(ids))
			ids[string(sig)] = id
		}
		d.class[b] = id
	}
	d.nclass = len(ids)
}

// classifyOther splits the non-ASCII runes into intervals on whose runes every rune
// instruction answers alike, and gives each interval the representative of its class
// (the first rune of the first interval with the same answers). Every non-ASCII rune
// is of one kind (syntax.IsWordChar is ASCII), so a rune and its representative step
// every state alike.
func (d *DFA) classifyOther() {
	points := []rune{utf8.RuneSelf}
	add := func(lo, hi rune) { // [lo, hi]
		if hi >= utf8.RuneSelf {
			points = append(points, max(lo, utf8.RuneSelf), hi+1)
		}
	}
	var runeInsts []*syntax.Inst
	for i := range d.prog.Inst {
		in := &d.prog.Inst[i]
		switch in.Op {
		case syntax.InstRune1:
			add(in.Rune[0], in.Rune[0])
		case syntax.InstRune:
			if len(in.Rune) == 1 {
				r0 := in.Rune[0]
				add(r0, r0)
				if syntax.Flags(in.Arg)&syntax.FoldCase != 0 {
					for f := unicode.SimpleFold(r0); f != r0; f = unicode.SimpleFold(f) {
						add(f, f)
					}
				}
			} else {
				for k := 0; k+1 < len(in.Rune); k += 2 {
					add(in.Rune[k], in.Rune[k+1])
				}
			}
		default:
			continue
		}
		runeInsts = append(runeInsts, in)
	}
	slices.Sort(points)
	points = slices.Compact(points)
	if points[len(points)-1] > unicode.MaxRune {
		points = points[:len(points)-1]
	}
	d.bounds, d.reps = points, slices.Clone(points)
	if len(points)*len(runeInsts) > maxClassWork {
		return // each interval its own class: still far fewer than the runes
	}
	first := map[string]rune{}
	sig := make([]byte, (len(runeInsts)+7)/8)
	for i, p := range points {
		clear(sig)
		for k, in := range runeInsts {
			if MatchRune(in, p) {
				sig[k/8] |= 1 << (k % 8)
			}
		}
		if r, ok := first[string(sig)]; ok {
			d.reps[i] = r
		} else {
			first[string(sig)] = p
		}
	}
}

// maxClassWork bounds the instruction tests classifyOther makes to merge intervals.
const maxClassWork = 1 << 20

// rep returns the representative of the non-ASCII rune r (see classifyOther).
func (d *DFA) rep(r rune) rune {
	i, found := slices.BinarySearch(d.bounds, r)
	if !found {
		i--
	}
	if i < 0 {
		return r
	}
	return d.reps[i]
}

// MatchRune reports whether the rune instruction in consumes r (false for any other
// instruction).
func MatchRune(in *syntax.Inst, r rune) bool {
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

// reset drops every state; under mu.
func (d *DFA) reset() {
	memHeld.Add(-d.held.Swap(0))
	c := &cache{states: map[string]*state{}}
	c.start = d.intern(c, kindStart, nil, nil)
	for _, k := range []uint8{kindNewline, kindWord, kindOther} {
		c.idle[k] = d.intern(c, k, nil, nil)
		c.idleRow[k] = int(c.idle[k].id) * d.nclass
	}
	d.cache.Store(c) // whole before readers see it
}

// step computes, under mu, what follows st on r (kindEnd: the end of the text): the
// instructions pending after r in d.pcs and the patterns that matched before it in
// d.out, both sorted and without repeats.
func (d *DFA) step(st *state, r rune, rkind uint8) {
	d.closure(st, rkind)
	d.pcs = d.pcs[:0]
	if rkind != kindEnd {
		for _, pc := range d.runes {
			if in := &d.prog.Inst[pc]; MatchRune(in, r) {
				d.pcs = append(d.pcs, in.Out)
			}
		}
	}
	slices.Sort(d.pcs)
	d.pcs = slices.Compact(d.pcs)
}

// closure follows, under mu, the empty transitions from st's pending instructions (and
// the starts) under the assertions that hold between st's character and one of kind
// rkind: the rune instructions reached go to d.runes, the patterns that matched to
// d.out (sorted, without repeats). It depends on the kind of the next rune, not on the
// rune: escape reads it once per kind.
func (d *DFA) closure(st *state, rkind uint8) {
	flags := syntax.EmptyOpContext(repRune[st.kind], repRune[rkind])
	d.gen++
	if d.gen == 0 {
		clear(d.seen)
		d.gen = 1
	}
	d.runes, d.out = d.runes[:0], d.out[:0]
	stack := append(d.stack[:0], st.pcs...)
	if !d.anchored || st.kind == kindStart {
		stack = append(stack, d.starts...)
	}
	for len(stack) > 0 {
		pc := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if d.seen[pc] == d.gen {
			continue
		}
		d.seen[pc] = d.gen
		in := &d.prog.Inst[pc]
		switch in.Op {
		case syntax.InstAlt, syntax.InstAltMatch:
			stack = append(stack, in.Arg, in.Out)
		case syntax.InstNop, syntax.InstCapture:
			stack = append(stack, in.Out)
		case syntax.InstEmptyWidth:
			if syntax.EmptyOp(in.Arg)&^flags == 0 {
				stack = append(stack, in.Out)
			}
		case syntax.InstMatch:
			d.out = append(d.out, d.matchOf[pc])
		case syntax.InstRune, syntax.InstRune1, syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
			d.runes = append(d.runes, pc)
		}
	}
	d.stack = stack
	slices.Sort(d.out)
	d.out = slices.Compact(d.out)
}

// intern returns the state of (kind, pcs, out) in c, making it if new; under mu. It
// returns nil when a new state would take the DFAs past their memory limit even after
// this DFA dropped its own states.
func (d *DFA) intern(c *cache, kind uint8, pcs []uint32, out []int32) *state {
	k := append(d.key[:0], kind)
	k = binary.LittleEndian.AppendUint32(k, uint32(len(out)))
	for _, o := range out {
		k = binary.LittleEndian.AppendUint32(k, uint32(o))
	}
	for _, pc := range pcs {
		k = binary.LittleEndian.AppendUint32(k, pc)
	}
	d.key = k
	if st, ok := c.states[string(k)]; ok {
		return st
	}
	if len(c.states) >= baseStates { // the base states are the DFA's own, like its program
		size := int64(stateOverhead + 12*d.nclass + 2*len(k))
		if memHeld.Load()+size > memLimit.Load() {
			return nil
		}
		d.held.Add(size)
		memHeld.Add(size)
	}
	st := &state{
		pcs:  slices.Clone(pcs),
		kind: kind,
		next: make([]atomic.Pointer[state], d.nclass),
	}
	if len(out) > 0 {
		st.out = slices.Clone(out)
	}
	switch {
	case len(out) > 0:
		st.flags = flagOut
	case len(pcs) == 0 && d.anchored && kind != kindStart:
		st.flags = flagDead
	case len(pcs) == 0 && kind != kindStart && d.skip:
		st.flags = flagIdle
	}
	c.states[string(k)] = st
	d.index(c, st)
	return st
}

// index gives st the next id of c, growing c's table and byID; under mu.
func (d *DFA) index(c *cache, st *state) {
	st.cache = c
	var ids []*state
	if p := c.byID.Load(); p != nil {
		ids = *p
	}
	st.id = int32(len(ids))
	ids = append(ids, st) // past the length readers know: no reader looks there
	c.byID.Store(&ids)
	var tbl []atomic.Uint32
	if p := c.table.Load(); p != nil {
		tbl = *p
	}
	if need := len(ids) * d.nclass; need > len(tbl) {
		grown := make([]atomic.Uint32, max(2*len(tbl), 8*d.nclass, need))
		for i := range tbl {
			grown[i].Store(tbl[i].Load())
		}
		c.table.Store(&grown)
	}
}

// transition returns the state after st on r, making it under mu if it is not known
// yet; built says whether a new state was made, or a step that could not be cached (a
// non-ASCII rune past maxOther): both count against the budget. It returns nil, and
// built true, when the memory limit leaves no room for the state: the caller gives up
// as if over budget.
func (d *DFA) transition(st *state, r rune) (nx *state, built bool) {
	if r >= utf8.RuneSelf {
		r = d.rep(r)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if r < utf8.RuneSelf {
		if nx := st.next[d.class[r]].Load(); nx != nil {
			return nx, false
		}
	} else if nx := st.onRune(r); nx != nil {
		return nx, false
	}
	c := d.cache.Load()
	if len(c.states) >= d.max {
		d.reset()
		c = d.cache.Load()
	}
	n := len(c.states)
	d.step(st, r, kindOf(r))
	if nx = d.intern(c, kindOf(r), d.pcs, d.out); nx == nil {
		// Past the memory limit: drop this DFA's own states and try once more (step's
		// results do not depend on the cache).
		d.reset()
		c = d.cache.Load()
		n = len(c.states)
		if nx = d.intern(c, kindOf(r), d.pcs, d.out); nx == nil {
			return nil, true
		}
	}
	if r < utf8.RuneSelf {
		st.next[d.class[r]].Store(nx)
		if st.cache == nx.cache && (nx.flags == 0 || nx.flags == flagIdle && d.prefix == "") {
			e := uint32(int(nx.id)*d.nclass+1) << 3
			if nx.flags == flagIdle {
				e |= entryIdle | uint32(nx.kind)
			}
			(*c.table.Load())[int(st.id)*d.nclass+int(d.class[r])].Store(e)
		}
	} else if o := st.other.Load(); o == nil || len(*o) < maxOther {
		var edges []runeEdge
		if o != nil {
			edges = *o
		}
		k, _ := slices.BinarySearchFunc(edges, r, func(e runeEdge, r rune) int { return int(e.r - r) })
		edges = slices.Insert(slices.Clone(edges), k, runeEdge{r, nx})
		st.other.Store(&edges)
	} else {
		// The state knows maxOther runes already: this step is made again each time the
		// rune comes, under the lock, and counts against the budget as a new state does
		// (a text of many distinct non-ASCII runes, such as Chinese, then goes to regexp).
		return nx, true
	}
	return nx, len(c.states) > n
}

// endOut returns the patterns that match at the end of the text when st is the state
// there.
func (d *DFA) endOut(st *state) []int32 {
	if p := st.end.Load(); p != nil {
		return *p
	}
	d.mu.Lock()
	d.step(st, -1, kindEnd)
	out := slices.Clone(d.out)
	d.mu.Unlock()
	st.end.Store(&out)
	return out
}

// budget is how many new states a run over n bytes may make before it gives up. A state
// costs about ten nanoseconds per instruction it follows, and regexp about forty per
// byte at least: past 4n/insts states (after 64 to warm up) the DFA has spent what
// regexp would, and regexp takes over. A match therefore never costs much more than
// regexp's own.
func (d *DFA) budget(n int) int { return 64 + 4*n/max(len(d.prog.Inst), 64) }

// maxEscapeRate is how often, per byte of English prose, an idle run may be
// expected to stop for idle runs to be worth skipping (past it the skip loop stops every
// few bytes and costs more than the table steps it saves).
const maxEscapeRate = 0.2

// byteRate is a rough frequency of each ASCII byte in English prose and markdown:
// letters by their English frequency, a space every sixth byte, the rest rare.
func byteRate(b byte) float64 {
	const letters = "etaoinshrdlcumwfgypbvkjxqz"
	switch {
	case b == ' ':
		return 0.16
	case b >= 'a' && b <= 'z':
		return 0.13 * 0.8 / float64(1+strings.IndexByte(letters, b)) * 2
	case b >= 'A' && b <= 'Z':
		return 0.03 / 26
	case b == '\n' || b == '.' || b == ',':
		return 0.01
	}
	return 0.002
}

// escape fills d.esc: for each kind of the previous character and each byte, whether
// the byte can leave the idle state of that kind (a `\bcan` rule leaves idle on a c
// after a space, not after a letter). The bytes an idle run skips over are those that
// cannot; each takes idle to idle of its own kind. Bytes from 0x80 up always escape:
// non-ASCII runes take the slow path. It sets d.skip.
func (d *DFA) escape() {
	for _, k := range []uint8{kindNewline, kindWord, kindOther} {
		idle := &state{kind: k}
		for b := utf8.RuneSelf; b < 256; b++ {
			d.esc[k][b] = true
		}
		for _, bk := range []uint8{kindNewline, kindWord, kindOther} {
			d.closure(idle, bk) // the same for every byte of kind bk
			for b := range rune(utf8.RuneSelf) {
				if kindOf(b) != bk {
					continue
				}
				esc := len(d.out) > 0
				for _, pc := range d.runes {
					if esc {
						break
					}
					esc = MatchRune(&d.prog.Inst[pc], b)
				}
				d.esc[k][b] = esc
			}
		}
	}
	// Most bytes of prose follow a letter; the rest, mostly a space.
	rate := 0.0
	for b := range byte(utf8.RuneSelf) {
		if d.esc[kindWord][b] {
			rate += 0.8 * byteRate(b)
		}
		if d.esc[kindOther][b] {
			rate += 0.2 * byteRate(b)
		}
	}
	d.skip = d.prefix != "" || rate <= maxEscapeRate
}

// kindOfBytes is kindOf for ASCII bytes; a byte from 0x80 up is never a word byte nor a
// newline, whatever rune it belongs to.
var kindOfBytes = func() (t [256]uint8) {
	for b := range 256 {
		t[b] = kindOf(rune(b))
		if b >= utf8.RuneSelf {
			t[b] = kindOther
		}
	}
	return t
}()

// run steps the DFA from st over text until a state with matches (status found), a
// dead state (status dead), the end of the text (status more) or the budget (status
// gaveUp): built counts the new states made, and limit is what it may reach. It
// returns the state reached and the bytes read. A rune cut off at the end of text is
// read as regexp would read it at the end of a text (U+FFFD per byte): callers that
// stream keep it back.
func (d *DFA) run(st *state, text string, built *int, limit int) (*state, int, status) {
	idle := &d.cache.Load().idle
	class := &d.class
	esc := &d.esc
	i := 0
	for i < len(text) {
		if st.flags&flagIdle != 0 {
			// Nothing pending: skip to where a match can start.
			j := i
			if d.prefix != "" {
				if k := strings.Index(text[i:], d.prefix); k >= 0 {
					j += k
				} else {
					// The text may end inside an occurrence that the next piece of a
					// stream completes: step over its last bytes, from a rune start.
					j = max(i, len(text)-len(d.prefix)+1)
					for j > i && j < len(text) && !utf8.RuneStart(text[j]) {
						j--
					}
				}
				if j > i {
					st, i = idle[kindOfBytes[text[j-1]]], j
				}
			} else {
				k := st.kind // of the character before text[j]
				for j < len(text) && !esc[k][text[j]] {
					k = kindOfBytes[text[j]]
					j++
				}
				if j > i {
					st, i = idle[k], j
				}
			}
			if i == len(text) {
				break
			}
		}
		// The hot loop: known transitions on ASCII bytes, one table load per byte, and
		// through idle states the skip over bytes that cannot leave them.
		c := st.cache
		tbl, row := *c.table.Load(), int(st.id)*d.nclass
		j := i
		for j < len(text) {
			b := text[j]
			if b >= utf8.RuneSelf {
				break
			}
			e := tbl[row+int(class[b])].Load()
			if e == 0 {
				break
			}
			row = int(e>>3) - 1
			j++
			if e&entryIdle != 0 {
				k := uint8(e & entryKind) // of the character before text[j]
				for j < len(text) && !esc[k][text[j]] {
					k = kindOfBytes[text[j]]
					j++
				}
				row = c.idleRow[k]
			}
		}
		if j > i {
			st, i = (*c.byID.Load())[row/d.nclass], j
		}
		if i == len(text) {
			break
		}
		var nx *state
		if b := text[i]; b < utf8.RuneSelf {
			nx = st.next[d.class[b]].Load()
			i++
			if nx == nil {
				var made bool
				if nx, made = d.transition(st, rune(b)); made {
					if *built++; *built > limit || nx == nil {
						return st, i, gaveUp
					}
				}
			}
		} else {
			r, size := utf8.DecodeRuneInString(text[i:])
			i += size
			r = d.rep(r)
			if nx = st.onRune(r); nx == nil {
				var made bool
				if nx, made = d.transition(st, r); made {
					if *built++; *built > limit || nx == nil {
						return st, i, gaveUp
					}
				}
			}
		}
		st = nx
		if st.flags&(flagOut|flagDead) != 0 {
			if st.flags&flagOut != 0 {
				return st, i, found
			}
			return st, i, dead
		}
	}
	return st, i, more
}

type status uint8

const (
	more status = iota
	found
	dead
	gaveUp
)

// Match reports whether any of the DFA's patterns matches text, as
// regexp.MatchString would. ok is false when the DFA gave up (it would have made too
// many new states for the length of the text): then matched means nothing and the
// caller must ask regexp.
func (d *DFA) Match(text string) (matched, ok bool) {
	matched, _, ok = d.MatchRead(text)
	return matched, ok
}

// MatchRead is Match, also saying how many bytes it read: it stops at the first match,
// and, for patterns anchored at the start, as soon as no match is possible any more.
func (d *DFA) MatchRead(text string) (matched bool, read int, ok bool) {
	built := 0
	st, i, how := d.run(d.cache.Load().start, text, &built, d.budget(len(text)))
	switch how {
	case found:
		return true, i, true
	case dead:
		return false, i, true
	case gaveUp:
		return false, i, false
	}
	return len(d.endOut(st)) > 0, i, true
}

// Which appends to dst the patterns (their indices in New's programs) that match
// text, ascending and each once, as regexp.MatchString would report each of them, and
// returns dst with complete true. It reads the whole text unless no pattern can match
// any more, or all have matched.
//
// It may stop before, with complete false: then each pattern in dst matches, and of
// the others it says nothing. It stops once every pattern in want has matched (bit k
// for pattern k; patterns from 64 up cannot be waited for), and at its maxStops-th
// match: a pattern that matches again and again costs a slower step at each match.
//
// ok is false when the DFA gave up (see Match): then dst means nothing and the caller
// must ask regexp. The pass may stand for several runs of the patterns alone (a caller
// that would otherwise run runs of them over text): its budget of new states is then
// that of a run over runs times the text, which allows as much work as those runs.
func (d *DFA) Which(text string, dst []int32, want uint64, maxStops, runs int) (_ []int32, complete, ok bool) {
	n, all := len(dst), len(d.starts)
	built, limit := 0, d.budget(len(text)*max(runs, 1))
	st, i := d.cache.Load().start, 0
	var seen uint64
	for stops := 1; ; stops++ {
		nx, read, how := d.run(st, text[i:], &built, limit)
		st, i = nx, i+read
		switch how {
		case found:
			if all <= 64 {
				// Each pattern once, by the mask: no sorting until the end.
				for _, k := range st.out {
					if seen&(1<<k) == 0 {
						seen |= 1 << k
						dst = append(dst, k)
					}
				}
				if bits.OnesCount64(seen) == all {
					return sortedOnce(dst, n), true, true
				}
			} else {
				dst = sortedOnce(append(dst, st.out...), n)
				if len(dst)-n == all {
					return dst, true, true
				}
				for _, k := range st.out {
					if k < 64 {
						seen |= 1 << k
					}
				}
			}
			if want != 0 && seen&want == want || stops >= maxStops {
				return sortedOnce(dst, n), false, true
			}
			if i < len(text) {
				continue
			}
			// The text ends just after the match: what matches at its end is seen below.
		case dead:
			return dst, true, true
		case gaveUp:
			return dst[:n], false, false
		}
		return sortedOnce(append(dst, d.endOut(st)...), n), true, true
	}
}

// sortedOnce sorts dst[n:] and drops repeats.
func sortedOnce(dst []int32, n int) []int32 {
	if len(dst)-n > 1 {
		slices.Sort(dst[n:])
		dst = append(dst[:n], slices.Compact(dst[n:])...)
	}
	return dst
}

// Cursor is a position in a stream fed to a DFA piece by piece (Feed, End). Its zero
// value is not usable: get one from Start.
type Cursor struct {
	st      *state
	partial [utf8.UTFMax]byte // the start of a rune cut off at the end of the last piece
	np      int
	built   int // new states this stream made (see budget)
	read    int
}

// Start returns a cursor at the start of a stream.
func (d *DFA) Start() Cursor {
	return Cursor{st: d.cache.Load().start}
}

// Read returns how many bytes the cursor has consumed (a rune cut at a piece's end is
// consumed when it is whole).
func (c *Cursor) Read() int { return c.read }

// Feed runs the stream on over p. It stops just after the first character at which some
// patterns matched, and returns them (ascending, owned by the DFA: do not change them)
// with the part of p not read yet; feed that again to go on. A match seen there is a
// match in every text that starts with what was fed: the assertions at its end have
// seen the character after it. out is nil when p was read to its end without a match.
// ok is false when the DFA gave up (see Match): the cursor is then unusable.
func (d *DFA) Feed(c *Cursor, p []byte) (out []int32, rest []byte, ok bool) {
	if c.st.flags&flagDead != 0 {
		c.read += len(p)
		return nil, nil, true
	}
	for c.np > 0 && len(p) > 0 {
		// Complete the rune cut off at the end of the last piece.
		var buf [2 * utf8.UTFMax]byte
		n := copy(buf[:], c.partial[:c.np])
		n += copy(buf[n:], p)
		if !utf8.FullRune(buf[:n]) {
			copy(c.partial[c.np:], p) // fits: the rune is still incomplete
			c.np += len(p)
			return nil, nil, true
		}
		r, size := utf8.DecodeRune(buf[:n])
		if size >= c.np {
			p = p[size-c.np:]
			c.np = 0
		} else { // an invalid first byte: it alone is consumed
			copy(c.partial[:], c.partial[size:c.np])
			c.np -= size
		}
		c.read += size
		nx, made := d.transition(c.st, r)
		if made && c.overBudget(d, nx) {
			return nil, nil, false
		}
		c.st = nx
		if nx.flags&flagOut != 0 {
			return nx.out, p, true
		}
	}
	if c.np > 0 {
		return nil, nil, true // p is used up, the rune is still incomplete
	}
	// Keep back a rune cut off at the end.
	whole := len(p)
	for k := len(p) - 1; k >= 0 && k >= len(p)-utf8.UTFMax; k-- {
		if utf8.RuneStart(p[k]) {
			if !utf8.FullRune(p[k:]) {
				whole = k
			}
			break
		}
	}
	st, i, how := d.run(c.st, unsafe.String(unsafe.SliceData(p), whole), &c.built, d.budget(c.read+whole))
	c.st, c.read = st, c.read+i
	switch how {
	case found:
		return st.out, p[i:], true
	case gaveUp:
		return nil, nil, false
	case dead: // nothing can match any more: the rest is read as is
		c.read += len(p) - i
		return nil, nil, true
	}
	c.np = copy(c.partial[:], p[whole:])
	return nil, nil, true
}

// End ends the stream and returns the patterns seen matching at its end: together with
// every out Feed returned, they are the patterns that match the whole stream.
func (d *DFA) End(c *Cursor) (out []int32, ok bool) {
	// A rune still cut off never completed: regexp reads each of its bytes as U+FFFD.
	for c.np > 0 {
		c.np--
		c.read++
		nx, made := d.transition(c.st, utf8.RuneError)
		if made && c.overBudget(d, nx) {
			return nil, false
		}
		c.st = nx
		if nx.out != nil {
			out = append(out, nx.out...)
		}
	}
	end := d.endOut(c.st)
	if out == nil {
		return end, true
	}
	out = append(out, end...)
	slices.Sort(out)
	return slices.Compact(out), true
}

// overBudget counts a new state and reports whether the stream has made too many for
// what it read (see budget).
func (c *Cursor) overBudget(d *DFA, nx *state) bool {
	c.built++
	return c.built > d.budget(c.read) || nx == nil
}

// Pending reports whether a match could still end later in the stream: some thread is
// alive after what was fed (or a rune is cut off at the end). A cursor that is not pending
// has seen every match it will ever see.
func (c *Cursor) Pending() bool { return c.np > 0 || len(c.st.pcs) > 0 }

// Dead reports whether no match can start or go on any more: the patterns are anchored at
// the start of the text and no thread is alive.
func (c *Cursor) Dead() bool { return c.st.flags&flagDead != 0 }

// MatchesEvery reports whether every text that ends with prefix followed by any run of
// the runes in tail (none included) has a match, as far as the DFA can tell from a fresh
// start: callers use it for patterns without assertions, where a fresh start stands for
// any text before prefix. It explores the states the tail runes reach, at most limit of
// them; past that it answers false.
func (d *DFA) MatchesEvery(prefix string, tail []rune, limit int) bool {
	built := 0
	st, _, how := d.run(d.cache.Load().start, prefix, &built, 1<<30)
	switch how {
	case found:
		return true
	case dead, gaveUp:
		return false
	}
	seen := map[*state]bool{st: true}
	queue := []*state{st}
	for len(queue) > 0 {
		st := queue[0]
		queue = queue[1:]
		if len(d.endOut(st)) == 0 {
			return false
		}
		for _, r := range tail {
			nx, _ := d.transition(st, r)
			if nx == nil || len(seen) > limit {
				return false
			}
			if nx.flags&flagOut != 0 || seen[nx] {
				continue // matched on the way: every longer text matches too
			}
			seen[nx] = true
			queue = append(queue, nx)
		}
	}
	return true
}

// Explore builds the whole DFA, breadth first from the start, on one character of each
// class (ASCII classes and non-ASCII ones, see classifyOther), and stops past limit
// states. It returns how many states it found and whether that is all of them
// (complete); when complete, widest is the most rune instructions one state holds: the
// most threads regexp keeps alive on any text. A DFA of n states never builds more than
// n, so a run gives up only when n is past its budget (64 states and more; see budget).
// Call it on a DFA of its own (the states it builds stay in the cache).
func (d *DFA) Explore(limit int) (states, widest int, complete bool) {
	limit = min(limit, d.max-1)
	var chars []rune
	seenClass := make([]bool, d.nclass)
	for b := range rune(utf8.RuneSelf) {
		if c := d.class[b]; !seenClass[c] {
			seenClass[c] = true
			chars = append(chars, b)
		}
	}
	reps := slices.Clone(d.reps)
	slices.Sort(reps)
	chars = append(chars, slices.Compact(reps)...)
	start := d.cache.Load().start
	seen := map[*state]bool{start: true}
	queue := []*state{start}
	for len(queue) > 0 {
		st := queue[0]
		queue = queue[1:]
		widest = max(widest, d.runeInsts(st))
		for _, r := range chars {
			nx, _ := d.transition(st, r)
			if nx == nil || nx.cache != start.cache {
				return len(seen), widest, false // the memory limit, or a reset
			}
			if !seen[nx] {
				if len(seen) >= limit {
					return len(seen), widest, false
				}
				seen[nx] = true
				queue = append(queue, nx)
			}
		}
	}
	return len(seen), widest, true
}

// runeInsts counts the rune instructions st's closure reaches: the threads regexp would
// step on the next character.
func (d *DFA) runeInsts(st *state) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := 0
	for _, k := range []uint8{kindNewline, kindWord, kindOther} {
		d.closure(st, k)
		n = max(n, len(d.runes))
	}
	return n
}
