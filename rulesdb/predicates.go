package rulesdb

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/streamrules/streamrules"
)

// predicateColumns are the rule columns of migration 0005, in predicateValues' order:
// the trees and the fix as JSON (” when absent), the field path, the metadata; then
// migration 0007's shell flag.
const predicateColumns = `predicate, applies_when, field, fix, severity, explanation, shell`

// predicateValues returns a rule's predicateColumns values for an insert or update.
func predicateValues(r streamrules.Rule) []any {
	return []any{jsonText(r.Predicate), jsonText(r.AppliesWhen), r.Field, jsonText(r.Fix), r.Severity, r.Explanation, r.Shell}
}

// jsonText is v as compact JSON, or ” for a nil pointer. The types are plain data: the
// marshal cannot fail.
func jsonText[T any](v *T) string {
	if v == nil {
		return ""
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // a regex with < or & stays readable in psql
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("rulesdb: %T does not marshal: %v", v, err))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// readPredicates fills the rule's predicateColumns from a row. A column that holds
// something other than the JSON of its type (a hand edit gone wrong) is reported; the
// engine then never sees a half-read rule.
func readPredicates(r *streamrules.Rule, predicate, applies, field, fix, severity, explanation, shell any) error {
	var errs []error
	if err := readJSON(asString(predicate), &r.Predicate); err != nil {
		errs = append(errs, fmt.Errorf("predicate: %w", err))
	}
	if err := readJSON(asString(applies), &r.AppliesWhen); err != nil {
		errs = append(errs, fmt.Errorf("applies_when: %w", err))
	}
	if err := readJSON(asString(fix), &r.Fix); err != nil {
		errs = append(errs, fmt.Errorf("fix: %w", err))
	}
	r.Field, r.Severity, r.Explanation = asString(field), asString(severity), asString(explanation)
	var err error
	if r.Shell, err = asBool(shell); err != nil {
		errs = append(errs, fmt.Errorf("shell: %w", err))
	}
	return errors.Join(errs...)
}

// readJSON decodes a JSON column strictly into *dst; ” (and a hand-typed null) leaves it nil.
func readJSON[T any](s string, dst **T) error {
	s = strings.TrimSpace(s)
	if s == "" || s == "null" {
		*dst = nil
		return nil
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	v := new(T)
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("data after the JSON value")
	}
	*dst = v
	return nil
}

// diffText is a firing's diff as stored in stream_rule_stat.diff: a JSON list, or ”.
func diffText(d []streamrules.Change) string {
	if d == nil {
		return ""
	}
	return jsonText(&d)
}

// readDiff reads stream_rule_stat.diff; an unreadable value reads as no diff.
func readDiff(v any) []streamrules.Change {
	var d *[]streamrules.Change
	if readJSON(asString(v), &d) != nil || d == nil {
		return nil
	}
	return *d
}
