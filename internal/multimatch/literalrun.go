package multimatch

import (
	"unicode"
	"unicode/utf8"
)

// literalInfo is analyze of a literal string (an OpLiteral's runes), built in
// one pass instead of one info and one cross product per rune: the runes with
// one literal each (all but a few folded ones) are copied into one buffer,
// and only a rune with several literals ((?i)k: k and the Kelvin sign) takes
// a cross product. It returns nil when the result would exceed the set limits
// or a rune has no literal; the rune-by-rune path then handles the literal,
// and gives the same info in every other case.
func (ar *litArena) literalInfo(runes []rune, fold bool) *info {
	// First pass: the size and width of the product, and the runes with
	// several literals.
	count, width := 1, 0
	var multi []*info // runeInfo of each rune with several literals, in order
	for _, r := range runes {
		if n := singleLitLen(r, fold); n > 0 {
			width += n
			continue
		}
		x := runeInfo(r, fold)
		if !x.exact {
			return nil
		}
		count *= len(x.ex)
		width += maxLen(x.ex)
		multi = append(multi, x)
		if count > maxSet {
			return nil
		}
	}
	if width > maxLitLen {
		return nil
	}
	var sbuf, mbuf [maxLitLen]byte // width <= maxLitLen
	s, m := sbuf[:0], mbuf[:0]
	sensitive := false
	cur := emptyOnly
	flush := func() {
		if len(s) == 0 {
			return
		}
		l := lit{s: string(s)}
		if sensitive {
			l.m = string(m)
		}
		cur, _ = ar.product(cur, append(ar.alloc(1), l))
		s, m, sensitive = s[:0], m[:0], false
	}
	for _, r := range runes {
		if singleLitLen(r, fold) == 0 {
			flush()
			cur, _ = ar.product(cur, multi[0].ex)
			multi = multi[1:]
			continue
		}
		switch {
		case r >= utf8.RuneSelf:
			s = utf8.AppendRune(s, r)
			for len(m) < len(s) {
				m = append(m, 0)
			}
		case fold:
			s, m = append(s, asciiLowerByte(byte(r))), append(m, 0)
		default:
			sens := byte(0)
			if isLower(byte(r)) || isUpper(byte(r)) {
				sens, sensitive = 1, true
			}
			s, m = append(s, byte(r)), append(m, sens)
		}
	}
	flush()
	return ar.exactInfo(cur)
}

// singleLitLen returns the length of rune r's one literal (runeInfo's), or 0
// when r has several (a folded rune whose orbit is more than an ASCII letter's
// two cases) or none (U+FFFD, an invalid rune).
func singleLitLen(r rune, fold bool) int {
	switch {
	case r == utf8.RuneError || !utf8.ValidRune(r):
		return 0
	case !fold:
		return utf8.RuneLen(r)
	case r < utf8.RuneSelf:
		if c := byte(r); isLower(c) || isUpper(c) {
			if asciiFoldsAlone[asciiLowerByte(c)] {
				return 1
			}
			return 0
		}
		return 1
	case unicode.SimpleFold(r) == r:
		return utf8.RuneLen(r)
	}
	return 0
}

// asciiFoldsAlone[c] says whether the fold orbit of lower-case ASCII letter c
// is its two cases only: every letter but k and s (the Kelvin sign, the long s).
var asciiFoldsAlone = func() (t [128]bool) {
	for c := 'a'; c <= 'z'; c++ {
		n := 0
		for f := unicode.SimpleFold(c); f != c; f = unicode.SimpleFold(f) {
			n++
		}
		t[c] = n == 1
	}
	return t
}()
