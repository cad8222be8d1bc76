package middleware_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/streamrules/streamrules/internal/streamrulestest"

	"github.com/tmc/langchaingo/llms"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/openaitest"
	"github.com/streamrules/streamrules/internal/scripted"
	"github.com/streamrules/streamrules/middleware"
)

// doomed is a 1,000-token answer (one token a chunk) whose violation, a markdown image,
// comes at token 100, and which ends by declaring a tool call.
func doomed(pace time.Duration) (scripted.Reply, string) {
	text := strings.Repeat("word ", 100) + "![cat](https://x/c.png) " + strings.Repeat("word ", 899)
	return scripted.Reply{Text: text, Chunk: 5, Pace: pace,
		ToolCalls: []llms.ToolCall{toolCall("shell", `{"__arg1":"rm -rf /"}`)}}, text
}

func earlyImageRule() streamrules.Rule {
	r := imageRule()
	r.Early = true
	return r
}

// TestEarlyInterruptOpenAI: LangChainGo's real openai client streams a paced 1,000-token
// answer; the early image rule cuts it shortly after token 100: the provider stops
// streaming, the declared tool call never runs, nothing reaches the client, the firing
// says early and where, and the replay is exactly the end-of-answer one.
func TestEarlyInterruptOpenAI(t *testing.T) {
	t.Parallel()
	bad, text := doomed(200 * time.Microsecond)
	const good = "Here it is: https://x/c.png"
	r := newRig(t, nil, earlyImageRule())
	srv := openaitest.New(t, bad, scripted.Reply{Text: good, Chunk: 5})
	shell := &echoTool{name: "shell"}
	exec, mem := r.executor(kindFunctions, srv.LLM(t), shell)
	out, steps, err := r.run(context.Background(), exec, "chat-early", "show the cat", "telegram")
	if err != nil {
		t.Fatal(err)
	}
	if out != good || len(steps) != 0 || len(shell.inputs()) != 0 {
		t.Fatalf("output %q, steps %d, tool ran %q", out, len(steps), shell.inputs())
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	if reqs[0].Complete || reqs[0].Streamed > 400 {
		t.Errorf("the doomed answer streamed %d of 1,000 chunks (complete %v): the provider was not stopped", reqs[0].Streamed, reqs[0].Complete)
	}
	f := r.store.AllFirings()
	at := strings.Index(text, ")") + 1
	if len(f) != 1 || !f[0].Early || !f[0].Retry || f[0].CutAtBytes < at || f[0].CutAtBytes > at+2*streamrulestest.EarlyBatchBytes {
		t.Fatalf("firings %+v (miss ends at byte %d of %d)", f, at, len(text))
	}
	if lines := r.logs.Lines("stream rule fired on the answer", "early=true", "cut_at_bytes="); len(lines) != 1 {
		t.Errorf("log:\n%s", r.logs.String())
	}
	// The replay: the same history, the part generated before the cut, the interrupt.
	last := reqs[1].Body.Messages
	n := len(last)
	if n != len(reqs[0].Body.Messages)+2 || last[n-2].Role != "assistant" ||
		last[n-2].Content.String() != streamrules.Neutralize(text[:f[0].CutAtBytes]) ||
		!strings.HasPrefix(last[n-1].Content.String(), `<system-interrupt reason="rule_violation" rule="telegram_markdown_image">`) {
		t.Errorf("replay tail: %+v / %+v", last[n-2], last[n-1])
	}
	if got := strings.Join(r.rec.streamed(), ""); got != good {
		t.Errorf("client stream %q", got)
	}
	assertClean(t, r.rec.all(), "![cat]", "rm -rf")
	assertClean(t, memoryText(t, mem), "![cat]")
}

// TestEarlyInterruptOnlyWhereDecidable: without Early (and the engine switch off) the same
// rule waits for the end; a negate rule waits for the end even with the switch on.
func TestEarlyInterruptOnlyWhereDecidable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cfg  *streamrules.Config
		rule streamrules.Rule
	}{
		{"not early", nil, imageRule()},
		{"negate with the switch on", &streamrules.Config{EarlyInterrupt: true}, tailRule()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			bad, _ := doomed(0)
			r := newRig(t, tt.cfg, tt.rule)
			srv := openaitest.New(t, bad, scripted.Reply{Text: "fine ↩ #1", Chunk: 5})
			exec, _ := r.executor(kindFunctions, srv.LLM(t), &echoTool{name: "shell"})
			if _, _, err := r.run(context.Background(), exec, "chat-late", "go", "telegram"); err != nil {
				t.Fatal(err)
			}
			reqs := srv.Requests()
			if len(reqs) != 2 || !reqs[0].Complete {
				t.Fatalf("%d requests; first complete %v: cut early", len(reqs), len(reqs) > 0 && reqs[0].Complete)
			}
			f := r.store.AllFirings()
			if len(f) != 1 || f[0].Early || f[0].CutAtBytes != 0 || !f[0].Retry {
				t.Errorf("firings %+v", f)
			}
		})
	}
}

// TestEarlyInterruptNotForReAct: a ReAct answer's target starts at its last "Final Answer:",
// which a prefix cannot know: the early rule waits for the end there.
func TestEarlyInterruptNotForReAct(t *testing.T) {
	t.Parallel()
	_, text := doomed(0)
	r := newRig(t, nil, earlyImageRule())
	srv := openaitest.New(t,
		scripted.Reply{Text: "Thought: done\nFinal Answer: " + text, Chunk: 5},
		scripted.Reply{Text: "Thought: done\nFinal Answer: fine", Chunk: 5})
	exec, _ := r.executor(kindMRKL, srv.LLM(t))
	out, _, err := r.run(context.Background(), exec, "chat-react", "go", "telegram")
	if err != nil || out != "fine" {
		t.Fatalf("%q %v", out, err)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || !reqs[0].Complete {
		t.Fatalf("%d requests, first complete %v", len(reqs), len(reqs) > 0 && reqs[0].Complete)
	}
	if f := r.store.AllFirings(); len(f) != 1 || f[0].Early {
		t.Errorf("firings %+v", f)
	}
}

// TestEarlyInterruptManyChats: one engine and one guard serve many chats at once, each
// cut early on its own (run with -race).
func TestEarlyInterruptManyChats(t *testing.T) {
	t.Parallel()
	bad, _ := doomed(0)
	bad.ToolCalls = nil
	const good = "Here it is: https://x/c.png"
	r := newRig(t, nil, earlyImageRule())
	srv := openaitest.NewFunc(t, func(req openaitest.Request) scripted.Reply {
		if strings.Contains(requestText(t, req), "system-interrupt") {
			return scripted.Reply{Text: good, Chunk: 5}
		}
		return bad
	})
	llm := r.guard.Model(srv.LLM(t))
	const chats = 8
	errs := make(chan error, chats)
	for i := range chats {
		go func() {
			ctx, move := r.eng.BeginMove(context.Background(), "chat-many-"+string(rune('a'+i)), "telegram")
			ctx = middleware.AgentTour(ctx, middleware.FormatToolCalling)
			var shown strings.Builder
			resp, err := llm.GenerateContent(ctx, []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "cat?")},
				llms.WithStreamingFunc(func(_ context.Context, c []byte) error { shown.Write(c); return nil }))
			if err == nil && (resp.Choices[0].Content != good || shown.String() != good) {
				err = fmt.Errorf("answer %q, shown %q", resp.Choices[0].Content, shown.String())
			}
			if f := move.Firings(); err == nil && (len(f) != 1 || !f[0].Early) {
				err = fmt.Errorf("firings %+v", f)
			}
			errs <- move.End(ctx, err)
		}()
	}
	for range chats {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
