package multimatch

import (
	"regexp/syntax"
	"unicode"
	"unicode/utf8"
)

// maxWidth returns the most bytes a match of re can span, or -1 when that is
// unbounded.
func maxWidth(re *syntax.Regexp) int {
	const limit = 1 << 20
	w := 0
	switch re.Op {
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			n := runeWidth(r)
			if re.Flags&syntax.FoldCase != 0 {
				for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
					n = max(n, runeWidth(f))
				}
			}
			w += n
		}
	case syntax.OpCharClass:
		if len(re.Rune) > 0 {
			w = runeWidth(re.Rune[len(re.Rune)-1])
		}
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		w = utf8.UTFMax
	case syntax.OpCapture, syntax.OpQuest:
		w = maxWidth(re.Sub[0])
	case syntax.OpStar, syntax.OpPlus:
		if maxWidth(re.Sub[0]) != 0 {
			return -1
		}
	case syntax.OpRepeat:
		s := maxWidth(re.Sub[0])
		switch {
		case s == 0:
		case s < 0 || re.Max < 0:
			return -1
		default:
			w = s * re.Max
		}
	case syntax.OpConcat:
		for _, s := range re.Sub {
			x := maxWidth(s)
			if x < 0 {
				return -1
			}
			w += x
		}
	case syntax.OpAlternate:
		for _, s := range re.Sub {
			x := maxWidth(s)
			if x < 0 {
				return -1
			}
			w = max(w, x)
		}
	}
	if w > limit {
		return -1
	}
	return w
}

// runeWidth is the most bytes the regexp engine matches for rune r: its
// encoding, and 3 for U+FFFD (which also matches a single invalid byte).
func runeWidth(r rune) int {
	switch {
	case r < 0x80:
		return 1
	case r < 0x800:
		return 2
	case r < 0x10000:
		return 3
	}
	return 4
}

func contextOf(re *syntax.Regexp) ctxFlags {
	var f ctxFlags
	switch re.Op {
	case syntax.OpBeginText:
		f = ctxBeginText
	case syntax.OpEndText:
		f = ctxEndText
	case syntax.OpBeginLine:
		f = ctxBeginLine
	case syntax.OpEndLine:
		f = ctxEndLine
	case syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		f = ctxWord
	}
	for _, s := range re.Sub {
		f |= contextOf(s)
	}
	return f
}

// startsAnchored reports whether every match of re starts at the beginning of the text.
func startsAnchored(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpBeginText:
		return true
	case syntax.OpConcat:
		return len(re.Sub) > 0 && startsAnchored(re.Sub[0])
	case syntax.OpCapture:
		return startsAnchored(re.Sub[0])
	case syntax.OpAlternate:
		for _, s := range re.Sub {
			if !startsAnchored(s) {
				return false
			}
		}
		return len(re.Sub) > 0
	}
	return false
}
