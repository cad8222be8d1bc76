package middleware_test

import (
	"context"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/llms"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/providertest"
	"github.com/streamrules/streamrules/internal/scripted"
	"github.com/streamrules/streamrules/middleware"
)

// TestShimRedactedThinking: Claude answers with a thinking block, a redacted_thinking block
// and text, streamed and not. LangChainGo's bare anthropic client fails the call ("unknown
// content type"); through Guard.Model a guarded move completes, with a thinking rule armed
// and without, and the reasoning the rules read is the thinking block's.
func TestShimRedactedThinking(t *testing.T) {
	t.Parallel()
	reply := scripted.Reply{Reasoning: "The user wants a greeting.", Redacted: "EncryptedBlob==", Text: "Hello!", Chunk: 5}
	msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hi")}
	sink := llms.WithStreamingFunc(func(context.Context, []byte) error { return nil })
	for _, streamed := range []bool{false, true} {
		srv := providertest.New(t, providertest.Anthropic, reply, reply, reply)
		var opts []llms.CallOption
		if streamed {
			opts = append(opts, sink)
		}
		if _, err := srv.LLM(t).GenerateContent(context.Background(), msgs, opts...); err == nil || !strings.Contains(err.Error(), "unknown content") {
			t.Fatalf("streamed %v: the bare client: %v, want its unknown content type error (is the shim still needed?)", streamed, err)
		}
		for _, rules := range [][]streamrules.Rule{nil, {blindThinkingRule()}} {
			r := newRig(t, nil, rules...)
			ctx, move := r.eng.BeginMove(context.Background(), "chat-redacted", streamrules.EnvPicture)
			ctx = middleware.AgentTour(ctx, middleware.FormatToolCalling)
			resp, err := r.guard.Model(srv.LLM(t)).GenerateContent(ctx, msgs, opts...)
			if err = move.End(ctx, err); err != nil {
				t.Fatalf("streamed %v, %d rules: %v", streamed, len(rules), err)
			}
			if resp.Choices[0].Content != "Hello!" || middleware.Reasoning(resp) != reply.Reasoning {
				t.Errorf("streamed %v: answer %q, reasoning %q", streamed, resp.Choices[0].Content, middleware.Reasoning(resp))
			}
		}
	}
}

// TestThinkingCutAnthropic: Claude's thinking_delta events go to the reasoning func; a
// thinking miss cuts the stream and the replay answers; the replay sends no thinking block
// back (LangChainGo cannot, and the cut one has no signature).
func TestThinkingCutAnthropic(t *testing.T) {
	t.Parallel()
	bad, _ := doomedThinking()
	bad.Redacted = "EncryptedBlob=="
	good := scripted.Reply{Reasoning: "A cat, clearly.", Text: "A cat.", Chunk: 5}
	srv := providertest.New(t, providertest.Anthropic, bad, good)
	r := newRig(t, nil, blindThinkingRule())
	resp, text, reasoning := thinkingTour(t, r, r.guard.Model(srv.LLM(t)), "chat-claude")
	if resp.Choices[0].Content != good.Text || text != good.Text || reasoning != good.Reasoning {
		t.Errorf("answer %q, client text %q, reasoning %q", resp.Choices[0].Content, text, reasoning)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	if raw := string(reqs[1].Raw); strings.Contains(raw, "thinking\"") || strings.Contains(raw, "Let me think") {
		t.Errorf("the replay sent thinking back: %s", raw)
	}
	if f := r.store.AllFirings(); len(f) != 1 || !f[0].Thinking || !f[0].Early || f[0].Outcome != streamrules.OutcomeCorrected {
		t.Errorf("firings %+v", f)
	}
}
