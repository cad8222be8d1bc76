package middleware_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/llms"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/openaitest"
	"github.com/streamrules/streamrules/internal/scripted"
	"github.com/streamrules/streamrules/middleware"
)

func blindThinkingRule() streamrules.Rule {
	return streamrules.Rule{Name: "look_thinking", Scope: streamrules.ScopeThinking,
		Condition: `(?i)can'?t (see|view) (the )?(image|picture)`,
		Text:      "The picture is in your context: look at it before you say you cannot."}
}

// doomedThinking is about 4 KB of reasoning with a miss ending at byte missAt (about 6%), then an
// answer and a tool call that must never reach anyone.
func doomedThinking() (scripted.Reply, int) {
	head := strings.Repeat("Let me think about the request. ", 6)
	miss := "I can't see the image, so I will say so. "
	r := head + miss + strings.Repeat("Then I reason on and on about it. ", 110)
	return scripted.Reply{Reasoning: r, Text: "Sorry, I cannot see images.", Chunk: 6,
		ToolCalls: []llms.ToolCall{toolCall("shell", `{"__arg1":"rm -rf /"}`)}}, len(head) + len("I can't see the image")
}

// thinkingTour plays one tour of the guarded model in a new move and returns the response,
// with what the client's two streaming funcs got.
func thinkingTour(t *testing.T, r *rig, llm llms.Model, chat string, options ...llms.CallOption) (*llms.ContentResponse, string, string) {
	t.Helper()
	ctx, move := r.eng.BeginMove(context.Background(), chat, streamrules.EnvPicture)
	ctx = middleware.AgentTour(ctx, middleware.FormatToolCalling)
	var text, reasoning strings.Builder
	options = append(options,
		llms.WithStreamingFunc(func(_ context.Context, c []byte) error { text.Write(c); return nil }),
		llms.WithStreamingReasoningFunc(func(_ context.Context, rc, _ []byte) error { reasoning.Write(rc); return nil }))
	resp, err := llm.GenerateContent(ctx, []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "what is on the picture?")}, options...)
	if err = move.End(ctx, err); err != nil {
		t.Fatal(err)
	}
	return resp, text.String(), reasoning.String()
}

// TestThinkingCutOpenAI: LangChainGo's openai client streams 4 KB of reasoning_content
// with a miss at 5%; the thinking rule cuts it within a batch of the miss, while the model
// still thinks: the server never finishes, the answer and its tool call never come, the
// client's funcs get nothing of it, the replay carries no reasoning back and the interrupt,
// and its answer and reasoning are what the client gets.
func TestThinkingCutOpenAI(t *testing.T) {
	t.Parallel()
	bad, missAt := doomedThinking()
	bad.Pace = 100 * time.Microsecond // a provider's pace: the server would otherwise write it all at once
	good := scripted.Reply{Reasoning: "The picture shows a cat on a mat.", Text: "A cat on a mat.", Chunk: 6}
	r := newRig(t, nil, blindThinkingRule())
	srv := openaitest.New(t, bad, good)
	resp, text, reasoning := thinkingTour(t, r, r.guard.Model(srv.LLM(t)), "chat-think")
	if c := resp.Choices[0]; c.Content != good.Text || len(c.ToolCalls) != 0 {
		t.Fatalf("answer %q calls %v", c.Content, c.ToolCalls)
	}
	if text != good.Text || reasoning != good.Reasoning {
		t.Errorf("client got text %q, reasoning %q", text, reasoning)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || reqs[0].Complete {
		t.Fatalf("%d requests, the first complete: %v", len(reqs), len(reqs) > 0 && reqs[0].Complete)
	}
	if bytes.Contains(reqs[1].Raw, []byte("Let me think")) || bytes.Contains(reqs[1].Raw, []byte("reasoning_content")) {
		t.Errorf("the cut reasoning was sent back: %s", reqs[1].Raw)
	}
	if !bytes.Contains(reqs[1].Raw, []byte(`rule=\"look_thinking\"`)) {
		t.Errorf("no interrupt in the replay: %s", reqs[1].Raw)
	}
	f := r.store.AllFirings()
	if len(f) != 1 || !f[0].Thinking || !f[0].Early || !f[0].Retry || f[0].Outcome != streamrules.OutcomeCorrected {
		t.Fatalf("firings %+v", f)
	}
	if after := f[0].CutAtBytes - missAt; after < 0 || after > 400 {
		t.Errorf("cut %d bytes after the miss (at %d)", after, missAt)
	}
	if saved := 1 - float64(f[0].CutAtBytes)/float64(len(bad.Reasoning)); saved < 0.8 {
		t.Errorf("saved %.0f%% of the reasoning", 100*saved)
	}
}

// TestThinkingJudgedAtFirstText: a rule no prefix decides (negate) judges the whole
// reasoning when the answer's text begins, before any of it is released; a call with no
// streaming funcs at all is still watched (the reasoning func makes the client stream).
func TestThinkingJudgedAtFirstText(t *testing.T) {
	t.Parallel()
	plan := streamrules.Rule{Name: "plan_first", Scope: streamrules.ScopeThinking, Condition: `(?i)\bplan\b`, Negate: true,
		Text: "Make a plan before you answer."}
	bad := scripted.Reply{Reasoning: "Just answer quickly.", Text: strings.Repeat("An answer long enough to be released early. ", 20), Chunk: 4, Pace: 100 * time.Microsecond}
	good := scripted.Reply{Reasoning: "First a plan: look, then answer.", Text: "A planned answer.", Chunk: 4}
	r := newRig(t, nil, plan, imageRule())
	srv := openaitest.New(t, bad, good, bad, good)
	resp, text, reasoning := thinkingTour(t, r, r.guard.Model(srv.LLM(t)), "chat-neg")
	if resp.Choices[0].Content != good.Text || text != good.Text || reasoning != good.Reasoning {
		t.Errorf("answer %q, client text %q, reasoning %q", resp.Choices[0].Content, text, reasoning)
	}
	if reqs := srv.Requests(); len(reqs) != 2 || reqs[0].Complete {
		t.Errorf("the doomed answer was not cut at its first text")
	}
	// No streaming funcs: the same, the response comes back whole.
	ctx, move := r.eng.BeginMove(context.Background(), "chat-neg-2")
	ctx = middleware.AgentTour(ctx, middleware.FormatToolCalling)
	resp, err := r.guard.Model(srv.LLM(t)).GenerateContent(ctx, []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hi")})
	if err = move.End(ctx, err); err != nil {
		t.Fatal(err)
	}
	if resp.Choices[0].Content != good.Text {
		t.Errorf("answer %q", resp.Choices[0].Content)
	}
	if f := r.store.AllFirings(); len(f) != 2 || !f[1].Thinking || f[1].Outcome != streamrules.OutcomeCorrected {
		t.Errorf("firings %+v", f)
	}
}

// TestThinkingAfterCeiling: with replays off, a thinking miss streams through, is kept and
// its reminder rides the next tool result; a provider with no reasoning never fires.
func TestThinkingAfterCeiling(t *testing.T) {
	t.Parallel()
	r := newRig(t, &streamrules.Config{MaxRetriesPerMove: -1}, blindThinkingRule())
	bad, _ := doomedThinking()
	bad.ToolCalls = nil
	srv := openaitest.New(t, bad, scripted.Reply{Text: "I can't see the image."})
	llm := r.guard.Model(srv.LLM(t))
	resp, text, _ := thinkingTour(t, r, llm, "chat-kept")
	if resp.Choices[0].Content != bad.Text || text != bad.Text {
		t.Errorf("answer %q, client %q", resp.Choices[0].Content, text)
	}
	thinkingTour(t, r, llm, "chat-none")
	if f := r.store.AllFirings(); len(f) != 1 || !f[0].Thinking || f[0].Outcome != streamrules.OutcomeKept {
		t.Errorf("firings %+v", f)
	}
}

// TestThinkingTranscript: the move's record carries the reasoning the thinking rules
// judged first, the cut one as far as it streamed, so a backtest judges it again.
func TestThinkingTranscript(t *testing.T) {
	t.Parallel()
	r := newRig(t, nil, blindThinkingRule())
	rec := &recordings{}
	guard := newGuard(t, r.eng, &middleware.Config{Transcript: rec})
	bad, missAt := doomedThinking()
	bad.Pace = 100 * time.Microsecond
	srv := openaitest.New(t, bad, scripted.Reply{Reasoning: "A cat.", Text: "A cat on a mat."})
	exec := guard.Executor(agents.NewOpenAIFunctionsAgent(guard.Model(srv.LLM(t)), guard.Tools()))
	out, err := guard.Run(context.Background(), exec, "chat-rec", "what is on the picture?",
		middleware.WithEnvironments(streamrules.EnvPicture))
	if err != nil || out != "A cat on a mat." {
		t.Fatalf("out %q, err %v", out, err)
	}
	if len(rec.moves) != 1 {
		t.Fatalf("%d moves", len(rec.moves))
	}
	m := rec.moves[0]
	if !strings.HasPrefix(bad.Reasoning, m.Reasoning) || len(m.Reasoning) < missAt || len(m.Reasoning) > missAt+400 || m.Answer != "A cat on a mat." {
		t.Errorf("record: reasoning %d bytes %q, answer %q", len(m.Reasoning), m.Reasoning, m.Answer)
	}
}
