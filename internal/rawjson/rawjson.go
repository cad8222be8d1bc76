// Package rawjson writes JSON strings the way a hand-written file or a model might:
// controls as \u escapes, every byte that is not UTF-8 left raw. encoding/json would
// replace such bytes with U+FFFD, and the encoding tests need them to reach the decoder
// as they are.
//
//	rawjson.String("a\x00b\xff") // "a\u0000b\xff" (the 0xff byte raw)
package rawjson

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// String is s as a JSON string literal, quotes included: '"' and '\' escaped, runes
// below U+0020 as \u escapes, invalid UTF-8 bytes copied raw.
func String(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteByte(s[0])
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[:n])
		}
		s = s[n:]
	}
	b.WriteByte('"')
	return b.String()
}
