package middleware

import (
	"context"

	"github.com/tmc/langchaingo/tools"

	"github.com/streamrules/streamrules"
)

// guardedTool records each call in the move, so the agent wrapper can lay the call's
// reminders onto the prompt copy of its result. The executor gets the clean output.
type guardedTool struct {
	tools.Tool
	g *Guard
}

// Tool wraps t: every call is recorded in the move the context carries (soft rules are
// matched against its name and compact-JSON input), tool start/end events with the clean
// output go to the configured callbacks, and the executor receives the clean output.
// Errors pass through unchanged. Outside a move the call passes straight through.
//
// Inside a move every call joins the move's tool record, what the context atoms
// tool_called, tool_succeeded, tool_failed and edited_unchecked read: failed when its
// Call returned an error, or when the tool called streamrules.MarkToolFailed with the
// context its Call got (an output that is a failure without being a Go error); succeeded
// otherwise.
func (g *Guard) Tool(t tools.Tool) tools.Tool {
	if gt, ok := t.(*guardedTool); ok && gt.g == g {
		return t
	}
	return &guardedTool{Tool: t, g: g}
}

// Unwrap returns the wrapped tool.
func (t *guardedTool) Unwrap() tools.Tool { return t.Tool }

// Call runs the tool, unless a gate (a tool rule in mode interrupt) matches the call: then
// the call is refused and never runs, no tool event is sent, and the executor gets an
// empty output whose prompt copy is the gate's refusal block (streamrules.Move.GateCall).
func (t *guardedTool) Call(ctx context.Context, input string) (string, error) {
	if t.g.tracer != nil {
		return t.tracedCall(ctx, input) // trace.go
	}
	out, _, _, err := t.call(ctx, input)
	return out, err
}

// call runs the tool and returns, beside its result, the reminders its call got, and
// whether a gate refused it (then it never ran, and the reminders are the refusal's).
func (t *guardedTool) call(ctx context.Context, input string) (string, []streamrules.Reminder, bool, error) {
	m := streamrules.MoveFrom(ctx)
	if m != nil {
		if refusal := m.GateCall(ctx, t.Tool.Name(), input); refusal != nil {
			if t.g.rec != nil {
				recordOf(ctx).tool(ToolRecord{Name: t.Tool.Name(), Args: input, Refused: true})
			}
			return "", refusal, true, nil
		}
	}
	cb := t.g.callbacks
	if cb != nil {
		cb.HandleToolStart(ctx, input)
	}
	if m != nil {
		ctx = streamrules.WithToolCall(ctx) // where the tool may MarkToolFailed this call
	}
	out, err := t.Tool.Call(ctx, input)
	if err != nil {
		if m != nil {
			m.ToolError(t.Tool.Name())
		}
		if cb != nil {
			cb.HandleToolError(ctx, err)
		}
		if m != nil && t.g.rec != nil {
			recordOf(ctx).tool(ToolRecord{Name: t.Tool.Name(), Args: input})
		}
		return out, nil, false, err
	}
	var reminders []streamrules.Reminder
	if m != nil {
		reminders = m.ToolReminders(ctx, t.Tool.Name(), input)
		if t.g.rec != nil {
			recordOf(ctx).tool(ToolRecord{Name: t.Tool.Name(), Args: input, OK: lastRunOK(m, t.Tool.Name())})
		}
	}
	if cb != nil {
		cb.HandleToolEnd(ctx, out)
	}
	return out, reminders, false, nil
}

// lastRunOK reports whether the move's last recorded call of tool succeeded: ToolReminders
// recorded it, failed when the tool marked it (streamrules.MarkToolFailed).
func lastRunOK(m *streamrules.Move, tool string) bool {
	runs, _ := m.ToolRecord()
	if n := len(runs); n > 0 && runs[n-1].Tool == tool {
		return runs[n-1].OK
	}
	return true
}
