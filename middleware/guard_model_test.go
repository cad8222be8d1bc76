package middleware_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/openai"

	"github.com/streamrules/streamrules/internal/scripted"
	"github.com/streamrules/streamrules/middleware"
)

// TestGuardModelWrapsAnotherGuardsModel: Guard.Model is idempotent for its own wrapper
// only. A model another Guard wrapped is wrapped again, so this Guard's boundaries (here
// its transport retry) hold for calls through it.
func TestGuardModelWrapsAnotherGuardsModel(t *testing.T) {
	t.Parallel()
	b := newBoundRig(t, middleware.Config{CallRetries: 1, RetryDelay: time.Second}, true,
		scripted.Reply{Err: unavailable}, scripted.Reply{Text: "fine"})
	other := newGuard(t, b.eng, nil) // no retries
	raw := b.srv.LLM(t, openai.WithHTTPClient(&http.Client{Transport: middleware.Transport(nil)}))
	mine := b.guard.Model(other.Model(raw))
	if again := b.guard.Model(mine); again != mine {
		t.Error("Guard.Model wrapped its own model a second time")
	}
	done := make(chan callResult, 1)
	go func() {
		resp, err := mine.GenerateContent(context.Background(), []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hi")})
		if err != nil {
			done <- callResult{err: err}
			return
		}
		done <- callResult{text: resp.Choices[0].Content}
	}()
	b.timer(t).Fire() // the backoff of this Guard's retry
	if res := wait(t, done); res.err != nil || res.text != "fine" {
		t.Fatalf("%q %v: the outer Guard's retry did not apply", res.text, res.err)
	}
	if n := len(b.srv.Requests()); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
}

// reasoner is a model that says it reasons (llms.ReasoningModel).
type reasoner struct {
	*scripted.Model
	yes bool
}

func (m reasoner) SupportsReasoning() bool { return m.yes }

// TestSupportsReasoningForwarded: the wrapped model answers llms.SupportsReasoningModel as
// the model under it does, both ways.
func TestSupportsReasoningForwarded(t *testing.T) {
	t.Parallel()
	r := newRig(t, nil)
	for _, yes := range []bool{true, false} {
		if got := llms.SupportsReasoningModel(r.guard.Model(reasoner{scripted.New(), yes})); got != yes {
			t.Errorf("wrapped SupportsReasoning = %v, model says %v", got, yes)
		}
	}
	if llms.SupportsReasoningModel(r.guard.Model(scripted.New())) {
		t.Error("a model that says nothing about reasoning reasons once wrapped")
	}
}
