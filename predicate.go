package streamrules

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Predicate is one node of a condition tree (the constitutional rules engine's grammar).
// Exactly one field is set. The atomic nodes test the target:
//
//   - contains_regex: the RE2 regex matches somewhere; not_contains_regex: it matches nowhere;
//   - starts_with_regex / ends_with_regex: a match begins at the start / ends at the end of the
//     target (the regex is anchored with \A / \z, so `$` inside keeps its usual meaning);
//   - max_words / min_words: at most / at least N words (runs of non-space, strings.Fields);
//   - max_chars: at most N characters (runes).
//
// all_of holds when every child holds, any_of when one does (both stop at the first child
// that decides), not_ inverts its child. On the wire (JSON, rule files, the predicate
// column) a node is an object with its one key, e.g.
//
//	{"all_of": [{"contains_regex": "```"}, {"not_": {"ends_with_regex": "```\\s*"}}]}
//
// A tree is immutable once it is in a Rule: the engine and Rule copies share it.
type Predicate struct {
	ContainsRegex    string `json:"contains_regex,omitempty"`
	NotContainsRegex string `json:"not_contains_regex,omitempty"`
	StartsWithRegex  string `json:"starts_with_regex,omitempty"`
	EndsWithRegex    string `json:"ends_with_regex,omitempty"`
	MaxWords         *int   `json:"max_words,omitempty"`
	MinWords         *int   `json:"min_words,omitempty"`
	MaxChars         *int   `json:"max_chars,omitempty"`
	// Context atoms: the move's user input and its tool record, not the target.
	InputContainsRegex    string           `json:"input_contains_regex,omitempty"`
	InputNotContainsRegex string           `json:"input_not_contains_regex,omitempty"`
	ToolCalled            string           `json:"tool_called,omitempty"`
	ToolSucceeded         string           `json:"tool_succeeded,omitempty"`
	ToolFailed            string           `json:"tool_failed,omitempty"`
	EditedUnchecked       *EditedUnchecked `json:"edited_unchecked,omitempty"`
	// ---- end of context atoms ----
	AllOf []Predicate `json:"all_of,omitempty"`
	AnyOf []Predicate `json:"any_of,omitempty"`
	Not   *Predicate  `json:"not_,omitempty"`
}

// Limits on a predicate tree, enforced by Validate. A tree is data a master types or a
// file carries; the bounds keep one rule from costing the hot path more than a few dozen
// plain conditions would. MaxPredicateNodes counts the atoms (the leaves: every key but
// all_of, any_of and not_); the combinators cost nothing the matcher runs and are bounded
// by MaxPredicateDepth, so an any_of of 64 contains_regex words is a tree that validates.
const (
	MaxPredicateNodes = 64
	MaxPredicateDepth = 8
)

// maxPredicateWalk bounds the nodes, combinators included, that a walk of a tree visits:
// a tree of MaxPredicateNodes atoms nested MaxPredicateDepth deep has fewer, so only a
// tree refused anyway (combinators with no atom below them) reaches it.
const maxPredicateWalk = MaxPredicateNodes * MaxPredicateDepth

// isCombinator reports whether p is an all_of, any_of or not_ node (and nothing else).
func (p *Predicate) isCombinator() bool {
	return (p.AllOf != nil || p.AnyOf != nil || p.Not != nil) && len(p.keys()) == 1
}

// Contains, NotContains, StartsWith, EndsWith, MaxWords, MinWords, MaxChars, AllOf, AnyOf
// and Not build nodes, for trees written in Go.
func Contains(re string) Predicate    { return Predicate{ContainsRegex: re} }
func NotContains(re string) Predicate { return Predicate{NotContainsRegex: re} }
func StartsWith(re string) Predicate  { return Predicate{StartsWithRegex: re} }
func EndsWith(re string) Predicate    { return Predicate{EndsWithRegex: re} }
func MaxWords(n int) Predicate        { return Predicate{MaxWords: &n} }
func MinWords(n int) Predicate        { return Predicate{MinWords: &n} }
func MaxChars(n int) Predicate        { return Predicate{MaxChars: &n} }
func AllOf(ps ...Predicate) Predicate { return Predicate{AllOf: ps} }
func AnyOf(ps ...Predicate) Predicate { return Predicate{AnyOf: ps} }
func Not(p Predicate) Predicate       { return Predicate{Not: &p} }

// keys returns the wire names of the fields set in p, in declaration order.
func (p *Predicate) keys() []string {
	var k []string
	add := func(set bool, name string) {
		if set {
			k = append(k, name)
		}
	}
	add(p.ContainsRegex != "", "contains_regex")
	add(p.NotContainsRegex != "", "not_contains_regex")
	add(p.StartsWithRegex != "", "starts_with_regex")
	add(p.EndsWithRegex != "", "ends_with_regex")
	add(p.MaxWords != nil, "max_words")
	add(p.MinWords != nil, "min_words")
	add(p.MaxChars != nil, "max_chars")
	p.contextKeys(add) // context.go
	add(p.AllOf != nil, "all_of")
	add(p.AnyOf != nil, "any_of")
	add(p.Not != nil, "not_")
	return k
}

// String renders the tree compactly, for log lines and errors.
func (p *Predicate) String() string {
	var b strings.Builder
	p.write(&b)
	return b.String()
}

func (p *Predicate) write(b *strings.Builder) {
	list := func(name string, kids []Predicate) {
		b.WriteString(name + "(")
		for i := range kids {
			if i > 0 {
				b.WriteString(", ")
			}
			kids[i].write(b)
		}
		b.WriteString(")")
	}
	switch {
	case p.ContainsRegex != "":
		fmt.Fprintf(b, "contains_regex(%q)", p.ContainsRegex)
	case p.NotContainsRegex != "":
		fmt.Fprintf(b, "not_contains_regex(%q)", p.NotContainsRegex)
	case p.StartsWithRegex != "":
		fmt.Fprintf(b, "starts_with_regex(%q)", p.StartsWithRegex)
	case p.EndsWithRegex != "":
		fmt.Fprintf(b, "ends_with_regex(%q)", p.EndsWithRegex)
	case p.MaxWords != nil:
		fmt.Fprintf(b, "max_words(%d)", *p.MaxWords)
	case p.MinWords != nil:
		fmt.Fprintf(b, "min_words(%d)", *p.MinWords)
	case p.MaxChars != nil:
		fmt.Fprintf(b, "max_chars(%d)", *p.MaxChars)
	case p.isContext():
		p.writeContext(b) // context.go
	case p.AllOf != nil:
		list("all_of", p.AllOf)
	case p.AnyOf != nil:
		list("any_of", p.AnyOf)
	case p.Not != nil:
		b.WriteString("not_(")
		p.Not.write(b)
		b.WriteString(")")
	default:
		b.WriteString("empty")
	}
}

// validatePredicate checks a tree. path is the field as the user writes it ("predicate",
// "applies_when"); an error names the bad node, e.g. predicate.all_of[1].ends_with_regex.
// check is the check of each regex (checkRegex, or the engine's through its cache).
func validatePredicate(p *Predicate, path string, check func(field, pattern string) error) error {
	var n treeCount
	return p.validate(path, 1, &n, check)
}

// treeCount is what a walk of a tree has met so far: its atoms, and all its nodes.
type treeCount struct{ atoms, nodes int }

// count adds p; it reports an error, naming path, when the tree has too many atoms (or,
// for a tree refused anyway, too many nodes to walk on).
func (n *treeCount) count(p *Predicate, path string) error {
	n.nodes++
	if !p.isCombinator() {
		n.atoms++
	}
	if n.atoms > MaxPredicateNodes {
		return invalid(path, "the tree has more than %d atoms (the conditions at its leaves; all_of, any_of and not_ are not counted)", MaxPredicateNodes)
	}
	if n.nodes > maxPredicateWalk {
		return invalid(path, "the tree has more than %d nodes", maxPredicateWalk)
	}
	return nil
}

func (p *Predicate) validate(path string, depth int, nodes *treeCount, check func(field, pattern string) error) error {
	if err := nodes.count(p, path); err != nil {
		return err
	}
	if depth > MaxPredicateDepth {
		return invalid(path, "nested deeper than %d levels", MaxPredicateDepth)
	}
	keys := p.keys()
	switch len(keys) {
	case 0:
		return invalid(path, "empty node: it needs one of contains_regex, not_contains_regex, starts_with_regex, ends_with_regex, max_words, min_words, max_chars, "+contextAtomNames+", all_of, any_of, not_")
	case 1:
	default:
		return invalid(path, "a node has one key, this one has %s (combine them with all_of)", strings.Join(keys, " and "))
	}
	at := path + "." + keys[0]
	regex := func(re string) error { return checkPattern(at, re, check) }
	count := func(n int) error {
		if n < 0 {
			return invalid(at, "%d is negative", n)
		}
		return nil
	}
	kids := func(list []Predicate) error {
		if len(list) == 0 {
			return invalid(at, "empty list: it needs at least one predicate")
		}
		for i := range list {
			if err := list[i].validate(fmt.Sprintf("%s[%d]", at, i), depth+1, nodes, check); err != nil {
				return err
			}
		}
		return nil
	}
	switch {
	case p.ContainsRegex != "":
		return regex(p.ContainsRegex)
	case p.NotContainsRegex != "":
		return regex(p.NotContainsRegex)
	case p.StartsWithRegex != "":
		return anchoredRegex(at, p.StartsWithRegex, anchorStart, check)
	case p.EndsWithRegex != "":
		return anchoredRegex(at, p.EndsWithRegex, anchorEnd, check)
	case p.MaxWords != nil:
		return count(*p.MaxWords)
	case p.MinWords != nil:
		return count(*p.MinWords)
	case p.MaxChars != nil:
		return count(*p.MaxChars)
	case p.isContext():
		return p.validateContext(at, check) // context.go
	case p.AllOf != nil:
		return kids(p.AllOf)
	case p.AnyOf != nil:
		return kids(p.AnyOf)
	}
	return p.Not.validate(at, depth+1, nodes, check)
}

// anchorStart and anchorEnd are the forms the engine compiles a starts_with_regex and an
// ends_with_regex to (compilePredicate), and the forms validation checks: the anchor can
// change what the cut form keeps (`\B\D{3,6}` runs as `\B\D{3}`, anchored at the end as
// `\B\D{3,6}\z`), so a regex that passes as written may fail anchored.
func anchorStart(re string) string { return `\A(?:` + re + `)` }
func anchorEnd(re string) string   { return `(?:` + re + `)\z` }

// anchoredRegex checks a starts/ends regex as written (its syntax, named as written) and
// as the engine compiles it (anchor): the errors name field.
func anchoredRegex(field, re string, anchor func(string) string, check func(field, pattern string) error) error {
	if err := checkPattern(field, re, check); err != nil {
		return err
	}
	err := checkPattern(field, anchor(re), check)
	var ve *ValidationError
	if errors.As(err, &ve) {
		return &ValidationError{Field: field, Reason: fmt.Sprintf("as the engine runs it, %s: %s", anchor(re), ve.Reason), err: ve.err}
	}
	return err
}

// checkPattern runs the plain condition's check (length and cost bound, RE2 syntax) on a
// regex held elsewhere, and names field in the error instead of "condition".
func checkPattern(field, re string, check func(field, pattern string) error) error {
	err := check("condition", re)
	var ve *ValidationError
	if errors.As(err, &ve) {
		return &ValidationError{Field: field, Reason: ve.Reason, err: ve.err}
	}
	return err
}

// validateTree checks the fields of a rule beyond its condition: its predicate and
// applies_when trees, field, fix, severity and explanation. Validate calls it after the
// plain condition, with its check of each regex.
func validateTree(r *Rule, check func(field, pattern string) error) error {
	if r.Predicate != nil {
		if r.Condition != "" {
			return invalid("predicate", "a rule has a condition or a predicate, not both (put the regex in the tree as contains_regex)")
		}
		if err := validatePredicate(r.Predicate, "predicate", check); err != nil {
			return err
		}
	}
	if r.AppliesWhen != nil {
		if err := validatePredicate(r.AppliesWhen, "applies_when", check); err != nil {
			return err
		}
	}
	if r.Field != "" && r.Tool() == "" {
		return invalid("field", "only a tool rule has arguments to walk into; a text rule sees the answer")
	}
	if err := checkField(r.Field); err != nil {
		return err
	}
	if r.Fix != nil {
		if r.Scope != ScopeText {
			return invalid("fix", "only a text rule can be fixed: a tool call that ran cannot be repaired")
		}
		if err := validateFix(r.Fix, check); err != nil {
			return err
		}
	}
	if r.Severity != "" && !slices.Contains(severities, r.Severity) {
		return invalid("severity", "%q is not one of %s", r.Severity, strings.Join(severities, ", "))
	}
	return checkChars("explanation", r.Explanation, MaxExplanationChars) // delivery.go
}
