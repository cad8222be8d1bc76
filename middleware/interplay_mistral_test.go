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
	if got := resp.Choices[0].Content; got != good || shown.String() != good {
		t.Errorf("answer %q, shown %q", got, shown.String())
	}
	if f := move.Firings(); len(f) != 1 || !f[0].Early {
		t.Errorf("not cut early: %+v", f)
	}
	move.End(ctx, nil)
	// The SDK's reader goroutine of the cut stream must end; give it until the deadline.
	deadline := time.Now().Add(5 * time.Second)
	for {
		leaked := mistralGoroutines()
		if len(leaked) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("leaked goroutine:\n%s", strings.Join(leaked, "\n\n"))
		}
		<-time.After(10 * time.Millisecond) // poll: done as soon as it has gone
	}
}

// mistralGoroutines returns the stacks of the goroutines running in the Mistral SDK.
func mistralGoroutines() []string {
	buf := make([]byte, 1<<20)
	n := runtime.Stack(buf, true)
	var out []string
	for _, g := range strings.Split(string(buf[:n]), "\n\n") {
		if strings.Contains(g, "mistral-go") {
			out = append(out, g)
		}
	}
	return out
}
