package multimatch

import "slices"

// denseBudget bounds the memory of the fully expanded (DFA) rows kept for the
// states nearest the root, where a scan spends most of its time.
const denseBudget = 1 << 20

// automaton is an Aho–Corasick automaton over byte classes. Upper-case ASCII
// letters share the class of their lower-case counterpart, so the automaton
// finds keys (which are lower-case) in the ASCII-folded text without copying
// the text.
//
// States are numbered in breadth-first order. The first ndense states have a
// complete transition row (failure transitions already resolved); the others
// list their trie children sorted by class and fall back on their failure
// link. State values in transition tables are encoded as id<<1 | hasOutput.
type automaton struct {
	class  [256]uint8
	nclass uint32
	ndense uint32
	dense  []uint32 // ndense*nclass encoded states

	sparse []sparseState // states ndense and up
	sCls   []uint8       // children of sparse states with several
	sNext  []uint32      // encoded states

	outOff  []uint32 // per state, offsets into outVal (len nstates+1)
	outVal  []int32  // values attached to the key ending at the state
	outLink []int32  // next state on the failure chain with own outputs, or -1
}

// sparseState is a state without a dense row. With one child, cls and next
// describe it; with more, next indexes n entries of sCls/sNext.
type sparseState struct {
	next uint32
	fail uint32
	cls  uint8
	n    uint16
}

type edge struct {
	c  uint8
	to uint32
}

// buildAutomaton builds the automaton for keys (all already ASCII lower-case
// and distinct); vals[i] are reported for an occurrence of keys[i].
func buildAutomaton(keys []string, vals [][]int32) *automaton {
	a := &automaton{}
	var used [256]bool
	for _, k := range keys {
		for i := 0; i < len(k); i++ {
			used[k[i]] = true
		}
	}
	n := uint32(1)
	for b := 0; b < 256; b++ {
		if used[b] && !isUpper(byte(b)) {
			a.class[b] = uint8(n)
			n++
		}
	}
	for b := byte('A'); b <= 'Z'; b++ {
		a.class[b] = a.class[b+'a'-'A']
	}
	a.nclass = n

	// Trie.
	kids := [][]edge{nil}
	own := [][]int32{nil}
	child := func(s uint32, c uint8) (uint32, bool) {
		for _, e := range kids[s] {
			if e.c == c {
				return e.to, true
			}
		}
		return 0, false
	}
	for ki, k := range keys {
		s := uint32(0)
		for i := 0; i < len(k); i++ {
			c := a.class[k[i]]
			t, ok := child(s, c)
			if !ok {
				t = uint32(len(kids))
				kids = append(kids, nil)
				own = append(own, nil)
				kids[s] = append(kids[s], edge{c, t})
			}
			s = t
		}
		own[s] = append(own[s], vals[ki]...)
	}
	ns := len(kids)

	// Breadth-first order and failure links (on trie ids).
	order := make([]uint32, 0, ns)
	order = append(order, 0)
	fail := make([]uint32, ns)
	for qi := 0; qi < len(order); qi++ {
		u := order[qi]
		slices.SortFunc(kids[u], func(x, y edge) int { return int(x.c) - int(y.c) })
		for _, e := range kids[u] {
			v := e.to
			order = append(order, v)
			if u == 0 {
				fail[v] = 0
				continue
			}
			f := fail[u]
			for {
				if t, ok := child(f, e.c); ok {
					fail[v] = t
					break
				}
				if f == 0 {
					fail[v] = 0
					break
				}
				f = fail[f]
			}
		}
	}
	// Numbering: a breadth-first prefix of the states is dense (the root
	// and its children at least, more while the budget allows); the other
	// states follow in depth-first order so that a chain of trie nodes,
	// which a scan walks byte after byte, lies contiguous in memory.
	nd := 1 + len(kids[0])
	if byBudget := denseBudget / 4 / int(a.nclass); byBudget > nd {
		nd = byBudget
	}
	nd = min(nd, ns)
	a.ndense = uint32(nd)
	id := make([]uint32, ns) // trie id -> state id
	isDense := make([]bool, ns)
	for i, u := range order[:nd] {
		id[u] = uint32(i)
		isDense[u] = true
	}
	next := uint32(nd)
	stack := []uint32{}
	for i := nd - 1; i >= 0; i-- {
		stack = append(stack, order[i])
	}
	for len(stack) > 0 {
		u := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if !isDense[u] {
			id[u] = next
			next++
		}
		for k := len(kids[u]) - 1; k >= 0; k-- {
			if v := kids[u][k].to; !isDense[v] {
				stack = append(stack, v)
			}
		}
	}
	byID := make([]uint32, ns)
	for u := range id {
		byID[id[u]] = uint32(u)
	}

	// Outputs. outLink follows the failure chain, so compute it in
	// breadth-first order where failure states come first.
	a.outLink = make([]int32, ns)
	hasOut := make([]bool, ns) // by trie id
	for _, u := range order {
		i := id[u]
		a.outLink[i] = -1
		if u != 0 {
			f := fail[u]
			if len(own[f]) > 0 {
				a.outLink[i] = int32(id[f])
			} else {
				a.outLink[i] = a.outLink[id[f]]
			}
		}
		hasOut[u] = len(own[u]) > 0 || a.outLink[i] >= 0
	}
	a.outOff = make([]uint32, ns+1)
	for i, u := range byID {
		a.outOff[i] = uint32(len(a.outVal))
		a.outVal = append(a.outVal, own[u]...)
	}
	a.outOff[ns] = uint32(len(a.outVal))
	enc := func(u uint32) uint32 {
		e := id[u] << 1
		if hasOut[u] {
			e |= 1
		}
		return e
	}

	// Dense rows, in breadth-first order: a failure state is shallower,
	// hence earlier and already complete.
	nc := int(a.nclass)
	a.dense = make([]uint32, nd*nc)
	for i, u := range order[:nd] {
		row := a.dense[i*nc : (i+1)*nc]
		if u != 0 {
			copy(row, a.dense[int(id[fail[u]])*nc:])
		}
		for _, e := range kids[u] {
			row[e.c] = enc(e.to)
		}
	}
	// Sparse states.
	a.sparse = make([]sparseState, ns-nd)
	for i := nd; i < ns; i++ {
		u := byID[i]
		st := &a.sparse[i-nd]
		st.fail = id[fail[u]]
		st.n = uint16(len(kids[u]))
		switch len(kids[u]) {
		case 0:
		case 1:
			st.cls, st.next = kids[u][0].c, enc(kids[u][0].to)
		default:
			st.next = uint32(len(a.sCls))
			for _, e := range kids[u] {
				a.sCls = append(a.sCls, e.c)
				a.sNext = append(a.sNext, enc(e.to))
			}
		}
	}
	return a
}

// step returns the encoded state after reading a byte of class c in the
// (decoded) state s.
func (a *automaton) step(s uint32, c uint8) uint32 {
	for s >= a.ndense {
		st := &a.sparse[s-a.ndense]
		switch {
		case st.n == 1:
			if st.cls == c {
				return st.next
			}
		case st.n > 1:
			for k := st.next; k < st.next+uint32(st.n); k++ {
				if a.sCls[k] == c {
					return a.sNext[k]
				}
			}
		}
		s = st.fail
	}
	return a.dense[s*a.nclass+uint32(c)]
}
