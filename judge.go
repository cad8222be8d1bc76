package streamrules

import (
	"slices"
)

// fires reports whether the rule fires on a target the group's matcher has judged:
// it applies there, and its condition holds (or, negated, does not).
// A verdict that reached context the target was not given (t.unknown) does not fire.
func (c *compiledRule) fires(t *target) bool {
	t.unknown = false
	if c.applies != nil && !c.applies.eval(t) {
		return false
	}
	var hit bool
	if c.cond != nil {
		hit = c.cond.eval(t)
	} else {
		hit = t.has(c.plain)
	}
	return hit != c.Negate && !t.unknown
}

// firesOnArgs is fires for a tool call's compact-JSON arguments: a field rule judges each
// value its path names and fires on the first that fires; a call without the field does
// not fire it. The arguments are decoded once per call, not once per field rule.
func (c *compiledRule) firesOnArgs(group *target, args *callArgs) bool {
	fires, _ := c.verdictOnArgs(group, args)
	return fires
}

// verdictOnArgs is firesOnArgs, and whether the rule fires because a shell gate could
// not read the call (shellVerdict).
func (c *compiledRule) verdictOnArgs(group *target, args *callArgs) (fires, unreadable bool) {
	if c.own == nil {
		return c.fires(group), false
	}
	if c.failsClosed() {
		return c.shellVerdict(group, args)
	}
	var buf [16]int
	for _, v := range c.ownTargets(args) {
		t := target{text: v, matched: c.own.Match(v, buf[:0]), facts: group.facts}
		if c.fires(&t) {
			return true, false
		}
	}
	return false, false
}

// ownTargets returns what a rule with its own matcher judges, one target each: a field
// rule's values; a shell rule's simple commands, read from each value (the field's, or
// the whole arguments).
func (c *compiledRule) ownTargets(args *callArgs) []string {
	if c.shell == nil {
		return args.values(c.path)
	}
	values := []string{args.text}
	if c.path != nil {
		// A tool that also takes a bare command line (not JSON) gets it read whole: a gate
		// must not let `rm -rf x` through because it came without its {"cmd": …}.
		if vs := args.values(c.path); args.ok {
			values = vs
		}
	}
	var cmds []string
	for _, v := range values {
		got, _ := c.shellValues(args, v)
		cmds = append(cmds, got...)
	}
	return cmds
}

// Status is a rule's verdict on one target, for checks outside a move (tests, backtests).
type Status string

// The three verdicts: the rule's condition does not fire, it fires, or the target is
// outside the rule's applies_when.
const (
	StatusPass          Status = "pass"
	StatusViolation     Status = "violation"
	StatusNotApplicable Status = "not_applicable"
)

// Judge is one rule compiled for checks outside an engine: a backtest, a rule file's
// tests, a CLI's "does this draft pass". It uses the engine's own compiled form, so its
// verdicts are the engine's. Safe for concurrent use.
type Judge struct {
	rule  *compiledRule
	match textMatcher
}

// NewJudge validates r (its `when` may name the environments known) and compiles it.
func NewJudge(r Rule, known ...string) (*Judge, error) {
	r.When = slices.Clone(r.When)
	r.Normalize()
	// One cache for the validation and the matcher: the analyses the cost bound explored
	// (and whose DFAs it owned, see patternCost) are the ones that run.
	cache := analysisCache{}
	if err := validate(&r, known, cache.check(cache), cache.cost(cache)); err != nil {
		return nil, err
	}
	e := &Engine{log: discardLogger()}
	if r.Shell && e.shell() == nil {
		return nil, errNoShellReader()
	}
	c := &compiledRule{Rule: r}
	return &Judge{rule: c, match: e.compileGroup([]*compiledRule{c}, cache, nil, nil)}, nil
}

// Result is a Judge's verdict on one target.
type Result struct {
	Status Status
	// Span is where the rule's first matched regex atom matched the target, in bytes, on a
	// violation, as a match of the regex's cut form; nil otherwise (see Firing.Span).
	Span *Span
}

// Check returns the rule's verdict on target: for a tool rule, target is the call's
// arguments (compact JSON, or the field's values when the rule has a field). facts is
// what context atoms read (the move's input and its tool record before the target); a
// verdict that needs context facts does not give is StatusNotApplicable, never a pass.
// nil facts gives none: a rule without context atoms does not need it.
func (j *Judge) Check(text string, facts *Facts) Result {
	var buf [16]int
	t := targetOf(text, j.match, buf[:0])
	t.facts = facts
	c := j.rule
	if c.own == nil {
		if c.applies != nil && (!c.applies.eval(&t) || t.unknown) {
			return Result{Status: StatusNotApplicable}
		}
		if c.fires(&t) {
			return Result{Status: StatusViolation, Span: c.spanOn(&t, text, j.match)}
		}
		if t.unknown {
			return Result{Status: StatusNotApplicable}
		}
		return Result{Status: StatusPass}
	}
	args := callArgs{text: text}
	if c.failsClosed() {
		if fires, _ := c.shellVerdict(&target{facts: facts}, &args); fires {
			return Result{Status: StatusViolation}
		}
		return Result{Status: StatusPass}
	}
	for _, v := range c.ownTargets(&args) {
		vt := target{text: v, matched: c.own.Match(v, buf[:0]), facts: facts}
		if c.fires(&vt) {
			return Result{Status: StatusViolation}
		}
		if vt.unknown {
			return Result{Status: StatusNotApplicable}
		}
	}
	return Result{Status: StatusPass}
}

// Fix applies the rule's fix to target with the move variables vars and returns the
// repaired text and its diff. ok is false when the rule has no fix, a template variable
// is missing, or the fix changes nothing. The repaired text is not checked again:
// Check it.
func (j *Judge) Fix(target string, vars map[string]string) (fixed string, diff []Change, ok bool) {
	if j.rule.fix == nil {
		return target, nil, false
	}
	out, missing := j.rule.fix.apply(target, vars)
	if missing != "" || out == target {
		return target, nil, false
	}
	return out, Diff(target, out), true
}

func targetOf(text string, m textMatcher, buf []int) target {
	return target{text: text, matched: m.Match(text, buf)}
}
