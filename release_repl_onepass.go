package streamrules

import (
	"bytes"
	"regexp/syntax"
	"slices"
	"unicode/utf8"
)

// onePass finds a replace fix's kept group in a match without regexp, for a pattern that
// is a chain of literals and greedy repeats of a character class (the image rule:
// !\[[^\]]*\]\(([^)\s]+)\)), where each repeat is followed by a part whose first rune it
// does not accept. From a given start such a pattern has one way to match: each repeat
// takes runes until one it does not accept, which the next part must begin with, and a
// repeat at the end takes all it can. That is the match regexp prefers too (leftmost,
// greedy first), so the group's bounds are the same; regexp found them at about half a
// microsecond a match, half of a repair's cost on an answer dense with images.
type onePass []onePart

// onePart is one part of the chain: a literal (lit), or a class (ranges: lo-hi pairs, as
// syntax keeps them) taken once or repeated at least min times. capture: the part is the
// whole of the kept group.
type onePart struct {
	lit     []rune
	ranges  []rune
	repeat  bool
	min     int
	capture bool
	// The fast forms: litb is lit in UTF-8 (nil when lit holds U+FFFD, which an invalid
	// byte also reads as), ascii the class's ASCII runes as a bit set.
	litb  []byte
	ascii [2]uint64
}

// in reports whether the class accepts r.
func (p *onePart) in(r rune) bool {
	if r < utf8.RuneSelf {
		return p.ascii[r>>6]&(1<<(r&63)) != 0
	}
	return inRanges(p.ranges, r)
}

// planOnePass returns the one-pass form of tree (simplified) whose group cap is the
// replacement, or nil when tree is not of that shape.
func planOnePass(tree *syntax.Regexp, cap int) onePass {
	if tree.Op != syntax.OpConcat || cap <= 0 {
		return nil
	}
	var o onePass
	found := false
	for _, s := range tree.Sub {
		var p onePart
		if s.Op == syntax.OpCapture {
			if s.Cap != cap {
				return nil // another group: keep to the plain shape
			}
			p.capture, found, s = true, true, s.Sub[0]
		}
		if s.Flags&(syntax.FoldCase|syntax.NonGreedy) != 0 {
			return nil
		}
		switch s.Op {
		case syntax.OpLiteral:
			p.lit = s.Rune
		case syntax.OpCharClass:
			p.ranges = s.Rune
		case syntax.OpStar, syntax.OpPlus:
			switch c := s.Sub[0]; {
			case c.Op == syntax.OpCharClass:
				p.ranges = c.Rune
			case c.Op == syntax.OpLiteral && len(c.Rune) == 1 && c.Flags&syntax.FoldCase == 0:
				p.ranges = []rune{c.Rune[0], c.Rune[0]} // a class of one rune (b+)
			default:
				return nil
			}
			p.repeat = true
			if s.Op == syntax.OpPlus {
				p.min = 1
			}
		default:
			return nil
		}
		if p.lit != nil && !slices.Contains(p.lit, utf8.RuneError) {
			p.litb = []byte(string(p.lit))
		}
		for r := range rune(utf8.RuneSelf) {
			if inRanges(p.ranges, r) {
				p.ascii[r>>6] |= 1 << (r & 63)
			}
		}
		o = append(o, p)
	}
	if !found {
		return nil
	}
	// Each repeat must stop where the next part starts: the next part is not empty and
	// its first rune is never one the repeat accepts.
	for i, p := range o {
		if !p.repeat || i+1 == len(o) {
			continue
		}
		switch q := o[i+1]; {
		case q.lit != nil:
			if len(q.lit) == 0 || inRanges(p.ranges, q.lit[0]) {
				return nil
			}
		case q.repeat && q.min == 0, rangesMeet(p.ranges, q.ranges):
			return nil
		}
	}
	return o
}

// closed reports whether o's last part matches a fixed run of runes (a literal or a
// class taken once): a match, once read, cannot grow with more text.
func (o onePass) closed() bool { return len(o) > 0 && !o[len(o)-1].repeat }

// match matches o at the start of b, reading runes as regexp does (an invalid byte is
// U+FFFD, one byte wide). It returns the match's end and the group's bounds; ok false when
// o does not match at 0 or is nil (the caller asks regexp then).
func (o onePass) match(b []byte) (end, g0, g1 int, ok bool) {
	if o == nil {
		return 0, 0, 0, false
	}
	i := 0
	for k := range o {
		p := &o[k]
		start := i
		switch {
		case p.litb != nil:
			// Bytes equal to lit's encoding are the only ones that read as lit's runes
			// (lit has no U+FFFD).
			if !bytes.HasPrefix(b[i:], p.litb) {
				return 0, 0, 0, false
			}
			i += len(p.litb)
		case p.lit != nil:
			for _, want := range p.lit {
				if i >= len(b) {
					return 0, 0, 0, false
				}
				r, w := decode(b[i:])
				if r != want {
					return 0, 0, 0, false
				}
				i += w
			}
		case p.repeat:
			n := 0
			for i < len(b) {
				r, w := decode(b[i:])
				if !p.in(r) {
					break
				}
				i += w
				n++
			}
			if n < p.min {
				return 0, 0, 0, false
			}
		default: // a class, once
			if i >= len(b) {
				return 0, 0, 0, false
			}
			r, w := decode(b[i:])
			if !p.in(r) {
				return 0, 0, 0, false
			}
			i += w
		}
		if p.capture {
			g0, g1 = start, i
		}
	}
	return i, g0, g1, true
}

func decode(b []byte) (rune, int) {
	if b[0] < utf8.RuneSelf {
		return rune(b[0]), 1
	}
	return utf8.DecodeRune(b)
}

// inRanges reports whether r is in the lo-hi pairs of a character class.
func inRanges(rs []rune, r rune) bool {
	for i := 0; i+1 < len(rs); i += 2 {
		if rs[i] <= r && r <= rs[i+1] {
			return true
		}
	}
	return false
}

// rangesMeet reports whether two classes share a rune.
func rangesMeet(a, b []rune) bool {
	for i := 0; i+1 < len(a); i += 2 {
		for j := 0; j+1 < len(b); j += 2 {
			if a[i] <= b[j+1] && b[j] <= a[i+1] {
				return true
			}
		}
	}
	return false
}
