package multimatch

import (
	"fmt"
	"regexp/syntax"
	"slices"
	"strings"
)

// printTree is re.String(), cheap for large classes. Go's printer decides, for every
// class, whether a (?i) span may cover it by folding every rune the class holds between
// 'A' and the last rune with a fold: 3.7 ms for \S or [^\s"'], more than all the rest of
// an analysis. Here each large class stands in the tree as a placeholder rune (which
// folds to nothing, so the printer passes over it at once) and is printed apart, as
// (?-i:[ranges]): exact wherever a (?i) span falls around it.
func printTree(re *syntax.Regexp) string {
	var classes []*syntax.Regexp
	t := withPlaceholders(re, &classes)
	if len(classes) == 0 {
		return re.String()
	}
	s := t.String()
	for k, c := range classes {
		tok := fmt.Sprintf(`\x{%x}`, placeholderBase+k)
		if strings.Count(s, tok) != 1 { // the pattern has the rune itself
			return re.String()
		}
		s = strings.Replace(s, tok, classText(c.Rune), 1)
	}
	return s
}

// placeholderBase is the first placeholder rune: plane 15, private use.
const placeholderBase = 0xF0000

// bigClass is how many runes with a fold (from 'A' to U+1E943) a class must span for
// printTree to print it apart.
const bigClass = 1024

// withPlaceholders returns re with each large class replaced by a placeholder literal,
// appended to classes; re itself when it has none. re is not modified.
func withPlaceholders(re *syntax.Regexp, classes *[]*syntax.Regexp) *syntax.Regexp {
	if re.Op == syntax.OpCharClass && foldSpan(re.Rune) >= bigClass && len(*classes) < 0xFFFD {
		*classes = append(*classes, re)
		return &syntax.Regexp{Op: syntax.OpLiteral, Rune: []rune{placeholderBase + rune(len(*classes)-1)}}
	}
	var subs []*syntax.Regexp
	for i, s := range re.Sub {
		t := withPlaceholders(s, classes)
		if t != s && subs == nil {
			subs = slices.Clone(re.Sub)
		}
		if subs != nil {
			subs[i] = t
		}
	}
	if subs == nil {
		return re
	}
	c := *re
	c.Sub = subs
	return &c
}

// foldSpan counts the runes of a class's ranges between 'A' and U+1E943, where Go's
// printer looks for folds.
func foldSpan(ranges []rune) int {
	n := 0
	for i := 0; i+1 < len(ranges); i += 2 {
		lo, hi := max(ranges[i], 'A'), min(ranges[i+1], 0x1E943)
		if lo <= hi {
			n += int(hi-lo) + 1
		}
	}
	return n
}

// classText prints a class's ranges, every rune escaped, case-sensitive.
func classText(ranges []rune) string {
	var b strings.Builder
	b.WriteString(`(?-i:[`)
	for i := 0; i+1 < len(ranges); i += 2 {
		fmt.Fprintf(&b, `\x{%x}`, ranges[i])
		if ranges[i+1] != ranges[i] {
			fmt.Fprintf(&b, `-\x{%x}`, ranges[i+1])
		}
	}
	b.WriteString(`])`)
	return b.String()
}
