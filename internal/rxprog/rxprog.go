package rxprog

import (
	"bytes"
	"regexp/syntax"
	"unicode"
	"unicode/utf8"

	"github.com/streamrules/streamrules/internal/lazydfa"
)

// ByteSet is the set of bytes a match can start with (FirstBytes).
type ByteSet struct {
	in  [256]bool
	one int // the only byte in the set, or -1
}

// Has reports whether b is in the set.
func (s *ByteSet) Has(b byte) bool { return s.in[b] }

// FirstBytes returns the bytes a match of prog can start with, counting every non-ASCII
// byte in when a rune at or above utf8.RuneSelf can start one, or nil when it cannot tell
// (an assertion, any rune, an empty match). A stream whose cursor has no thread alive
// stays so over bytes outside the set: no match starts there, and with no assertion
// nothing before a start matters.
func FirstBytes(prog *syntax.Prog) *ByteSet {
	s := &ByteSet{one: -1}
	high := func() {
		for b := utf8.RuneSelf; b < 256; b++ {
			s.in[b] = true
		}
	}
	add := func(r rune, fold bool) {
		if r >= utf8.RuneSelf {
			high()
			return
		}
		s.in[r] = true
		if fold {
			for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
				if f >= utf8.RuneSelf {
					high()
				} else {
					s.in[f] = true
				}
			}
		}
	}
	unknown := false
	var w lazydfa.Walker
	w.Walk(prog, []uint32{uint32(prog.Start)}, func(_ uint32, in *syntax.Inst) bool {
		switch in.Op {
		case syntax.InstRune1:
			add(in.Rune[0], false)
		case syntax.InstRune:
			fold := syntax.Flags(in.Arg)&syntax.FoldCase != 0
			if len(in.Rune) == 1 {
				add(in.Rune[0], fold)
				break
			}
			for i := 0; i+1 < len(in.Rune); i += 2 {
				lo, hi := in.Rune[i], in.Rune[i+1]
				for r := lo; r <= min(hi, utf8.RuneSelf-1); r++ {
					add(r, fold)
				}
				if hi >= utf8.RuneSelf {
					high()
					if fold { // a rune above ASCII may fold to an ASCII letter (K, ſ)
						for r := 'A'; r <= 'z'; r++ {
							s.in[r] = true
						}
					}
				}
			}
		default: // InstEmptyWidth, InstMatch, InstFail, any rune
			unknown = true
		}
		return false
	})
	if unknown {
		return nil
	}
	n := 0
	for b, in := range s.in {
		if in {
			n, s.one = n+1, b
		}
	}
	if n != 1 {
		s.one = -1
	}
	return s
}

// None reports whether no byte of p is in the set.
func (s *ByteSet) None(p []byte) bool {
	if s.one >= 0 {
		return bytes.IndexByte(p, byte(s.one)) < 0
	}
	for _, b := range p {
		if s.in[b] {
			return false
		}
	}
	return true
}

// StartBytes returns the bytes a match of tree can start with: first, or, when tree is
// led by \b (which FirstBytes cannot see past), those of what follows it. nil: any byte.
func StartBytes(tree *syntax.Regexp, first *ByteSet) *ByteSet {
	if first != nil || tree.Op != syntax.OpConcat || len(tree.Sub) < 2 || tree.Sub[0].Op != syntax.OpWordBoundary {
		return first
	}
	prog, err := syntax.Compile(&syntax.Regexp{Op: syntax.OpConcat, Flags: tree.Flags, Sub: tree.Sub[1:]})
	if err != nil {
		return nil
	}
	return FirstBytes(prog)
}

// HasAssertion reports whether t holds an assertion: ^ $ \A \z \b \B.
func HasAssertion(t *syntax.Regexp) bool {
	switch t.Op {
	case syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return true
	}
	for _, s := range t.Sub {
		if HasAssertion(s) {
			return true
		}
	}
	return false
}

// StripCaptures returns a copy of t without its capture groups.
func StripCaptures(t *syntax.Regexp) *syntax.Regexp {
	for t.Op == syntax.OpCapture {
		t = t.Sub[0]
	}
	c := *t
	c.Sub = make([]*syntax.Regexp, len(t.Sub))
	for i, s := range t.Sub {
		c.Sub[i] = StripCaptures(s)
	}
	return &c
}

// MinLen is the fewest runes a match of t consumes.
func MinLen(t *syntax.Regexp) int {
	switch t.Op {
	case syntax.OpLiteral:
		return len(t.Rune)
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return 1
	case syntax.OpCapture, syntax.OpPlus:
		return MinLen(t.Sub[0])
	case syntax.OpRepeat:
		return t.Min * MinLen(t.Sub[0])
	case syntax.OpConcat:
		n := 0
		for _, s := range t.Sub {
			n += MinLen(s)
		}
		return n
	case syntax.OpAlternate:
		n := -1
		for _, s := range t.Sub {
			if m := MinLen(s); n < 0 || m < n {
				n = m
			}
		}
		return max(n, 0)
	}
	return 0
}

// RuneInsts returns the program's rune instructions.
func RuneInsts(prog *syntax.Prog) (out []*syntax.Inst) {
	for i := range prog.Inst {
		switch in := &prog.Inst[i]; in.Op {
		case syntax.InstRune, syntax.InstRune1, syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
			out = append(out, in)
		}
	}
	return out
}

// LastInsts returns the rune instructions that can consume a match's last rune.
func LastInsts(prog *syntax.Prog) (out []*syntax.Inst) {
	var w lazydfa.Walker
	for _, in := range RuneInsts(prog) {
		ends := false
		w.Walk(prog, []uint32{in.Out}, func(_ uint32, x *syntax.Inst) bool {
			ends = ends || x.Op == syntax.InstMatch
			return x.Op == syntax.InstEmptyWidth
		})
		if ends {
			out = append(out, in)
		}
	}
	return out
}

// instRanges returns the runes an instruction accepts as ranges; fold: it folds case (the
// ranges are then not the whole story, and callers assume the worst).
func instRanges(in *syntax.Inst) (rs [][2]rune, fold bool) {
	switch in.Op {
	case syntax.InstRune1:
		return [][2]rune{{in.Rune[0], in.Rune[0]}}, false
	case syntax.InstRune:
		if syntax.Flags(in.Arg)&syntax.FoldCase != 0 {
			return nil, true
		}
		if len(in.Rune) == 1 {
			return [][2]rune{{in.Rune[0], in.Rune[0]}}, false
		}
		for i := 0; i+1 < len(in.Rune); i += 2 {
			rs = append(rs, [2]rune{in.Rune[i], in.Rune[i+1]})
		}
		return rs, false
	case syntax.InstRuneAnyNotNL:
		return [][2]rune{{0, '\n' - 1}, {'\n' + 1, unicode.MaxRune}}, false
	}
	return [][2]rune{{0, unicode.MaxRune}}, false
}

// Meet reports whether some rune is accepted by an instruction of a and one of b (true
// when it cannot tell).
func Meet(a, b []*syntax.Inst) bool {
	for _, x := range a {
		xr, xf := instRanges(x)
		for _, y := range b {
			yr, yf := instRanges(y)
			if xf || yf {
				return true
			}
			for _, p := range xr {
				for _, q := range yr {
					if p[0] <= q[1] && q[0] <= p[1] {
						return true
					}
				}
			}
		}
	}
	return false
}

// Index returns the index of the first byte of p in the set, or -1.
func (s *ByteSet) Index(p []byte) int {
	if s.one >= 0 {
		return bytes.IndexByte(p, byte(s.one))
	}
	for i, b := range p {
		if s.in[b] {
			return i
		}
	}
	return -1
}

// FoldsAlike reports whether every case of r is alike for pred.
func FoldsAlike(r rune, pred func(rune) bool) bool {
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if pred(f) != pred(r) {
			return false
		}
	}
	return true
}

// FoldsTo reports whether a and b are the same rune up to case.
func FoldsTo(a, b rune) bool {
	for r := unicode.SimpleFold(a); r != a; r = unicode.SimpleFold(r) {
		if r == b {
			return true
		}
	}
	return false
}

// Simplified is a pattern's Simplified form without its groups, for comparing patterns.
func Simplified(t *syntax.Regexp) string {
	return StripCaptures(t.Simplify()).String()
}
