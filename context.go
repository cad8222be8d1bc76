package streamrules

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Context atoms: predicate nodes that read what the move knows besides the target.
//
//   - input_contains_regex / input_not_contains_regex: the move's user input (the chain's
//     input value) matches the RE2 regex / does not;
//   - tool_called, tool_succeeded, tool_failed: a call of the named tool was made /
//     returned normally / failed, earlier in this move: before the answer being judged, or,
//     for a tool rule, before the call being judged;
//   - edited_unchecked {edits, checks}: a call of an edits tool succeeded in this move and
//     no call of a checks tool succeeded after it.
//
// A failed call is one whose Call returned a Go error (the middleware records it with
// Move.ToolError) or one the host marked failed with MarkToolFailed.
//
// They are evaluated lazily: only when a tree reaches them (all_of and any_of stop at the
// first child that decides), and never by the group's matcher, so a context atom costs no
// pass over the answer. A verdict that reached context the judge was not given (a Judge
// without Facts, a move whose input nobody set) is not applicable: the rule does not fire.

// EditedUnchecked is the operand of the edited_unchecked atom: tools that change the work
// (edits) and tools that verify it (checks).
type EditedUnchecked struct {
	Edits  []string `json:"edits"`
	Checks []string `json:"checks"`
}

// InputContains, InputNotContains, ToolCalled, ToolSucceeded, ToolFailed and
// EditedUncheckedBy build context atoms, for trees written in Go.
func InputContains(re string) Predicate    { return Predicate{InputContainsRegex: re} }
func InputNotContains(re string) Predicate { return Predicate{InputNotContainsRegex: re} }
func ToolCalled(tool string) Predicate     { return Predicate{ToolCalled: tool} }
func ToolSucceeded(tool string) Predicate  { return Predicate{ToolSucceeded: tool} }
func ToolFailed(tool string) Predicate     { return Predicate{ToolFailed: tool} }
func EditedUncheckedBy(edits, checks []string) Predicate {
	return Predicate{EditedUnchecked: &EditedUnchecked{Edits: edits, Checks: checks}}
}

// Facts is the context a Judge reads besides its target: the move's user input and its
// tool record before the target, in order. What is not known is not given: a verdict that
// needs it is StatusNotApplicable. A nil *Facts gives nothing.
type Facts struct {
	Input    string
	HasInput bool // Input is known (an empty input is an input)
	Tools    []ToolRun
	HasTools bool // Tools is the move's whole record before the target (none is a record)
}

// ToolRun is one entry of a move's tool record: which tool was called and whether it
// returned normally.
type ToolRun struct {
	Tool string `json:"tool"`
	OK   bool   `json:"ok"`
}

// maxToolRecord bounds a move's tool record. A move that makes more calls stops
// recording: its record is no longer whole, and the tool atoms of the rest of the move are
// not applicable (they never fire on a record that lost calls).
const maxToolRecord = 1024

// contextAtomNames lists the context atoms' wire names, for errors.
const contextAtomNames = "input_contains_regex, input_not_contains_regex, tool_called, tool_succeeded, tool_failed, edited_unchecked"

// contextAtom holds a compiled context atom's operands.
type contextAtom struct {
	re     *regexp.Regexp // input atoms
	tool   string         // tool_called, tool_succeeded, tool_failed
	edits  []string       // edited_unchecked
	checks []string
}

func (p *Predicate) contextKeys(add func(bool, string)) {
	add(p.InputContainsRegex != "", "input_contains_regex")
	add(p.InputNotContainsRegex != "", "input_not_contains_regex")
	add(p.ToolCalled != "", "tool_called")
	add(p.ToolSucceeded != "", "tool_succeeded")
	add(p.ToolFailed != "", "tool_failed")
	add(p.EditedUnchecked != nil, "edited_unchecked")
}

// isContext reports whether p's one key is a context atom.
func (p *Predicate) isContext() bool {
	return p.InputContainsRegex != "" || p.InputNotContainsRegex != "" || p.ToolCalled != "" ||
		p.ToolSucceeded != "" || p.ToolFailed != "" || p.EditedUnchecked != nil
}

func (p *Predicate) writeContext(b *strings.Builder) {
	switch {
	case p.InputContainsRegex != "":
		fmt.Fprintf(b, "input_contains_regex(%q)", p.InputContainsRegex)
	case p.InputNotContainsRegex != "":
		fmt.Fprintf(b, "input_not_contains_regex(%q)", p.InputNotContainsRegex)
	case p.ToolCalled != "":
		fmt.Fprintf(b, "tool_called(%q)", p.ToolCalled)
	case p.ToolSucceeded != "":
		fmt.Fprintf(b, "tool_succeeded(%q)", p.ToolSucceeded)
	case p.ToolFailed != "":
		fmt.Fprintf(b, "tool_failed(%q)", p.ToolFailed)
	default:
		fmt.Fprintf(b, "edited_unchecked(edits=%q, checks=%q)", p.EditedUnchecked.Edits, p.EditedUnchecked.Checks)
	}
}

// validateContext checks a context atom; at is its path, e.g. predicate.all_of[1].tool_called.
func (p *Predicate) validateContext(at string, check func(field, pattern string) error) error {
	tool := func(field, name string) error {
		if !toolNameRE.MatchString(name) {
			return invalid(field, "tool name %q has characters a tool name cannot have", name)
		}
		return nil
	}
	names := func(field string, list []string) error {
		if len(list) == 0 {
			return invalid(field, "empty list: it needs at least one tool name")
		}
		for i, n := range list {
			if err := tool(fmt.Sprintf("%s[%d]", field, i), n); err != nil {
				return err
			}
		}
		return nil
	}
	switch {
	case p.InputContainsRegex != "":
		return checkPattern(at, p.InputContainsRegex, check)
	case p.InputNotContainsRegex != "":
		return checkPattern(at, p.InputNotContainsRegex, check)
	case p.ToolCalled != "":
		return tool(at, p.ToolCalled)
	case p.ToolSucceeded != "":
		return tool(at, p.ToolSucceeded)
	case p.ToolFailed != "":
		return tool(at, p.ToolFailed)
	}
	if err := names(at+".edits", p.EditedUnchecked.Edits); err != nil {
		return err
	}
	return names(at+".checks", p.EditedUnchecked.Checks)
}

// compileContext compiles a valid context atom. An input regex gets its own regexp: it
// runs on the input, never in the group's matcher over the target.
func compileContext(p *Predicate) predNode {
	switch {
	case p.InputContainsRegex != "":
		return predNode{op: opInputMatch, atom: &contextAtom{re: regexp.MustCompile(p.InputContainsRegex)}}
	case p.InputNotContainsRegex != "":
		return predNode{op: opInputNoMatch, atom: &contextAtom{re: regexp.MustCompile(p.InputNotContainsRegex)}}
	case p.ToolCalled != "":
		return predNode{op: opToolCalled, atom: &contextAtom{tool: p.ToolCalled}}
	case p.ToolSucceeded != "":
		return predNode{op: opToolSucceeded, atom: &contextAtom{tool: p.ToolSucceeded}}
	case p.ToolFailed != "":
		return predNode{op: opToolFailed, atom: &contextAtom{tool: p.ToolFailed}}
	}
	e := p.EditedUnchecked
	return predNode{op: opEditedUnchecked, atom: &contextAtom{edits: slices.Clone(e.Edits), checks: slices.Clone(e.Checks)}}
}

// evalContext evaluates a context atom on t's facts. Missing context sets t.unknown: the
// verdict is then not applicable, whatever the tree makes of the false returned here.
func (n *predNode) evalContext(t *target) bool {
	f := t.facts
	switch n.op {
	case opInputMatch, opInputNoMatch:
		if f == nil || !f.HasInput {
			t.unknown = true
			return false
		}
		return n.atom.re.MatchString(f.Input) == (n.op == opInputMatch)
	}
	if f == nil || !f.HasTools {
		t.unknown = true
		return false
	}
	switch n.op {
	case opToolCalled, opToolSucceeded, opToolFailed:
		for _, r := range f.Tools {
			if r.Tool == n.atom.tool && (n.op == opToolCalled || r.OK == (n.op == opToolSucceeded)) {
				return true
			}
		}
		return false
	}
	// edited_unchecked: some successful edit has no successful check after it. A call of
	// a tool in both lists checks the edits before it, and is an edit of its own.
	unchecked := false
	for _, r := range f.Tools {
		if !r.OK {
			continue
		}
		if slices.Contains(n.atom.checks, r.Tool) {
			unchecked = false
		}
		if slices.Contains(n.atom.edits, r.Tool) {
			unchecked = true
		}
	}
	return unchecked
}

// requiredPattern returns a pattern of the group's matcher without whose match the rule
// cannot fire, or -1: the first one found in its applies_when, else in its condition tree
// (an all_of needs each child, a contains/starts/ends node its pattern). missedOn then
// looks at the rule only when that pattern matched, as at a plain rule: so a rule like
// all_of[contains "Audio saved:", not_ tool_succeeded] costs nothing on an answer without
// its literal, and its context atom is never reached there. Not for a negated rule.
func (c *compiledRule) requiredPattern() int {
	if c.applies != nil {
		if p := c.applies.required(); p >= 0 {
			return p
		}
	}
	if c.cond != nil {
		return c.cond.required()
	}
	return c.plain
}

func (n *predNode) required() int {
	switch n.op {
	case opMatch:
		return n.pat
	case opAll:
		for i := range n.kids {
			if p := n.kids[i].required(); p >= 0 {
				return p
			}
		}
	}
	return -1
}

// ---- the move's input and tool record ----

type inputKey struct{}

// WithInput returns a context carrying the move's user input, for BeginMove: the move
// begun with it starts with that input set (see Move.SetInput).
func WithInput(ctx context.Context, input string) context.Context {
	return context.WithValue(ctx, inputKey{}, input)
}

// SetInput sets the move's user input, what input_contains_regex reads. Give it once per
// move; a later call replaces it. middleware's Guard.Run and Guard.Call set it, and its
// agent wrapper takes it from the chain's input when nobody has. Safe for concurrent use.
func (m *Move) SetInput(input string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.facts.Input, m.facts.HasInput = input, true
}

// Input returns the move's user input, and whether it was set.
func (m *Move) Input() (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.facts.Input, m.facts.HasInput
}

// ToolRecord returns the move's tool record so far, in order, and whether it is whole
// (false once the move made more than 1024 calls). It lives in the move only and
// is never stored.
func (m *Move) ToolRecord() (runs []ToolRun, whole bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.facts.Tools), m.facts.HasTools
}

// ToolError records a call of tool whose Call returned a Go error, as failed. No rule
// judges it: it has no result to carry a reminder. After End it does nothing.
func (m *Move) ToolError(tool string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.ended {
		m.recordToolLocked(tool, false)
	}
}

// recordToolLocked appends a call to the tool record, up to maxToolRecord. Caller holds m.mu.
func (m *Move) recordToolLocked(tool string, ok bool) {
	if !m.facts.HasTools {
		return // cut at its bound: no longer whole
	}
	if len(m.facts.Tools) == maxToolRecord {
		m.facts.HasTools = false
		m.facts.Tools = nil
		return
	}
	m.facts.Tools = append(m.facts.Tools, ToolRun{Tool: tool, OK: ok})
}
