package multimatch

import (
	"cmp"
	"encoding/binary"
	"regexp/syntax"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Limits of the literal extraction. They only trade prefilter selectivity
// for automaton size; none of them affects correctness.
const (
	maxSet          = 128        // elements in one literal set
	maxLitLen       = 32         // bytes in one literal
	maxProduct      = 2 * maxSet // pairs computed by one cross product
	maxClassRunes   = 256        // larger classes are summarised by their leading bytes
	maxGroups       = 3          // required groups kept per pattern (conjunction)
	maxNodeGroups   = 8          // groups carried up the syntax tree per node
	groupCostLimit  = 0.25       // groups estimated to fire more often than this per byte are useless
	minSecondaryLen = 3          // shorter literals occur too often to be worth a second group
)

// lit is a byte string that must occur in the text. ASCII letters match in
// either case (and are stored in lower case) unless m marks them
// case-sensitive; case-sensitive letters keep their case in s.
//
// m is "" when no byte is case-sensitive, else len(s) bytes of 0 or 1.
type lit struct {
	s string
	m string
}

// key is the form the automaton searches for: s with ASCII folded to lower case.
func (l lit) key() string { return asciiLower(l.s) }

func (l lit) sensitive(i int) bool { return l.m != "" && l.m[i] == 1 }

// sub returns l.s[i:j] with its mask.
func (l lit) sub(i, j int) lit {
	r := lit{s: l.s[i:j]}
	if l.m != "" {
		r.m = normMask(l.m[i:j])
	}
	return r
}

func normMask(m string) string {
	if strings.IndexByte(m, 1) < 0 {
		return ""
	}
	return m
}

func cat(a, b lit) lit {
	if a.s == "" {
		return b
	}
	if b.s == "" {
		return a
	}
	r := lit{s: a.s + b.s}
	if a.m != "" || b.m != "" {
		r.m = maskOf(a) + maskOf(b)
	}
	return r
}

func maskOf(l lit) string {
	if l.m != "" {
		return l.m
	}
	return strings.Repeat("\x00", len(l.s))
}

func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; 'A' <= c && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if c := b[j]; 'A' <= c && c <= 'Z' {
					b[j] = c + 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

func isLower(c byte) bool { return 'a' <= c && c <= 'z' }
func isUpper(c byte) bool { return 'A' <= c && c <= 'Z' }

// ---- literal sets ----

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

// ---- cost model ----

// English letter frequencies (per cent of letters).
var letterFreq = [26]float64{
	8.2, 1.5, 2.8, 4.3, 12.7, 2.2, 2.0, 6.1, 7.0, 0.15, 0.8, 4.0, 2.4,
	6.7, 7.5, 1.9, 0.1, 6.0, 6.3, 9.1, 2.8, 1.0, 2.4, 0.15, 2.0, 0.07,
}

// byteProb estimates how likely a position of a typical answer holds c.
func byteProb(c byte, sensitive bool) float64 {
	switch {
	case isLower(c):
		p := letterFreq[c-'a'] / 100 * 0.78
		if sensitive {
			p *= 0.95
		}
		return p
	case isUpper(c):
		p := letterFreq[c-'A'] / 100 * 0.78
		if sensitive {
			p *= 0.1
		}
		return p
	case c == ' ':
		return 0.16
	case c == '\n':
		return 0.02
	case c == '.' || c == ',':
		return 0.012
	case '0' <= c && c <= '9':
		return 0.004
	case c < 0x80:
		return 0.003
	default:
		return 0.01
	}
}

func litCost(l lit) float64 {
	p := 1.0
	if l.m == "" {
		for i := 0; i < len(l.s); i++ {
			p *= probOf[0][l.s[i]]
		}
		return p
	}
	for i := 0; i < len(l.s); i++ {
		p *= probOf[l.m[i]][l.s[i]]
	}
	return p
}

// probOf[sensitive][c] is byteProb(c, sensitive == 1), looked up rather than computed:
// every group's cost multiplies it over every byte of every element.
var probOf = func() (t [2][256]float64) {
	for c := range 256 {
		t[0][c], t[1][c] = byteProb(byte(c), false), byteProb(byte(c), true)
	}
	return t
}()

// setCost estimates the probability that some element occurs at a position.
func setCost(set []lit) float64 {
	c := 0.0
	for _, l := range set {
		c += litCost(l) + 1e-9
	}
	return c
}

// ---- analysis ----

// info describes what every match of a subexpression looks like.
//
//   - exact: every match is one of ex (ex is a finite superset of the language).
//   - pre: every match starts with an element of pre; suf likewise for ends.
//     A set holding "" carries no information.
//   - groups: each group is a set of which some element occurs in every match
//     (a conjunction of disjunctions).
//
// An empty set means the subexpression cannot match at all.
type info struct {
	exact    bool
	ex       []lit
	pre, suf []lit
	groups   [][]lit
}

var emptyOnly = []lit{{}}

// anything is the info of a subexpression that says nothing; one value serves them all,
// as an info is never modified once made (analyses share infos and their sets freely).
func anything() *info { return anyInfo }

var anyInfo = &info{pre: emptyOnly, suf: emptyOnly}

// emptyInfo is exactInfo(emptyOnly), the info of every assertion, made once.
var emptyInfo = exactInfo(emptyOnly)

func exactInfo(set []lit) *info {
	return &info{exact: true, ex: set, pre: set, suf: set}
}

// allGroups lists every requirement known about x.
func (x *info) allGroups() [][]lit {
	gs := slices.Clone(x.groups)
	gs = append(gs, x.pre, x.suf)
	if x.exact {
		gs = append(gs, x.ex)
	}
	return gs
}

// numGroups and group list allGroups without making the list.
func (x *info) numGroups() int {
	n := len(x.groups) + 2
	if x.exact {
		n++
	}
	return n
}

func (x *info) group(i int) []lit {
	switch i -= len(x.groups); {
	case i < 0:
		return x.groups[i+len(x.groups)]
	case i == 0:
		return x.pre
	case i == 1:
		return x.suf
	}
	return x.ex
}

// bestGroup returns the cheapest non-trivial group of x, or nil.
func (x *info) bestGroup() []lit {
	var best []lit
	bestCost := 0.0
	for i := range x.numGroups() {
		g := x.group(i)
		if hasEmpty(g) {
			continue
		}
		if c := setCost(g); best == nil || c < bestCost {
			best, bestCost = g, c
		}
	}
	return best
}

func (x *info) addGroup(g []lit) {
	if hasEmpty(g) {
		return
	}
	x.groups = append(x.groups, g)
}

// prune keeps the cheapest maxNodeGroups groups.
func (x *info) prune() {
	if len(x.groups) <= maxNodeGroups {
		return
	}
	type costed struct {
		g []lit
		c float64
	}
	cs := make([]costed, len(x.groups))
	for i, g := range x.groups {
		cs[i] = costed{g, setCost(g)}
	}
	slices.SortStableFunc(cs, func(a, b costed) int { return cmp.Compare(a.c, b.c) })
	x.groups = x.groups[:maxNodeGroups]
	for i := range x.groups {
		x.groups[i] = cs[i].g
	}
}

func analyze(re *syntax.Regexp) *info { return (*litArena)(nil).analyze(re) }

func (ar *litArena) analyze(re *syntax.Regexp) *info {
	switch re.Op {
	case syntax.OpNoMatch:
		return ar.exactInfo([]lit{})
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine,
		syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return emptyInfo
	case syntax.OpLiteral:
		fold := re.Flags&syntax.FoldCase != 0
		if x := ar.literalInfo(re.Rune, fold); x != nil {
			return x
		}
		parts := make([]*info, len(re.Rune))
		for i, r := range re.Rune {
			parts[i] = runeInfo(r, fold)
		}
		return ar.concatInfo(parts)
	case syntax.OpCharClass:
		return classInfo(re.Rune)
	case syntax.OpAnyCharNotNL, syntax.OpAnyChar:
		return anything()
	case syntax.OpCapture:
		return ar.analyze(re.Sub[0])
	case syntax.OpStar:
		return anything()
	case syntax.OpQuest:
		if neverExact(re.Sub[0], 8) {
			// Simplify turns .{0,80} into 80 nested (.(...)?)?: analysing each
			// level would only find that it is not exact, 80 times over.
			return anything()
		}
		c := ar.analyze(re.Sub[0])
		if c.exact {
			if u := ar.union(c.ex, emptyOnly); len(u) <= maxSet {
				return ar.exactInfo(u)
			}
		}
		return anything()
	case syntax.OpPlus:
		return ar.atLeastOnce(ar.analyze(re.Sub[0]), 1, -1)
	case syntax.OpRepeat:
		if re.Min == 0 {
			return anything()
		}
		return ar.atLeastOnce(ar.analyze(re.Sub[0]), re.Min, re.Max)
	case syntax.OpConcat:
		parts := make([]*info, len(re.Sub))
		for i, s := range re.Sub {
			parts[i] = ar.analyze(s)
		}
		return ar.concatInfo(parts)
	case syntax.OpAlternate:
		parts := make([]*info, len(re.Sub))
		for i, s := range re.Sub {
			parts[i] = ar.analyze(s)
		}
		return ar.alternateInfo(parts)
	}
	// Unknown operator: assume nothing.
	return anything()
}

// neverExact reports, looking at most depth levels down, that analyze(re) is
// surely not exact (false: it may be). Only what analyze's cases make
// inexact whatever the sizes counts: ., x*, x+, x{0,n}, and a concatenation,
// alternation, capture or x? holding one.
func neverExact(re *syntax.Regexp, depth int) bool {
	switch re.Op {
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL, syntax.OpStar, syntax.OpPlus:
		return true
	case syntax.OpRepeat:
		return re.Min == 0 || re.Max != re.Min || depth > 0 && neverExact(re.Sub[0], depth-1)
	case syntax.OpConcat, syntax.OpAlternate, syntax.OpCapture, syntax.OpQuest:
		if depth == 0 {
			return false
		}
		for _, s := range re.Sub {
			if neverExact(s, depth-1) {
				return true
			}
		}
	}
	return false
}

// atLeastOnce handles x{min,max} with min >= 1 (max < 0: unbounded).
func (ar *litArena) atLeastOnce(c *info, min, max int) *info {
	if c.exact && min == max {
		set := emptyOnly
		ok := true
		for i := 0; i < min && ok; i++ {
			set, ok = ar.product(set, c.ex)
		}
		if ok {
			return ar.exactInfo(set)
		}
	}
	x := ar.info()
	x.pre, x.suf = c.pre, c.suf
	x.groups = c.allGroups()
	for i := len(x.groups) - 1; i >= 0; i-- {
		if hasEmpty(x.groups[i]) {
			x.groups = slices.Delete(x.groups, i, i+1)
		}
	}
	x.prune()
	return x
}

// runeInfo describes one literal rune; ASCII runes' infos are made once (see
// asciiInfos): every k and s of a case-insensitive word comes here.
func runeInfo(r rune, fold bool) *info {
	if r < utf8.RuneSelf && r >= 0 {
		f := 0
		if fold {
			f = 1
		}
		return asciiInfos[f][r]
	}
	return describeRune(r, fold)
}

// asciiInfos[fold][r] is describeRune(r, fold == 1); infos are never modified.
var asciiInfos = func() (t [2][utf8.RuneSelf]*info) {
	for r := range rune(utf8.RuneSelf) {
		t[0][r], t[1][r] = describeRune(r, false), describeRune(r, true)
	}
	return t
}()

// describeRune is runeInfo without the table.
func describeRune(r rune, fold bool) *info {
	if r == utf8.RuneError || !utf8.ValidRune(r) {
		// U+FFFD also matches every invalid byte of the text: no literal.
		return anything()
	}
	if !fold {
		return exactInfo([]lit{runeLit(r, false)})
	}
	orbit := []rune{r}
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		orbit = append(orbit, f)
	}
	return exactInfo(runesToLits(orbit))
}

// runeLit is the literal for one rune; an ASCII letter is case-insensitive
// when foldASCII is set and case-sensitive otherwise.
func runeLit(r rune, foldASCII bool) lit {
	s := string(r)
	if r < 0x80 && (isLower(byte(r)) || isUpper(byte(r))) {
		if foldASCII {
			return lit{s: asciiLower(s)}
		}
		return lit{s: s, m: "\x01"}
	}
	return lit{s: s}
}

// runesToLits turns a set of runes into literals, merging the two cases of
// an ASCII letter into one case-insensitive literal.
func runesToLits(rs []rune) []lit {
	var present [128]bool
	for _, r := range rs {
		if r < 0x80 {
			present[r] = true
		}
	}
	out := make([]lit, 0, len(rs))
	for _, r := range rs {
		if r < 0x80 {
			c := byte(r)
			if isUpper(c) && present[c+'a'-'A'] || isLower(c) && present[c-'a'+'A'] {
				out = append(out, runeLit(r, true))
				continue
			}
		}
		out = append(out, runeLit(r, false))
	}
	return dedup(out)
}

// classInfo describes a character class given as sorted ranges. The same
// classes (\d, \w, [A-Za-z0-9], an emoji block) recur in pattern after
// pattern, and a large one costs more to describe than the rest of its
// pattern, so descriptions are kept (infos are never modified once made).
func classInfo(ranges []rune) *info {
	var buf [64]byte
	key := buf[:0]
	for _, r := range ranges {
		key = binary.LittleEndian.AppendUint32(key, uint32(r))
	}
	classes.RLock()
	x, ok := classes.m[string(key)]
	classes.RUnlock()
	if ok {
		return x
	}
	x = describeClass(ranges)
	classes.Lock()
	if len(classes.m) < maxClasses {
		if classes.m == nil {
			classes.m = map[string]*info{}
		}
		classes.m[string(key)] = x
	}
	classes.Unlock()
	return x
}

// classes holds the descriptions of classes seen, by their ranges (4 bytes
// per rune), up to maxClasses of them.
var classes struct {
	sync.RWMutex
	m map[string]*info
}

const maxClasses = 4096

// describeClass is classInfo without the cache.
func describeClass(ranges []rune) *info {
	n := 0
	for i := 0; i < len(ranges); i += 2 {
		lo, hi := ranges[i], ranges[i+1]
		if lo <= utf8.RuneError && utf8.RuneError <= hi {
			// The class matches invalid bytes too.
			return anything()
		}
		n += int(hi-lo) + 1
	}
	if n <= maxClassRunes {
		rs := make([]rune, 0, n)
		for i := 0; i < len(ranges); i += 2 {
			for r := ranges[i]; r <= ranges[i+1]; r++ {
				if utf8.ValidRune(r) {
					rs = append(rs, r)
				}
			}
		}
		set := runesToLits(rs)
		if len(set) <= maxSet {
			return exactInfo(set)
		}
		return &info{pre: shrinkPrefix(set), suf: shrinkSuffix(set)}
	}
	// Large class: every match starts with one of the leading bytes.
	var ascii []rune
	var lead [256]bool
	for i := 0; i < len(ranges); i += 2 {
		lo, hi := ranges[i], ranges[i+1]
		if lo < 0x80 {
			for r := lo; r <= min(hi, 0x7f); r++ {
				ascii = append(ascii, r)
			}
			lo = 0x80
		}
		if lo > hi {
			continue
		}
		// Split at encoding-length boundaries; within one length the
		// leading byte grows monotonically and takes every value between.
		for _, bound := range [...]rune{0x800, 0x10000, utf8.MaxRune + 1} {
			if lo > hi {
				break
			}
			if lo >= bound {
				continue
			}
			top := min(hi, bound-1)
			a, b := lo, top
			// Surrogates never occur in decoded text and do not encode.
			if 0xD800 <= a && a <= 0xDFFF {
				a = 0xE000
			}
			if 0xD800 <= b && b <= 0xDFFF {
				b = 0xD7FF
			}
			if a <= b {
				for c := leadByte(a); c <= leadByte(b); c++ {
					lead[c] = true
				}
			}
			lo = top + 1
		}
	}
	set := runesToLits(ascii)
	for c := 0x80; c < 0x100; c++ {
		if lead[c] {
			set = append(set, lit{s: string([]byte{byte(c)})})
		}
	}
	set = dedup(set)
	if len(set) > maxSet {
		return anything()
	}
	return &info{pre: set, suf: emptyOnly}
}

func leadByte(r rune) byte {
	var buf [utf8.UTFMax]byte
	utf8.EncodeRune(buf[:], r)
	return buf[0]
}

// concatInfo is the info of the concatenation of parts.
func (ar *litArena) concatInfo(parts []*info) *info {
	out := ar.info()
	n := 1 // at most: the parts' groups, four a part, one at the end
	for _, c := range parts {
		n += len(c.groups) + 4
	}
	out.groups = ar.allocGroups(n)
	// Forward pass: cur is a set of which every match of parts[:i] ends
	// with an element (exact while curExact).
	cur, curExact := emptyOnly, true
	preSet := false
	for _, c := range parts {
		out.groups = append(out.groups, c.groups...)
		if c.exact {
			if p, ok := ar.product(cur, c.ex); ok {
				cur = p
				continue
			}
			out.addGroup(cur)
			if !preSet {
				out.pre, preSet = cur, true
			}
			cur, curExact = c.ex, false
			continue
		}
		if p, ok := ar.product(cur, c.pre); ok {
			out.addGroup(p)
			if !preSet {
				out.pre, preSet = p, true
			}
		} else {
			out.addGroup(cur)
			out.addGroup(c.pre)
			if p != nil {
				out.addGroup(ar.shrink(p, true))
				out.addGroup(ar.shrink(p, false))
			}
			if !preSet {
				out.pre, preSet = cur, true
			}
		}
		cur, curExact = c.suf, false
	}
	if curExact {
		out.exact, out.ex = true, cur
		out.pre, out.suf = cur, cur
		out.prune()
		return out
	}
	out.addGroup(cur)
	// Backward pass for the suffix set.
	cur = emptyOnly
	sufSet := false
	for i := len(parts) - 1; i >= 0 && !sufSet; i-- {
		c := parts[i]
		if c.exact {
			if p, ok := ar.product(c.ex, cur); ok {
				cur = p
				continue
			}
			out.suf, sufSet = cur, true
			continue
		}
		if p, ok := ar.product(c.suf, cur); ok {
			out.suf = p
		} else {
			out.suf = cur
		}
		sufSet = true
	}
	if !sufSet {
		out.suf = cur
	}
	out.prune()
	return out
}

func (ar *litArena) alternateInfo(parts []*info) *info {
	out := ar.info()
	out.exact = true
	var ex, pre, suf, best []lit
	bestOK := true
	// Accumulate with append and compact now and then: alternations can
	// have thousands of branches.
	compact := func(set []lit, keepPrefix bool) []lit {
		if len(set) <= 4*maxSet {
			return set
		}
		return ar.shrink(dedup(set), keepPrefix)
	}
	// One backing array for the four lists, sized for the whole loop unless
	// compact will cut them anyway: appending element by element reallocated
	// each list a few times over.
	nex, npre, nsuf, nbest := 0, 0, 0, 0
	for _, c := range parts {
		nex, npre, nsuf = nex+len(c.ex), npre+len(c.pre), nsuf+len(c.suf)
		nbest += len(c.pre) // a guess: groups are about the size of the prefix sets
	}
	nex, npre, nsuf, nbest = min(nex, 8*maxSet), min(npre, 8*maxSet), min(nsuf, 8*maxSet), min(nbest, 8*maxSet)
	buf := ar.alloc(nex + npre + nsuf + nbest)
	ex, buf = buf[:0:nex], buf[nex:nex:cap(buf)]
	pre, buf = buf[:0:npre], buf[npre:npre:cap(buf)]
	suf, best = buf[:0:nsuf], buf[nsuf:nsuf:cap(buf)]
	for _, c := range parts {
		if out.exact && c.exact && len(ex) <= 4*maxSet {
			ex = append(ex, c.ex...)
		} else {
			out.exact = false
		}
		pre = compact(append(pre, c.pre...), true)
		suf = compact(append(suf, c.suf...), false)
		if bestOK {
			if g := c.bestGroup(); g != nil {
				best = compact(append(best, g...), true)
			} else {
				bestOK = false
			}
		}
	}
	if out.exact {
		if ex = dedup(ex); len(ex) <= maxSet {
			return ar.exactInfo(ex)
		}
		out.exact = false
	}
	out.pre = ar.shrink(dedup(pre), true)
	out.suf = ar.shrink(dedup(suf), false)
	if bestOK {
		out.addGroup(ar.shrink(dedup(best), true))
	}
	return out
}

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
