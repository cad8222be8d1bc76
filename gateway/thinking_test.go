package gateway_test

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tmc/langchaingo/llms"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/scripted"
)

// fired collects the engine's firings (Config.OnFire).
type fired struct {
	mu  sync.Mutex
	got []streamrules.Firing
}

func (f *fired) on(_ context.Context, x streamrules.Firing) {
	f.mu.Lock()
	f.got = append(f.got, x)
	f.mu.Unlock()
}

func (f *fired) all() []streamrules.Firing {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]streamrules.Firing(nil), f.got...)
}

// doomedThinking is about 4 KB of reasoning with the seed's miss ending at byte missAt,
// then an answer and a tool call that must never reach the client.
func doomedThinking() (scripted.Reply, int) {
	head := strings.Repeat("Let me think about the request. ", 6)
	miss := "I can't see the image, so I will say so. "
	r := head + miss + strings.Repeat("Then I reason on and on about it. ", 110)
	return scripted.Reply{Reasoning: r, Text: "Sorry, I cannot see images.", Chunk: 6, Pace: 100 * time.Microsecond,
		ToolCalls: []llms.ToolCall{call("shell", `{"cmd":"rm -rf /"}`)}}, len(head) + len("I can't see the image")
}

// TestThinkingDiscard: a reasoning that misses look_before_refusing_thinking discards the
// whole response (its reasoning, text and tool call) unseen; the replay carries the
// interrupt and none of the reasoning; the client gets the replay's answer and reasoning.
// Streaming, the upstream stream is cut while the model still thinks.
func TestThinkingDiscard(t *testing.T) {
	for _, stream := range []bool{false, true} {
		name := "complete"
		if stream {
			name = "stream"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			bad, missAt := doomedThinking()
			good := scripted.Reply{Reasoning: "The picture shows a cat on a mat.", Text: "A cat on a mat.", Chunk: 6}
			var f fired
			r := newRig(t, &streamrules.Config{OnFire: f.on}, bad, good)
			llm := r.llm("X-Streamrules-Chat: think-"+name, "X-Streamrules-Env: picture")
			var text, thought chunks
			opts := []llms.CallOption{llms.WithTools(toolDefs)}
			if stream {
				opts = append(opts, llms.WithStreamingFunc(text.fn), llms.WithStreamingReasoningFunc(func(ctx context.Context, r, _ []byte) error {
					return thought.fn(ctx, r)
				}))
			}
			resp, err := llm.GenerateContent(context.Background(), []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "what is in it?")}, opts...)
			if err != nil {
				t.Fatal(err)
			}
			c := resp.Choices[0]
			if c.Content != good.Text || c.ReasoningContent != good.Reasoning || len(c.ToolCalls) != 0 {
				t.Fatalf("client got %q, reasoning %q, calls %v", c.Content, c.ReasoningContent, c.ToolCalls)
			}
			if stream && (text.text() != good.Text || thought.text() != good.Reasoning) {
				t.Errorf("client streamed %q, reasoning %q", text.text(), thought.text())
			}
			reqs := r.up.Requests()
			if len(reqs) != 2 {
				t.Fatalf("upstream got %d requests, want 2", len(reqs))
			}
			if stream && reqs[0].Complete {
				t.Error("the doomed stream was read to its end, not cut")
			}
			for _, s := range []string{"Let me think", "reason on", "reasoning", "rm -rf"} {
				if bytes.Contains(reqs[1].Raw, []byte(s)) {
					t.Errorf("the replay carries %q of the discarded response: %s", s, reqs[1].Raw)
				}
			}
			last := reqs[1].Body.Messages[len(reqs[1].Body.Messages)-1]
			if !strings.Contains(last.Content.String(), `rule="look_before_refusing_thinking"`) {
				t.Errorf("the replay ends with %q, not the interrupt", last.Content.String())
			}
			fs := f.all()
			if len(fs) != 1 || fs[0].Rule != "look_before_refusing_thinking" || !fs[0].Thinking || !fs[0].Retry {
				t.Fatalf("firings %+v", fs)
			}
			if stream {
				if !fs[0].Early {
					t.Errorf("streaming, the firing is not early: %+v", fs[0])
				}
				if after := fs[0].CutAtBytes - missAt; after < 0 || after > 400 {
					t.Errorf("cut %d bytes after the miss (at %d)", after, missAt)
				}
			}
		})
	}
}

// TestThinkingCeiling: the retry ceiling is the one text rules spend. After a text discard
// a thinking miss is kept: the client gets that response, its reasoning included, and the
// upstream is asked no third time.
func TestThinkingCeiling(t *testing.T) {
	for _, stream := range []bool{false, true} {
		name := "complete"
		if stream {
			name = "stream"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			refuse := scripted.Reply{Text: "Sorry, I can't see the image.", Chunk: 5}
			blind := scripted.Reply{Reasoning: "Hmm, I can't see the image at all.", Text: "It looks like a cat.", Chunk: 6}
			var f fired
			r := newRig(t, &streamrules.Config{OnFire: f.on}, refuse, blind)
			llm := r.llm("X-Streamrules-Chat: ceil-"+name, "X-Streamrules-Env: picture")
			var text, thought chunks
			var opts []llms.CallOption
			if stream {
				opts = append(opts, llms.WithStreamingFunc(text.fn), llms.WithStreamingReasoningFunc(func(ctx context.Context, r, _ []byte) error {
					return thought.fn(ctx, r)
				}))
			}
			resp, err := llm.GenerateContent(context.Background(), []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "what is in it?")}, opts...)
			if err != nil {
				t.Fatal(err)
			}
			if c := resp.Choices[0]; c.Content != blind.Text || c.ReasoningContent != blind.Reasoning {
				t.Fatalf("client got %q, reasoning %q", c.Content, c.ReasoningContent)
			}
			if stream && (text.text() != blind.Text || thought.text() != blind.Reasoning) {
				t.Errorf("client streamed %q, reasoning %q", text.text(), thought.text())
			}
			if n := len(r.up.Requests()); n != 2 {
				t.Fatalf("upstream got %d requests, want 2", n)
			}
			var kept bool
			for _, x := range f.all() {
				if x.Rule == "look_before_refusing_thinking" {
					kept = x.Thinking && !x.Retry && x.Outcome == streamrules.OutcomeKept
				}
			}
			if !kept {
				t.Errorf("no kept thinking firing: %+v", f.all())
			}
		})
	}
}
