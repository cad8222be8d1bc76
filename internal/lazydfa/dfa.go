package lazydfa

import (
	"encoding/binary"
	"regexp/syntax"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// MaxStates is how many states a DFA keeps by default before it drops them all
// and builds again from the start state.
const MaxStates = 1024

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
	max      int // states kept before the cache is dropped

	cache atomic.Pointer[cache]

	mu sync.Mutex // guards the cache's map, states' other maps, and the scratch below
	// scratch of step, under mu
	seen  []uint32 // generation stamp per instruction
	gen   uint32
	stack []uint32
	pcs   []uint32
	out   []int32
	key   []byte
}

type cache struct {
	states map[string]*state
	start  *state
	idle   [kindOther + 1]*state // nothing pending, by kind: where a prefix skip lands
}

// state is a DFA state: the instructions pending after a character of the given kind.
type state struct {
	pcs  []uint32
	kind uint8
	out  []int32 // the patterns that matched on the way into this state, ascending
	dead bool    // nothing pending and no pattern can start again: no match from here on
	next []atomic.Pointer[state]
	// other holds transitions on non-ASCII runes, under DFA.mu.
	other map[rune]*state
	// end holds the patterns that match at the end of the text from here, once known.
	end atomic.Pointer[[]int32]
}

// maxOther bounds the non-ASCII transitions one state caches.
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
	d.seen = make([]uint32, len(d.prog.Inst))
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
			if matchRune(in, rune(b)) {
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

func matchRune(in *syntax.Inst, r rune) bool {
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
	c := &cache{states: map[string]*state{}}
	c.start = d.intern(c, kindStart, nil, nil)
	d.cache.Store(c) // whole before readers see it
}

// step computes, under mu, what follows st on r (kindEnd: the end of the text): the
// instructions pending after r in d.pcs and the patterns that matched before it in
// d.out, both sorted and without repeats.
func (d *DFA) step(st *state, r rune, rkind uint8) {
	flags := syntax.EmptyOpContext(repRune[st.kind], repRune[rkind])
	d.gen++
	if d.gen == 0 {
		clear(d.seen)
		d.gen = 1
	}
	d.pcs, d.out = d.pcs[:0], d.out[:0]
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
			if rkind != kindEnd && matchRune(in, r) {
				d.pcs = append(d.pcs, in.Out)
			}
		}
	}
	d.stack = stack
	slices.Sort(d.pcs)
	d.pcs = slices.Compact(d.pcs)
	slices.Sort(d.out)
	d.out = slices.Compact(d.out)
}

// intern returns the state of (kind, pcs, out) in c, making it if new; under mu.
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
	st := &state{
		pcs:  slices.Clone(pcs),
		kind: kind,
		next: make([]atomic.Pointer[state], d.nclass),
	}
	if len(out) > 0 {
		st.out = slices.Clone(out)
	}
	st.dead = len(pcs) == 0 && d.anchored && kind != kindStart
	c.states[string(k)] = st
	return st
}

// transition returns the state after st on r, making it under mu if it is not known
// yet; built says whether a new state was made.
func (d *DFA) transition(st *state, r rune) (nx *state, built bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if r < utf8.RuneSelf {
		if nx := st.next[d.class[r]].Load(); nx != nil {
			return nx, false
		}
	} else if nx := st.other[r]; nx != nil {
		return nx, false
	}
	c := d.cache.Load()
	if len(c.states) >= d.max {
		d.reset()
		c = d.cache.Load()
	}
	n := len(c.states)
	d.step(st, r, kindOf(r))
	nx = d.intern(c, kindOf(r), d.pcs, d.out)
	if r < utf8.RuneSelf {
		st.next[d.class[r]].Store(nx)
	} else if len(st.other) < maxOther {
		if st.other == nil {
			st.other = map[rune]*state{}
		}
		st.other[r] = nx
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

// idle returns the state with nothing pending after a character of the kind; under mu.
func (d *DFA) idle(kind uint8) *state {
	c := d.cache.Load()
	if st := c.idle[kind]; st != nil {
		return st
	}
	st := d.intern(c, kind, nil, nil)
	c.idle[kind] = st
	return st
}

// budget is how many new states a run over n bytes may make before it gives up: a
// state costs about as much as regexp spends on a dozen bytes, so past one per 16
// bytes the DFA is no longer the cheaper engine.
func budget(n int) int { return 64 + n/16 }

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
	st := d.cache.Load().start
	left := budget(len(text))
	i := 0
	for i < len(text) {
		if d.prefix != "" && len(st.pcs) == 0 && st.kind != kindStart {
			// Nothing pending: a match can only start at the next occurrence of the prefix.
			j := strings.Index(text[i:], d.prefix)
			if j < 0 {
				return false, len(text), true
			}
			if j > 0 {
				i += j
				r, _ := utf8.DecodeLastRuneInString(text[:i])
				d.mu.Lock()
				st = d.idle(kindOf(r))
				d.mu.Unlock()
			}
		}
		var nx *state
		if b := text[i]; b < utf8.RuneSelf {
			nx = st.next[d.class[b]].Load()
			i++
			if nx == nil {
				var built bool
				if nx, built = d.transition(st, rune(b)); built {
					if left--; left < 0 {
						return false, i, false
					}
				}
			}
		} else {
			r, size := utf8.DecodeRuneInString(text[i:])
			i += size
			var built bool
			if nx, built = d.transition(st, r); built {
				if left--; left < 0 {
					return false, i, false
				}
			}
		}
		if nx.out != nil {
			return true, i, true
		}
		if nx.dead {
			return false, i, true
		}
		st = nx
	}
	return len(d.endOut(st)) > 0, i, true
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
	for len(p) > 0 {
		var r rune
		if c.np > 0 {
			// Complete the rune cut off at the end of the last piece.
			var buf [2 * utf8.UTFMax]byte
			n := copy(buf[:], c.partial[:c.np])
			n += copy(buf[n:], p)
			if !utf8.FullRune(buf[:n]) {
				copy(c.partial[c.np:], p) // fits: the rune is still incomplete
				c.np += len(p)
				return nil, nil, true
			}
			var size int
			r, size = utf8.DecodeRune(buf[:n])
			if size >= c.np {
				p = p[size-c.np:]
				c.np = 0
			} else { // an invalid first byte: it alone is consumed
				copy(c.partial[:], c.partial[size:c.np])
				c.np -= size
			}
			c.read += size
		} else if b := p[0]; b < utf8.RuneSelf {
			nx := c.st.next[d.class[b]].Load()
			p = p[1:]
			c.read++
			if nx == nil {
				var built bool
				if nx, built = d.transition(c.st, rune(b)); built && c.overBudget() {
					return nil, nil, false
				}
			}
			c.st = nx
			if nx.out != nil {
				return nx.out, p, true
			}
			continue
		} else {
			if !utf8.FullRune(p) {
				c.np = copy(c.partial[:], p)
				return nil, nil, true
			}
			var size int
			r, size = utf8.DecodeRune(p)
			p = p[size:]
			c.read += size
		}
		nx, built := d.transition(c.st, r)
		if built && c.overBudget() {
			return nil, nil, false
		}
		c.st = nx
		if nx.out != nil {
			return nx.out, p, true
		}
	}
	return nil, nil, true
}

// End ends the stream and returns the patterns seen matching at its end: together with
// every out Feed returned, they are the patterns that match the whole stream.
func (d *DFA) End(c *Cursor) (out []int32, ok bool) {
	// A rune still cut off never completed: regexp reads each of its bytes as U+FFFD.
	for c.np > 0 {
		c.np--
		c.read++
		nx, built := d.transition(c.st, utf8.RuneError)
		if built && c.overBudget() {
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
func (c *Cursor) overBudget() bool {
	c.built++
	return c.built > budget(c.read)
}
