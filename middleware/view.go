package middleware

import (
	"context"

	"github.com/tmc/langchaingo/llms"

	"github.com/streamrules/streamrules/internal/cleanview"
)

// noteRetry records the messages a retry added to the prompt (the discarded answer, if it
// said anything, and the interrupt) in the tour's cleanview.Inserted, so the clean view
// drops exactly them. Outside an agent wrapper's Plan (a host's own loop under AgentTour)
// the record is started here and rides the returned context into the retry's call.
func noteRetry(ctx context.Context, added []llms.MessageContent) context.Context {
	ins := cleanview.InsertedFrom(ctx)
	if ins == nil {
		ins = &cleanview.Inserted{}
		ctx = cleanview.WithInserted(ctx, ins)
	}
	var discarded, interrupt string
	for _, m := range added {
		text := messageText(m)
		if m.Role == llms.ChatMessageTypeAI {
			discarded = text
		} else {
			interrupt = text
		}
	}
	ins.AddRetry(discarded, interrupt)
	return ctx
}

func messageText(m llms.MessageContent) string {
	for _, p := range m.Parts {
		if t, ok := p.(llms.TextContent); ok {
			return t.Text
		}
	}
	return ""
}
