package regexgen

import (
	"math/rand/v2"
	"strings"
)

// Atoms are the leaves of a generated pattern.
var Atoms = []string{
	"a", "b", "k", "s", "K", "S", "x", "é", "É", "ß", "ẞ", "σ", "ς", "ſ", "\u212a", `\x{FFFD}`,
	" ", `\n`, "0", "7", `\.`, "-", "_", "'", "😀", "日",
	"[ab]", "[^a]", "[a-z]", "[k]", "[sS]", `[\x{FFF0}-\x{FFFF}]`, `[^\x00-\x7f]`, `[\x{1F600}-\x{1F64F}]`,
	`\d`, `\w`, `\s`, `\S`, `\W`, ".", `\pL`, `\p{Greek}`,
	`\b`, `\B`, "^", "$", `\A`, `\z`,
}

// Pattern returns a random pattern of at most about four levels below depth: a run of
// atoms, an alternation, a repetition (greedy or not), a group with flags set or
// cleared, or a concatenation. It may not compile (a repetition of an empty-width
// assertion compiles; a count past 1000 cannot occur): callers compile it and skip
// what regexp refuses.
func Pattern(r *rand.Rand, depth int) string {
	if depth > 3 || r.IntN(3) == 0 {
		var b strings.Builder
		for n := 1 + r.IntN(4); n > 0; n-- {
			b.WriteString(Atoms[r.IntN(len(Atoms))])
		}
		return b.String()
	}
	switch r.IntN(9) {
	case 0:
		return Pattern(r, depth+1) + "|" + Pattern(r, depth+1)
	case 1:
		return "(" + Pattern(r, depth+1) + ")" + []string{"*", "+", "?", "{2}", "{1,3}", "{0,2}", "{2,}", "+?", "*?"}[r.IntN(9)]
	case 2:
		return "(?i:" + Pattern(r, depth+1) + ")"
	case 3:
		return "(?-i:" + Pattern(r, depth+1) + ")"
	case 4:
		return []string{"(?s:", "(?m:", "(?U:", "(?:"}[r.IntN(4)] + Pattern(r, depth+1) + ")"
	default:
		return Pattern(r, depth+1) + Pattern(r, depth+1)
	}
}
