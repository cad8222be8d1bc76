package streamrules

import (
	"context"
	"slices"
	"strings"
	"sync/atomic"
)

// The tool-call half of a move: what a tool call gets in the prompt copy, and the record
// of the calls the move made.

// ToolCall is one recorded tool call and the reminders its result carries in the prompt copy.
type ToolCall struct {
	Index     int // 0-based position among all tool calls of the move
	Tool      string
	Input     string
	Reminders []Reminder
}

// ToolReminders records a tool call and returns the reminders its result gets in the prompt
// copy, in rule-name order: the tool's soft rules that fire on its arguments, and the
// reminders of text rules missed after the retry ceiling earlier in this move.
// The call joins the move's tool record after its rules are judged (they see the calls
// before it), failed if ctx is a call marked with MarkToolFailed.
// A tool with no rules and nothing pending costs a map lookup, a context lookup and an
// append to the record (which allocates only as it grows).
// After End the move is over: nothing fires, nothing is recorded, nil is returned.
func (m *Move) ToolReminders(ctx context.Context, tool, input string) []Reminder {
	defer m.eng.checked(ModeRemind, m.eng.checkStart(), nil)
	tr := m.set.byTool[tool]
	var buf [16]int
	var args callArgs
	var t target
	if tr != nil {
		// One prefilter pass over the arguments, outside the lock; only candidates run
		// their regexp.
		args.text = CompactArgs(input)
		t = targetOf(args.text, tr.match, buf[:0])
		t.facts = &m.facts // read under m.mu, before this call joins the record
	}
	out, fired := m.remind(tr, &t, &args, tool, input, !toolFailed(ctx))
	if fired != nil {
		m.announce(ctx, fired)
	}
	return out
}

// remind decides ToolReminders' reminders with m.mu held: t and args are the call's
// arguments as tr's rules read them, ok whether the call succeeded. It returns the
// reminders and the firings to announce after the unlock.
func (m *Move) remind(tr *toolRules, t *target, args *callArgs, tool, input string, ok bool) (out []Reminder, fired []Firing) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ended {
		return nil, nil
	}
	if tr == nil && len(m.pending) == 0 {
		m.ncalls++
		m.recordToolLocked(tool, ok)
		return nil, nil
	}
	var dueBuf [16]*compiledRule
	due := dueBuf[:0] // the rules of out's reminders, for the budget (delivery.go)
	first := len(m.firings)
	if tr != nil {
		var hitBuf [16]*compiledRule
		hits := hitBuf[:0]
		for _, r := range tr.rules {
			if r.Mode == ModeInterrupt {
				continue // a gate: judged before the call runs (gate.go)
			}
			if !r.firesOnArgs(t, args) {
				continue
			}
			if !m.armed(r) {
				m.repeatedLocked(r) // fired earlier in this move: it was not complied with (firing.go)
				continue
			}
			hits = append(hits, r)
		}
		// Repeat-limited rules fire only if their claim holds: another move of the chat may
		// have fired them (claim.go). All claimed at once, under one bound.
		for _, r := range m.claimAllLocked(hits) {
			if m.fired == nil {
				m.fired = map[string]bool{}
			}
			m.fired[r.Name] = true
			if r.shadow {
				// Would fire: the same books as a live firing (firing.go), no reminder.
				fired = append(fired, m.record(Firing{Rule: r.Name, Mode: ModeRemind, Tool: tool, Outcome: OutcomeShadow}))
				continue
			}
			out = append(out, Reminder{Rule: r.Name, Text: r.Text})
			due = append(due, r)
			fired = append(fired, m.record(Firing{Rule: r.Name, Mode: ModeRemind, Tool: tool, Delivery: DeliveryFull, Span: r.spanOn(t, args.text, tr.match)}))
		}
	}
	m.recordToolLocked(tool, ok) // after its rules: for them, "earlier" is before this call
	if len(m.pending) > 0 {
		out = append(out, m.pending...)
		m.pending = nil
	}
	ordered := false
	if m.eng.budget > 0 && len(out) > 0 {
		out, ordered = m.deliverLocked(out, due, m.firings[first:])
		copy(fired, m.firings[first:]) // the announced copies carry the delivery too
	}
	if !ordered {
		slices.SortStableFunc(out, func(a, b Reminder) int { return strings.Compare(a.Rule, b.Rule) })
	}
	if len(out) > 0 {
		m.calls = append(m.calls, ToolCall{Index: m.ncalls, Tool: tool, Input: input, Reminders: out})
	}
	m.ncalls++
	return out, fired
}

// ToolCalls returns the tool calls of this move that got reminders, in order, and how many
// tool calls the move has made in all. Calls without reminders are only counted (see
// ToolCall.Index), so a tool with no rules costs nothing.
func (m *Move) ToolCalls() (calls []ToolCall, total int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.calls), m.ncalls
}

type toolCallKey struct{}

// toolCallMark is one tool call's failure mark.
type toolCallMark struct{ failed atomic.Bool }

// WithToolCall returns a context for one tool call, on which MarkToolFailed works. The
// middleware's tool wrapper makes one for every call inside a move; a host with its own
// loop makes one per call and passes it to the tool and then to Move.ToolReminders.
func WithToolCall(ctx context.Context) context.Context {
	return context.WithValue(ctx, toolCallKey{}, &toolCallMark{})
}

// MarkToolFailed marks the tool call ctx belongs to as failed: the one way a host says
// that an output returned without a Go error is a failure (a compiler's errors, an HTTP
// 500 as text). Call it in the tool's Call, with the context Call got, before returning;
// the output still goes to the model as it is, and the move's record says the call
// failed (tool_failed holds, tool_succeeded does not). Outside a call made through
// WithToolCall (the middleware's tool wrapper, inside a move) it does nothing and
// reports false. A call that returns a Go error fails without a mark.
func MarkToolFailed(ctx context.Context) bool {
	mark, ok := ctx.Value(toolCallKey{}).(*toolCallMark)
	if ok {
		mark.failed.Store(true)
	}
	return ok
}

// toolFailed reports whether the call ctx belongs to was marked failed.
func toolFailed(ctx context.Context) bool {
	mark, ok := ctx.Value(toolCallKey{}).(*toolCallMark)
	return ok && mark.failed.Load()
}
