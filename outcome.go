package streamrules

import "context"

// Outcomes: what came of each firing, decided by the end of its move.
//
//   - A text rule that discarded an answer (Firing.Retry) waits for the replay: the next
//     answer CheckAnswer judges in the move. The replay passing that rule makes the firing
//     "corrected", violating it again "missed_again" (the rule is silent for the rest of
//     the move, so that answer is kept). A replay that says nothing (tool calls only)
//     passes. A move that ends before any replay (the run failed) leaves the outcome empty.
//   - A text rule that missed after the retry ceiling is "kept" at once.
//   - A tool rule's reminder is "repeated" when a later call of the move matches the rule
//     again (the rule is silent then, but still evaluated for this), "complied" at End
//     otherwise.
//   - A would-fire is "shadow" at once (shadow.go).
//
// A firing recorded with its Outcome already set (say, "fixed" by a deterministic fix) is
// never overwritten: only empty outcomes are decided here.

// awaitingReplayLocked returns the positions in m.firings of text rules' discards whose
// replay has not been judged yet (a tool rule's discard is judged on the replay's calls,
// gate.go). Caller holds m.mu.
func (m *Move) awaitingReplayLocked() []int {
	var out []int
	for i, f := range m.firings {
		if f.Mode == ModeInterrupt && f.Retry && f.Outcome == "" && f.Tool == "" {
			out = append(out, i)
		}
	}
	return out
}

// judgeReplayLocked decides the discards at positions awaiting, against the answer the
// text rules' matcher has judged (t); blank: the answer said nothing. Caller holds m.mu.
func (m *Move) judgeReplayLocked(awaiting []int, t *target, blank bool) {
	for _, i := range awaiting {
		f := &m.firings[i]
		f.Outcome = OutcomeCorrected
		if blank {
			continue
		}
		if r := m.set.ruleByName(f.Rule); r != nil && r.fires(t) {
			f.Outcome = OutcomeMissedAgain
		}
	}
}

// repeatedLocked marks r's reminder of this move "repeated": a later call matched the rule
// again. Caller holds m.mu.
func (m *Move) repeatedLocked(r *compiledRule) {
	if !m.fired[r.Name] {
		return
	}
	for i := range m.firings {
		f := &m.firings[i]
		if f.Rule == r.Name && f.Mode == ModeRemind && f.Outcome == "" {
			f.Outcome = OutcomeRepeated
		}
	}
}

// settleOutcomesLocked decides what is left at End: a reminder no later call repeated was
// complied with. Caller holds m.mu.
func (m *Move) settleOutcomesLocked() {
	for i := range m.firings {
		if f := &m.firings[i]; f.Mode == ModeRemind && f.Outcome == "" {
			f.Outcome = OutcomeComplied
		}
	}
}

// outcomes tells OnOutcome about every firing of the ended move.
func (m *Move) outcomes(ctx context.Context, firings []Firing) {
	if m.eng.hooks.onOutcome == nil {
		return
	}
	for _, f := range firings {
		m.eng.hooks.onOutcome(ctx, f)
	}
}
