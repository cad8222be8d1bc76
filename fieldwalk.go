package streamrules

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// The walk of a field path over a call's arguments, without decoding them: the JSON is
// checked once (json.Valid, a few milliseconds per MB) and walked as text, and only the
// values the path names are decoded. Decoding 1 MB of arguments into Go values to walk
// them cost up to half a second (a long array of small values; issue 26). The values
// are those the decode-and-walk gave (TestFieldWalkMatchesDecode, FuzzFieldWalk):
// duplicate keys resolve to the last, a string met before the path ends is walked into
// when it holds JSON that is not a string, an object at the path's end is rendered as
// json.Marshal renders the decoded object.

// walkKeys appends to out the values path names in s, a valid JSON value (see
// FieldValues), at most MaxFieldValues in all. With fold, a key matches a segment as
// encoding/json matches a struct field, ignoring case (bytes.EqualFold), and every
// matching member is walked, not only the last: each is a value some decoder picks.
func walkKeys(s string, path []string, fold bool, out *[]string) {
	if len(*out) >= MaxFieldValues {
		return
	}
	s = trimJSONSpace(s)
	if s == "" {
		return
	}
	switch s[0] {
	case '[':
		// An array fans out at any depth, the last segment included.
		eachElement(s, func(e string) bool {
			if len(path) > 0 && e[0] != '[' && e[0] != '{' && e[0] != '"' {
				return true // a number, true, false or null has no key to walk into
			}
			walkKeys(e, path, fold, out)
			return len(*out) < MaxFieldValues
		})
		if fold && len(path) == 0 && len(*out) < MaxFieldValues {
			// An array of strings at the path's end may be an argv a tool runs as is
			// ({"cmd": ["rm", "-rf", "/srv"]}): its words, each quoted, are one more value.
			if argv, ok := quotedArgv(s); ok {
				*out = append(*out, argv)
			}
		}
	case '"':
		str := unquoteJSON(s)
		if len(path) == 0 {
			*out = append(*out, str)
			return
		}
		// Only an object or an array has keys to walk into ("\"x\"" would loop forever).
		inner := trimJSONSpace(str)
		if inner != "" && (inner[0] == '{' || inner[0] == '[') && json.Valid([]byte(inner)) {
			walkKeys(inner, path, fold, out)
		}
	case '{':
		if len(path) == 0 {
			*out = append(*out, renderObject(s))
			return
		}
		if fold {
			eachMember(s, func(k, v string) {
				if len(*out) < MaxFieldValues && strings.EqualFold(unquoteJSON(k), path[0]) {
					walkKeys(v, path[1:], fold, out)
				}
			})
			return
		}
		var val string
		found := false
		eachMember(s, func(k, v string) {
			if unquoteJSON(k) == path[0] { // the last of duplicate keys wins, as in a decode
				val, found = v, true
			}
		})
		if found {
			walkKeys(val, path[1:], fold, out)
		}
	default: // a number, true, false or null: as written
		if len(path) == 0 {
			*out = append(*out, s)
		}
	}
}

// renderObject renders a JSON object as json.Marshal renders it decoded (keys sorted,
// the last of duplicates kept, numbers as written).
func renderObject(s string) string {
	v, ok := decodeJSONValue(s)
	if !ok {
		return ""
	}
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

func trimJSONSpace(s string) string {
	return strings.Trim(s, " \t\n\r")
}

// unquoteJSON decodes a JSON string literal (valid).
func unquoteJSON(s string) string {
	body := s[1 : len(s)-1]
	if strings.IndexByte(body, '\\') < 0 && utf8.ValidString(body) {
		return body
	}
	var out string
	if json.Unmarshal([]byte(s), &out) != nil {
		return ""
	}
	return out
}

// skipValue returns the end of the JSON value (valid) that starts at s[i] (no space).
func skipValue(s string, i int) int {
	switch s[i] {
	case '"':
		return skipString(s, i)
	case '[', '{':
		depth := 0
		for i < len(s) {
			switch s[i] {
			case '"':
				i = skipString(s, i)
				continue
			case '[', '{':
				depth++
			case ']', '}':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	}
	for i < len(s) {
		switch s[i] {
		case ',', ']', '}', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}

// skipString returns the end of the string literal that starts at s[i].
func skipString(s string, i int) int {
	for i++; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return i
}

func skipJSONSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// eachElement calls f with each element of the array s (valid), until f returns false.
func eachElement(s string, f func(e string) bool) {
	i := skipJSONSpace(s, 1)
	if i < len(s) && s[i] == ']' {
		return
	}
	for i < len(s) {
		i = skipJSONSpace(s, i)
		end := skipValue(s, i)
		if !f(s[i:end]) {
			return
		}
		i = skipJSONSpace(s, end)
		if i >= len(s) || s[i] != ',' {
			return
		}
		i++
	}
}

// eachMember calls f with each key (a string literal) and value of the object s (valid).
func eachMember(s string, f func(k, v string)) {
	i := skipJSONSpace(s, 1)
	if i < len(s) && s[i] == '}' {
		return
	}
	for i < len(s) {
		i = skipJSONSpace(s, i)
		kend := skipString(s, i)
		k := s[i:kend]
		i = skipJSONSpace(s, kend) + 1 // the colon
		i = skipJSONSpace(s, i)
		vend := skipValue(s, i)
		f(k, s[i:vend])
		i = skipJSONSpace(s, vend)
		if i >= len(s) || s[i] != ',' {
			return
		}
		i++
	}
}

// quotedArgv renders a JSON array of strings as one shell command line, each element a
// single-quoted word; false when an element is not a string.
func quotedArgv(s string) (string, bool) {
	var b strings.Builder
	ok := true
	eachElement(s, func(e string) bool {
		if e[0] != '"' {
			ok = false
			return false
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteByte('\'')
		b.WriteString(strings.ReplaceAll(unquoteJSON(e), "'", `'\''`))
		b.WriteByte('\'')
		return true
	})
	return b.String(), ok && b.Len() > 0
}
