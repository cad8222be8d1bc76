package middleware_test

import (
	"context"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/anthropic"

	"github.com/streamrules/streamrules/clientview"
	"github.com/streamrules/streamrules/internal/providertest"
	"github.com/streamrules/streamrules/internal/scripted"
	"github.com/streamrules/streamrules/middleware"
)

// TestHeldTourPassesTheProviderError: while speech is held, the provider's own events
// are held too; when the provider fails, its error event reaches the client (only a cut
// or discarded answer's events are dropped).
func TestHeldTourPassesTheProviderError(t *testing.T) {
	t.Parallel()
	r := newRig(t, nil, imageRule())
	// The anthropic client emits HandleLLMError (the openai one emits no events).
	srv := providertest.New(t, providertest.Anthropic, scripted.Reply{Err: &providertest.StatusError{Code: 400, Message: "bad request"}})
	er := &errRec{}
	raw := srv.LLM(t).(*anthropic.LLM)
	raw.CallbacksHandler = clientview.Clean(er)
	llm := r.guard.Model(raw)
	ctx, move := r.eng.BeginMove(context.Background(), "chat-held-err", "telegram")
	ctx = middleware.AgentTour(ctx, middleware.FormatToolCalling)
	if !move.Armed() {
		t.Fatal("the image rule is not armed: the tour would not be held")
	}
	_, err := llm.GenerateContent(ctx, []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "cat?")},
		llms.WithStreamingFunc(func(context.Context, []byte) error { return nil }))
	move.End(ctx, err)
	if err == nil || !strings.Contains(err.Error(), "bad request") {
		t.Fatalf("err %v, want the provider's 400", err)
	}
	er.mu.Lock()
	defer er.mu.Unlock()
	if len(er.errs) != 1 || !strings.Contains(er.errs[0], "bad request") {
		t.Errorf("client's error events %q, want the provider's one", er.errs)
	}
}
