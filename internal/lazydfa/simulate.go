package lazydfa

import (
	"regexp/syntax"
	"slices"
	"unicode/utf8"
)

// Simulation pruning.
//
// A state is the set of instructions pending after a character. Two pending
// instructions p and q where every text that leads to a match from p leads to the same
// pattern's match from q (p is simulated by q) make p redundant: dropping it changes
// neither which patterns match nor where. Bounded repetitions over wide classes,
// `[ A-Z0-9_-]{0,20}PRIVATE KEY`, make sets of many such copies (a copy that has read
// fewer characters of the class simulates one that has read more); pruned, the DFA has
// far fewer states. For an unanchored search the start instructions are added again
// before every character, so an instruction the start simulates is redundant too.
//
// The relation is a greatest direct simulation, one per kind of the character before
// (newline, word, other: the empty-width assertions read it, so \b, \B, ^ and $ under
// (?m) stay exact), computed on one character of each class the DFA already uses
// (ASCII classes and non-ASCII intervals, in which every rune instruction matches
// alike, invalid UTF-8 included as U+FFFD). It is sound: p simulated by q implies that
// the matches from p are matches from q.

// maxSimPcs bounds the pending instructions Simulate relates, and maxSimWork its work
// (pairs times characters tested, over all rounds): past them it does nothing.
const (
	maxSimPcs  = 1024
	maxSimWork = 1 << 24
)

// simKinds are the kinds a state has after a character (kindStart is the start state's).
var simKinds = [...]uint8{kindNewline, kindWord, kindOther}

// sim is the simulation relation of a DFA's pending instructions.
type sim struct {
	idx    []int32 // per instruction: its index among the pending ones, or -1
	words  int     // uint64 words per row
	le     [kindOther + 1][]uint64
	starts []int32   // indices of the start instructions
	reach  [][]int32 // per pending instruction: the patterns it can lead to
}

// below reports whether pending instruction i is simulated by j after a character of
// kind k.
func (s *sim) below(k uint8, i, j int32) bool {
	return s.le[k][int(i)*s.words+int(j)/64]&(1<<(uint(j)%64)) != 0
}

// Simulate computes the simulation relation of the DFA's pending instructions and, from
// then on, prunes every new state of the instructions another one of it (or, for an
// unanchored search, a start) simulates. It drops the states built so far. It reports
// whether it did: a program past maxSimPcs pending instructions, or whose relation
// would cost past maxSimWork, is left as it is. Deterministic: the answer and the states
// depend on the programs alone. work is what it cost, in the units of Exploration.Work
// (instructions followed, pairs and steps compared), paid once. Safe to call while the
// DFA runs: runs go on from the states they hold.
func (d *DFA) Simulate() (work int64, ok bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	defer func(w int64) { work = d.work - w }(d.work)
	if d.sim != nil {
		return 0, true
	}
	s := &sim{idx: make([]int32, len(d.prog.Inst))}
	for i := range s.idx {
		s.idx[i] = -1
	}
	var pend []uint32
	addPend := func(pc uint32) {
		if s.idx[pc] < 0 {
			s.idx[pc] = int32(len(pend))
			pend = append(pend, pc)
		}
	}
	for _, pc := range d.starts {
		addPend(pc)
	}
	for pc := range d.prog.Inst {
		if isRuneOp(d.prog.Inst[pc].Op) {
			addPend(d.prog.Inst[pc].Out)
		}
	}
	n := len(pend)
	if n > maxSimPcs {
		return 0, false
	}
	for _, pc := range d.starts {
		s.starts = append(s.starts, s.idx[pc])
	}
	// One character of each class, and its kind.
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
	if int64(n)*int64(n)*int64(len(chars)) > maxSimWork {
		return 0, false
	}
	// succ[k][i][c]: the pending instructions i leads to on chars[c] after a character of
	// kind k; out[k][i][k2]: the patterns matched before a character of kind k2.
	type row struct {
		succ [][]int32
		out  [kindEnd + 1][]int32
		outs [][]int32 // out before a character of each kind
	}
	rows := [kindOther + 1][]row{}
	for _, k := range simKinds {
		rows[k] = make([]row, n)
		for i, pc := range pend {
			r := &rows[k][i]
			r.succ = make([][]int32, len(chars))
			for _, k2 := range []uint8{kindNewline, kindWord, kindOther, kindEnd} {
				d.closeFrom([]uint32{pc}, k, false, k2)
				r.out[k2] = slices.Clone(d.out)
				if k2 == kindEnd {
					continue
				}
				for c, ch := range chars {
					if kindOf(ch) != k2 {
						continue
					}
					var next []int32
					for _, rpc := range d.runes {
						if in := &d.prog.Inst[rpc]; MatchRune(in, ch) {
							next = append(next, s.idx[in.Out])
						}
					}
					slices.Sort(next)
					r.succ[c] = slices.Compact(next)
				}
			}
		}
	}
	// reach[i]: the patterns whose match instruction i can lead to (ignoring
	// assertions: a superset). A step of i is covered by j when j has matched them all
	// already, before the character: nothing i leads to is news.
	reach := make([][]int32, n)
	for i, pc := range pend {
		seen := map[uint32]bool{}
		stack := []uint32{pc}
		for len(stack) > 0 {
			x := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if seen[x] {
				continue
			}
			seen[x] = true
			d.work++
			in := &d.prog.Inst[x]
			switch in.Op {
			case syntax.InstMatch:
				reach[i] = append(reach[i], d.matchOf[x])
			case syntax.InstFail:
			case syntax.InstAlt, syntax.InstAltMatch:
				stack = append(stack, in.Out, in.Arg)
			default:
				stack = append(stack, in.Out)
			}
		}
		slices.Sort(reach[i])
		reach[i] = slices.Compact(reach[i])
	}
	s.reach = reach
	for _, k := range simKinds {
		for i := range rows[k] {
			rows[k][i].outs = rows[k][i].out[:kindEnd]
		}
	}
	s.words = (n + 63) / 64
	for _, k := range simKinds {
		d.work += int64(n * n)
		le := make([]uint64, n*s.words)
		for i := range n {
			for j := range n {
				ok := true
				for k2 := range rows[k][i].out {
					if !subset(rows[k][i].out[k2], rows[k][j].out[k2]) {
						ok = false
						break
					}
				}
				if ok {
					le[i*s.words+j/64] |= 1 << (uint(j) % 64)
				}
			}
		}
		s.le[k] = le
	}
	// Refine to the greatest fixpoint: i stays below j after kind k when every step of i
	// on a character c is matched by a step of j on c to an instruction above it (after
	// c's kind).
	budget := d.work + maxSimWork
	for changed := true; changed; {
		changed = false
		if d.work > budget {
			return 0, false // deterministic: the work depends on the programs alone
		}
		for _, k := range simKinds {
			for i := range n {
				for j := range n {
					if i == j || !s.below(k, int32(i), int32(j)) {
						continue
					}
					d.work += int64(len(chars))
					if !simStep(s, rows[k][i].succ, rows[k][j].succ, rows[k][j].outs, chars) {
						s.le[k][i*s.words+j/64] &^= 1 << (uint(j) % 64)
						changed = true
					}
				}
			}
		}
	}
	d.sim = s
	d.reset()
	return 0, true
}

// simStep reports whether every successor of i on each character is below some
// successor of j on it.
func simStep(s *sim, si, sj [][]int32, outj [][]int32, chars []rune) bool {
	for c := range chars {
		k2 := kindOf(chars[c])
		for _, a := range si[c] {
			found := subset(s.reach[a], outj[k2])
			for _, b := range sj[c] {
				if s.below(k2, a, b) {
					found = true
					break
				}
			}
			if !found {
				return false
			}
		}
	}
	return true
}

// subset reports whether sorted a is a subset of sorted b.
func subset(a, b []int32) bool {
	for _, x := range a {
		if _, ok := slices.BinarySearch(b, x); !ok {
			return false
		}
	}
	return true
}

func isRuneOp(op syntax.InstOp) bool {
	switch op {
	case syntax.InstRune, syntax.InstRune1, syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
		return true
	}
	return false
}

// prune drops from d.pcs, after a character of kind k, every instruction another one of
// them simulates (of two that simulate each other, the lower is kept) and, for an
// unanchored search, every one a start simulates; under mu.
func (d *DFA) prune(k uint8) {
	s := d.sim
	if s == nil || k == kindEnd || len(d.pcs) == 0 {
		return
	}
	d.work += int64(len(d.pcs) * len(d.pcs))
	all := append(d.simTmp[:0], d.pcs...)
	d.simTmp = all
	kept := d.pcs[:0]
	for x, p := range all {
		i := s.idx[p]
		drop := false
		if !d.anchored {
			for _, st := range s.starts {
				if s.below(k, i, st) {
					drop = true
					break
				}
			}
		}
		for y := 0; !drop && y < len(all); y++ {
			if y == x {
				continue
			}
			j := s.idx[all[y]]
			if s.below(k, i, j) && (!s.below(k, j, i) || all[y] < p) {
				drop = true
			}
		}
		if !drop {
			kept = append(kept, p)
		}
	}
	d.pcs = kept
}
