package streamrules

// Shadow mode: a rule is watched before it is enforced.
//
// A shadowed rule (Rule.Shadow, or every rule with Config.Shadow) is evaluated exactly as a
// live one: the same scope and condition, the same `when`, the same prefilter pass and the
// same repeat policy. Where the live rule would fire, the shadowed one only records a
// would-fire: a Firing with Outcome "shadow", the log line "stream rule would fire" with
// the fields of "stream rule fired", OnFire and OnOutcome, and a stat row. It never
// reminds, never discards an answer and never arms held speech (Move.TextArmed ignores
// it), so a tour whose only armed text rules are in shadow streams chunk by chunk.
//
// Repeat bookkeeping, a deliberate choice: a would-fire keeps the same books as a firing.
// The rule is silent for the rest of the move, and the chat's last-fired move is written
// at End, so `once` and `after:N` count would-fires as fires. The would-fire count is
// then exactly the number of firings enforcing the rule would have made on the same
// traffic, which is what the shadow period is there to measure (counting every miss
// instead would overstate a `once` rule by the number of its repeats). The price: in a
// chat where a `once` rule would-fired, it stays silent after it is promoted (an after:N
// rule waits out its N moves), as it would have had it been live all along.

const msgWouldFire = "stream rule would fire"

// wouldFireLocked records a would-fire of each shadowed text rule the answer missed.
// t is the answer as judged (text its text), for each firing's span. Caller holds m.mu.
func (m *Move) wouldFireLocked(shadowed []*compiledRule, t *target, text string) []Firing {
	var out []Firing
	for _, r := range shadowed {
		m.fired[r.Name] = true
		out = append(out, m.record(Firing{Rule: r.Name, Mode: ModeInterrupt, Outcome: OutcomeShadow, Span: r.spanOn(t, text, m.set.match)}))
	}
	return out
}
