package gateway_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tmc/langchaingo/llms"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/openaitest"
	"github.com/streamrules/streamrules/internal/scripted"
)

// chunks records what a streaming client got.
type chunks struct {
	mu  sync.Mutex
	got []string
}

func (c *chunks) fn(_ context.Context, b []byte) error {
	c.mu.Lock()
	c.got = append(c.got, string(b))
	c.mu.Unlock()
	return nil
}

func (c *chunks) text() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Join(c.got, "")
}

// TestStreamFixRepairs: the image and tail fixes repair a streamed answer: the client's
// chunks spell the repair, never the image markdown.
func TestStreamFixRepairs(t *testing.T) {
	r := newRig(t, nil, scripted.Reply{Text: "Here it is: ![cat](https://x/cat.png) and more words follow here.", Chunk: 3})
	llm := r.llm("X-Streamrules-Chat: s1", "X-Streamrules-Env: telegram", "X-Streamrules-Vars: message_id=42")
	var c chunks
	resp, err := llm.GenerateContent(context.Background(), []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "cat?")}, llms.WithStreamingFunc(c.fn))
	if err != nil {
		t.Fatal(err)
	}
	want := "Here it is: https://x/cat.png and more words follow here.\n\n↩ #42"
	if got := c.text(); got != want {
		t.Fatalf("client streamed %q, want %q", got, want)
	}
	if resp.Choices[0].Content != want {
		t.Fatalf("client assembled %q", resp.Choices[0].Content)
	}
	if n := len(r.up.Requests()); n != 1 {
		t.Fatalf("upstream got %d requests", n)
	}
}

// TestStreamReplay: a bare emoji is discarded unseen; the client's stream holds only the
// replay, and usage sums both upstream calls.
func TestStreamReplay(t *testing.T) {
	r := newRig(t, nil, scripted.Reply{Text: "👍"}, scripted.Reply{Text: "Glad it worked. ↩ #9", Chunk: 4})
	llm := r.llm("X-Streamrules-Chat: s2", "X-Streamrules-Env: telegram")
	var c chunks
	resp, err := llm.GenerateContent(context.Background(), []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "thanks")}, llms.WithStreamingFunc(c.fn))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.text(); got != "Glad it worked. ↩ #9" {
		t.Fatalf("client streamed %q", got)
	}
	reqs := r.up.Requests()
	if len(reqs) != 2 {
		t.Fatalf("upstream got %d requests", len(reqs))
	}
	if !reqs[0].Body.Stream || reqs[0].Body.StreamOptions == nil || !reqs[0].Body.StreamOptions.IncludeUsage {
		t.Fatalf("upstream request 0 not streamed with usage: %s", reqs[0].Raw)
	}
	total, _ := resp.Choices[0].GenerationInfo["TotalTokens"].(int)
	if want := upstreamTotal(reqs, "👍", "Glad it worked. ↩ #9"); total != want {
		t.Fatalf("client's usage total %d, want %d (both upstream calls)", total, want)
	}
}

// upstreamTotal is what openaitest counted for the requests, answered with texts: about
// four bytes a token (its estimateUsage).
func upstreamTotal(reqs []openaitest.Request, texts ...string) int {
	tokens := func(s string) int { return (len(s) + 3) / 4 }
	n := 0
	for i, q := range reqs {
		for _, m := range q.Body.Messages {
			n += 4 + tokens(m.Content.String())
			for _, tc := range m.ToolCalls {
				n += tokens(tc.Function.Name + tc.Function.Arguments)
			}
		}
		n += tokens(texts[i])
	}
	return n
}

// TestStreamToolCallsHeldAndSpliced: a streamed tool call reaches the client whole, and
// its result goes upstream with the reminder in the next tour.
func TestStreamToolCallsHeldAndSpliced(t *testing.T) {
	r := newRig(t, nil,
		scripted.Reply{Text: "Writing it.", ToolCalls: []llms.ToolCall{call("write_file", `{"path":"b.go","content":"package b"}`)}, Chunk: 5},
		scripted.Reply{Text: "Wrote b.go; run_tests not run yet.", Chunk: 5},
	)
	llm := r.llm("X-Streamrules-Chat: s3")
	ctx := context.Background()
	var c chunks
	msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "write b.go")}
	resp, err := llm.GenerateContent(ctx, msgs, llms.WithTools(toolDefs), llms.WithStreamingFunc(c.fn))
	if err != nil {
		t.Fatal(err)
	}
	tc := resp.Choices[0].ToolCalls
	if len(tc) != 1 || tc[0].FunctionCall.Name != "write_file" || tc[0].FunctionCall.Arguments != `{"path":"b.go","content":"package b"}` {
		t.Fatalf("client got calls %+v", tc)
	}
	if !strings.HasPrefix(c.text(), "Writing it.") {
		t.Fatalf("client streamed %q", c.text())
	}
	msgs = append(msgs, llms.MessageContent{Role: llms.ChatMessageTypeAI, Parts: []llms.ContentPart{tc[0]}},
		llms.MessageContent{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{llms.ToolCallResponse{ToolCallID: tc[0].ID, Name: "write_file", Content: "written"}}})
	var c2 chunks
	resp, err = llm.GenerateContent(ctx, msgs, llms.WithTools(toolDefs), llms.WithStreamingFunc(c2.fn))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Choices[0].Content != "Wrote b.go; run_tests not run yet." || c2.text() != resp.Choices[0].Content {
		t.Fatalf("client got %q, streamed %q", resp.Choices[0].Content, c2.text())
	}
	m := r.upstreamMessages(1)
	if got := m[len(m)-1].Content.String(); !strings.HasPrefix(got, `<system-reminder rule="write_diff_over_write_file">`) {
		t.Fatalf("upstream tool result %q", got)
	}
}

// TestStreamEarlyCut: with early interrupt, the first certain miss cuts the upstream
// stream; nothing of the cut answer reaches the client.
func TestStreamEarlyCut(t *testing.T) {
	long := "I can't see the image you sent, sorry." + strings.Repeat(" More words that go on and on.", 40)
	r := newRig(t, &streamrules.Config{EarlyInterrupt: true},
		scripted.Reply{Text: long, Chunk: 8, Pace: time.Millisecond},
		scripted.Reply{Text: "The picture shows a cat.", Chunk: 6},
	)
	llm := r.llm("X-Streamrules-Chat: s4", "X-Streamrules-Env: picture")
	var c chunks
	_, err := llm.GenerateContent(context.Background(), []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "what is in it?")}, llms.WithStreamingFunc(c.fn))
	if err != nil {
		t.Fatal(err)
	}
	if c.text() != "The picture shows a cat." {
		t.Fatalf("client streamed %q", c.text())
	}
	reqs := r.up.Requests()
	if len(reqs) != 2 || reqs[0].Complete {
		t.Fatalf("upstream: %d requests, first complete=%v (want cut)", len(reqs), reqs[0].Complete)
	}
	last := reqs[1].Body.Messages[len(reqs[1].Body.Messages)-1]
	if !strings.Contains(last.Content.String(), `rule="look_before_refusing"`) {
		t.Fatalf("replay ends with %+v", last)
	}
}

// TestStreamUpstreamDies: an upstream that breaks off mid-stream gets the client an
// error, and the move is ended and written (its reminder's firing is counted).
func TestStreamUpstreamDies(t *testing.T) {
	saved := make(chan error, 4)
	r := newRig(t, &streamrules.Config{OnSave: func(s streamrules.SaveInfo) { saved <- s.Err }},
		scripted.Reply{ToolCalls: []llms.ToolCall{call("write_file", `{"path":"c.go"}`)}},
		scripted.Reply{Text: "Starting a long answer that will never end properly, sadly.", Chunk: 4, DropAfter: 5},
	)
	llm := r.llm("X-Streamrules-Chat: s5")
	ctx := context.Background()
	msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "go")}
	resp, err := llm.GenerateContent(ctx, msgs, llms.WithTools(toolDefs), llms.WithStreamingFunc((&chunks{}).fn))
	if err != nil {
		t.Fatal(err)
	}
	tc := resp.Choices[0].ToolCalls[0]
	msgs = append(msgs, llms.MessageContent{Role: llms.ChatMessageTypeAI, Parts: []llms.ContentPart{tc}},
		llms.MessageContent{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{llms.ToolCallResponse{ToolCallID: tc.ID, Name: "write_file", Content: "ok"}}})
	var c chunks
	_, err = llm.GenerateContent(ctx, msgs, llms.WithTools(toolDefs), llms.WithStreamingFunc(c.fn))
	if err == nil {
		t.Fatalf("client got no error; streamed %q", c.text())
	}
	if err := <-saved; err != nil {
		t.Fatalf("move not saved: %v", err)
	}
	stats, err := r.eng.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(fmt.Sprintf("%+v", stats), "write_diff_over_write_file") {
		t.Fatalf("stats lack the firing: %+v", stats)
	}
}
