package streamrules

import (
	"encoding/json"
	"regexp"
	"strings"
)

// MaxFieldValues bounds how many values one field path yields from one call's arguments:
// a path fanning out over a huge array checks the first MaxFieldValues values only.
const MaxFieldValues = 1024

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

// FieldValues returns the values a tool rule's field path names in a call's arguments
// (celeste's tool_args scope). A dotted path walks into objects; an array met on the way
// fans out to each element, so "edits.new_string" is every edit's new_string; a string
// met before the path ends is decoded as JSON and walked into (arguments that carry JSON
// inside a string). A value that is a string is returned as it is; any other value as
// compact JSON. A missing key, or input that is not JSON, yields no value: the rule then
// does not fire. Values come in document order, at most MaxFieldValues of them.
func FieldValues(input, field string) []string {
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

// values returns the values path names in the arguments (see FieldValues).
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
