package middleware_test

import (
	"context"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/llms"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/openaitest"
	"github.com/streamrules/streamrules/internal/scripted"
	"github.com/streamrules/streamrules/middleware"
)

func TestInterplayFixReasoningFunc(t *testing.T) {
	img := imageRule()
	img.Fix = &streamrules.Fix{ReplaceRegex: &streamrules.ReplaceRegex{Pattern: `!\[[^\]]*\]\(([^)\s]+)\)`, With: "$1"}}
	r := newRig(t, nil, img)
	srv := openaitest.New(t, scripted.Reply{Text: "Look: ![cat](https://x/c.png)", Chunk: 4})
	llm := r.guard.Model(srv.LLM(t))
	ctx, move := r.eng.BeginMove(context.Background(), "chat-fix-r", "telegram")
	ctx = middleware.AgentTour(ctx, middleware.FormatToolCalling)
	var shown, rshown strings.Builder
	resp, err := llm.GenerateContent(ctx, []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "cat?")},
		llms.WithStreamingFunc(func(_ context.Context, c []byte) error { shown.Write(c); return nil }),
		llms.WithStreamingReasoningFunc(func(_ context.Context, reasoning, c []byte) error { rshown.Write(c); return nil }))
	move.End(ctx, err)
	if err != nil {
		t.Fatal(err)
	}
	const fixed = "Look: https://x/c.png"
	if got := resp.Choices[0].Content; got != fixed || shown.String() != fixed {
		t.Errorf("answer %q, stream %q, want the repaired %q", got, shown.String(), fixed)
	}
	if strings.Contains(rshown.String(), "![cat]") {
		t.Errorf("the reasoning func got the unrepaired draft %q", rshown.String())
	}
	if rshown.String() != fixed {
		t.Errorf("the reasoning func got %q, want the repaired %q", rshown.String(), fixed)
	}
}
