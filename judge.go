package streamrules

import (
	"context"
	"log/slog"
	"slices"
	"strings"
)

// logic is how a compiled rule decides: its plain condition or predicate tree, its
// applies_when, its field path and its fix. Every regex of a group (a tool's rules, or all
// text rules) is in the group's one matcher, so a target costs one prefilter pass however
// many trees the group holds.
type logic struct {
	plain   int         // the condition's index in the group's patterns; -1 with a predicate
	cond    *predNode   // the predicate, nil for a plain condition
	applies *predNode   // nil: the rule applies everywhere
	own     textMatcher // a field rule's own matcher: it judges field values, not the group's target
	path    []string    // a field rule's Field, split at its dots
	fix     *compiledFix
	shell   ShellReader  // a shell rule's reader (shell.go); nil: not a shell rule
	log     *slog.Logger // a shell rule's debug line on a value it cannot read
}

// compileGroup compiles the logic of a group's rules and returns the group's matcher,
// built on prevMatch, the group's matcher in prev (the set in force; nil: none).
func (e *Engine) compileGroup(rules []*compiledRule, next analysisCache, prevMatch textMatcher, prev *ruleSet) textMatcher {
	group := patterns{index: make(map[string]int, len(rules))}
	for _, c := range rules {
		ps := &group
		if c.Field != "" || c.Shell {
			ps = &patterns{}
		}
		c.plain = -1
		if c.Predicate != nil {
			n := compilePredicate(c.Predicate, ps)
			c.cond = &n
		} else {
			c.plain = ps.add(c.Condition)
		}
		if c.AppliesWhen != nil {
			n := compilePredicate(c.AppliesWhen, ps)
			c.applies = &n
		}
		if c.Fix != nil && c.fix == nil { // an unchanged rule keeps its fix
			c.fix = compileFix(c.Fix)
		}
		if c.Shell {
			c.shell, c.log = e.shell(), e.log
		}
		if c.Field != "" || c.Shell {
			var prevOwn textMatcher
			if prev != nil {
				if p := prev.ruleByName(c.Name); p != nil {
					prevOwn = p.own
				}
			}
			c.own = e.newTextMatcherOn(ps.list, next, prevOwn)
			if c.Field != "" {
				c.path = strings.Split(c.Field, ".")
			}
		}
	}
	return e.newTextMatcherOn(group.list, next, prevMatch)
}

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
	if c.own == nil {
		return c.fires(group)
	}
	var buf [16]int
	for _, v := range c.ownTargets(args) {
		t := target{text: v, matched: c.own.Match(v, buf[:0]), facts: group.facts}
		if c.fires(&t) {
			return true
		}
	}
	return false
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
	if len(values) == 1 {
		return c.shellValues(args, values[0])
	}
	var cmds []string
	for _, v := range values {
		cmds = append(cmds, c.shellValues(args, v)...)
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

// NewJudge validates r (with the builtin environments plus known) and compiles it.
func NewJudge(r Rule, known ...string) (*Judge, error) {
	r.When = slices.Clone(r.When)
	r.Normalize()
	if err := Validate(&r, append(slices.Clone(BuiltinEnvironments), known...)); err != nil {
		return nil, err
	}
	e := &Engine{log: discardLogger()}
	if r.Shell && e.shell() == nil {
		return nil, errNoShellReader()
	}
	c := &compiledRule{Rule: r}
	return &Judge{rule: c, match: e.compileGroup([]*compiledRule{c}, analysisCache{}, nil, nil)}, nil
}

// Result is a Judge's verdict on one target.
type Result struct {
	Status Status
	// Span is where the rule's first matched regex atom matched the target, in bytes, on a
	// violation; nil otherwise (see Firing.Span).
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

// ---- fixes in a move ----

// missedLocked returns the armed text rules that fire on text, in name order. Caller holds m.mu.
func (m *Move) missedLocked(text string) []*compiledRule {
	var buf [32]int
	t := targetOf(text, m.set.match, buf[:0])
	t.facts = &m.facts
	missed, _ := m.missedOn(&t)
	return missed
}

// missedOn returns the armed text rules that fire on a judged target, in name order: the
// live ones, and the shadowed ones (which only record a would-fire). Only the rules that
// can fire are looked at: those whose plain condition matched (through the set's index by
// pattern), and those that decide otherwise (negate, predicate, applies_when). At 10,000
// rules a pass over all of them was most of a check. Caller holds m.mu.
func (m *Move) missedOn(t *target) (live, shadowed []*compiledRule) {
	add := func(r *compiledRule) {
		if m.armed(r) && r.fires(t) {
			if r.shadow {
				shadowed = append(shadowed, r)
			} else if m.claimLocked(r) { // repeat-limited: claimed first (claim.go)
				live = append(live, r)
			}
		}
	}
	byPattern := m.set.textByPattern
	for _, p := range t.matched {
		if p < len(byPattern) {
			for _, r := range byPattern[p] {
				add(r)
			}
		}
	}
	for _, r := range m.set.textOthers {
		add(r)
	}
	byIndex := func(a, b *compiledRule) int { return a.index - b.index }
	slices.SortFunc(live, byIndex) // m.set.text is in name order
	slices.SortFunc(shadowed, byIndex)
	return live, shadowed
}

// indexText fills the set's index of the text rules by plain pattern (see missedOn).
func (s *ruleSet) indexText() {
	s.textByPattern, s.textOthers = nil, nil
	for _, r := range s.text {
		pat := r.plain
		if r.Negate || r.own != nil || (pat >= 0 && r.applies != nil) {
			pat = -1
		}
		if pat < 0 && !r.Negate && r.own == nil {
			pat = r.requiredPattern() // a tree that cannot hold without one pattern (context.go)
		}
		if pat < 0 {
			s.textOthers = append(s.textOthers, r)
			continue
		}
		for len(s.textByPattern) <= pat {
			s.textByPattern = append(s.textByPattern, nil)
		}
		s.textByPattern[pat] = append(s.textByPattern[pat], r)
	}
}

// fixLocked applies, in rule-name order, the fixes of the missed rules that have one and
// checks the repaired text again against every armed text rule. It returns the repaired
// text, the rules it no longer misses (nil when nothing was repaired) and the rules it
// still misses. A blank repair is no repair. Caller holds m.mu.
// unset lists "rule var" pairs whose fix lacked a variable, for warnUnset (without m.mu).
func (m *Move) fixLocked(text string, missed []*compiledRule) (repaired string, fixed, still []*compiledRule, unset [][2]string) {
	repaired = text
	for _, r := range missed {
		if r.fix == nil {
			continue
		}
		out, missing := r.fix.apply(repaired, m.vars)
		if missing != "" {
			unset = append(unset, [2]string{r.Name, missing})
			continue
		}
		repaired = out
	}
	if repaired == text || strings.TrimSpace(repaired) == "" {
		return text, nil, missed, unset
	}
	still = m.missedLocked(repaired)
	for _, r := range missed {
		if !slices.Contains(still, r) {
			fixed = append(fixed, r)
		}
	}
	if len(fixed) == 0 {
		return text, nil, missed, unset
	}
	return repaired, fixed, still, unset
}

// warnUnset logs the fixes not applied for want of a move variable: a host that forgot
// SetVar pays a replay for a miss a fix could have repaired.
func (m *Move) warnUnset(ctx context.Context, unset [][2]string) {
	for _, u := range unset {
		m.eng.log.WarnContext(ctx, "stream rule fix not applied: the move has no such variable (Move.SetVar)",
			"rule", u[0], "var", u[1], "chat", m.chatID, "move", m.number)
	}
}

// anyFixArmedLocked reports whether an armed text rule has a fix: such a rule may repair
// an answer even when no retry is left, so speech must be held. Caller holds m.mu.
func (m *Move) anyFixArmedLocked() bool {
	for _, r := range m.set.text {
		if r.fix != nil && !r.shadow && m.armed(r) {
			return true
		}
	}
	return false
}

// SetVar sets a move variable, for the templates of fixes ({{name}}): the host sets what
// it knows about the move, e.g. SetVar("message_id", "4711") for a Telegram reply's tail.
// Safe for concurrent use; set variables before the tour's model call: held speech is
// released on the fix as the variables were when the tour began (a variable first set
// later still fills the fix at the end, the release having held that tour; changing a
// variable's value while a tour streams is not supported).
func (m *Move) SetVar(name, value string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.vars == nil {
		m.vars = map[string]string{}
	}
	m.vars[name] = value
}

// ruleByName returns the set's rule named name, or nil.
func (s *ruleSet) ruleByName(name string) *compiledRule {
	i, ok := slices.BinarySearchFunc(s.all, name, func(c *compiledRule, n string) int { return strings.Compare(c.Name, n) })
	if !ok {
		return nil
	}
	return s.all[i]
}

// recordFixedLocked marks the repaired rules fired and records their firings with outcome
// fixed and the diff from the draft to the repaired text; t is the draft as judged, for
// each firing's span. Caller holds m.mu.
func (m *Move) recordFixedLocked(draft, repaired string, fixed []*compiledRule, t *target) []Firing {
	diff := Diff(draft, repaired)
	if m.fired == nil {
		m.fired = map[string]bool{}
	}
	out := make([]Firing, 0, len(fixed))
	for _, r := range fixed {
		m.fired[r.Name] = true
		out = append(out, m.record(Firing{Rule: r.Name, Mode: ModeInterrupt, Outcome: OutcomeFixed, Diff: diff, Span: r.spanOn(t, draft, m.set.match)}))
	}
	return out
}

func ruleNames(rules []*compiledRule) []string {
	out := make([]string, len(rules))
	for i, r := range rules {
		out[i] = r.Name
	}
	return out
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// fixAttrs adds to a firing's log line what wave 2 knows about it: the rule's severity
// and explanation, the outcome, and a fix's diff.
func (m *Move) fixAttrs(f Firing, attrs []any) []any {
	if r := m.set.ruleByName(f.Rule); r != nil {
		if r.Severity != "" {
			attrs = append(attrs, "severity", r.Severity)
		}
		if r.Explanation != "" {
			attrs = append(attrs, "explanation", r.Explanation)
		}
	}
	if f.Outcome != "" {
		attrs = append(attrs, "outcome", string(f.Outcome))
	}
	if f.Diff != nil {
		lines := make([]string, len(f.Diff))
		for i, c := range f.Diff {
			lines[i] = c.String()
		}
		attrs = append(attrs, "diff", strings.Join(lines, "; "))
	}
	return attrs
}
