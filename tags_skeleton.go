package streamrules

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

//go:generate sh -c "go run tags_gen.go -confusables $(go mod download -json github.com/mtibben/confusables@v0.0.0-20210201002637-9d1b0723b659 | sed -n 's/.*\"Dir\": \"\\(.*\\)\".*/\\1/p')/tables.go | gofmt > tags_table.go"

// A forged tag is read on a skeleton of the text, the way a reader would take it:
//
//   - default-ignorable code points (zero-width space and joiners, the soft hyphen, variation
//     selectors, bidi controls), control characters (NUL) and combining marks read as nothing;
//   - NFKC folds fullwidth and small forms (＜, ﹤, ｓ) and styled letters (𝐬) to plain ones;
//   - letters fold case, then confusables (UTS #39: Cyrillic і, Greek ο, m as rn) fold to their
//     Latin skeleton, and l, 1 and | read as i (SYSTEM-REMlNDER);
//   - dashes, hyphen-likes (U+2010, U+2212, ‐) and '_' read as '-', and the words may also be
//     run together or split by white space;
//   - white space may follow '<' and '/';
//   - '<' and '/' may be escaped: an HTML entity (&lt; &#60; &#x3c; &sol; &#47;, also as
//     &amp;lt;), a JSON or C escape (\u003c, \x3c, \/), URL encoding (%3C, %253C).
//
// The skeletons of the characters that matter come from tags_table.go, generated once with
// golang.org/x/text and Unicode's confusables.txt by tags_gen.go, so the root package reads
// them with the standard library only.

type skeletonEntry struct {
	r rune
	s string
}

// skeletonOf returns the skeleton of r: "" when r reads as nothing; ok is false for a
// character that stands for none of the tags' characters.
func skeletonOf(r rune) (s string, ok bool) {
	if r < utf8.RuneSelf {
		return asciiSkeleton[r], true
	}
	if isIgnorable(r) {
		return "", true
	}
	i := sort.Search(len(skeletonTable), func(i int) bool { return skeletonTable[i].r >= r })
	if i < len(skeletonTable) && skeletonTable[i].r == r {
		return skeletonTable[i].s, true
	}
	return "", false
}

// isIgnorable reports whether a non-ASCII r reads as nothing: Default_Ignorable_Code_Point
// (derived as UAX #44 says), control characters and combining marks. White space is not.
func isIgnorable(r rune) bool {
	if unicode.Is(unicode.White_Space, r) || r >= 0xFFF9 && r <= 0xFFFB || r >= 0x13430 && r <= 0x13440 ||
		unicode.Is(unicode.Prepended_Concatenation_Mark, r) {
		return false
	}
	return unicode.In(r, unicode.Other_Default_Ignorable_Code_Point, unicode.Cf, unicode.Variation_Selector,
		unicode.Cc, unicode.Mn, unicode.Me)
}

// findTag returns where the next tag at or after from starts and the length of its '<',
// however written; n is 0 when there is none.
//
// A tag starts at '<', '&', '%', '\\' or the first byte of a look-alike of '<'. Each of these
// bytes is looked for with strings.IndexByte (vectorised), its next position kept until the
// scan passes it, so clean text costs a few fast passes, not a loop over every character.
func findTag(s string, from int) (i, n int) {
	var next [len(triggers)]int
	for k := range triggers {
		next[k] = indexFrom(s, triggers[k], from)
	}
	for {
		i, kmin := len(s), -1
		for k := range len(next) { // not range next: that copies the array on every pass
			if next[k] < i {
				i, kmin = next[k], k
			}
		}
		if kmin < 0 {
			return len(s), 0
		}
		if s[i] < utf8.RuneSelf {
			if n = tagAt(s, i); n > 0 {
				return i, n
			}
		} else if r, _ := utf8.DecodeRuneInString(s[i:]); isLookalike(r, '<') {
			if n = tagAt(s, i); n > 0 {
				return i, n
			}
		}
		next[kmin] = indexFrom(s, triggers[kmin], i+1)
	}
}

// indexFrom returns the index of c in s at or after from, or len(s).
func indexFrom(s string, c byte, from int) int {
	if from >= len(s) {
		return len(s)
	}
	if j := strings.IndexByte(s[from:], c); j >= 0 {
		return from + j
	}
	return len(s)
}

// triggers are the bytes a tag can start with: '<' and the introducers of its escapes, and
// the first bytes of the UTF-8 look-alikes of '<' (checked by tagsTableTriggers_test).
var triggers = [...]byte{'<', '&', '%', '\\', 0xCB, 0xE1, 0xE2, 0xEF, 0xF0}

// lookalikes holds the non-ASCII characters that read as '<' and as '/', from skeletonTable:
// the scan for a tag checks every non-ASCII character against a short list, not the table.
var lookalikes = func() (m [2][]rune) {
	for _, e := range skeletonTable {
		switch e.s {
		case "<":
			m[0] = append(m[0], e.r)
		case "/":
			m[1] = append(m[1], e.r)
		}
	}
	return m
}()

// isLookalike reports whether the non-ASCII r reads as c, '<' or '/'.
func isLookalike(r rune, c byte) bool {
	list := lookalikes[0]
	if c == '/' {
		list = lookalikes[1]
	}
	for _, x := range list {
		if x == r {
			return true
		}
	}
	return false
}

// tagAt reports whether a tag starts at s[i:]: '<', optional white space, an optional '/',
// optional white space, then "system", separators and "reminder" or "interrupt", each read
// on the skeleton. Like the engine's own tags, a prefix is enough ("<system-reminders" is
// read as the tag). It returns the length of the '<' as written, or 0.
func tagAt(s string, i int) int {
	n := encodedLen(s[i:], '<', "lt", 0x3c)
	if n == 0 {
		return 0
	}
	if j := i + n; j < len(s) && isAlnum(s[j]) && s[j]|0x20 != 's' {
		return 0 // "<div", "&lt;b": the common case, settled without reading skeletons
	}
	j := skipSpace(s, i+n)
	if k := encodedLen(s[j:], '/', "sol", 0x2f); k > 0 {
		j = skipSpace(s, j+k)
	}
	j, ok := matchWord(s, j, skelSystem)
	if !ok {
		return 0
	}
	j = skipSeparators(s, j)
	if _, ok := matchWord(s, j, skelReminder); ok {
		return n
	}
	if _, ok := matchWord(s, j, skelInterrupt); ok {
		return n
	}
	return 0
}

// matchWord matches the skeleton word at s[j:] and returns where the text after it starts.
// A character whose skeleton runs past the word's end ends it (a prefix is enough).
func matchWord(s string, j int, word string) (int, bool) {
	for word != "" {
		if j >= len(s) {
			return j, false
		}
		r, size := utf8.DecodeRuneInString(s[j:])
		sk, ok := skeletonOf(r)
		if !ok {
			return j, false
		}
		j += size
		switch {
		case sk == "":
		case strings.HasPrefix(word, sk):
			word = word[len(sk):]
		case strings.HasPrefix(sk, word):
			word = ""
		default:
			return j, false
		}
	}
	return j, true
}

// skipSpace skips white space and what reads as nothing.
func skipSpace(s string, j int) int {
	for j < len(s) {
		r, size := utf8.DecodeRuneInString(s[j:])
		if !unicode.IsSpace(r) {
			if sk, ok := skeletonOf(r); !ok || sk != "" {
				return j
			}
		}
		j += size
	}
	return j
}

// skipSeparators skips what may stand between the words: hyphen-likes, '_', white space
// and what reads as nothing.
func skipSeparators(s string, j int) int {
	for j < len(s) {
		j = skipSpace(s, j)
		if j >= len(s) {
			break
		}
		r, size := utf8.DecodeRuneInString(s[j:])
		if sk, ok := skeletonOf(r); !ok || sk != "-" {
			break
		}
		j += size
	}
	return j
}

// encodedLen returns the length of c (ASCII '<' or '/') at the start of s, however written:
// itself, a look-alike, an HTML entity (&name; or &#code; or &#xhex;, the ';' optional, the
// '&' itself possibly escaped as &amp;), backslash escapes (\u003c, \x3c, \\u003c, and \/ for
// '/'), or URL encoding (%3c, and %253c for a doubly encoded one). 0 if none.
func encodedLen(s string, c byte, name string, code int) int {
	if s == "" {
		return 0
	}
	switch s[0] {
	case c:
		return 1
	case '&':
		i := 1
		for hasPrefixFold(s[i:], "amp;") {
			i += 4
		}
		if hasPrefixFold(s[i:], name) {
			return optionalSemicolon(s, i+len(name))
		}
		if i < len(s) && s[i] == '#' {
			i++
			base := 10
			if i < len(s) && (s[i] == 'x' || s[i] == 'X') {
				base, i = 16, i+1
			}
			z := i
			for z < len(s) && s[z] == '0' { // browsers take any number of leading zeros
				z++
			}
			v, k := number(s[z:], base, 8)
			if z+k > i && v == code {
				return optionalSemicolon(s, z+k)
			}
		}
		return 0
	case '%':
		i := 1
		for strings.HasPrefix(s[i:], "25") {
			i += 2
		}
		if v, k := number(s[i:], 16, 2); k == 2 && v == code {
			return i + 2
		}
		return 0
	case '\\':
		i := 1
		for i < len(s) && s[i] == '\\' {
			i++
		}
		if i >= len(s) {
			return 0
		}
		switch s[i] {
		case c:
			if c == '/' { // JSON's \/
				return i + 1
			}
		case 'u', 'U':
			if v, k := number(s[i+1:], 16, 4); k == 4 && v == code {
				return i + 5
			}
		case 'x', 'X':
			if v, k := number(s[i+1:], 16, 2); k == 2 && v == code {
				return i + 3
			}
		}
		return 0
	}
	if s[0] < utf8.RuneSelf {
		return 0
	}
	r, size := utf8.DecodeRuneInString(s)
	if isLookalike(r, c) {
		return size
	}
	return 0
}

func optionalSemicolon(s string, i int) int {
	if i < len(s) && s[i] == ';' {
		return i + 1
	}
	return i
}

// number reads up to max digits of base at the start of s: the value and how many digits.
func number(s string, base, max int) (v, k int) {
	for k < len(s) && k < max {
		d := digit(s[k])
		if d < 0 || d >= base {
			break
		}
		v = v*base + d
		k++
	}
	return v, k
}

func digit(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// hasPrefixFold reports whether s starts with the lower-case ASCII prefix, in any case.
func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// isAlnum reports whether c is an ASCII letter or digit: each reads as itself or as
// another letter or digit, never as white space, '/' or nothing.
func isAlnum(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c|0x20 && c|0x20 <= 'z'
}
