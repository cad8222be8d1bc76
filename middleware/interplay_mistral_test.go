package middleware_test

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tmc/langchaingo/llms"

	"github.com/streamrules/streamrules/internal/providertest"
	"github.com/streamrules/streamrules/internal/scripted"
	"github.com/streamrules/streamrules/middleware"
)

func TestInterplayMistralEarlyCutLeak(t *testing.T) {
	bad, _ := doomed(0)
	bad.ToolCalls = nil
	const good = "Here it is: https://x/c.png"
	r := newRig(t, nil, earlyImageRule())
	srv := providertest.New(t, providertest.Mistral, bad, scripted.Reply{Text: good, Chunk: 5})
	llm := r.guard.Model(srv.LLM(t))
	ctx, move := r.eng.BeginMove(context.Background(), "chat-mistral-cut", "telegram")
	ctx = middleware.AgentTour(ctx, middleware.FormatToolCalling)
	var shown strings.Builder
	resp, err := llm.GenerateContent(ctx, []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "cat?")},
		llms.WithStreamingFunc(func(_ context.Context, c []byte) error { shown.Write(c); return nil }))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("answer %q shown %q firings %+v", resp.Choices[0].Content, shown.String(), move.Firings())
	move.End(ctx, nil)
	time.Sleep(500 * time.Millisecond)
	buf := make([]byte, 1<<20)
	n := runtime.Stack(buf, true)
	for _, g := range strings.Split(string(buf[:n]), "\n\n") {
		if strings.Contains(g, "mistral-go") {
			t.Errorf("leaked goroutine:\n%s", g)
		}
	}
}
