package streamrules

import (
	"context"
	"log/slog"
	"slices"
	"strings"
)

// Armed reports whether the tour's response could be discarded now, so the host must hold
// it until the verdict: a text rule is armed (then streamed speech is held, and let go as
// the release plans allow), or a live gate is (then the response's agent events and
// tool-call chunks are held; its text streams as the text rules' release lets it). Both
// need a retry left, except a text rule with a fix, which repairs without one. A rule in
// shadow never arms. After End it is false. The middleware's model wrapper asks it at the
// start of every tour; a host with its own loop asks it before streaming the answer.
func (m *Move) Armed() bool { return m.textArmed() || m.gatesArmed() }

// textArmed reports whether an answer could be discarded now: the move has a retry left
// and some text rule is armed (enabled, its `when` holds, its repeat policy allows it,
// not fired in this move). Only then must streamed speech be held.
func (m *Move) textArmed() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ended {
		return false
	}
	if !m.retryLeft() {
		return m.anyFixArmedLocked() // a fix repairs without a retry (never a shadowed rule's)
	}
	// A shadowed rule never discards, so it never holds speech: a tour whose only armed
	// text rules are in shadow streams chunk by chunk.
	return m.anyTextArmedLocked(true)
}

// anyTextArmedLocked reports whether a text rule is armed; live: only rules not in shadow.
func (m *Move) anyTextArmedLocked(live bool) bool {
	for _, r := range m.set.text {
		if m.armed(r) && !(live && r.shadow) {
			return true
		}
	}
	return false
}

// CheckAnswer judges what an answer says (its text target; see the middleware for what
// that is per agent type). An empty or blank target (say, the "\n" some providers send
// beside tool calls) says nothing and is accepted unchecked.
// On a miss with a retry left, the verdict discards the answer; after the ceiling the
// answer is kept and each missed rule's reminder rides the next tool result of this move.
// Either way the missed rules are silent for the rest of the move. A rule in shadow that
// misses only records a would-fire. The answer is also the replay of an
// earlier discard of this move, which decides that firing's outcome. After
// End every answer is accepted unchecked.
func (m *Move) CheckAnswer(ctx context.Context, text string) (v Verdict) {
	if len(m.set.text) == 0 {
		return Verdict{}
	}
	defer m.eng.checked(ModeInterrupt, m.eng.checkStart(), &v)
	var fired []Firing
	var unset [][2]string
	v, fired, unset = m.judgeAnswer(text)
	// The log line and the hooks are the host's code: they run after m.mu is released.
	if fired != nil {
		m.announce(ctx, fired)
	}
	if unset != nil {
		m.warnUnset(ctx, unset)
	}
	return v
}

// judgeAnswer decides CheckAnswer's verdict with m.mu held and returns it with the
// firings to announce and the fix variables found unset, both for after the unlock.
func (m *Move) judgeAnswer(text string) (v Verdict, fired []Firing, unset [][2]string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ended {
		return Verdict{}, nil, nil
	}
	awaiting := m.awaitingReplayLocked() // discards whose replay this answer is (firing.go)
	if strings.TrimSpace(text) == "" {
		m.judgeReplayLocked(awaiting, nil, true) // says nothing, so it passes every rule
		return Verdict{}, nil, nil
	}
	if len(awaiting) == 0 && !m.anyTextArmedLocked(false) {
		return Verdict{}, nil, nil // nothing can fire: skip the matching altogether
	}
	var buf [32]int
	t := targetOf(text, m.set.match, buf[:0])
	t.facts = &m.facts // the record the tool rules saw, and every call since
	m.judgeReplayLocked(awaiting, &t, false)
	missed, shadowed := m.missedOn(&t)
	if len(missed) == 0 && len(shadowed) == 0 {
		return Verdict{}, nil, nil
	}
	repaired, fixed, missed, unset := m.fixLocked(text, missed)
	// A repair that still misses a rule is thrown away with the answer while a retry is
	// left: its cured rules stay armed and repair the replay. Otherwise it is what is kept.
	if fixed != nil && (len(missed) == 0 || !m.retryLeft()) {
		fired = m.recordFixedLocked(text, repaired, fixed, &t)
		if len(missed) == 0 {
			fired = append(fired, m.wouldFireLocked(shadowed, &t, text)...)
			return Verdict{Fixed: repaired, Rules: ruleNames(fixed)}, fired, unset
		}
	}
	v = Verdict{Discard: len(missed) > 0 && m.retryLeft()}
	if v.Discard {
		m.retries++
	}
	blocks := make([]string, 0, len(missed)+len(fixed))
	if fired != nil { // repaired, and kept after the ceiling with the misses it still has
		v.Fixed = repaired
		v.Rules = ruleNames(fixed)
	}
	if m.fired == nil {
		m.fired = map[string]bool{}
	}
	if v.Discard {
		// The answer missed these rules too; their repair goes with it. They fired as any
		// miss of a discarded answer does (a retry firing, its outcome the replay's), but the
		// interrupt does not name them and they stay armed: their fix repairs the replay if
		// it misses them again. Replay and live stats count them alike: both judge here.
		for _, r := range fixed {
			v.Rules = append(v.Rules, r.Name)
			fired = append(fired, m.record(Firing{Rule: r.Name, Mode: ModeInterrupt, Retry: true}))
		}
	}
	for _, r := range missed {
		m.fired[r.Name] = true
		v.Rules = append(v.Rules, r.Name)
		f := Firing{Rule: r.Name, Mode: ModeInterrupt, Retry: v.Discard, Delivery: DeliveryFull, Span: r.spanOn(&t, text, m.set.match)} // never cut
		if v.Discard {
			blocks = append(blocks, InterruptBlock(r.Name, r.Text))
		} else {
			m.pending = append(m.pending, Reminder{Rule: r.Name, Text: r.Text})
			f.Outcome = OutcomeKept
		}
		fired = append(fired, m.record(f))
	}
	fired = append(fired, m.wouldFireLocked(shadowed, &t, text)...)
	v.Interrupt = strings.Join(blocks, "\n")
	slices.Sort(v.Rules)
	return v, fired, unset
}

// missedOn returns the armed text rules that fire on a judged target, in name order: the
// live ones, and the shadowed ones (which only record a would-fire). Repeat-limited live
// rules are claimed first, all at once (claim.go): a rule whose claim is lost is silent.
// Caller holds m.mu.
func (m *Move) missedOn(t *target) (live, shadowed []*compiledRule) {
	live, shadowed = m.firesOn(t)
	live = m.claimAllLocked(live)
	byIndex := func(a, b *compiledRule) int { return a.index - b.index }
	slices.SortFunc(live, byIndex) // m.set.text is in name order
	slices.SortFunc(shadowed, byIndex)
	return live, shadowed
}

// firesOn returns the armed text rules whose condition holds on a judged target, live
// and shadowed, claiming nothing. Only the rules that can fire are looked at: those whose
// plain condition matched (through the set's index by pattern), and those that decide
// otherwise (negate, predicate, applies_when). At 10,000 rules a pass over all of them was
// most of a check. Caller holds m.mu.
func (m *Move) firesOn(t *target) (live, shadowed []*compiledRule) {
	add := func(r *compiledRule) {
		if m.armed(r) && r.fires(t) {
			if r.shadow {
				shadowed = append(shadowed, r)
			} else {
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
	return live, shadowed
}

// stillMissedLocked returns the armed text rules that fire on a repaired text, in name
// order. The rules of missed were claimed when the answer was judged: they are judged
// again without a second claim (which a repeat-limited rule would lose to its own first,
// so a repair that left its miss standing would count it fixed). Only a rule the repair
// newly makes fire is claimed. Caller holds m.mu.
func (m *Move) stillMissedLocked(repaired string, missed []*compiledRule) []*compiledRule {
	var buf [32]int
	t := targetOf(repaired, m.set.match, buf[:0])
	t.facts = &m.facts
	live, _ := m.firesOn(&t)
	var still, newly []*compiledRule
	for _, r := range live {
		if slices.Contains(missed, r) {
			still = append(still, r)
		} else {
			newly = append(newly, r)
		}
	}
	still = append(still, m.claimAllLocked(newly)...)
	slices.SortFunc(still, func(a, b *compiledRule) int { return a.index - b.index })
	return still
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
	still = m.stillMissedLocked(repaired, missed)
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

// fixAttrs adds to a firing's log line what else is known about it: the rule's severity
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
