package rulefile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/streamrules/streamrules"

	// Shell rules (Rule.Shell) are read as a shell reads them wherever this package runs.
	_ "github.com/streamrules/streamrules/shellcmd"
)

// Set is a versioned rule set: what a rules repository holds, what export writes and
// import reads, and what a store is seeded with.
type Set struct {
	// Version grows with every calibration wave; a store seeded with version N ignores
	// every set whose version is N or lower.
	Version int `json:"version"`
	// Rules are normalized and valid; Disabled only when the file said "enabled": false.
	Rules []streamrules.Rule `json:"rules"`
	// Environments are the names the rules' `when` was checked against: the ones given
	// to Parse or Load. A store seeded with the set knows them (rulesdb.Config.Seed), and
	// so does the engine on it. Not part of the file: Marshal leaves them out.
	Environments []string `json:"-"`
}

// Names returns the names of the set's rules, in file order.
func (s Set) Names() []string {
	out := make([]string, len(s.Rules))
	for i, r := range s.Rules {
		out[i] = r.Name
	}
	return out
}

// Rule returns the set's rule named name.
func (s Set) Rule(name string) (streamrules.Rule, bool) {
	for _, r := range s.Rules {
		if r.Name == name {
			r.When = slices.Clone(r.When)
			return r, true
		}
	}
	return streamrules.Rule{}, false
}

// Format is a file's syntax. Both carry the same schema.
type Format string

// The formats.
const (
	JSON Format = "json"
	YAML Format = "yaml"
)

// FormatOf returns the format a file name says: JSON for .json, YAML for .yaml and .yml,
// "" otherwise (the content decides: JSON when it starts with '{').
func FormatOf(path string) Format {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".json":
		return JSON
	case ".yaml", ".yml":
		return YAML
	}
	return ""
}

func sniff(data []byte) Format {
	if t := bytes.TrimLeft(data, " \t\r\n"); len(t) > 0 && t[0] == '{' {
		return JSON
	}
	return YAML
}

// Error is what is wrong with a file, and where. Its text leads with the place, as a
// compiler's does:
//
//	rules.yaml:14: rule #3 "x": streamrules: invalid condition: …
//
// A rule that breaks a rule of streamrules.Validate wraps its *streamrules.ValidationError.
type Error struct {
	File  string // the file's name; "" for bytes
	Line  int    // 1-based; 0 when unknown
	Rule  int    // 1-based position of the rule in a set; 0 when the error is not about one rule of a set
	Name  string // the rule's name, when known
	Field string // the field the error is about, as the file spells it ("condition", "version"); "" for none
	Err   error
}

func (e *Error) Error() string {
	var b strings.Builder
	switch {
	case e.File != "" && e.Line > 0:
		fmt.Fprintf(&b, "%s:%d: ", e.File, e.Line)
	case e.File != "":
		b.WriteString(e.File + ": ")
	case e.Line > 0:
		fmt.Fprintf(&b, "rulefile: line %d: ", e.Line)
	default:
		b.WriteString("rulefile: ")
	}
	switch {
	case e.Rule > 0 && e.Name != "":
		fmt.Fprintf(&b, "rule #%d %q: ", e.Rule, e.Name)
	case e.Rule > 0:
		fmt.Fprintf(&b, "rule #%d: ", e.Rule)
	case e.Name != "":
		fmt.Fprintf(&b, "rule %q: ", e.Name)
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// doc is a document on its way in: its JSON form (YAML converted), and how to find the
// line of a path in the original.
type doc struct {
	json []byte
	line func(path []any) int
	// mark records where paths start in JSON input; nil for YAML, whose lines come from
	// its syntax tree.
	mark func(path []any, offset int64)
}

func read(data []byte, f Format) (*doc, *Error) {
	if len(data) > MaxBytes {
		return nil, tooLarge(data)
	}
	// Editors on Windows start UTF-8 files with a byte order mark; it says nothing about
	// the rules (and holds no line break, so lines keep their numbers).
	data = bytes.TrimPrefix(data, []byte("\xEF\xBB\xBF"))
	if f == "" {
		f = sniff(data)
	}
	if f == YAML {
		return readYAML(data)
	}
	lines := map[string]int64{}
	d := &doc{json: data, line: func(path []any) int {
		for ; len(path) > 0; path = path[:len(path)-1] {
			if off, ok := lines[pathKey(path)]; ok {
				return lineAt(data, off)
			}
		}
		return 0
	}}
	d.mark = func(path []any, off int64) {
		if len(path) <= maxMarkedDepth {
			lines[pathKey(path)] = off
		}
	}
	return d, nil
}

// maxMarkedDepth is how deep a JSON file's lines are remembered: a rule's fields in a set
// are at depth 3, a predicate's nodes below them (8 levels at most).
const maxMarkedDepth = 16

func pathKey(path []any) string {
	var b strings.Builder
	for _, p := range path {
		fmt.Fprintf(&b, "%T:%v\x00", p, p) // a key and an index never spell alike
	}
	return b.String()
}

// lineAt returns the 1-based line of a byte offset, past any whitespace, comma or colon
// before the token there.
func lineAt(data []byte, off int64) int {
	off = min(max(off, 0), int64(len(data)))
	for off < int64(len(data)) && strings.IndexByte(" \t\r\n,:", data[off]) >= 0 {
		off++
	}
	return 1 + bytes.Count(data[:off], []byte("\n"))
}

// checkDoc runs the strict checks over d against s.
func (d *doc) check(s *shape) *Error {
	perr := check(d.json, s, d.mark)
	if perr == nil {
		return nil
	}
	e := &Error{Field: perr.field, Err: perr.err}
	if d.mark != nil && perr.offset >= 0 { // JSON: the offset is in the file
		e.Line = lineAt(d.json, perr.offset)
	} else {
		e.Line = d.line(perr.path)
	}
	if s == setShape && len(perr.path) >= 2 && perr.path[0] == "rules" {
		if i, ok := perr.path[1].(int); ok {
			e.Rule = i + 1
			var top struct {
				Rules []json.RawMessage `json:"rules"`
			}
			if json.Unmarshal(d.json, &top) == nil && i < len(top.Rules) {
				e.Name = nameHint(top.Rules[i])
			}
		}
	} else if s != setShape {
		e.Name = nameHint(d.json)
	}
	return e
}

// typeError turns a decoding error into a message naming the field.
func typeError(err error) (field string, msg error) {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field = te.Field
		if i := strings.LastIndexByte(field, '.'); i >= 0 {
			field = field[i+1:]
		}
		return field, fmt.Errorf("%q must be %s, not %s", field, kindName(te.Type.String()), te.Value)
	}
	return "", err
}

func kindName(t string) string {
	switch t {
	case "string", "streamrules.Mode":
		return "a string"
	case "bool":
		return "true or false"
	case "[]string":
		return "a list of strings"
	case "int", "int64":
		return "a whole number"
	case "streamrules.Example":
		return "a string, or an object with text, input and tools"
	}
	return "a " + t
}

// Parse parses a versioned set, {"version": N, "rules": [...]}, in JSON or YAML (JSON
// when the data starts with '{'). It rejects, each with the field named: unknown fields,
// fields in another case, duplicate fields, the store's own fields (id, created_at,
// updated_at), invalid UTF-8, data after the set, a missing or non-positive version,
// duplicate rule names, and every rule streamrules.Validate rejects (with environments,
// the names `when` may use; the set's Environments holds them). The error is an *Error. Rules are normalized;
// "enabled" is true when absent.
func Parse(data []byte, environments ...string) (Set, error) {
	return parse(data, "", "", environments)
}

// Load reads and parses a set file; its format is FormatOf(path), or else the content's.
// Errors start with the path and line.
func Load(path string, environments ...string) (Set, error) {
	data, err := readFile(path)
	if err != nil {
		return Set{}, err
	}
	return parse(data, FormatOf(path), path, environments)
}

func parse(data []byte, f Format, file string, environments []string) (Set, error) {
	set, err := parseSet(data, f, environments)
	if err != nil {
		err.File = file
		return Set{}, err
	}
	return set, nil
}

func parseSet(data []byte, f Format, environments []string) (Set, *Error) {
	d, ferr := read(data, f)
	if ferr != nil {
		return Set{}, ferr
	}
	if ferr := d.check(setShape); ferr != nil {
		return Set{}, ferr
	}
	var top struct {
		Version *int              `json:"version"`
		Rules   []json.RawMessage `json:"rules"`
	}
	if err := json.Unmarshal(d.json, &top); err != nil {
		field, msg := typeError(err)
		return Set{}, &Error{Field: field, Line: d.line([]any{field}), Err: msg}
	}
	switch {
	case top.Version == nil:
		return Set{}, &Error{Field: "version", Line: 1, Err: errors.New(`missing "version"`)}
	case *top.Version < 1:
		return Set{}, &Error{Field: "version", Line: d.line([]any{"version"}), Err: fmt.Errorf(`"version" is %d, must be 1 or more`, *top.Version)}
	}
	known := slices.Clone(environments)
	set := Set{Version: *top.Version, Rules: make([]streamrules.Rule, 0, len(top.Rules)), Environments: known}
	seen := map[string]int{}
	for i, raw := range top.Rules {
		at := []any{"rules", i}
		r, err := decodeRule(raw, d, at)
		if err == nil {
			err = validate(&r, known, d, at)
		}
		if err == nil {
			if j, dup := seen[r.Name]; dup {
				err = &Error{Field: "name", Line: d.line(append(at, "name")),
					Err: &streamrules.ValidationError{Field: "name", Reason: fmt.Sprintf("duplicate of rule #%d", j)}}
			}
		}
		if err != nil {
			err.Rule = i + 1
			if err.Name == "" {
				err.Name = excerpt(r.Name)
			}
			return Set{}, err
		}
		seen[r.Name] = i + 1
		set.Rules = append(set.Rules, r)
	}
	return set, nil
}

// nameHint returns the name of a rule that did not decode, for the message; "" if it
// has none readable.
func nameHint(raw []byte) string {
	var n struct {
		Name any `json:"name"`
	}
	if json.Unmarshal(raw, &n) == nil {
		if s, ok := n.Name.(string); ok {
			return excerpt(s)
		}
	}
	return ""
}

// decodeRule decodes one rule object that passed the strict checks.
func decodeRule(raw []byte, d *doc, at []any) (streamrules.Rule, *Error) {
	var r streamrules.Rule
	if err := json.Unmarshal(raw, &r); err != nil {
		field, msg := typeError(err)
		return r, &Error{Field: field, Name: nameHint(raw), Line: d.line(append(slices.Clone(at), field)), Err: msg}
	}
	return r, nil
}

func validate(r *streamrules.Rule, known []string, d *doc, at []any) *Error {
	if err := paddedName(r.Name); err != nil {
		return &Error{Field: "name", Name: excerpt(r.Name), Err: err, Line: d.line(append(slices.Clone(at), "name"))}
	}
	r.Normalize()
	err := streamrules.Validate(r, known)
	if err == nil {
		return nil
	}
	e := &Error{Name: excerpt(r.Name), Err: err, Line: d.line(at)}
	var ve *streamrules.ValidationError
	if errors.As(err, &ve) {
		e.Field = ve.Field
		e.Line = d.line(append(slices.Clone(at), fieldPath(ve.Field)...))
	}
	return e
}

// fieldPath splits a validation error's field, "predicate.any_of[0].ends_with_regex",
// into the path of keys and indexes that finds its line.
func fieldPath(field string) []any {
	var out []any
	for _, part := range strings.Split(field, ".") {
		name, rest, _ := strings.Cut(part, "[")
		if name != "" {
			out = append(out, name)
		}
		for rest != "" {
			idx, after, ok := strings.Cut(rest, "]")
			n, err := strconv.Atoi(idx)
			if !ok || err != nil {
				return out
			}
			out = append(out, n)
			rest = strings.TrimPrefix(after, "[")
		}
	}
	return out
}

// ParseRule parses a single rule, an object with a rule's fields, in JSON or YAML, as
// strictly as Parse parses a set's rules. The rule is normalized and valid; its `when`
// may name environments.
func ParseRule(data []byte, environments ...string) (streamrules.Rule, error) {
	return parseRule(data, "", "", environments)
}

// LoadRule reads and parses a file holding a single rule (rules create -f).
func LoadRule(path string, environments ...string) (streamrules.Rule, error) {
	data, err := readFile(path)
	if err != nil {
		return streamrules.Rule{}, err
	}
	return parseRule(data, FormatOf(path), path, environments)
}

func parseRule(data []byte, f Format, file string, environments []string) (streamrules.Rule, error) {
	r, err := func() (streamrules.Rule, *Error) {
		d, err := read(data, f)
		if err != nil {
			return streamrules.Rule{}, err
		}
		if err := d.check(ruleShape); err != nil {
			return streamrules.Rule{}, err
		}
		r, err := decodeRule(d.json, d, nil)
		if err != nil {
			return r, err
		}
		return r, validate(&r, environments, d, nil)
	}()
	if err != nil {
		err.File = file
		return streamrules.Rule{}, err
	}
	return r, nil
}

// DecodeRule decodes a rule from JSON as strictly as Parse, without normalizing or
// validating it: for a caller that validates against its own environments (the master's
// tools ask the engine). The error is an *Error naming the field.
func DecodeRule(data []byte) (streamrules.Rule, error) {
	d, ferr := read(data, JSON)
	if ferr == nil {
		ferr = d.check(ruleShape)
	}
	if ferr != nil {
		return streamrules.Rule{}, ferr
	}
	r, err := decodeRule(d.json, d, nil)
	if err != nil {
		return streamrules.Rule{}, err
	}
	if err := paddedName(r.Name); err != nil {
		return streamrules.Rule{}, &Error{Field: "name", Name: excerpt(r.Name), Line: d.line([]any{"name"}), Err: err}
	}
	return r, nil
}

// paddedName refuses a name with space around it, which Normalize would trim: "ab\n"
// would be created as "ab" without a word, and a later edit or delete of "ab\n" would
// miss it. Names are used exactly as given everywhere else.
func paddedName(name string) error {
	if strings.TrimSpace(name) == name {
		return nil
	}
	return &streamrules.ValidationError{Field: "name", Reason: fmt.Sprintf("%q has spaces or line breaks around it: write the name alone", excerpt(name))}
}

// decodeFields is ruleinput.DecodeFields: some of a rule's fields, raw, as strictly as
// Parse, plus the extra keys the caller takes.
func decodeFields(data []byte, extra ...string) (map[string]json.RawMessage, error) {
	s := &shape{keys: map[string]*shape{}, nullable: ruleShape.nullable}
	for k, v := range ruleShape.keys {
		s.keys[k] = v
	}
	for _, k := range extra {
		s.keys[k] = anything
	}
	d, ferr := read(data, JSON)
	if ferr == nil {
		ferr = d.check(s)
	}
	if ferr != nil {
		return nil, ferr
	}
	var out map[string]json.RawMessage
	if err := json.Unmarshal(d.json, &out); err != nil || out == nil {
		return nil, &Error{Err: errors.New("not a JSON object")}
	}
	return out, nil
}

// Apply returns r with the given fields (keys as ruleinput.DecodeFields returns them) set and
// every other field kept: a partial edit. The values are checked as strictly as a file's. A new scope without a mode clears the mode,
// so Normalize derives it again. The result is neither normalized nor validated; its
// id and timestamps are r's.
func Apply(r streamrules.Rule, fields map[string]json.RawMessage) (streamrules.Rule, error) {
	cur, err := json.Marshal(outside(r))
	if err != nil {
		return r, err
	}
	m := map[string]json.RawMessage{}
	if err := json.Unmarshal(cur, &m); err != nil {
		return r, err
	}
	for k, v := range fields {
		if _, ok := ruleShape.keys[k]; ok {
			m[k] = v
		}
	}
	if _, scope := fields["scope"]; scope {
		if _, mode := fields["mode"]; !mode {
			delete(m, "mode")
		}
	}
	merged, err := json.Marshal(m)
	if err != nil {
		return r, &Error{Name: excerpt(r.Name), Err: fmt.Errorf("not JSON: %v", err)}
	}
	// The values may come from anywhere (a command's flags): as strict as a file, at
	// every depth.
	if perr := check(merged, ruleShape, nil); perr != nil {
		return r, &Error{Field: perr.field, Name: excerpt(r.Name), Err: perr.err}
	}
	var out streamrules.Rule
	if err := json.Unmarshal(merged, &out); err != nil {
		field, msg := typeError(err)
		return r, &Error{Field: field, Name: excerpt(r.Name), Err: msg}
	}
	if _, renamed := fields["name"]; renamed {
		if err := paddedName(out.Name); err != nil {
			return r, &Error{Field: "name", Name: excerpt(r.Name), Err: err}
		}
	}
	out.ID, out.CreatedAt, out.UpdatedAt = r.ID, r.CreatedAt, r.UpdatedAt
	return out, nil
}

// outside returns r as a file shows it: without the fields the store owns.
func outside(r streamrules.Rule) streamrules.Rule {
	r.ID = 0
	r.CreatedAt, r.UpdatedAt = time.Time{}, time.Time{}
	if r.When == nil {
		r.When = []string{}
	}
	return r
}

// decodeJSON is ruleinput.DecodeJSON: a JSON object into v as strictly as Parse.
func decodeJSON(data []byte, v any) error {
	d, ferr := read(data, JSON)
	if ferr == nil {
		ferr = d.check(shapeOf(reflect.TypeOf(v), true))
	}
	if ferr != nil {
		return ferr
	}
	if err := json.Unmarshal(d.json, v); err != nil {
		field, msg := typeError(err)
		return &Error{Field: field, Err: msg}
	}
	return nil
}
