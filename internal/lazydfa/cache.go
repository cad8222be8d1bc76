package lazydfa

import (
	"encoding/binary"
	"slices"
	"sync/atomic"
	"unicode/utf8"
)

// baseStates are the states every cache starts with (start and three idle): always made.
const baseStates = 4

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
	d.work += int64(len(pcs))
	if len(c.states) >= baseStates { // the base states are the DFA's own, like its program
		size := int64(stateOverhead + 12*d.nclass + 2*len(k))
		if d.own.Load() == 0 && memHeld.Load()+size > memLimit.Load() {
			return nil
		}
		d.held.Add(size)
		memHeld.Add(size)
	}
	d.work += stateWork + int64(d.nclass)
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
