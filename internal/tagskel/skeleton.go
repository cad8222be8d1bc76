package tagskel

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

//go:generate sh -c "go run gen.go -confusables $(go mod download -json github.com/mtibben/confusables@v0.0.0-20210201002637-9d1b0723b659 | sed -n 's/.*\"Dir\": \"\\(.*\\)\".*/\\1/p')/tables.go | gofmt > table.go"

// skeletonEntry is one row of skeletonTable: a code point and its skeleton.
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
	if r >= tagCharFirst && r <= tagCharLast {
		return asciiSkeleton[r-tagCharBase], true
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

// tagScan finds the tags of one text in a single pass: each trigger byte is looked for with
// strings.IndexByte (vectorised) and its next position kept until the scan passes it, so
// clean text costs a few fast passes, not a loop over every character, and a text dense
// with tags costs no more per byte than a short one. Skeletons are read only at those
// bytes.
//
// work counts the bytes the scan reads: those strings.IndexByte passes over and each
// character tagAt and its helpers read. Every read of the text counts (most go through
// index, unit or decode), so the count is the scan's cost; the cost tests bound it by a
// constant times the text's length.
type tagScan struct {
	s    string
	next [len(triggers)]int // the next position of each trigger at or after the scan; len(s): none
	work int
}

// newTagScan starts a scan of s at from.
func newTagScan(s string, from int) tagScan {
	t := tagScan{s: s}
	for k := range triggers {
		t.next[k] = t.index(triggers[k], from)
	}
	return t
}

// Find returns where the first tag at or after from starts and the length of its '<',
// however written; n is 0 when there is none. It scans s anew: a caller that goes on
// through the text keeps one tagScan (Neutralize).
func Find(s string, from int) (i, n int) {
	t := newTagScan(s, from)
	return t.find(from)
}

// find returns the next tag at or after from, as Find; from never decreases from one
// call to the next.
func (t *tagScan) find(from int) (i, n int) {
	s := t.s
	for {
		i, kmin := len(s), -1
		for k := range len(t.next) { // not range t.next: that copies the array on every pass
			if t.next[k] < i {
				i, kmin = t.next[k], k
			}
		}
		if kmin < 0 {
			return len(s), 0
		}
		if i < from { // inside the '<' of the tag found last
			t.next[kmin] = t.index(triggers[kmin], from)
			continue
		}
		if t.mayStart(i) {
			if n = t.tagAt(i); n > 0 {
				return i, n
			}
		}
		next := i + 1
		if c, _ := t.unit(i); c == '\\' {
			// An escape's backslashes may be doubled any number of times: from each of them
			// the escape reads on to the same end, so when the first fails, all do. Skip the
			// run rather than read it again from each (quadratic in a run of backslashes).
			next = t.backslashes(i)
			for k := range len(t.next) {
				if t.next[k] < next {
					t.next[k] = t.index(triggers[k], next)
				}
			}
			continue
		}
		t.next[kmin] = t.index(triggers[kmin], next)
	}
}

// mayStart is a first look at the trigger at i: an '&' or a '%' that no escape of '<' can
// start with ("&b=2", "&gt;", "50% off", common in HTML and URLs) is settled by the byte
// after it, without reading the escape.
func (t *tagScan) mayStart(i int) bool {
	c := t.s[i]
	if c != '&' && c != '%' {
		return true
	}
	t.work++
	if i+1 >= len(t.s) {
		return false
	}
	switch d := t.s[i+1]; {
	case d == 0xF3: // a tag character
		return true
	case c == '&':
		return d == '#' || strings.IndexByte("aAlLbBpP", d) >= 0 // &amp; &lt; &#60; &bsol; &percnt;
	default:
		return d == '2' || d == '3' || d == '5' || d|0x20 == 'u' // %25… %26 %3C %5C %u003C
	}
}

// index returns the index of c in the text at or after from, or its length.
func (t *tagScan) index(c byte, from int) int {
	if from >= len(t.s) {
		return len(t.s)
	}
	j := strings.IndexByte(t.s[from:], c)
	if j < 0 {
		t.work += len(t.s) - from
		return len(t.s)
	}
	t.work += j + 1
	return from + j
}

// triggers are the bytes a tag can start with: '<' and the introducers of its escapes, the
// first bytes of the UTF-8 look-alikes of '<' and of Unicode's tag characters (checked by
// TestTriggersCoverLookalikes).
var triggers = [...]byte{'<', '&', '%', '\\', 0xCB, 0xE1, 0xE2, 0xEF, 0xF0, 0xF3}

// Unicode's tag characters, U+E0020 to U+E007E, are invisible copies of ASCII ' ' to '~'
// (flag emoji use them). A reader that decodes them, and a model may, takes them for their
// ASCII: the skeleton reads them so, and escapes of '<' may be spelled with them.
const (
	tagCharFirst = 0xE0020
	tagCharLast  = 0xE007E
	tagCharBase  = 0xE0000
)

// lookalikes holds the non-ASCII characters that read as '<' and as '/': those of
// skeletonTable and the tag characters for them. The scan for a tag checks every non-ASCII
// character against a short list, not the table.
var lookalikes = func() (m [2][]rune) {
	for _, e := range skeletonTable {
		switch e.s {
		case "<":
			m[0] = append(m[0], e.r)
		case "/":
			m[1] = append(m[1], e.r)
		}
	}
	m[0] = append(m[0], tagCharBase+'<')
	m[1] = append(m[1], tagCharBase+'/')
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

// char reads the character at j inside a tag, after its '<': written as itself, or
// escaped the ways a reader undoes without thinking, since a model reading JSON or HTML
// decodes them as it reads. An HTML entity (&#115; &#x73; &Tab; &NewLine; &nbsp;
// &hyphen; &lowbar;, its '&' possibly &amp; or escaped, as encoding/json's \u0026#115;),
// a backslash escape (JSON's \u0073 \t \n \r \f \b, \x73, \U00000073, \u{73}, the
// backslash possibly doubled) or URL encoding (%73, %2573). "<&#115;ystem-reminder" and,
// in a call's JSON arguments, "<system\t\nreminder" and "<\u2028system-reminder" are
// tags. The rune and the length of what was read.
func (t *tagScan) char(j int) (rune, int) {
	u, size := t.unit(j)
	switch u {
	case '&':
		if v, e := t.entityChar(j + size); v >= 0 {
			return v, e - j
		}
	case '\\':
		if v, e := t.escapeChar(j + size); v >= 0 {
			if v == '&' {
				if w, e2 := t.entityChar(e); w >= 0 {
					return w, e2 - j
				}
			}
			return v, e - j
		}
	case '%':
		k := j + size
		for {
			e, ok := t.prefixFold(k, "25")
			if !ok {
				break
			}
			k = e
		}
		if v, e, d := t.number(k, 16, 2); d == 2 && v < utf8.RuneSelf {
			return rune(v), e - j
		}
	}
	return t.decode(j)
}

// charEntities are the named HTML entities of the characters a tag's name is read through
// besides its letters: white space and what reads as '-'.
var charEntities = [...]struct {
	name string
	r    rune
}{{"tab", '\t'}, {"newline", '\n'}, {"nbsp", '\u00a0'}, {"hyphen", '\u2010'}, {"dash", '\u2010'}, {"minus", '\u2212'}, {"lowbar", '_'}}

// entityChar reads the HTML entity whose '&' ends at k: its value and where it ends, or
// -1, k.
func (t *tagScan) entityChar(k int) (rune, int) {
	for {
		e, ok := t.prefixFold(k, "amp;")
		if !ok {
			break
		}
		k = e
	}
	if v, e := t.numericEntity(k); v >= 0 && v <= unicode.MaxRune {
		return rune(v), e
	}
	for _, ce := range charEntities {
		if e, ok := t.prefixFold(k, ce.name); ok {
			return ce.r, t.optionalSemicolon(e)
		}
	}
	return -1, k
}

// escapeChar reads the backslash escape whose first backslash ends at k: its value and
// where it ends, or -1, k.
func (t *tagScan) escapeChar(k int) (rune, int) {
	k = t.backslashes(k)
	u, size := t.unit(k)
	k += size
	switch u {
	case 't':
		return '\t', k
	case 'n':
		return '\n', k
	case 'r':
		return '\r', k
	case 'f':
		return '\f', k
	case 'b':
		return '\b', k
	case 'u', 'U', 'x':
		if b, size := t.unit(k); b == '{' {
			if v, e, d := t.number(k+size, 16, 6); d > 0 && v <= unicode.MaxRune {
				if b, size := t.unit(e); b == '}' {
					return rune(v), e + size
				}
			}
			return -1, k
		}
		want := 4 // \u0073
		switch u {
		case 'U':
			want = 8 // \U00000073
		case 'x':
			want = 2 // \x73
		}
		if v, e, d := t.number(k, 16, want); d == want && v <= unicode.MaxRune {
			return rune(v), e
		}
	}
	return -1, k
}

// decode reads the character at j.
func (t *tagScan) decode(j int) (rune, int) {
	t.work++
	return utf8.DecodeRuneInString(t.s[j:])
}

// unit reads the ASCII character at j, written as itself or as a tag character: the
// character and its length, or 0, 0 (the end of the text, or another character).
func (t *tagScan) unit(j int) (byte, int) {
	t.work++
	if j < len(t.s) && t.s[j] < utf8.RuneSelf {
		return t.s[j], 1
	}
	return tagUnit(t.s, j)
}

// tagUnit is unit for what is not ASCII.
func tagUnit(s string, j int) (byte, int) {
	// U+E0000 to U+E007F are F3 A0 80 80 to F3 A0 81 BF.
	if j+3 < len(s) && s[j] == 0xF3 && s[j+1] == 0xA0 && (s[j+2] == 0x80 || s[j+2] == 0x81) && s[j+3]&0xC0 == 0x80 {
		if c := (s[j+2]&0x3F)<<6 | s[j+3]&0x3F; c >= tagCharFirst-tagCharBase && c <= tagCharLast-tagCharBase {
			return c, 4
		}
	}
	return 0, 0
}

// backslashes returns where the run of backslashes at j ends.
func (t *tagScan) backslashes(j int) int {
	for {
		c, size := t.unit(j)
		if c != '\\' {
			return j
		}
		j += size
	}
}

// tagAt reports whether a tag starts at i: '<', optional white space, an optional '/',
// optional white space, then "system", separators and "reminder" or "interrupt", each read
// on the skeleton, each character possibly escaped (see char). Like the engine's own tags, a prefix is enough ("<system-reminders" is
// read as the tag). It returns the length of the '<' as written, or 0.
func (t *tagScan) tagAt(i int) int {
	s := t.s
	n := t.encodedLen(i, '<', "lt", 0x3c)
	if n == 0 {
		return 0
	}
	if j := i + n; j < len(s) && isAlnum(s[j]) && s[j]|0x20 != 's' {
		t.work++
		return 0 // "<div", "&lt;b": the common case, settled without reading skeletons
	}
	j := t.skipSpace(i + n)
	if k := t.encodedLen(j, '/', "sol", 0x2f); k > 0 {
		j = t.skipSpace(j + k)
	}
	j, ok := t.matchWord(j, skelSystem)
	if !ok {
		return 0
	}
	j = t.skipSeparators(j)
	if _, ok := t.matchWord(j, skelReminder); ok {
		return n
	}
	if _, ok := t.matchWord(j, skelInterrupt); ok {
		return n
	}
	return 0
}

// matchWord matches the skeleton word at j and returns where the text after it starts.
// A character whose skeleton runs past the word's end ends it (a prefix is enough).
func (t *tagScan) matchWord(j int, word string) (int, bool) {
	for word != "" {
		if j >= len(t.s) {
			return j, false
		}
		r, size := t.char(j)
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

// skipSpace skips white space (a tag character's too) and what reads as nothing.
func (t *tagScan) skipSpace(j int) int {
	for j < len(t.s) {
		r, size := t.char(j)
		if !unicode.IsSpace(r) {
			if sk, ok := skeletonOf(r); !ok || sk != "" && !(len(sk) == 1 && unicode.IsSpace(rune(sk[0]))) {
				return j
			}
		}
		j += size
	}
	return j
}

// skipSeparators skips what may stand between the words: hyphen-likes, '_', white space
// and what reads as nothing.
func (t *tagScan) skipSeparators(j int) int {
	for j < len(t.s) {
		j = t.skipSpace(j)
		if j >= len(t.s) {
			break
		}
		r, size := t.char(j)
		if sk, ok := skeletonOf(r); !ok || sk != "-" {
			break
		}
		j += size
	}
	return j
}

// encodedLen returns the length of c (ASCII '<' or '/') at j, however written: itself, a
// look-alike, an HTML entity (&name; or &#code; or &#xhex;, the ';' optional, the '&' itself
// possibly escaped as &amp;), backslash escapes (\u003c, \u{3c}, \U0000003c, \x3c, \x{3c},
// octal \074, CSS \3c, each with its backslash possibly doubled, and \/ for '/'), or URL
// encoding (%3c, %u003c, and %253c for a doubly encoded one). Each ASCII character of an
// escape may be written as a tag character, and the escape's '&', '%' or '\' may itself be
// escaped once: "\u0026lt;" (encoding/json writes "&lt;" so), "\x26#60;", "\u005cu003c",
// "&#92;u003c", "&bsol;x3c", "%5Cu003c", "%26lt;", "&#37;3C". 0 if none.
func (t *tagScan) encodedLen(j int, c byte, name string, code int) int {
	u, size := t.unit(j)
	switch u {
	case 0:
		if j >= len(t.s) || t.s[j] < utf8.RuneSelf {
			return 0
		}
		if r, size := t.decode(j); isLookalike(r, c) {
			return size
		}
		return 0
	case c:
		return size
	case '&', '%', '\\':
		if e := t.escaped(u, j+size, c, name, code, true); e > 0 {
			return e - j
		}
	}
	return 0
}

// escaped reads the rest of an escape of c whose introducer intro ('&', '%' or '\\') ends
// at k, and returns where the escape ends, or 0. With again, the escape may stand for another
// introducer in turn (an escape escaped once more).
func (t *tagScan) escaped(intro byte, k int, c byte, name string, code int, again bool) int {
	switch intro {
	case '&':
		for {
			e, ok := t.prefixFold(k, "amp;")
			if !ok {
				break
			}
			k = e
		}
		if e, ok := t.prefixFold(k, name); ok {
			return t.optionalSemicolon(e)
		}
		v, e := t.numericEntity(k)
		if v == code {
			return e
		}
		if !again {
			return 0
		}
		if v == '&' || v == '%' || v == '\\' {
			return t.escaped(byte(v), e, c, name, code, false)
		}
		if e, ok := t.prefixFold(k, "bsol"); ok {
			return t.escaped('\\', t.optionalSemicolon(e), c, name, code, false)
		}
		if e, ok := t.prefixFold(k, "percnt"); ok {
			return t.escaped('%', t.optionalSemicolon(e), c, name, code, false)
		}
	case '%':
		for {
			e, ok := t.prefixFold(k, "25")
			if !ok {
				break
			}
			k = e
		}
		if u, size := t.unit(k); lower(u) == 'u' { // JavaScript's escape(): %u003C
			if v, e, d := t.number(k+size, 16, 4); d == 4 && v == code {
				return e
			}
			return 0
		}
		v, e, d := t.number(k, 16, 2)
		if d == 2 && v == code {
			return e
		}
		if again && d == 2 && (v == '&' || v == '\\') {
			return t.escaped(byte(v), e, c, name, code, false)
		}
	case '\\':
		k = t.backslashes(k)
		u, size := t.unit(k)
		if u == 0 {
			return 0
		}
		if e := t.escapeEnd(k, u, size, c, code); e > 0 {
			return e
		}
		if !again {
			return 0
		}
		for _, x := range [...]byte{'&', '%', '\\'} {
			if e := t.escapeEnd(k, u, size, 0, int(x)); e > 0 {
				return t.escaped(x, e, c, name, code, false)
			}
		}
	}
	return 0
}

// numericEntity reads the numeric HTML entity at k, after its '&' ("#60;", "#x3C", "#0060"):
// its value and where it ends, or -1, k.
func (t *tagScan) numericEntity(k int) (v, end int) {
	u, size := t.unit(k)
	if u != '#' {
		return -1, k
	}
	k += size
	base := 10
	if u, size := t.unit(k); lower(u) == 'x' {
		base, k = 16, k+size
	}
	digits := k
	for { // browsers take any number of leading zeros
		u, size := t.unit(k)
		if u != '0' {
			break
		}
		k += size
	}
	v, e, d := t.number(k, base, 8)
	if d == 0 && k == digits {
		return -1, k
	}
	return v, t.optionalSemicolon(e)
}

// escapeEnd reads the backslash escape whose first character after the backslashes is u
// (of size bytes at k) and returns where it ends if it stands for c, or 0.
func (t *tagScan) escapeEnd(k int, u byte, size int, c byte, code int) int {
	switch {
	case u == c && c == '/': // JSON's \/
		return k + size
	case lower(u) == 'u' || lower(u) == 'x':
		k += size
		if b, size := t.unit(k); b == '{' { // \u{3c}: JavaScript, Rust, Swift; \x{3c}: Perl
			if v, e, d := t.number(k+size, 16, 8); d > 0 && v == code {
				if b, size := t.unit(e); b == '}' {
					return e + size
				}
			}
			return 0
		}
		want := 2 // \x3c
		switch u {
		case 'u':
			want = 4 // \u003c
		case 'U':
			if v, e, d := t.number(k, 16, 8); d == 8 && v == code { // \U0000003c
				return e
			}
			want = 4
		}
		if v, e, d := t.number(k, 16, want); d == want && v == code {
			return e
		}
		return 0
	case digit(u) >= 0:
		// Octal, as in C, Python and the shell: one to three digits (\74, \074).
		if v, e, d := t.number(k, 8, 3); d > 0 && v == code {
			return e
		}
		// CSS: one to six hex digits (\3c, \00003c).
		if v, e, d := t.number(k, 16, 6); d > 0 && v == code {
			return e
		}
	}
	return 0
}

func (t *tagScan) optionalSemicolon(i int) int {
	if u, size := t.unit(i); u == ';' {
		return i + size
	}
	return i
}

// number reads up to max digits of base at k: the value, where the digits end and how many
// there are.
func (t *tagScan) number(k, base, max int) (v, end, digits int) {
	for digits < max {
		u, size := t.unit(k)
		d := digit(u)
		if d < 0 || d >= base {
			break
		}
		v = v*base + d
		k += size
		digits++
	}
	return v, k, digits
}

// prefixFold reports whether the lower-case ASCII prefix is written at k, in any case, and
// where it ends.
func (t *tagScan) prefixFold(k int, prefix string) (int, bool) {
	for i := 0; i < len(prefix); i++ {
		u, size := t.unit(k)
		if lower(u) != prefix[i] {
			return k, false
		}
		k += size
	}
	return k, true
}

// lower maps an ASCII capital to its small letter.
func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
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

// isAlnum reports whether c is an ASCII letter or digit: each reads as itself or as
// another letter or digit, never as white space, '/' or nothing.
func isAlnum(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c|0x20 && c|0x20 <= 'z'
}
