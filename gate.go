package streamrules

import (
	"context"
	"slices"
	"strings"
)

// The tool-call gate: a tool rule in mode interrupt.
//
// A remind rule speaks after its call has run; a gate stops the call before it runs. The
// model wrapper hands the calls a response declares to Move.CheckResponse before the agent
// sees the response. A gate's promise is that the call never runs, not that the text is
// unseen, so a gate never holds speech: the text streams under the release plans of the
// armed text rules alone (release.go). While nothing of the response has been shown and the
// move has a retry left, a call a live gate matches makes the verdict discard the response
// whole (none of its calls run, the client sees none of it) and the tour is replayed with
// the rule's interrupt block, as for a text rule; a text miss in the same response goes
// into the same interrupt. Once the client has seen part of the response's text
// (CheckShownResponse), or after the ceiling, the response goes on and the tool wrapper
// asks Move.GateCall before each call: a matching call is refused, never run, no tool
// event is sent, and its result in the prompt copy is the rule's reminder block saying
// so. The shown text stands and no retry is spent.
//
// Unlike a text rule, a gate is never silenced by having fired: every matching call of the
// move is stopped. Its `when` and repeat policy still decide whether it is armed. A gate
// with a repeat limit (`once`, `after:N`) fires only after its claim (claim.go), as the
// other repeat-limited rules: the first firing of the move claims it, the later ones of
// the same move ride on that claim, and a lost or failed claim disarms the gate for the
// move (the call runs, as in a move the repeat policy rules out).
//
// Outcomes: a discard is "corrected" when the replay's calls pass the rule, "missed_again"
// when the replay, with a retry still left, declares a matching call again (and is
// discarded again), "refused" when the replay declares it after the ceiling (its refusal
// then records no second firing). A refusal with no discard before it (replays disabled,
// or a host that calls its tools without the model wrapper) is a firing of its own,
// "refused". A gate in shadow records a would-fire when the call reaches the tool wrapper
// and lets it run.

// refusalLead opens the reminder a refused call's result carries in the prompt copy.
const refusalLead = "This call was refused and did not run. "

// DeclaredCall is a tool call a model response declares, before anything runs it: the
// tool's name as the model wrote it and its input as the agent will pass it.
type DeclaredCall struct {
	Tool  string
	Input string
}

// gateArmed reports whether a gate may act now: its `when` holds and its repeat policy
// allows it. Having fired in this move does not disarm it. Caller holds m.mu.
func (m *Move) gateArmed(r *compiledRule) bool {
	return r.when&^m.env == 0 &&
		(r.repeat.Kind == RepeatEvery || !m.stateUnknown && !m.denied[r.Name] && r.repeat.Allows(m.lastFired[r.Name], m.number))
}

// gateClaimLocked claims an armed live gate's firing in this move (claimLocked) unless
// the move holds the claim already; true means the gate may fire. Caller holds m.mu.
func (m *Move) gateClaimLocked(r *compiledRule) bool {
	if r.repeat.Kind == RepeatEvery || m.gateClaims[r.Name] {
		return true
	}
	if !m.claimLocked(r) {
		return false
	}
	if m.gateClaims == nil {
		m.gateClaims = map[string]bool{}
	}
	m.gateClaims[r.Name] = true
	return true
}

// gatePreclaimLocked claims at once (claimAllLocked) the armed live gates of hits whose
// claim the move does not hold yet, when there are several: gateClaimLocked then finds
// each claimed, or denied. Caller holds m.mu.
func (m *Move) gatePreclaimLocked(hits []gateHit) {
	var need []*compiledRule
	for _, h := range hits {
		r := h.rule
		if claims(r) && !m.gateClaims[r.Name] && m.gateArmed(r) && !slices.Contains(need, r) {
			need = append(need, r)
		}
	}
	if len(need) < 2 {
		return // none, or one: gateClaimLocked makes it
	}
	for _, r := range m.claimAllLocked(need) {
		if m.gateClaims == nil {
			m.gateClaims = map[string]bool{}
		}
		m.gateClaims[r.Name] = true
	}
}

// gatesArmed reports whether a declared call could make the model wrapper discard a
// response now: the move has a retry left and a live gate is armed. Then the response's
// agent events and its tool-call chunks are held until the verdict; its text is not (it
// streams as the text rules' release lets it, and a gate that matches after some of it
// was shown refuses the call instead of discarding). A rule set without gates answers at
// the cost of a length check.
func (m *Move) gatesArmed() bool {
	if len(m.set.gates) == 0 {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.anyGateArmedLocked()
}

// anyGateArmedLocked is gatesArmed with m.mu held.
func (m *Move) anyGateArmedLocked() bool {
	if m.ended || !m.retryLeft() {
		return false
	}
	for _, r := range m.set.gates {
		if m.gateArmed(r) {
			return true
		}
	}
	return false
}

// toolRulesFor finds a tool's rules by the name a call gives: exactly, else as the
// executor looks tools up, ignoring case.
func (s *ruleSet) toolRulesFor(tool string) *toolRules {
	if tr := s.byTool[tool]; tr != nil {
		return tr
	}
	for name, tr := range s.byTool {
		if strings.EqualFold(name, tool) {
			return tr
		}
	}
	return nil
}

// gateHit is a gate that fires on one call.
type gateHit struct {
	rule *compiledRule
	tool string
	// unreadable: it fires because its shell reader could not read the call
	// (failsClosed); its block and refusal say so, and a refusal's outcome is
	// OutcomeUnreadable.
	unreadable bool
}

// gateHits returns the gates (live or shadowed, armed or not) that fire on a call. It
// takes no lock: the rule set is immutable.
func (s *ruleSet) gateHits(c DeclaredCall, out []gateHit) []gateHit {
	tr := s.toolRulesFor(c.Tool)
	if tr == nil || !tr.gates {
		return out
	}
	var buf [16]int
	args := callArgs{text: CompactArgs(c.Input)}
	t := targetOf(args.text, tr.match, buf[:0])
	for _, r := range tr.rules {
		if r.Mode != ModeInterrupt {
			continue
		}
		if fires, unreadable := r.verdictOnArgs(&t, &args); fires {
			out = append(out, gateHit{rule: r, tool: c.Tool, unreadable: unreadable})
		}
	}
	return out
}

// CheckResponse judges a whole model response: its text as CheckAnswer does, and the tool
// calls it declares against the gates (tool rules in mode interrupt: see DeclaredCall). With a retry left, a call
// a live gate matches discards the response; the interrupt holds a block per gate, after
// the text rules' blocks when the text missed too, and the response costs one retry in
// all. After the ceiling the verdict leaves the calls alone: Move.GateCall refuses them.
// Without gates or calls it is CheckAnswer.
func (m *Move) CheckResponse(ctx context.Context, text string, calls []DeclaredCall) Verdict {
	return m.checkResponse(ctx, text, calls, false)
}

// CheckShownResponse is CheckResponse for a response the client has already seen part
// of (its text was released as it streamed, Scanner.Release). What was shown cannot be
// taken back, so a gate does not discard it: the verdict leaves the calls alone, spends
// no retry, and Move.GateCall refuses each matching call when the agent makes it (the
// call never runs; its result in the prompt copy is the refusal block). The text is
// judged as CheckAnswer does. A sound release never shows text a text rule would
// discard, so in practice the verdict is accepted or repaired.
func (m *Move) CheckShownResponse(ctx context.Context, text string, calls []DeclaredCall) Verdict {
	return m.checkResponse(ctx, text, calls, true)
}

func (m *Move) checkResponse(ctx context.Context, text string, calls []DeclaredCall, shown bool) Verdict {
	if !m.set.anyGates {
		return m.CheckAnswer(ctx, text)
	}
	var hits []gateHit
	for _, c := range calls {
		hits = m.set.gateHits(c, hits)
	}
	// m.mu is taken three times, each decision inside one locked closure: the gates that
	// match (liveGates), the text verdict (CheckAnswer, which announces its firings
	// unlocked, as the host's hooks must not run under m.mu), then what the gates do with
	// it (gateVerdict). What may change in between is harmless: End makes the later steps
	// return what they have (each checks m.ended); gateVerdict reads the retry ceiling
	// again; a gate's `when` reads the tour's environment, which changes only at the next
	// BeginTour; and a repeat-limited gate fires only on a claim gateVerdict makes or
	// finds held, so a claim lost in between disarms it there.
	live, ok := m.liveGates(hits, shown)
	if !ok {
		return Verdict{}
	}
	v := m.CheckAnswer(ctx, text)
	if len(live) == 0 {
		return v
	}
	slices.SortFunc(live, func(a, b gateHit) int { return strings.Compare(a.rule.Name, b.rule.Name) })
	fired, discarded := m.gateVerdict(&v, live, shown)
	if fired != nil {
		m.announce(ctx, fired)
	}
	if discarded {
		m.eng.gateDiscarded() // after the unlock: the hook is the host's code
	}
	return v
}

// liveGates judges the gate discards whose replay hits are the calls of and returns the
// armed live gates of hits, each once; false: the move has ended.
func (m *Move) liveGates(hits []gateHit, shown bool) (live []gateHit, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ended {
		return nil, false
	}
	m.judgeGateReplayLocked(hits, !shown)
	for _, h := range hits {
		if !h.rule.shadow && m.gateArmed(h.rule) && !slices.ContainsFunc(live, func(l gateHit) bool { return l.rule == h.rule }) {
			live = append(live, h)
		}
	}
	return live, true
}

// gateVerdict lets the live gates act on the text verdict v: it names them refused
// (shown, or after the ceiling), or discards the response with their blocks in the
// interrupt. It returns the firings to announce and whether the gates made the discard
// (the text verdict did not), both for after the unlock.
func (m *Move) gateVerdict(v *Verdict, live []gateHit, shown bool) (fired []Firing, discarded bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ended {
		return nil, false
	}
	if !v.Discard && (shown || !m.retryLeft()) {
		// Shown, or after the ceiling: the text stands and the tool wrapper refuses the calls.
		for _, h := range live {
			v.Refused = append(v.Refused, h.rule.Name)
		}
		return nil, false
	}
	// Repeat-limited gates fire only if their claim holds (claim.go).
	m.gatePreclaimLocked(live)
	live = slices.DeleteFunc(live, func(h gateHit) bool { return !m.gateClaimLocked(h.rule) })
	if len(live) == 0 {
		return nil, false
	}
	if !v.Discard {
		m.retries++
		v.Discard, v.Fixed = true, "" // a discarded answer is never repaired
		discarded = true
	}
	fired = make([]Firing, 0, len(live))
	blocks := make([]string, 0, len(live)+1)
	if v.Interrupt != "" {
		blocks = append(blocks, v.Interrupt)
	}
	for _, h := range live {
		blocks = append(blocks, InterruptBlock(h.rule.Name, h.text()))
		v.Rules = append(v.Rules, h.rule.Name)
		fired = append(fired, m.record(Firing{Rule: h.rule.Name, Mode: ModeInterrupt, Tool: h.tool, Retry: true, Delivery: DeliveryFull})) // its block is in the interrupt, whole
	}
	v.Interrupt = strings.Join(blocks, "\n")
	slices.Sort(v.Rules)
	v.Rules = slices.Compact(v.Rules)
	return fired, discarded
}

// text is the gate's block text for this hit: the rule's text, after UnreadableLead when
// the call could not be read.
func (h gateHit) text() string {
	if h.unreadable {
		return UnreadableLead + h.rule.Text
	}
	return h.rule.Text
}

// judgeGateReplayLocked decides the gate discards whose replay these are the calls of;
// canDiscard: the replay itself may be discarded (it is unseen and a retry is left).
// Caller holds m.mu.
func (m *Move) judgeGateReplayLocked(hits []gateHit, canDiscard bool) {
	for i := range m.firings {
		f := &m.firings[i]
		if f.Mode != ModeInterrupt || !f.Retry || f.Tool == "" || f.Outcome != "" {
			continue
		}
		switch {
		case !slices.ContainsFunc(hits, func(h gateHit) bool { return h.rule.Name == f.Rule }):
			f.Outcome = OutcomeCorrected
		case canDiscard && m.retryLeft():
			f.Outcome = OutcomeMissedAgain // discarded again: the new discard has its own firing
		default:
			f.Outcome = OutcomeRefused // the tool wrapper refuses the call (GateCall)
			if slices.ContainsFunc(hits, func(h gateHit) bool { return h.rule.Name == f.Rule && h.unreadable }) {
				f.Outcome = OutcomeUnreadable
			}
			if m.claimed == nil {
				m.claimed = map[string]int{}
			}
			m.claimed[f.Rule]++
		}
	}
}

// GateCall is asked by the tool wrapper before a call runs. When a live, armed gate of the
// tool matches the call, the call must not run: GateCall records it as the move's next
// tool call with the gates' refusal reminders (a lead saying the call was refused and did
// not run, then the rule's text; pending text reminders ride along) and returns them; the prompt copy of the call's result is
// then those blocks. Otherwise it returns nil and the call runs (then ToolReminders). A
// gate in shadow records a would-fire and lets the call run. A tool without gates costs
// a map lookup. After End it returns nil.
func (m *Move) GateCall(ctx context.Context, tool, input string) []Reminder {
	if !m.set.anyGates {
		return nil
	}
	hits := m.set.gateHits(DeclaredCall{Tool: tool, Input: input}, nil)
	if len(hits) == 0 {
		return nil
	}
	out, fired := m.refuseCall(hits, tool, input)
	if fired != nil {
		m.announce(ctx, fired)
	}
	return out
}

// refuseCall decides GateCall's refusal with m.mu held and returns the reminders and the
// firings to announce after the unlock.
func (m *Move) refuseCall(hits []gateHit, tool, input string) (out []Reminder, fired []Firing) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ended {
		return nil, nil
	}
	m.gatePreclaimLocked(hits)
	for _, h := range hits {
		r := h.rule
		if r.shadow {
			if m.armed(r) {
				if m.fired == nil {
					m.fired = map[string]bool{}
				}
				m.fired[r.Name] = true
				fired = append(fired, m.record(Firing{Rule: r.Name, Mode: ModeInterrupt, Tool: tool, Outcome: OutcomeShadow}))
			}
			continue
		}
		if !m.gateArmed(r) || !m.gateClaimLocked(r) {
			continue
		}
		out = append(out, Reminder{Rule: r.Name, Text: refusalLead + h.text()})
		if m.claimed[r.Name] > 0 {
			m.claimed[r.Name]-- // its discard's outcome already says refused
			continue
		}
		outcome := OutcomeRefused
		if h.unreadable {
			outcome = OutcomeUnreadable
		}
		fired = append(fired, m.record(Firing{Rule: r.Name, Mode: ModeInterrupt, Tool: tool, Outcome: outcome, Delivery: DeliveryFull})) // the refusal block is its text, whole
	}
	if len(out) > 0 {
		out = append(out, m.pending...)
		m.pending = nil
		slices.SortStableFunc(out, func(a, b Reminder) int { return strings.Compare(a.Rule, b.Rule) })
		m.calls = append(m.calls, ToolCall{Index: m.ncalls, Tool: tool, Input: input, Reminders: out})
		m.ncalls++
	}
	return out, fired
}
