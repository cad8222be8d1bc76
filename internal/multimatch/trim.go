package multimatch

import (
	"regexp/syntax"
	"slices"
)

// A text has a match of L·P if and only if it has one of L'·P when every
// match of L has a suffix that is a match of L' and every match of L' is one
// of L (and likewise on the right). trimLeft and trimRight apply that to the
// unbounded or optional repetitions at the edges of a pattern: x* and x? at
// an edge become empty, x+ becomes x, x{n,m} becomes x{n}. The verdict of
// MatchString is unchanged; the width often becomes bounded.

func emptyMatch() *syntax.Regexp { return &syntax.Regexp{Op: syntax.OpEmptyMatch} }

func stripCaptures(re *syntax.Regexp) *syntax.Regexp {
	for re.Op == syntax.OpCapture {
		re = re.Sub[0]
	}
	for i, s := range re.Sub {
		re.Sub[i] = stripCaptures(s)
	}
	return re
}

func trimLeft(re *syntax.Regexp) *syntax.Regexp { return trimEdge(re, true) }

func trimRight(re *syntax.Regexp) *syntax.Regexp { return trimEdge(re, false) }

func trimEdge(re *syntax.Regexp, left bool) *syntax.Regexp {
	switch re.Op {
	case syntax.OpStar, syntax.OpQuest:
		return emptyMatch()
	case syntax.OpPlus:
		return trimEdge(re.Sub[0], left)
	case syntax.OpRepeat:
		switch {
		case re.Min == 0:
			return emptyMatch()
		case re.Min == 1:
			return trimEdge(re.Sub[0], left)
		case re.Max != re.Min:
			c := *re // a copy: the caller's tree stays as parsed
			c.Max = c.Min
			return &c
		}
		return re
	case syntax.OpConcat:
		subs := slices.Clone(re.Sub)
		changed := false
		for len(subs) > 0 {
			i := 0
			if !left {
				i = len(subs) - 1
			}
			t := trimEdge(subs[i], left)
			if t.Op != syntax.OpEmptyMatch {
				changed = changed || t != subs[i]
				subs[i] = t
				break
			}
			changed = true
			subs = slices.Delete(subs, i, i+1)
		}
		if !changed {
			return re
		}
		switch len(subs) {
		case 0:
			return emptyMatch()
		case 1:
			return subs[0]
		}
		c := *re
		c.Sub = subs
		return &c
	case syntax.OpAlternate:
		subs := make([]*syntax.Regexp, len(re.Sub))
		changed := false
		for i, s := range re.Sub {
			subs[i] = trimEdge(s, left)
			if subs[i].Op == syntax.OpEmptyMatch {
				// (|B)·P matches where P does, and B·P contains a P.
				return emptyMatch()
			}
			changed = changed || subs[i] != s
		}
		if !changed {
			return re
		}
		c := *re
		c.Sub = subs
		return &c
	}
	return re
}
