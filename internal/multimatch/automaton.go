package multimatch

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

// buildAutomaton builds the automaton for keys (all already ASCII lower-case
// and distinct); vals[valOff[i]:valOff[i+1]] are reported for an occurrence
// of keys[i].
//
// The trie lives in flat arrays (a sibling list per node, a table for the
// root's children), then is renumbered in breadth-first order, where a
// node's children lie side by side; the failure links are read from the
// dense rows of the shallow states as soon as those are complete, so that a
// build of a few hundred thousand states makes a few dozen allocations.
func buildAutomaton(keys []string, valOff []uint32, vals []int32) *automaton {
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
	nc := int(n)

	// Trie. Node 0 is the root; a node's children are a list through sib
	// starting at first, in no order; term is the key ending at a node.
	est := len(keys) * 4
	first := make([]int32, 1, est)
	sib := make([]int32, 1, est)
	cls := make([]uint8, 1, est)
	term := make([]int32, 1, est)
	first[0], sib[0], term[0] = -1, -1, -1
	var rootKid [256]int32
	for i := range rootKid {
		rootKid[i] = -1
	}
	for ki, k := range keys {
		s := int32(0)
		for i := 0; i < len(k); i++ {
			c := a.class[k[i]]
			t := int32(-1)
			if s == 0 {
				t = rootKid[c]
			} else {
				for t = first[s]; t >= 0 && cls[t] != c; t = sib[t] {
				}
			}
			if t < 0 {
				t = int32(len(first))
				first, sib, cls, term = append(first, -1), append(sib, first[s]), append(cls, c), append(term, -1)
				first[s] = t
				if s == 0 {
					rootKid[c] = t
				}
			}
			s = t
		}
		term[s] = int32(ki)
	}
	ns := len(first)

	// Breadth-first order, children by class: from here on a node is its
	// position p in it, cls and term are read at those positions, and the
	// children of p, which the order puts side by side, are the positions
	// kidAt[p] to kidAt[p+1]. Numbering by position keeps what the failure
	// links read (a node, its children) close in memory.
	order := make([]int32, 1, ns)
	kidAt := make([]uint32, ns+1)
	for p := 0; p < ns; p++ {
		kidAt[p] = uint32(len(order))
		b := len(order)
		for t := first[order[p]]; t >= 0; t = sib[t] {
			order = append(order, t)
		}
		// Insertion sort by class: most nodes have one child.
		row := order[b:]
		for x := 1; x < len(row); x++ {
			for y := x; y > 0 && cls[row[y]] < cls[row[y-1]]; y-- {
				row[y], row[y-1] = row[y-1], row[y]
			}
		}
	}
	kidAt[ns] = uint32(ns)
	// first and sib are done with: their memory holds term by position and,
	// below, the failure links.
	clsAt := make([]uint8, ns)
	termAt := sib[:ns]
	for p, u := range order {
		clsAt[p], termAt[p] = cls[u], term[u]
	}
	failMem := first[:ns]
	first, sib, cls, term, order = nil, nil, nil, nil, nil

	// Numbering: a breadth-first prefix of the states is dense (the root
	// and its children at least, more while the budget allows); the other
	// states follow in depth-first order so that a chain of trie nodes,
	// which a scan walks byte after byte, lies contiguous in memory.
	nd := 1 + int(kidAt[1]-kidAt[0])
	if byBudget := denseBudget / 4 / nc; byBudget > nd {
		nd = byBudget
	}
	nd = min(nd, ns)
	a.ndense = uint32(nd)
	id := make([]uint32, ns) // position -> state id; the dense ones are their positions
	for p := range nd {
		id[p] = uint32(p)
	}
	next := uint32(nd)
	stack := make([]int32, 0, 64)
	for p := nd - 1; p >= 0; p-- {
		stack = append(stack, int32(p))
	}
	for len(stack) > 0 {
		u := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if int(u) >= nd {
			id[u] = next
			next++
		}
		for v := int(kidAt[u+1]) - 1; v >= int(kidAt[u]); v-- {
			if v >= nd {
				stack = append(stack, int32(v))
			}
		}
	}
	byID := make([]int32, ns)
	for u := range id {
		byID[id[u]] = int32(u)
	}

	// Failure links, outputs and dense rows, in breadth-first order: a
	// failure state is shallower, so its link, its outputs and (when dense)
	// its complete row are known before the states that fail to it.
	fail := failMem // positions
	clear(fail)
	a.outLink = make([]int32, ns)
	hasOut := make([]bool, ns) // by position
	enc := func(u int) uint32 {
		e := id[u] << 1
		if hasOut[u] {
			e |= 1
		}
		return e
	}
	a.dense = make([]uint32, nd*nc)
	a.outLink[0] = -1
	for u := range ns {
		k0, k1 := int(kidAt[u]), int(kidAt[u+1])
		for v := k0; v < k1; v++ {
			c := clsAt[v]
			f := int32(0)
			if u != 0 {
				// The longest proper suffix of v's key in the trie: follow
				// u's failure chain to a state with a c-child, reading a
				// dense state's row at once.
				for g := fail[u]; ; {
					if int(g) < nd {
						f = byID[a.dense[int(g)*nc+int(c)]>>1]
						break
					}
					if t, ok := kidOf(clsAt, kidAt, g, c); ok {
						f = t
						break
					}
					g = fail[g]
				}
			}
			fail[v] = f
			i := id[v]
			if termAt[f] >= 0 {
				a.outLink[i] = int32(id[f])
			} else {
				a.outLink[i] = a.outLink[id[f]]
			}
			hasOut[v] = termAt[v] >= 0 || a.outLink[i] >= 0
		}
		if u < nd {
			d := a.dense[u*nc : (u+1)*nc]
			if u != 0 {
				copy(d, a.dense[int(id[fail[u]])*nc:])
			}
			for v := k0; v < k1; v++ {
				d[clsAt[v]] = enc(v)
			}
		}
	}
	a.outOff = make([]uint32, ns+1)
	a.outVal = make([]int32, 0, len(vals))
	for i, u := range byID {
		a.outOff[i] = uint32(len(a.outVal))
		if k := termAt[u]; k >= 0 {
			a.outVal = append(a.outVal, vals[valOff[k]:valOff[k+1]]...)
		}
	}
	a.outOff[ns] = uint32(len(a.outVal))

	// Sparse states.
	multi := 0 // children of the sparse states with several
	for i := nd; i < ns; i++ {
		if n := kidAt[byID[i]+1] - kidAt[byID[i]]; n > 1 {
			multi += int(n)
		}
	}
	a.sCls, a.sNext = make([]uint8, 0, multi), make([]uint32, 0, multi)
	a.sparse = make([]sparseState, ns-nd)
	for i := nd; i < ns; i++ {
		u := byID[i]
		k0, k1 := int(kidAt[u]), int(kidAt[u+1])
		st := &a.sparse[i-nd]
		st.fail = id[fail[u]]
		st.n = uint16(k1 - k0)
		switch k1 - k0 {
		case 0:
		case 1:
			st.cls, st.next = clsAt[k0], enc(k0)
		default:
			st.next = uint32(len(a.sCls))
			for v := k0; v < k1; v++ {
				a.sCls = append(a.sCls, clsAt[v])
				a.sNext = append(a.sNext, enc(v))
			}
		}
	}
	return a
}

// kidOf returns the child of node u (a position) along class c.
func kidOf(clsAt []uint8, kidAt []uint32, u int32, c uint8) (int32, bool) {
	for v := kidAt[u]; v < kidAt[u+1]; v++ {
		if clsAt[v] == c {
			return int32(v), true
		}
	}
	return 0, false
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

// states returns how many states the automaton has (0 for none).
func (a *automaton) states() int {
	if a == nil {
		return 0
	}
	return len(a.outOff) - 1
}
