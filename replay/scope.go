package replay

import (
	"github.com/streamrules/streamrules"
)

// Applicability says whether a rule could fire in a move at all. It is what "in scope"
// counts, and what a rate is taken over.
type Applicability int

const (
	// Applies: the rule's conditions on the move hold; it fires if its target matches.
	Applies Applicability = iota
	// OutOfScope: the rule's `when` does not hold in the move's environment.
	OutOfScope
	// NotApplicable: `when` holds, but the rule's own scope on its target does not (an
	// applies_when predicate): counted in RuleReport.NotApplicable, not in scope.
	NotApplicable
)

// applicability is the one place a backtest decides whether a rule applies to a move:
// its `when`, asked of the engine's own move (so an environment name the engine ignores
// does not hold here either). A predicate on the target (applies_when) goes here too:
// m has the targets (the answer, each call's args), rs can keep a compiled form of the
// rule (streamrules.Judge) across moves.
func applicability(rs *ruleStat, mv *streamrules.Move, m *Move) Applicability {
	for _, w := range rs.rule.When {
		if !mv.Has(w) {
			return OutOfScope
		}
	}
	if rs.rule.AppliesWhen == nil {
		return Applies
	}
	if rs.judge == nil {
		j, err := streamrules.NewJudge(rs.rule, mv.Engine().Environments()...)
		if err != nil {
			return Applies // cannot happen: the engine loaded the rule
		}
		rs.judge = j
	}
	tool := rs.rule.Tool()
	if tool == "" {
		target := m.Answer
		if rs.rule.Scope == streamrules.ScopeThinking {
			target = m.Reasoning
		}
		if rs.judge.Check(target, factsOf(m, len(m.Tools))).Status == streamrules.StatusNotApplicable {
			return NotApplicable
		}
		return Applies
	}
	verdict := Applies // a move without a call of the tool has nothing to judge
	for i, c := range m.Tools {
		if c.Name != tool {
			continue
		}
		if rs.judge.Check(streamrules.CompactArgs(c.Args), factsOf(m, i)).Status != streamrules.StatusNotApplicable {
			return Applies
		}
		verdict = NotApplicable
	}
	return verdict
}

// factsOf is what the line says of its move's context before its n-th tool call (n =
// len(m.Tools): before the answer): the input, when the line has one, and the record.
func factsOf(m *Move, n int) *streamrules.Facts {
	f := &streamrules.Facts{HasTools: true, Tools: make([]streamrules.ToolRun, n)}
	if m.Input != nil {
		f.Input, f.HasInput = *m.Input, true
	}
	for i, c := range m.Tools[:n] {
		f.Tools[i] = streamrules.ToolRun{Tool: c.Name, OK: c.Succeeded()}
	}
	return f
}
