package streamrules

import (
	"context"
	"slices"
	"strings"

	"github.com/streamrules/streamrules/internal/lazydfa"
)

// Thinking rules read the model's reasoning (scope: thinking): the text a reasoning model
// streams before its answer, which OpenAI-compatible servers send as reasoning_content
// (DeepSeek, vLLM…) and Anthropic as thinking blocks. Many misses show there first ("I
// cannot view images", "I'll just rm -rf the folder"), before the answer and before any
// tool call.
//
// A thinking rule is text-shaped (condition, negate, predicate, applies_when, when,
// repeat, shadow) and its mode is interrupt: a miss discards the whole response, thinking,
// text and declared calls, unseen, and the tour is replayed once with the interrupt. The
// retry ceiling is the one text rules and gates spend. It has no fix (reasoning is never
// shown as an answer, so there is nothing to repair in place), and it is always early: the
// reasoning is scanned as it streams (Move.ThinkingScanner) and the provider is stopped at
// the first certain miss. Where a provider gives no reasoning text (OpenAI's o-series,
// Ollama, Google), the rule never fires.

// thinkingSet is a rule set's thinking rules, with their own matcher and early automata:
// their patterns never run on an answer, nor the text rules' on the thinking.
type thinkingSet struct {
	rules []*compiledRule // by name; compiledRule.index is the position here
	match textMatcher     // over rules' patterns; nil when there are none
	early *earlySet       // the rules a prefix can decide; nil: none
}

// validateThinking refuses what a thinking rule cannot have, naming the field.
func validateThinking(r *Rule) error {
	if r.Scope != ScopeThinking {
		return nil
	}
	switch {
	case r.Fix != nil:
		return invalid("fix", "a thinking rule cannot be fixed: reasoning is not an answer to repair; its miss discards the response and replays it")
	case r.Field != "":
		return invalid("field", "only a tool rule has arguments to walk into; a thinking rule sees the reasoning")
	case r.Delivery != "":
		return invalid("delivery", "a thinking rule interrupts, and an interrupt is always delivered in full")
	}
	return nil
}

// placeThinking adds c, a thinking rule reusing p's derived parts when p is not nil, to
// set. It returns c when its early plan is still to be made: a thinking rule is always
// early unless in shadow (a shadowed rule never cuts).
func placeThinking(set *ruleSet, c, p *compiledRule) *compiledRule {
	c.index = len(set.thinking.rules)
	set.thinking.rules = append(set.thinking.rules, c)
	if c.release == nil {
		c.release = &lazyRelease{} // the plan of its tree's atoms (early_tree.go)
	}
	if p == nil && !c.shadow {
		return c
	}
	return nil
}

// compileThinking builds the matcher and the early automata of set's thinking rules, on
// their counterparts in prev.
func (e *Engine) compileThinking(set *ruleSet, next analysisCache, prev *ruleSet) {
	ts := &set.thinking
	if len(ts.rules) == 0 {
		return
	}
	var prevMatch textMatcher
	var prevEarly *earlySet
	if prev != nil {
		prevMatch, prevEarly = prev.thinking.match, prev.thinking.early
	}
	ts.match = e.compileGroup(ts.rules, next, prevMatch, prev)
	ts.early = e.compileEarly(ts.rules, prevEarly)
}

// ThinkingArmed reports whether the model's reasoning could discard this tour's response:
// the move has a retry left and some thinking rule not in shadow is armed. Only then must
// the reasoning be watched and the response held.
func (m *Move) ThinkingArmed() bool {
	if len(m.set.thinking.rules) == 0 {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ended || !m.retryLeft() {
		return false
	}
	for _, r := range m.set.thinking.rules {
		if !r.shadow && m.armed(r) {
			return true
		}
	}
	return false
}

// HasThinkingRules reports whether the move's rule set has a thinking rule: the caller
// then reads the response's reasoning (to check it after the ceiling, or in shadow).
func (m *Move) HasThinkingRules() bool { return len(m.set.thinking.rules) > 0 }

// CheckThinking judges the whole reasoning of a response, before its answer is judged
// (CheckResponse). On a miss with a retry left the verdict discards the response (its
// text and declared calls with it) and Interrupt is the replay's message; after the
// ceiling the response is kept and each missed rule's reminder rides the next tool result
// of this move. The missed rules are silent for the rest of the move. Reasoning that is
// blank, or absent (a provider that gives none), passes. The reasoning is also the replay
// of an earlier thinking discard of this move, which decides that firing's outcome.
// Costs one matcher pass over the reasoning, when a thinking rule is armed or awaiting.
func (m *Move) CheckThinking(ctx context.Context, thinking string) Verdict {
	return m.checkThinking(ctx, thinking, false)
}

// CheckShownThinking is CheckThinking for a response the client has seen part of (its
// reasoning came after text that was released): it never discards, a miss is kept.
func (m *Move) CheckShownThinking(ctx context.Context, thinking string) Verdict {
	return m.checkThinking(ctx, thinking, true)
}

func (m *Move) checkThinking(ctx context.Context, thinking string, shown bool) (v Verdict) {
	if len(m.set.thinking.rules) == 0 {
		return Verdict{}
	}
	defer m.eng.checked(ModeInterrupt, m.eng.checkStart(), &v)
	var fired []Firing
	v, fired = m.judgeThinking(thinking, shown)
	if fired != nil {
		m.announce(ctx, fired) // the host's code: after the unlock
	}
	return v
}

// judgeThinking decides checkThinking's verdict with m.mu held and returns it with the
// firings to announce.
func (m *Move) judgeThinking(thinking string, shown bool) (v Verdict, fired []Firing) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ended {
		return Verdict{}, nil
	}
	ts := &m.set.thinking
	var awaiting []int
	for i, f := range m.firings {
		if f.Thinking && f.Retry && f.Outcome == "" {
			awaiting = append(awaiting, i)
		}
	}
	blank := strings.TrimSpace(thinking) == ""
	armed := false
	for _, r := range ts.rules {
		armed = armed || m.armed(r)
	}
	if blank || len(awaiting) == 0 && !armed {
		for _, i := range awaiting {
			m.firings[i].Outcome = OutcomeCorrected
		}
		return Verdict{}, nil
	}
	var buf [32]int
	t := targetOf(thinking, ts.match, buf[:0])
	t.facts = &m.facts
	for _, i := range awaiting {
		f := &m.firings[i]
		f.Outcome = OutcomeCorrected
		if r := m.set.ruleByName(f.Rule); r != nil && r.fires(&t) {
			f.Outcome = OutcomeMissedAgain
		}
	}
	var missed, shadowed []*compiledRule
	for _, r := range ts.rules { // in name order
		if m.armed(r) && r.fires(&t) {
			if r.shadow {
				shadowed = append(shadowed, r)
			} else {
				missed = append(missed, r)
			}
		}
	}
	missed = m.claimAllLocked(missed) // repeat-limited: claimed first, all at once (claim.go)
	slices.SortFunc(missed, func(a, b *compiledRule) int { return a.index - b.index })
	if m.fired == nil {
		m.fired = map[string]bool{}
	}
	v.Discard = len(missed) > 0 && m.retryLeft() && !shown
	if v.Discard {
		m.retries++
	}
	blocks := make([]string, 0, len(missed))
	for _, r := range missed {
		m.fired[r.Name] = true
		v.Rules = append(v.Rules, r.Name)
		f := Firing{Rule: r.Name, Mode: ModeInterrupt, Retry: v.Discard, Thinking: true, Delivery: DeliveryFull, Span: r.spanOn(&t, thinking, ts.match)}
		if v.Discard {
			blocks = append(blocks, InterruptBlock(r.Name, r.Text))
		} else {
			m.pending = append(m.pending, Reminder{Rule: r.Name, Text: r.Text})
			f.Outcome = OutcomeKept
		}
		fired = append(fired, m.record(f))
	}
	for _, r := range shadowed {
		m.fired[r.Name] = true
		fired = append(fired, m.record(Firing{Rule: r.Name, Mode: ModeInterrupt, Thinking: true, Outcome: OutcomeShadow, Span: r.spanOn(&t, thinking, ts.match)}))
	}
	v.Interrupt = strings.Join(blocks, "\n")
	return v, fired
}

// ThinkingScanner returns a scanner for the current tour's reasoning, or nil when there is
// nothing to cut: no armed thinking rule a prefix can decide, or no retry left. Feed it
// the reasoning streamed so far with Scan, as the text scanner is fed the answer: at the
// first certain miss it records the firings (Early, Thinking, CutAtBytes the reasoning's
// length) and returns the discarding verdict; the caller stops the provider and replays.
// A rule a prefix cannot decide (negate, a condition on the end) is left to CheckThinking.
// Not safe for concurrent use.
func (m *Move) ThinkingScanner() *Scanner {
	ts := &m.set.thinking
	if len(ts.rules) == 0 {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ended || !m.retryLeft() {
		return nil
	}
	s := &Scanner{m: m, stopped: true}
	if es := ts.early; es != nil {
		var armed []bool
		for _, g := range es.groups {
			for _, r := range g.rules {
				if m.armed(r) {
					if armed == nil {
						armed = make([]bool, len(ts.rules))
					}
					armed[r.index] = true
				}
			}
		}
		if armed != nil {
			s.es, s.armed, s.stopped = es, armed, false
			s.cursors, s.off = make([]lazydfa.Cursor, len(es.groups)), make([]bool, len(es.groups))
			for i, g := range es.groups {
				s.cursors[i] = g.dfa.Start()
			}
		}
	}
	var live []*compiledRule
	for _, r := range ts.rules {
		if m.armed(r) && !r.shadow {
			live = append(live, r)
		}
	}
	s.initTrees(live)
	if s.stopped {
		return nil
	}
	return s
}

// thinkingHold is what a thinking rule does to the client's stream: it holds the response
// only while the reasoning is open.
func thinkingHold(r *Rule) SpeechHold {
	if r.Shadow {
		return SpeechHold{Reason: "in shadow: it is evaluated and counted, and never arms held speech"}
	}
	return SpeechHold{Kind: HoldNone, When: strings.Join(r.When, ", "),
		Reason: "a thinking rule reads the model's reasoning, armed only for providers that stream reasoning text: the answer's text waits until the reasoning is judged, then streams"}
}

// thinkingSummary is the load summary's word on the thinking rules, "" when there are
// none: they are armed only where the provider streams reasoning text.
func thinkingSummary(set *ruleSet) string {
	if len(set.thinking.rules) == 0 {
		return ""
	}
	names := make([]string, len(set.thinking.rules))
	for i, r := range set.thinking.rules {
		names[i] = r.Name
	}
	return strings.Join(names, ", ") + ": armed only for providers with reasoning text (reasoning_content, Anthropic thinking); elsewhere they never fire"
}
