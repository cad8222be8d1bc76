package multimatch

import (
	"cmp"
	"encoding/binary"
	"regexp/syntax"
	"slices"
	"sync"
	"unicode"
	"unicode/utf8"
)

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
