package replay

import (
	"context"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/middleware"
)

// Tracing a backtest (Options.Tracer): each replayed move is a move span, as the guard
// makes live, with a tool span per call (the reminders it would have carried, or refused
// by a gate). A transcript has no model calls, so there are no chat spans. Without a
// tracer each of these is a nil check.

// startMove starts the move's span; nil span without a tracer.
func (rp *Replayer) startMove(ctx context.Context, chat string) (context.Context, middleware.MoveSpan) {
	if rp.opts.Tracer == nil {
		return ctx, nil
	}
	return rp.opts.Tracer.StartMove(ctx, chat)
}

// endMove ends the move's span, if any; err is what move.End returned.
func endMove(sp middleware.MoveSpan, mv *streamrules.Move, err error) {
	if sp != nil {
		sp.End(mv, err)
	}
}

// startTool starts a tool call's span; nil span without a tracer.
func (rp *Replayer) startTool(ctx context.Context, c ToolCall) (context.Context, middleware.ToolSpan) {
	if rp.opts.Tracer == nil {
		return ctx, nil
	}
	return rp.opts.Tracer.StartToolCall(ctx, middleware.ToolCall{Name: c.Name, Input: c.Args})
}

// endTool ends a tool call's span, if any.
func endTool(sp middleware.ToolSpan, res middleware.ToolResult) {
	if sp != nil {
		sp.End(res)
	}
}
