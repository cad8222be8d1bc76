package streamrules

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// maxFieldValues bounds how many values one field path yields from one call's arguments:
// a path fanning out over a huge array checks the first maxFieldValues values only.
const maxFieldValues = 1024

var fieldSegmentRE = regexp.MustCompile(`^[A-Za-z0-9_$@-]+$`)

func checkField(field string) error {
	if field == "" {
		return nil
	}
	for i, seg := range strings.Split(field, ".") {
		if !fieldSegmentRE.MatchString(seg) {
			return invalid("field", "%q: segment %d (%q) must be a key of letters, digits, _ $ @ or -, segments joined by dots", field, i+1, seg)
		}
	}
	return nil
}

// fieldValues returns the values a tool rule's field path names in a call's arguments
// (the tool_args scope of celeste, the agent whose rules package
// this rule model follows). A dotted path walks into objects; an array met on the way
// fans out to each element, so "edits.new_string" is every edit's new_string; a string
// met before the path ends is decoded as JSON and walked into (arguments that carry JSON
// inside a string). A value that is a string is returned as it is; any other value as
// compact JSON. A missing key, or input that is not JSON, yields no value: the rule then
// does not fire. Values come in document order, at most maxFieldValues of them.
func fieldValues(input, field string) []string {
	a := callArgs{text: input}
	return a.values(strings.Split(field, "."))
}

// callArgs is one tool call's arguments, checked as JSON at most once however many field
// rules judge them.
type callArgs struct {
	text    string
	checked bool
	ok      bool
	// shellRead are the values shell rules have read in this call (shell.go): read once
	// however many shell rules judge them.
	shellRead []shellReading
}

// values returns the values path names in the arguments (see fieldValues).
func (a *callArgs) values(path []string) []string { return a.valuesOf(path, false) }

// valuesOf is values, with keys matched as encoding/json matches them (fold) or exactly.
func (a *callArgs) valuesOf(path []string, fold bool) []string {
	if !a.valid() {
		return nil
	}
	var out []string
	walkKeys(a.text, path, fold, &out)
	return out
}

// valid reports whether the arguments are JSON, checked once.
func (a *callArgs) valid() bool {
	if !a.checked {
		a.ok = json.Valid([]byte(a.text))
		a.checked = true
	}
	return a.ok
}

// decodeJSON decodes one JSON value, numbers kept as written (json.Number).
func decodeJSONValue(s string) (any, bool) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil || dec.More() {
		return nil, false
	}
	return v, true
}

// checkEncoding rejects a NUL byte or invalid UTF-8 in any text field, naming the field
// as validate does (fix.replace_regex.with, predicate.all_of[1].contains_regex). Every
// store runs it through Validate, so a rule behaves the same everywhere: PostgreSQL would
// refuse such text with an error that names no field ("invalid byte sequence for encoding
// UTF8: 0x00"), SQLite would store it and put the raw byte into the prompt. Trees are
// walked to MaxPredicateNodes atoms: validate refuses a larger one.
func checkEncoding(r *Rule) error {
	fields := [...]struct{ name, value string }{
		{"name", r.Name}, {"scope", r.Scope}, {"condition", r.Condition},
		{"text", r.Text}, {"repeat", r.Repeat}, {"mode", string(r.Mode)},
		{"field", r.Field}, {"severity", r.Severity}, {"explanation", r.Explanation},
		{"delivery", string(r.Delivery)}, {"hint", r.Hint},
	}
	for _, f := range fields {
		if err := checkString(f.name, f.value); err != nil {
			return err
		}
	}
	for _, w := range r.When {
		if err := checkString("when", w); err != nil {
			return err
		}
	}
	if f := r.Fix; f != nil {
		if err := checkString("fix.append_if_missing", f.AppendIfMissing); err != nil {
			return err
		}
		if err := checkString("fix.prepend_if_missing", f.PrependIfMissing); err != nil {
			return err
		}
		if rr := f.ReplaceRegex; rr != nil {
			if err := checkString("fix.replace_regex.pattern", rr.Pattern); err != nil {
				return err
			}
			if err := checkString("fix.replace_regex.with", rr.With); err != nil {
				return err
			}
		}
	}
	var nodes treeCount
	if r.Predicate != nil {
		if err := r.Predicate.checkEncoding("predicate", &nodes); err != nil {
			return err
		}
	}
	if r.AppliesWhen != nil {
		nodes = treeCount{}
		return r.AppliesWhen.checkEncoding("applies_when", &nodes)
	}
	return nil
}

// checkEncoding is checkEncoding of Rule for a tree at path.
func (p *Predicate) checkEncoding(path string, nodes *treeCount) error {
	if nodes.count(p, path) != nil {
		return nil // refused for its size
	}
	atoms := [...]struct{ key, value string }{
		{"contains_regex", p.ContainsRegex}, {"not_contains_regex", p.NotContainsRegex},
		{"starts_with_regex", p.StartsWithRegex}, {"ends_with_regex", p.EndsWithRegex},
		{"input_contains_regex", p.InputContainsRegex}, {"input_not_contains_regex", p.InputNotContainsRegex},
		{"tool_called", p.ToolCalled}, {"tool_succeeded", p.ToolSucceeded}, {"tool_failed", p.ToolFailed},
	}
	for _, a := range atoms {
		if err := checkString("", a.value); err != nil {
			return renamed(err, path+"."+a.key)
		}
	}
	if e := p.EditedUnchecked; e != nil {
		for _, list := range [...]struct {
			key  string
			strs []string
		}{{"edits", e.Edits}, {"checks", e.Checks}} {
			for i, s := range list.strs {
				if err := checkString("", s); err != nil {
					return renamed(err, fmt.Sprintf("%s.edited_unchecked.%s[%d]", path, list.key, i))
				}
			}
		}
	}
	for _, list := range [...]struct {
		key   string
		preds []Predicate
	}{{"all_of", p.AllOf}, {"any_of", p.AnyOf}} {
		for i := range list.preds {
			// The path is spelled only for a node that has a bad string below it.
			if err := list.preds[i].checkEncoding("", nodes); err != nil {
				return renamed(err, fmt.Sprintf("%s.%s[%d]", path, list.key, i)+err.(*ValidationError).Field)
			}
		}
	}
	if p.Not != nil {
		if err := p.Not.checkEncoding("", nodes); err != nil {
			return renamed(err, path+".not_"+err.(*ValidationError).Field)
		}
	}
	return nil
}

// renamed gives a *ValidationError the field name field.
func renamed(err error, field string) error {
	e := *err.(*ValidationError)
	e.Field = field
	return &e
}

func checkString(field, s string) error {
	if i := strings.IndexByte(s, 0); i >= 0 {
		return invalid(field, "contains a NUL byte at byte %d", i)
	}
	if !utf8.ValidString(s) {
		return invalid(field, "not valid UTF-8")
	}
	return nil
}

// The walk of a field path over a call's arguments, without decoding them: the JSON is
// checked once (json.Valid, a few milliseconds per MB) and walked as text, and only the
// values the path names are decoded. Decoding 1 MB of arguments into Go values to walk
// them cost up to half a second per call (a long array of small values), with the
// tool's call waiting on it. The values
// are those the decode-and-walk gave (TestFieldWalkMatchesDecode, FuzzFieldWalk):
// duplicate keys resolve to the last, a string met before the path ends is walked into
// when it holds JSON that is not a string, an object at the path's end is rendered as
// json.Marshal renders the decoded object.

// walkKeys appends to out the values path names in s, a valid JSON value (see
// fieldValues), at most maxFieldValues in all. With fold, a key matches a segment as
// encoding/json matches a struct field, ignoring case (bytes.EqualFold), and every
// matching member is walked, not only the last: each is a value some decoder picks.
func walkKeys(s string, path []string, fold bool, out *[]string) {
	if len(*out) >= maxFieldValues {
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
			return len(*out) < maxFieldValues
		})
		if fold && len(path) == 0 && len(*out) < maxFieldValues {
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
				if len(*out) < maxFieldValues && strings.EqualFold(unquoteJSON(k), path[0]) {
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
