package multimatch

import (
	"strings"
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
