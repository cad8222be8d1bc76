// Adapted from Go's regexp/syntax/simplify.go: Copyright 2011 The Go Authors. All rights
// reserved. Use of this source code is governed by a BSD-style license that can be
// found in Go's LICENSE file (https://go.dev/LICENSE).

package multimatch

import (
	"regexp/syntax"
	"sync"
)

// Analyze reads a pattern's simplified tree and drops it. syntax.Regexp.Simplify
// expands every counted repetition into nodes of its own (.{0,80} is 160 of them):
// a fifth of the objects that analysing 10,000 patterns allocated. simplifier is the
// same rewriting with its nodes and child lists taken from chunks that are kept from
// pattern to pattern:
// the same tree (TestSimplifySame holds it to Simplify), living until Analyze
// releases it. Nothing of the tree outlives Analyze: the analysis keeps literals,
// and the program is compiled into pooled memory and cleared too.
type simplifier struct {
	nodes [][]syntax.Regexp  // chunks of nodes, used in order
	subs  [][]*syntax.Regexp // chunks of child lists, used in order
	ni, n int                // the chunk of nodes being filled, and its nodes used
	si, s int                // the chunk of lists being filled, and its pointers used
}

const (
	simplifyNodeChunk = 256
	simplifySubChunk  = 1024
	maxPooledChunks   = 16 // chunks of each kind a pooled simplifier keeps
)

var simplifierPool = sync.Pool{New: func() any { return new(simplifier) }}

// simplify returns re.Simplify() built in a pooled simplifier; release it with
// releaseSimplifier once the tree is no longer read.
func simplify(re *syntax.Regexp) (*syntax.Regexp, *simplifier) {
	s := simplifierPool.Get().(*simplifier)
	return s.simplify(re), s
}

func releaseSimplifier(s *simplifier) {
	if len(s.nodes) > maxPooledChunks || len(s.subs) > maxPooledChunks {
		return // a huge pattern's chunks go to the garbage collector
	}
	// Clear what was used: the nodes point into the pattern's tree.
	for i := 0; i < len(s.nodes) && i <= s.ni; i++ {
		c := s.nodes[i]
		if i == s.ni {
			c = c[:s.n]
		}
		clear(c)
	}
	for i := 0; i < len(s.subs) && i <= s.si; i++ {
		c := s.subs[i]
		if i == s.si {
			c = c[:s.s]
		}
		clear(c)
	}
	s.ni, s.n, s.si, s.s = 0, 0, 0, 0
	simplifierPool.Put(s)
}

// node returns a zeroed node.
func (s *simplifier) node() *syntax.Regexp {
	if s.ni < len(s.nodes) && s.n == len(s.nodes[s.ni]) {
		s.ni, s.n = s.ni+1, 0
	}
	if s.ni == len(s.nodes) {
		s.nodes = append(s.nodes, make([]syntax.Regexp, simplifyNodeChunk))
	}
	re := &s.nodes[s.ni][s.n]
	s.n++
	return re
}

// list returns an empty child list with room for n.
func (s *simplifier) list(n int) []*syntax.Regexp {
	if n > simplifySubChunk {
		return make([]*syntax.Regexp, 0, n)
	}
	if s.si < len(s.subs) && s.s+n > len(s.subs[s.si]) {
		s.si, s.s = s.si+1, 0
	}
	if s.si == len(s.subs) {
		s.subs = append(s.subs, make([]*syntax.Regexp, simplifySubChunk))
	}
	l := s.subs[s.si][s.s : s.s : s.s+n]
	s.s += n
	return l
}

// simplify is syntax.Regexp.Simplify (regexp/syntax's simplify.go, Go 1.26), step for
// step, allocating from s.
func (s *simplifier) simplify(re *syntax.Regexp) *syntax.Regexp {
	if re == nil {
		return nil
	}
	switch re.Op {
	case syntax.OpCapture, syntax.OpConcat, syntax.OpAlternate:
		// Simplify children, building new Regexp if children change.
		nre := re
		for i, sub := range re.Sub {
			nsub := s.simplify(sub)
			if nre == re && nsub != sub {
				// Start a copy.
				nre = s.node()
				*nre = *re
				nre.Rune = nil
				nre.Sub = append(s.list(len(re.Sub)), re.Sub[:i]...)
			}
			if nre != re {
				nre.Sub = append(nre.Sub, nsub)
			}
		}
		return nre

	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest:
		sub := s.simplify(re.Sub[0])
		return s.simplify1(re.Op, re.Flags, sub, re)

	case syntax.OpRepeat:
		// Special special case: x{0} matches the empty string
		// and doesn't even need to consider x.
		if re.Min == 0 && re.Max == 0 {
			nre := s.node()
			nre.Op = syntax.OpEmptyMatch
			return nre
		}

		// The fun begins.
		sub := s.simplify(re.Sub[0])

		// x{n,} means at least n matches of x.
		if re.Max == -1 {
			// Special case: x{0,} is x*.
			if re.Min == 0 {
				return s.simplify1(syntax.OpStar, re.Flags, sub, nil)
			}

			// Special case: x{1,} is x+.
			if re.Min == 1 {
				return s.simplify1(syntax.OpPlus, re.Flags, sub, nil)
			}

			// General case: x{4,} is xxxx+.
			nre := s.node()
			nre.Op = syntax.OpConcat
			nre.Sub = s.list(re.Min)
			for i := 0; i < re.Min-1; i++ {
				nre.Sub = append(nre.Sub, sub)
			}
			nre.Sub = append(nre.Sub, s.simplify1(syntax.OpPlus, re.Flags, sub, nil))
			return nre
		}

		// Special case x{0} handled above.

		// Special case: x{1} is just x.
		if re.Min == 1 && re.Max == 1 {
			return sub
		}

		// General case: x{n,m} means n copies of x and m copies of x?
		// The machine will do less work if we nest the final m copies,
		// so that x{2,5} = xx(x(x(x)?)?)?

		// Build leading prefix: xx.
		var prefix *syntax.Regexp
		if re.Min > 0 {
			prefix = s.node()
			prefix.Op = syntax.OpConcat
			n := re.Min
			if re.Max > re.Min {
				n++
			}
			prefix.Sub = s.list(n)
			for i := 0; i < re.Min; i++ {
				prefix.Sub = append(prefix.Sub, sub)
			}
		}

		// Build and attach suffix: (x(x(x)?)?)?
		if re.Max > re.Min {
			suffix := s.simplify1(syntax.OpQuest, re.Flags, sub, nil)
			for i := re.Min + 1; i < re.Max; i++ {
				nre2 := s.node()
				nre2.Op = syntax.OpConcat
				nre2.Sub = append(s.list(2), sub, suffix)
				suffix = s.simplify1(syntax.OpQuest, re.Flags, nre2, nil)
			}
			if prefix == nil {
				return suffix
			}
			prefix.Sub = append(prefix.Sub, suffix)
		}
		if prefix != nil {
			return prefix
		}

		// Some degenerate case like min > max or min < max < 0.
		// Handle as impossible match.
		nre := s.node()
		nre.Op = syntax.OpNoMatch
		return nre
	}

	return re
}

// simplify1 is regexp/syntax's simplify1, allocating from s.
func (s *simplifier) simplify1(op syntax.Op, flags syntax.Flags, sub, re *syntax.Regexp) *syntax.Regexp {
	// Special case: repeat the empty string as much as
	// you want, but it's still the empty string.
	if sub.Op == syntax.OpEmptyMatch {
		return sub
	}
	// The operators are idempotent if the flags match.
	if op == sub.Op && flags&syntax.NonGreedy == sub.Flags&syntax.NonGreedy {
		return sub
	}
	if re != nil && re.Op == op && re.Flags&syntax.NonGreedy == flags&syntax.NonGreedy && sub == re.Sub[0] {
		return re
	}

	re = s.node()
	re.Op, re.Flags = op, flags
	re.Sub = append(s.list(1), sub)
	return re
}
