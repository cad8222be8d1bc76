package multimatch

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"
	"sync"
)

// Set is a compiled set of regular expressions. It is immutable after New
// and safe for concurrent use.
type Set struct {
	res    []*regexp.Regexp
	ac     *automaton // nil when no pattern has literals
	lits   []litInfo
	ents   []uint32 // pattern<<2 | group index, per literal
	full   []uint8  // per pattern: mask of all its groups; 0 = always run
	always []int32  // patterns run on every text, ascending
	pool   sync.Pool
}

// litInfo is one distinct required literal.
type litInfo struct {
	cs     string // the literal when it has case-sensitive letters, else ""
	mask   string // case-sensitivity mask for cs
	e0, e1 uint32 // its entries in Set.ents
}

// scratch is the per-call state of Match. Generation stamps make resetting
// it O(1).
type scratch struct {
	gen     uint32
	litGen  []uint32 // literal seen in this generation
	patGen  []uint32 // patMask valid in this generation
	patMask []uint8
	cands   []int32
}

// New compiles the patterns (Go regexp syntax). It returns an error naming
// the index of a pattern that does not compile. An empty pattern matches
// everything.
func New(patterns []string) (*Set, error) {
	s := &Set{
		res:  make([]*regexp.Regexp, len(patterns)),
		full: make([]uint8, len(patterns)),
	}
	litID := map[lit]int32{}
	var litList []lit
	var litEnts [][]uint32
	for i, p := range patterns {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, fmt.Errorf("multimatch: pattern %d: %w", i, err)
		}
		s.res[i] = re
		// regexp.Compile parses with syntax.Perl and simplifies: the
		// analysis below sees exactly the expression that is matched.
		sre, err := syntax.Parse(p, syntax.Perl)
		if err != nil {
			return nil, fmt.Errorf("multimatch: pattern %d: %w", i, err)
		}
		groups, ok := requiredGroups(sre.Simplify())
		if !ok {
			s.always = append(s.always, int32(i))
			continue
		}
		s.full[i] = uint8(1<<len(groups) - 1)
		for gi, g := range groups {
			for _, l := range g {
				id, ok := litID[l]
				if !ok {
					id = int32(len(litList))
					litID[l] = id
					litList = append(litList, l)
					litEnts = append(litEnts, nil)
				}
				e := uint32(i)<<2 | uint32(gi)
				if n := len(litEnts[id]); n == 0 || litEnts[id][n-1] != e {
					litEnts[id] = append(litEnts[id], e)
				}
			}
		}
	}
	if len(litList) > 0 {
		s.lits = make([]litInfo, len(litList))
		keyID := map[string]int{}
		var keys []string
		var vals [][]int32
		for id, l := range litList {
			li := &s.lits[id]
			if l.m != "" {
				li.cs, li.mask = l.s, l.m
			}
			li.e0 = uint32(len(s.ents))
			s.ents = append(s.ents, litEnts[id]...)
			li.e1 = uint32(len(s.ents))
			k := l.key()
			ki, ok := keyID[k]
			if !ok {
				ki = len(keys)
				keyID[k] = ki
				keys = append(keys, k)
				vals = append(vals, nil)
			}
			vals[ki] = append(vals[ki], int32(id))
		}
		s.ac = buildAutomaton(keys, vals)
	}
	nlits, npats := len(s.lits), len(patterns)
	s.pool.New = func() any {
		return &scratch{
			litGen:  make([]uint32, nlits),
			patGen:  make([]uint32, npats),
			patMask: make([]uint8, npats),
			cands:   make([]int32, 0, npats),
		}
	}
	return s, nil
}

// Match appends to dst the indices, in ascending order, of the patterns that
// match text, exactly as regexp.MustCompile(p).MatchString(text) would
// report, and returns dst. It does not allocate when dst has enough
// capacity.
func (s *Set) Match(text string, dst []int) []int {
	if len(s.res) == 0 {
		return dst
	}
	sc := s.pool.Get().(*scratch)
	sc.gen++
	if sc.gen == 0 {
		clear(sc.litGen)
		clear(sc.patGen)
		sc.gen = 1
	}
	sc.cands = sc.cands[:0]
	if s.ac != nil {
		s.scan(text, sc)
		slices.Sort(sc.cands)
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
		if s.res[i].MatchString(text) {
			dst = append(dst, int(i))
		}
	}
	s.pool.Put(sc)
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
		if st&1 != 0 {
			s.report(text, i, st>>1, sc)
		}
	}
}

// report handles the keys ending at text[end] that the state u recognises.
func (s *Set) report(text string, end int, u uint32, sc *scratch) {
	a := s.ac
	gen := sc.gen
	for v := int32(u); v >= 0; v = a.outLink[v] {
		for _, id := range a.outVal[a.outOff[v]:a.outOff[v+1]] {
			if sc.litGen[id] == gen {
				continue
			}
			l := &s.lits[id]
			if l.cs != "" && !caseMatch(text[end+1-len(l.cs):end+1], l.cs, l.mask) {
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
