package middleware_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	lcb "github.com/tmc/langchaingo/callbacks"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/anthropic"

	"github.com/streamrules/streamrules/clientview"
	"github.com/streamrules/streamrules/internal/providertest"
	"github.com/streamrules/streamrules/internal/scripted"
	"github.com/streamrules/streamrules/middleware"
)

type errRec struct {
	lcb.SimpleHandler
	mu   sync.Mutex
	errs []string
}

func (e *errRec) HandleLLMError(_ context.Context, err error) {
	e.mu.Lock()
	e.errs = append(e.errs, err.Error())
	e.mu.Unlock()
}

func TestInterplayAnthropicCutErrorEvent(t *testing.T) {
	bad, _ := doomed(0)
	bad.ToolCalls = nil
	const good = "Here it is: https://x/c.png"
	r := newRig(t, nil, earlyImageRule())
	srv := providertest.New(t, providertest.Anthropic, bad, scripted.Reply{Text: good, Chunk: 5})
	er := &errRec{}
	llm0, err := anthropic.New(anthropic.WithToken("test"), anthropic.WithBaseURL(srv.URL+"/v1"),
		anthropic.WithModel("claude-test"))
	if err != nil {
		t.Fatal(err)
	}
	llm0.CallbacksHandler = clientview.Clean(er)
	llm := r.guard.Model(llm0)
	ctx, move := r.eng.BeginMove(context.Background(), "chat-a-cut", "telegram")
	ctx = middleware.AgentTour(ctx, middleware.FormatToolCalling)
	var shown strings.Builder
	resp, err := llm.GenerateContent(ctx, []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "cat?")},
		llms.WithStreamingFunc(func(_ context.Context, c []byte) error { shown.Write(c); return nil }))
	move.End(ctx, err)
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Choices[0].Content; got != good || shown.String() != good {
		t.Fatalf("answer %q, client saw %q", got, shown.String())
	}
	if f := move.Firings(); len(f) != 1 || !f[0].Early {
		t.Fatalf("not cut early: %+v", f)
	}
	if len(er.errs) > 0 {
		t.Errorf("the client's handler got an LLM error for the cut answer: %q", er.errs)
	}
}
