package multimatch

import (
	"slices"
	"strings"
)

func cmpLit(a, b lit) int {
	if c := strings.Compare(a.s, b.s); c != 0 {
		return c
	}
	return strings.Compare(a.m, b.m)
}

func dedup(set []lit) []lit {
	slices.SortFunc(set, cmpLit)
	return slices.Compact(set)
}

func hasEmpty(set []lit) bool {
	for _, l := range set {
		if l.s == "" {
			return true
		}
	}
	return false
}

func minLen(set []lit) int {
	n := -1
	for _, l := range set {
		if n < 0 || len(l.s) < n {
			n = len(l.s)
		}
	}
	return n
}

func maxLen(set []lit) int {
	n := 0
	for _, l := range set {
		n = max(n, len(l.s))
	}
	return n
}

// union returns the literals of a and b, each once.
func (ar *litArena) union(a, b []lit) []lit {
	r := ar.alloc(len(a) + len(b))
	r = append(r, a...)
	r = append(r, b...)
	return dedup(r)
}

// product returns {x+y : x in a, y in b}; fits reports whether the result
// respects maxSet and maxLitLen. It returns nil, false when the product is
// too expensive to compute.
func (ar *litArena) product(a, b []lit) (res []lit, fits bool) {
	if len(a)*len(b) > maxProduct {
		return nil, false
	}
	// A side that is the empty string alone (an assertion: \b, ^) gives the other.
	switch {
	case len(b) == 1 && b[0] == lit{}:
		return a, len(a) <= maxSet && maxLen(a) <= maxLitLen
	case len(a) == 1 && a[0] == lit{}:
		return b, len(b) <= maxSet && maxLen(b) <= maxLitLen
	}
	res = ar.catAll(a, b)
	if len(a) > 1 && len(b) > 1 {
		// With a singleton side the elements are already distinct.
		res = dedup(res)
	}
	return res, len(res) <= maxSet && maxLen(res) <= maxLitLen
}

// catAll returns cat(x, y) for every x of a and y of b, in that order. The
// elements' bytes are written into one string and sliced from it (and their
// masks into another): one allocation or two for the product, not one or two
// per element. A cold load of 10,000 patterns concatenated 400,000 literals.
func (ar *litArena) catAll(a, b []lit) []lit {
	res := ar.alloc(len(a) * len(b))
	n, nm := 0, 0
	for _, x := range a {
		for _, y := range b {
			if x.s != "" && y.s != "" {
				n += len(x.s) + len(y.s)
				if x.m != "" || y.m != "" {
					nm += len(x.s) + len(y.s)
				}
			}
		}
	}
	var sb, mb strings.Builder
	sb.Grow(n)
	mb.Grow(nm)
	for _, x := range a {
		for _, y := range b {
			if x.s != "" && y.s != "" {
				sb.WriteString(x.s)
				sb.WriteString(y.s)
				if x.m != "" || y.m != "" {
					writeMask(&mb, x)
					writeMask(&mb, y)
				}
			}
		}
	}
	ss, ms := sb.String(), mb.String()
	for _, x := range a {
		for _, y := range b {
			switch {
			case x.s == "":
				res = append(res, y)
			case y.s == "":
				res = append(res, x)
			default:
				k := len(x.s) + len(y.s)
				r := lit{s: ss[:k]}
				ss = ss[k:]
				if x.m != "" || y.m != "" {
					r.m, ms = ms[:k], ms[k:]
				}
				res = append(res, r)
			}
		}
	}
	return res
}

// writeMask writes maskOf(l) to b.
func writeMask(b *strings.Builder, l lit) {
	if l.m != "" {
		b.WriteString(l.m)
		return
	}
	for range len(l.s) {
		b.WriteByte(0)
	}
}

// shrinkPrefix cuts the elements of set (keeping their beginnings) until the
// set respects the limits. Every element of the result is a prefix of an
// element of set and every element of set starts with one of the result.
func shrinkPrefix(set []lit) []lit { return (*litArena)(nil).shrink(set, true) }

// shrinkSuffix is shrinkPrefix keeping the ends of the elements.
func shrinkSuffix(set []lit) []lit { return (*litArena)(nil).shrink(set, false) }

func (ar *litArena) shrink(set []lit, keepPrefix bool) []lit {
	cut := func(l lit, n int) lit {
		if len(l.s) <= n {
			return l
		}
		if keepPrefix {
			return l.sub(0, n)
		}
		return l.sub(len(l.s)-n, len(l.s))
	}
	if maxLen(set) > maxLitLen {
		out := ar.alloc(len(set))[:len(set)]
		for i, l := range set {
			out[i] = cut(l, maxLitLen)
		}
		set = dedup(out)
	}
	for len(set) > maxSet {
		n := maxLen(set)
		if n == 0 {
			break
		}
		out := ar.alloc(len(set))[:len(set)]
		for i, l := range set {
			out[i] = cut(l, n-1)
		}
		set = dedup(out)
	}
	return set
}

// minimize drops elements that contain another element (whose presence is
// then implied), which shrinks the automaton without changing the condition.
//
// Small sets are compared pair by pair. In larger ones an element b can only
// be implied by a substring of a that equals b once both are ASCII-folded, so
// each element's substrings of the lengths the set has are looked up among
// the folded elements: n·L·D lookups (D distinct lengths) instead of n²
// comparisons, case-sensitive elements included, and implies runs only on the
// few pairs a lookup finds.
func minimize(set []lit) []lit { return (*litArena)(nil).minimizeWith(set, nil) }

// minScratch is minimize's working memory, kept by a memo between calls.
type minScratch struct {
	folded  map[string]int32
	next    []int32
	lows    []string
	lens    []int
	filters []headFilter
}

// minimizeWith is minimize using sc's memory (nil: its own).
func (ar *litArena) minimizeWith(set []lit, sc *minScratch) []lit {
	if !slices.IsSortedFunc(set, cmpLit) || hasDup(set) {
		set = dedup(slices.Clone(set))
	}
	if len(set) <= smallSet {
		return ar.minimizeSmall(set)
	}
	if sameLenFolded(set) {
		// Distinct elements of one length, none case-sensitive: none contains
		// another (a cross product of such sets, the commonest large set).
		return set
	}
	if sc == nil {
		sc = &minScratch{}
	}
	// Folded element -> its indices, chained through next (-1 ends a chain);
	// per length, a filter of the elements' first two bytes skips most
	// lookups (a set's elements are mostly variants of one another, and few
	// contain another).
	if sc.folded == nil {
		sc.folded = make(map[string]int32, len(set))
	} else {
		clear(sc.folded)
	}
	folded := sc.folded
	next := slices.Grow(sc.next[:0], len(set))[:len(set)]
	lows := slices.Grow(sc.lows[:0], len(set))[:len(set)]
	lens, filters := sc.lens[:0], sc.filters[:0]
	for i, l := range set {
		low := l.s
		if l.m != "" {
			low = asciiLower(l.s)
		}
		lows[i] = low
		next[i] = -1
		if j, ok := folded[low]; ok {
			next[i] = j
		}
		folded[low] = int32(i)
		k := slices.Index(lens, len(low))
		if k < 0 {
			k = len(lens)
			lens = append(lens, len(low))
			filters = append(filters, headFilter{})
		}
		filters[k].add(low)
	}
	sc.next, sc.lows, sc.lens, sc.filters = next, lows, lens, filters
	var out keep
outer:
	for i, a := range set {
		low := lows[i]
		for k, n := range lens {
			f := &filters[k]
			for x := 0; x+n <= len(low); x++ {
				if !f.has(low[x : x+n]) {
					continue
				}
				j, ok := folded[low[x:x+n]]
				for ; ok && j >= 0; j = next[j] {
					if int(j) != i && (n < len(a.s) || int(j) < i) && implies(a, set[j]) {
						out.drop(ar, set, i)
						continue outer
					}
				}
			}
		}
		out.keep(a)
	}
	clear(lows) // do not keep the strings alive
	return out.result(set)
}

// keep collects the elements of a set that minimize keeps, in order, making a
// new list only once one is dropped: most sets lose none, and the set is then
// returned as it is (sets are never modified once made).
type keep struct {
	out     []lit
	dropped bool
}

// drop notes that set[i] is dropped; the elements before it were kept.
func (k *keep) drop(ar *litArena, set []lit, i int) {
	if !k.dropped {
		k.dropped = true
		k.out = append(ar.alloc(len(set)-1), set[:i]...)
	}
}

// keep notes that a is kept.
func (k *keep) keep(a lit) {
	if k.dropped {
		k.out = append(k.out, a)
	}
}

func (k *keep) result(set []lit) []lit {
	if !k.dropped {
		return set
	}
	return k.out
}

// sameLenFolded reports whether the elements of a set (distinct) all have one
// length and no case-sensitive byte.
func sameLenFolded(set []lit) bool {
	for _, l := range set {
		if l.m != "" || len(l.s) != len(set[0].s) {
			return false
		}
	}
	return true
}

// headFilter is a 256-bit filter of the first two bytes of strings.
type headFilter [4]uint64

func headBit(s string) uint {
	h := uint(s[0])
	if len(s) > 1 {
		h = h*31 + uint(s[1])
	}
	return h & 255
}

func (f *headFilter) add(s string) {
	if s != "" {
		b := headBit(s)
		f[b>>6] |= 1 << (b & 63)
	}
}

// has reports whether s may have been added (the empty string never is).
func (f *headFilter) has(s string) bool {
	if s == "" {
		return false
	}
	b := headBit(s)
	return f[b>>6]&(1<<(b&63)) != 0
}

// hasDup reports whether a sorted set holds an element twice.
func hasDup(set []lit) bool {
	for i := 1; i < len(set); i++ {
		if set[i] == set[i-1] {
			return true
		}
	}
	return false
}

// smallSet is the size up to which minimize compares pairs.
const smallSet = 16

// minimizeSmall is minimizePairs for a set of at most smallSet elements, calling implies
// only when a's bytes hold b's first byte (folded): an occurrence of b in a would.
func (ar *litArena) minimizeSmall(set []lit) []lit {
	var first [smallSet]int16   // folded first byte, -1: the empty string
	var has [smallSet][4]uint64 // folded bytes present
	for i, l := range set {
		first[i] = -1
		for k := 0; k < len(l.s); k++ {
			c := asciiLowerByte(l.s[k])
			if k == 0 {
				first[i] = int16(c)
			}
			has[i][c>>6] |= 1 << (c & 63)
		}
	}
	var out keep
outer:
	for i, a := range set {
		for j, b := range set {
			if i != j && len(b.s) <= len(a.s) && (len(b.s) < len(a.s) || j < i) &&
				(first[j] < 0 || has[i][first[j]>>6]&(1<<(first[j]&63)) != 0) && implies(a, b) {
				out.drop(ar, set, i)
				continue outer
			}
		}
		out.keep(a)
	}
	return out.result(set)
}

// minimizePairs is minimize by comparing every pair: the reference the tests hold the
// others to.
func minimizePairs(set []lit) []lit {
	out := make([]lit, 0, len(set))
outer:
	for i, a := range set {
		for j, b := range set {
			if i != j && len(b.s) <= len(a.s) && (len(b.s) < len(a.s) || j < i) && implies(a, b) {
				continue outer
			}
		}
		out = append(out, a)
	}
	return out
}

// implies reports whether an occurrence of a always contains an occurrence of b.
func implies(a, b lit) bool {
	if len(b.s) > len(a.s) {
		return false
	}
	if b.m == "" {
		// b matches in any case: a's folded form must contain it.
		if a.m == "" {
			return strings.Contains(a.s, b.s)
		}
		return strings.Contains(asciiLower(a.s), b.s)
	}
	for off := 0; off+len(b.s) <= len(a.s); off++ {
		ok := true
		for k := 0; k < len(b.s) && ok; k++ {
			x, y := a.s[off+k], b.s[k]
			switch {
			case b.sensitive(k):
				ok = a.sensitive(off+k) && x == y
			case a.sensitive(off + k):
				ok = asciiLowerByte(x) == y
			default:
				ok = x == y
			}
		}
		if ok {
			return true
		}
	}
	return false
}

func asciiLowerByte(c byte) byte {
	if isUpper(c) {
		return c + 'a' - 'A'
	}
	return c
}
