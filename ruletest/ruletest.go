package ruletest

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/ruleinput"

	// Shell rules are judged as the engine judges them wherever this package runs.
	_ "github.com/streamrules/streamrules/shellcmd"
)

// Kind is which list of a rule's tests an example is in.
type Kind string

// The two kinds: an example that must fire the rule, one that must not.
const (
	Fires  Kind = "fires"
	Passes Kind = "passes"
)

// Result is one example's outcome.
type Result struct {
	Kind  Kind `json:"kind"`
	Index int  `json:"index"` // in its list, from 0
	// Example is the example as the rule holds it.
	Example streamrules.Example `json:"example"`
	// Status is the judge's verdict on it.
	Status streamrules.Status `json:"status"`
	// Span is where a violation matched, when the judge says (see streamrules.Result).
	Span *streamrules.Span `json:"span,omitempty"`
	// OK: a fires example fired (a violation); a passes example did not (a pass, or not
	// applicable).
	OK bool `json:"ok"`
	// Reason says why an example failed; "" when it is OK.
	Reason string `json:"reason,omitempty"`
}

// Field is the example's path in the rule, as a file spells it: tests.fires[1].
func (r Result) Field() string { return fmt.Sprintf("tests.%s[%d]", r.Kind, r.Index) }

// RuleReport is one rule's tests.
type RuleReport struct {
	Rule string `json:"rule"`
	// Results are the fires examples, then the passes, in their order; none for a rule
	// without tests.
	Results []Result `json:"results"`
	// Err, when set, is why the rule could not be judged (streamrules.NewJudge refused
	// it: a *streamrules.ValidationError); Results is then empty.
	Err error `json:"-"`
}

// MarshalJSON writes the report with Err as "error", its message.
func (r RuleReport) MarshalJSON() ([]byte, error) {
	type fields RuleReport
	w := struct {
		fields
		Error string `json:"error,omitempty"`
	}{fields: fields(r)}
	if r.Err != nil {
		w.Error = r.Err.Error()
	}
	return json.Marshal(w)
}

// Failed returns the examples that failed.
func (r RuleReport) Failed() []Result {
	var out []Result
	for _, res := range r.Results {
		if !res.OK {
			out = append(out, res)
		}
	}
	return out
}

// OK reports whether the rule could be judged and every example came out as it says.
func (r RuleReport) OK() bool { return r.Err == nil && len(r.Failed()) == 0 }

// Report is the tests of a set of rules, in the set's order.
type Report struct {
	Rules []RuleReport `json:"rules"`
}

// OK reports whether every rule's tests pass.
func (r Report) OK() bool {
	for _, rr := range r.Rules {
		if !rr.OK() {
			return false
		}
	}
	return true
}

// Counts returns how many examples ran, how many failed, and how many rules have no
// tests.
func (r Report) Counts() (examples, failed, untested int) {
	for _, rr := range r.Rules {
		if len(rr.Results) == 0 && rr.Err == nil {
			untested++
		}
		examples += len(rr.Results)
		failed += len(rr.Failed())
	}
	return examples, failed, untested
}

// Run runs the tests of each rule (see RunRule); environments are the names the rules'
// `when` may use, all of them (there are no builtin ones): the set's Environments
// (rulefile.Set, seeds.Set) or the store's (rulesdb.Store.Environments), as the engine
// that loads the rules knows them. With none, a rule with a `when` is refused.
func Run(rules []streamrules.Rule, environments ...string) Report {
	rep := Report{Rules: make([]RuleReport, 0, len(rules))}
	for _, r := range rules {
		rep.Rules = append(rep.Rules, RunRule(r, environments...))
	}
	return rep
}

// RunRule judges each of the rule's examples with streamrules.NewJudge, the judge
// `validate` and `replay` use: the engine's own compiled rule, so a verdict here is the
// verdict a move would give. An example is judged as in a move where every environment
// of the rule's `when` holds, so the rule is armed; its text is the answer for a text
// rule and the call's arguments for a tool rule (compacted as a move compacts them,
// streamrules.CompactArgs, so spaces in the JSON change nothing); its input and tools, when given, are
// the move's context (streamrules.Example.Facts). A disabled or shadowed rule is judged
// as if live.
func RunRule(r streamrules.Rule, environments ...string) RuleReport {
	rep := RuleReport{Rule: r.Name}
	j, err := streamrules.NewJudge(r, environments...)
	if err != nil {
		rep.Err = err
		return rep
	}
	if r.Tests == nil {
		return rep
	}
	tool := strings.HasPrefix(strings.TrimSpace(r.Scope), streamrules.ScopeToolPrefix)
	for _, list := range [...]struct {
		kind     Kind
		examples []streamrules.Example
	}{{Fires, r.Tests.Fires}, {Passes, r.Tests.Passes}} {
		for i, e := range list.examples {
			target := e.Text
			if tool {
				target = streamrules.CompactArgs(target) // as a move sees the call
			}
			v := j.Check(target, e.Facts())
			res := Result{Kind: list.kind, Index: i, Example: e, Status: v.Status, Span: v.Span}
			res.OK, res.Reason = judge(list.kind, v, target)
			rep.Results = append(rep.Results, res)
		}
	}
	return rep
}

// judge says whether a verdict is what the example's kind wants, and if not why.
func judge(kind Kind, v streamrules.Result, text string) (bool, string) {
	switch {
	case kind == Fires && v.Status == streamrules.StatusViolation,
		kind == Passes && v.Status != streamrules.StatusViolation:
		return true, ""
	case kind == Passes:
		if s := v.Span; s != nil && s.Start >= 0 && s.End <= len(text) && s.Start <= s.End {
			return false, fmt.Sprintf("must pass, but it fires: the rule matched %q at bytes %d-%d", ruleinput.Excerpt(text[s.Start:s.End]), s.Start, s.End)
		}
		return false, "must pass, but it fires"
	case v.Status == streamrules.StatusNotApplicable:
		return false, "must fire, but the rule does not apply to it: outside its applies_when, or it reads context the example does not give (add input or tools)"
	}
	return false, "must fire, but it passes"
}

// String describes a failed example in one line: the rule, the example's field, an
// excerpt of its text and the reason.
func (r Result) String() string {
	if r.OK {
		return fmt.Sprintf("%s: ok (%s)", r.Field(), r.Status)
	}
	return fmt.Sprintf("%s %q: %s", r.Field(), ruleinput.Excerpt(strings.TrimSpace(r.Example.Text)), r.Reason)
}
