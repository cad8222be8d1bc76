package replay

import (
	"bytes"
	"unicode/utf8"
)

// plainLine reports whether a line that encoding/json decoded (so its syntax is valid,
// and with DisallowUnknownFields every key of a move or a tool call matches a known one
// in some case) can hold nothing that ruleinput.CheckJSON refuses: it is valid UTF-8 with
// no surrogate escape, and its keys are lowercase ASCII without escapes, each once in its
// object. A lowercase ASCII key that matches a lowercase name in some case is that name,
// so no key is in another case. Most lines are plain; the others get the full check.
// This is a filter, not a second checker: it never refuses, it only lets CheckJSON's
// token walk (a dozen allocations a token) run on fewer lines.
func plainLine(line []byte) bool {
	if !utf8.Valid(line) || bytes.Contains(line, []byte(`\ud`)) || bytes.Contains(line, []byte(`\uD`)) {
		return false
	}
	const maxKeys = 32 // per object: more, and the pairwise comparison below stops being cheap
	type span struct{ from, to int }
	var (
		keysBuf  [64]span
		openBuf  [16]int
		keys     = keysBuf[:0] // the keys of the open objects, innermost last
		open     = openBuf[:0] // where each open object's keys start in keys
		inObject []bool        // per open container: an object (true) or a list
		ctrBuf   [16]bool
	)
	inObject = ctrBuf[:0]
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case '{':
			open = append(open, len(keys))
			inObject = append(inObject, true)
		case '[':
			inObject = append(inObject, false)
		case '}':
			keys = keys[:open[len(open)-1]]
			open = open[:len(open)-1]
			inObject = inObject[:len(inObject)-1]
		case ']':
			inObject = inObject[:len(inObject)-1]
		case '"':
			start, escaped := i+1, false
			for i++; line[i] != '"'; i++ {
				if line[i] == '\\' {
					escaped = true
					i++
				}
			}
			j := i + 1
			for j < len(line) && (line[j] == ' ' || line[j] == '\t' || line[j] == '\r' || line[j] == '\n') {
				j++
			}
			if j == len(line) || line[j] != ':' || len(inObject) == 0 || !inObject[len(inObject)-1] {
				continue // a value, not a key
			}
			if escaped {
				return false
			}
			key := line[start:i]
			for _, c := range key {
				if c >= 'A' && c <= 'Z' || c >= utf8.RuneSelf {
					return false
				}
			}
			first := open[len(open)-1]
			if len(keys)-first >= maxKeys {
				return false
			}
			for _, k := range keys[first:] {
				if bytes.Equal(line[k.from:k.to], key) {
					return false
				}
			}
			keys = append(keys, span{start, i})
		}
	}
	return true
}
