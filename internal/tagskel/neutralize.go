package tagskel

import "strings"

// Neutralize defuses every engine tag in s: the '<' of each one, however it is written,
// becomes '['; the rest of the text is left as it was. Text without such a tag is returned
// unchanged, without allocating. It reads the text in one pass: its cost grows linearly
// with the text's length, however many tags it holds.
func Neutralize(s string) string {
	out, _ := neutralize(s)
	return out
}

// neutralize is Neutralize, with the work its scan did (see tagScan).
func neutralize(s string) (string, int) {
	t := newTagScan(s, 0)
	i, n := t.find(0)
	if n == 0 {
		return s, t.work
	}
	var b strings.Builder
	b.Grow(len(s))
	prev := 0
	for ; n > 0; i, n = t.find(i + n) {
		b.WriteString(s[prev:i])
		b.WriteByte(defused)
		prev = i + n
	}
	b.WriteString(s[prev:])
	return b.String(), t.work
}

// defused replaces the '<' of a neutralised tag: no encoding of '<' and no look-alike of it.
const defused = '['
