package multimatch

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Set is a compiled set of regular expressions. It is immutable after New
// and safe for concurrent use.
type Set struct {
	pats   []*Analysis
	ac     *automaton // nil when no pattern goes through the prefilter
	lits   []litInfo
	ents   []uint32  // pattern<<2 | group index, per literal
	full   []uint8   // per pattern: mask of all its groups; 0 = always run
	anchor [][]int32 // per pattern: ids of its anchor literals, nil = run on the whole text
	always []int32   // patterns run on every text, ascending
	// Combined runs (combo.go): per pattern, its combo (-1: none) and its output there.
	combos     []*combo
	comboOf    []int32
	comboAt    []uint8
	comboRider []bool
	pool       sync.Pool
}

// litInfo is one distinct required literal.
type litInfo struct {
	cs     string // the literal when it has case-sensitive letters, else ""
	mask   string // case-sensitivity mask for cs
	e0, e1 uint32 // its entries in Set.ents
	n      int32  // its length in bytes
	pos    bool   // record where it occurs: it anchors some pattern's windows
}

// hit is one occurrence of a positional literal, [start, end), chained per
// literal through next (-1 ends the chain).
type hit struct{ start, end, next int32 }

// maxHits bounds the occurrences one Match records; past it, patterns that
// would have used them are run on the whole text.
const maxHits = 1 << 16

// scratch is the per-call state of Match. Generation stamps make resetting
// it O(1).
type scratch struct {
	gen     uint32
	litGen  []uint32 // literal seen in this generation
	patGen  []uint32 // patMask valid in this generation
	patMask []uint8
	cands   []int32
	headGen []uint32 // head valid in this generation
	doneGen []uint32 // per automaton state: nothing left to report in this generation
	count   []int32  // per literal, its hits recorded (valid with head)
	limit   int32    // hits of one literal past which its windows cost more than the text
	head    []int32  // per literal, its last hit, or -1
	hits    []hit
	spill   bool  // hits were dropped (maxHits)
	tmp     []hit // one pattern's anchor hits, sorted
	rd      strings.Reader
	runs    int // verification runs in this call, a combo's pass counting one (see Explain)
	whole   int // of which over the whole text
	read    int // bytes the verification read (see Read)
	combo   []comboRun
	which   []int32 // a combo's outputs
}

// New compiles the patterns (Go regexp syntax). It returns an error naming
// the index of a pattern that does not compile. An empty pattern matches
// everything.
func New(patterns []string) (*Set, error) {
	as := make([]*Analysis, len(patterns))
	for i, p := range patterns {
		a, err := Analyze(p)
		if err != nil {
			return nil, fmt.Errorf("multimatch: pattern %d: %w", i, err)
		}
		as[i] = a
	}
	return Build(as), nil
}

// maxDirectPrefix is how many patterns that regexp itself finds quickly (a
// case-sensitive literal prefix, found with strings.Index) a set runs
// directly instead of scanning the text with the automaton: one automaton
// pass costs about as much as a dozen such runs.
const maxDirectPrefix = 12

// Build makes a set of analysed patterns; pattern i of the set is as[i].
func Build(as []*Analysis) *Set {
	s := &Set{
		pats:   as,
		full:   make([]uint8, len(as)),
		anchor: make([][]int32, len(as)),
	}
	// Strategy, per set: when every pattern the automaton would serve is
	// one regexp runs cheaply by itself, and there are few, skip the
	// automaton: its pass over the text would cost more than they do.
	filtered := 0
	allPrefix := true
	for _, a := range as {
		if !a.direct && a.groups != nil {
			filtered++
			allPrefix = allPrefix && a.prefix
		}
	}
	useAC := filtered > 0 && !(allPrefix && filtered <= maxDirectPrefix)

	// Literal ids in order of first use; each literal's entries (pattern,
	// group) gathered from a flat list of pairs by a stable counting sort.
	nl := 0
	for _, a := range as {
		for _, g := range a.groups {
			nl += len(g)
		}
		nl += len(a.anchor)
	}
	// Most literals have no case-sensitive letters (m == ""): they are found by their
	// text alone, in a map with string keys, cheaper to hash than the pair. A set of
	// patterns shares about half its literals, hence the sizes.
	plainID := make(map[string]int32, nl/2)
	maskedID := map[lit]int32{}
	litList := make([]lit, 0, nl/2)
	litPos := make([]bool, 0, nl/2)
	lastEnt := make([]uint32, 0, nl/2) // per literal: its last entry + 1, 0: none yet
	type pair struct {
		lid int32
		e   uint32
	}
	pairs := make([]pair, 0, nl)
	id := func(l lit) int32 {
		var i int32
		var ok bool
		if l.m == "" {
			i, ok = plainID[l.s]
		} else {
			i, ok = maskedID[l]
		}
		if !ok {
			i = int32(len(litList))
			if l.m == "" {
				plainID[l.s] = i
			} else {
				maskedID[l] = i
			}
			litList = append(litList, l)
			litPos = append(litPos, false)
			lastEnt = append(lastEnt, 0)
		}
		return i
	}
	for i, a := range as {
		if !useAC || a.direct || a.groups == nil {
			s.always = append(s.always, int32(i))
			continue
		}
		s.full[i] = uint8(1<<len(a.groups) - 1)
		for gi, g := range a.groups {
			for _, l := range g {
				lid := id(l)
				e := uint32(i)<<2 | uint32(gi)
				if lastEnt[lid] != e+1 {
					lastEnt[lid] = e + 1
					pairs = append(pairs, pair{lid, e})
				}
			}
		}
		if a.anchor != nil && (a.before >= 0 || a.after >= 0) {
			ids := make([]int32, len(a.anchor))
			for k, l := range a.anchor {
				ids[k] = id(l)
			}
			s.anchor[i] = ids
		}
	}
	// A pattern gives up its windows when they are expected to cost more than the text
	// (dense), or when it is whole-prone and a combo verifies it: its anchor's
	// occurrences (a digit, a space: hundreds in an answer) are then not recorded, and
	// alone it runs over the whole text (combo.go).
	s.buildCombos()
	for i, ids := range s.anchor {
		if ids != nil && (s.dense(i) || s.comboOf != nil && s.comboOf[i] >= 0 && !s.comboRider[i]) {
			s.anchor[i] = nil
			continue
		}
		for _, id := range ids {
			litPos[id] = true
		}
	}
	if len(litList) > 0 {
		s.lits = make([]litInfo, len(litList))
		for _, p := range pairs {
			s.lits[p.lid].e1++
		}
		off := uint32(0)
		for lid := range s.lits {
			li := &s.lits[lid]
			li.e0, off = off, off+li.e1
			li.e1 = li.e0
		}
		s.ents = make([]uint32, len(pairs))
		for _, p := range pairs {
			li := &s.lits[p.lid]
			s.ents[li.e1] = p.e
			li.e1++
		}
		// Keys: the literals folded; literals differing only in case
		// sensitivity share one key (and its automaton state).
		keyID := make(map[string]int32, len(litList))
		var keys []string
		keyOf := make([]int32, len(litList))
		for lid, l := range litList {
			li := &s.lits[lid]
			if l.m != "" {
				li.cs, li.mask = l.s, l.m
			}
			li.n, li.pos = int32(len(l.s)), litPos[lid]
			k := l.key()
			ki, ok := keyID[k]
			if !ok {
				ki = int32(len(keys))
				keyID[k] = ki
				keys = append(keys, k)
			}
			keyOf[lid] = ki
		}
		valOff := make([]uint32, len(keys)+1)
		for _, ki := range keyOf {
			valOff[ki+1]++
		}
		for k := range keys {
			valOff[k+1] += valOff[k]
		}
		vals := make([]int32, len(litList))
		fill := slices.Clone(valOff[:len(keys)])
		for lid, ki := range keyOf {
			vals[fill[ki]] = int32(lid)
			fill[ki]++
		}
		s.ac = buildAutomaton(keys, valOff, vals)
	}
	nlits, npats, ncombos := len(s.lits), len(as), len(s.combos)
	s.pool.New = func() any {
		return &scratch{
			combo:   make([]comboRun, ncombos),
			litGen:  make([]uint32, nlits),
			patGen:  make([]uint32, npats),
			patMask: make([]uint8, npats),
			cands:   make([]int32, 0, npats),
			headGen: make([]uint32, nlits),
			head:    make([]int32, nlits),
			count:   make([]int32, nlits),
			doneGen: make([]uint32, s.ac.states()),
		}
	}
	return s
}

// Match appends to dst the indices, in ascending order, of the patterns that
// match text, exactly as regexp.MustCompile(p).MatchString(text) would
// report, and returns dst. It does not allocate when dst has enough
// capacity.
func (s *Set) Match(text string, dst []int) []int {
	if len(s.pats) == 0 {
		return dst
	}
	sc := s.pool.Get().(*scratch)
	dst = s.match(text, dst, sc)
	s.pool.Put(sc)
	return dst
}

func (s *Set) match(text string, dst []int, sc *scratch) []int {
	sc.gen++
	if sc.gen == 0 {
		clear(sc.litGen)
		clear(sc.patGen)
		clear(sc.headGen)
		clear(sc.doneGen)
		clear(sc.combo)
		sc.gen = 1
	}
	sc.cands = sc.cands[:0]
	sc.hits = sc.hits[:0]
	sc.spill = false
	sc.limit = int32(len(text)/windowCost + 1)
	sc.runs, sc.whole, sc.read = 0, 0, 0
	if s.ac != nil {
		s.scan(text, sc)
		slices.Sort(sc.cands)
	}
	if s.combos != nil {
		s.countCombos(sc)
	}
	// Merge the candidates with the always-run patterns and verify.
	c, a := sc.cands, s.always
	for len(c) > 0 || len(a) > 0 {
		var i int32
		if len(a) == 0 || len(c) > 0 && c[0] < a[0] {
			i, c = c[0], c[1:]
		} else {
			i, a = a[0], a[1:]
		}
		if m, ok := s.comboVerdict(i, text, sc); ok {
			if m {
				dst = append(dst, int(i))
			}
		} else if s.verify(i, text, sc) {
			dst = append(dst, int(i))
		}
	}
	return dst
}

// scan runs the automaton over text and collects in sc.cands the patterns
// all of whose required groups occur.
func (s *Set) scan(text string, sc *scratch) {
	a := s.ac
	nd, nc := a.ndense, a.nclass
	dense, class := a.dense, &a.class
	st := uint32(0) // encoded
	for i := 0; i < len(text); i++ {
		c := class[text[i]]
		if u := st >> 1; u < nd {
			st = dense[u*nc+uint32(c)]
		} else {
			st = a.step(u, c)
		}
		if st&1 != 0 && sc.doneGen[st>>1] != sc.gen {
			s.report(text, i, st>>1, sc)
		}
	}
}

// report handles the keys ending at text[end] that the state u recognises. Once
// every literal u recognises has been seen in this text and none is positional, u's
// later occurrences have nothing left to say: u is marked done for this text, and scan
// no longer calls report for it (a common literal such as a digit or "the" occurs
// hundreds of times in an answer).
func (s *Set) report(text string, end int, u uint32, sc *scratch) {
	a := s.ac
	gen := sc.gen
	done := true
	for v := int32(u); v >= 0; v = a.outLink[v] {
		for _, id := range a.outVal[a.outOff[v]:a.outOff[v+1]] {
			l := &s.lits[id]
			seen := sc.litGen[id] == gen
			// A positional literal that occurred too often to window around is not
			// recorded any more: the patterns it anchors run over the whole text.
			pos := l.pos && (sc.headGen[id] != gen || sc.count[id] < sc.limit)
			if seen && !pos {
				continue
			}
			done = false // positional, or not seen before this occurrence
			if l.cs != "" && !caseMatch(text[end+1-len(l.cs):end+1], l.cs, l.mask) {
				continue
			}
			if pos {
				s.record(id, end+1, sc)
			}
			if seen {
				continue
			}
			sc.litGen[id] = gen
			for _, e := range s.ents[l.e0:l.e1] {
				p := e >> 2
				bit := uint8(1) << (e & 3)
				m := sc.patMask[p]
				if sc.patGen[p] != gen {
					sc.patGen[p] = gen
					m = 0
				}
				if m&bit != 0 {
					continue
				}
				m |= bit
				sc.patMask[p] = m
				if m == s.full[p] {
					sc.cands = append(sc.cands, int32(p))
				}
			}
		}
	}
	if done {
		sc.doneGen[u] = gen
	}
}

// record notes an occurrence of literal id ending at end.
func (s *Set) record(id int32, end int, sc *scratch) {
	if len(sc.hits) >= maxHits {
		sc.spill = true
		return
	}
	next := int32(-1)
	if sc.headGen[id] == sc.gen {
		next = sc.head[id]
		sc.count[id]++
	} else {
		sc.count[id] = 1
	}
	sc.headGen[id] = sc.gen
	sc.head[id] = int32(len(sc.hits))
	sc.hits = append(sc.hits, hit{start: int32(end) - s.lits[id].n, end: int32(end), next: next})
}

// caseMatch checks the case-sensitive letters of a literal against an
// occurrence whose folded form is already known to match.
func caseMatch(occ, lit, mask string) bool {
	for i := 0; i < len(lit); i++ {
		if mask[i] == 1 && occ[i] != lit[i] {
			return false
		}
	}
	return true
}

// Explain matches text like Match and says how much work it took: how many
// verification runs it made (each candidate or always-run pattern verified alone, by
// its DFA or regexp, and each combo's pass), and how many of those ran over the whole
// text rather than windows. For benchmarks and tuning.
func (s *Set) Explain(text string) (matched []int, verified, whole int) {
	if len(s.pats) == 0 {
		return nil, 0, 0
	}
	sc := s.pool.New().(*scratch)
	matched = s.match(text, nil, sc)
	return matched, sc.runs, sc.whole
}

// Read matches text like Match and returns how many bytes its verification read: the
// bytes given to each run (a run over the whole text counts all of it, a combo's pass
// too) and those read widening windows. Unlike a time it does not depend on the
// machine, so tests can hold it linear in the text: it stays within a few times the
// text's length for every pattern, however the text packs its literals.
func (s *Set) Read(text string) (matched []int, read int) {
	if len(s.pats) == 0 {
		return nil, 0
	}
	sc := s.pool.New().(*scratch)
	matched = s.match(text, nil, sc)
	return matched, sc.read
}

// Patterns returns the number of patterns in the set.
func (s *Set) Patterns() int { return len(s.pats) }
