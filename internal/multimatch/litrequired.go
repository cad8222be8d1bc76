package multimatch

import (
	"cmp"
	"regexp/syntax"
	"slices"
)

// requiredGroups computes, for a simplified pattern, up to maxGroups literal
// sets such that every match contains an element of each set. ok is false
// when no useful requirement exists: the pattern must then always be run.
func requiredGroups(re *syntax.Regexp) (groups [][]lit, ok bool) {
	return (*memo)(nil).requiredGroups(analyze(re))
}

// requiredGroups is requiredGroups given the pattern's analysis, minimizing
// through m.
func (m *memo) requiredGroups(x *info) (groups [][]lit, ok bool) {
	type cand struct {
		g    []lit
		cost float64
	}
	var cands []cand
	for i := range x.numGroups() {
		g := x.group(i)
		if hasEmpty(g) {
			continue
		}
		if len(g) == 0 {
			// The pattern cannot match; be conservative and run it.
			return nil, false
		}
		if m.cost(g) > 4*groupCostLimit {
			continue // hopeless even after minimize
		}
		g = m.minimize(g)
		if slices.ContainsFunc(cands, func(c cand) bool { return sameKey(c.g, g) }) {
			continue
		}
		cands = append(cands, cand{g, m.cost(g)})
	}
	slices.SortStableFunc(cands, func(a, b cand) int {
		return cmp.Or(cmp.Compare(a.cost, b.cost), keyCompare(a.g, b.g))
	})
	// Take groups cheapest first until the conjunction is selective
	// enough: further groups would only make the scan report more often.
	for _, c := range cands {
		if len(groups) == maxGroups || c.cost > groupCostLimit {
			break
		}
		if len(groups) > 0 && minLen(c.g) < minSecondaryLen {
			continue
		}
		if !slices.ContainsFunc(groups, func(h []lit) bool { return groupImplies(h, c.g) }) {
			groups = append(groups, c.g)
		}
	}
	return groups, len(groups) > 0
}

// keyCompare compares two groups as strings.Compare compares their keys, each element's
// s and m followed by a NUL byte, without making the keys.
func keyCompare(a, b []lit) int {
	var x, y keyReader
	x.g, y.g = a, b
	for {
		c, okc := x.next()
		d, okd := y.next()
		switch {
		case !okc && !okd:
			return 0
		case !okc:
			return -1
		case !okd:
			return 1
		case c != d:
			return cmp.Compare(c, d)
		}
	}
}

// sameKey reports whether keyCompare(a, b) == 0, quickly when it is not.
func sameKey(a, b []lit) bool {
	if slices.Equal(a, b) {
		return true
	}
	n := 0
	for _, l := range a {
		n += len(l.s) + len(l.m)
	}
	for _, l := range b {
		n -= len(l.s) + len(l.m)
	}
	return n == 2*(len(b)-len(a)) && keyCompare(a, b) == 0
}

// keyReader reads a group's key byte by byte.
type keyReader struct {
	g    []lit
	part int // 0: in s, 1: the NUL after s, 2: in m, 3: the NUL after m
	i    int
}

func (r *keyReader) next() (byte, bool) {
	for len(r.g) > 0 {
		l := &r.g[0]
		switch r.part {
		case 0, 2:
			str := l.s
			if r.part == 2 {
				str = l.m
			}
			if r.i < len(str) {
				r.i++
				return str[r.i-1], true
			}
			r.part, r.i = r.part+1, 0
		case 1:
			r.part = 2
			return 0, true
		default:
			r.part, r.g = 0, r.g[1:]
			return 0, true
		}
	}
	return 0, false
}

// groupImplies reports whether an occurrence of some element of h always
// contains an occurrence of some element of g, making g redundant next to h.
func groupImplies(h, g []lit) bool {
	for _, x := range h {
		if !slices.ContainsFunc(g, func(y lit) bool { return implies(x, y) }) {
			return false
		}
	}
	return true
}
