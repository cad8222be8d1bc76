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
func (g *Guard) Tool(t tools.Tool) tools.Tool {
	if gt, ok := t.(*guardedTool); ok && gt.g == g {
		return t
	}
	return &guardedTool{Tool: t, g: g}
}

// Unwrap returns the wrapped tool.
func (t *guardedTool) Unwrap() tools.Tool { return t.Tool }

func (t *guardedTool) Call(ctx context.Context, input string) (string, error) {
	if t.g.tracer != nil {
		return t.tracedCall(ctx, input) // trace.go
	}
	out, _, err := t.call(ctx, input)
	return out, err
}

// call runs the tool and returns, beside its result, the reminders its call got.
func (t *guardedTool) call(ctx context.Context, input string) (string, []streamrules.Reminder, error) {
	cb := t.g.callbacks
	if cb != nil {
		cb.HandleToolStart(ctx, input)
	}
	out, err := t.Tool.Call(ctx, input)
	if err != nil {
		if cb != nil {
			cb.HandleToolError(ctx, err)
		}
		return out, nil, err
	}
	var reminders []streamrules.Reminder
	if m := streamrules.MoveFrom(ctx); m != nil {
		reminders = m.ToolReminders(ctx, t.Tool.Name(), input)
	}
	if cb != nil {
		cb.HandleToolEnd(ctx, out)
	}
	return out, reminders, nil
}
