package streamrules

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

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
