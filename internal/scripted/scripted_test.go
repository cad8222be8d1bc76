package scripted_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"

	"github.com/streamrules/streamrules/internal/scripted"
)

// weatherTool is a tools.Tool that records its inputs.
type weatherTool struct {
	mu     sync.Mutex
	inputs []string
	err    error
}

func (*weatherTool) Name() string        { return "weather" }
func (*weatherTool) Description() string { return "Returns the weather for a city." }

func (w *weatherTool) Call(_ context.Context, input string) (string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.inputs = append(w.inputs, input)
	if w.err != nil {
		return "", w.err
	}
	return "21C and sunny in " + input, nil
}

func (w *weatherTool) Inputs() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.inputs)
}

// collector is a StreamingFunc that records every chunk it gets.
type collector struct {
	mu     sync.Mutex
	chunks []string
}

func (c *collector) Func(_ context.Context, chunk []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.chunks = append(c.chunks, string(chunk))
	return nil
}

func (c *collector) Chunks() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.chunks)
}

// askParis runs exec on the Paris weather question, streaming into got, and
// checks the final answer and that the tool was asked about Paris once.
func askParis(t *testing.T, exec *agents.Executor, tool *weatherTool, got *collector) {
	t.Helper()
	out, err := chains.Run(context.Background(), exec, "What is the weather in Paris?",
		chains.WithStreamingFunc(got.Func))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if out != "It is 21C in Paris." {
		t.Errorf("output = %q", out)
	}
	if in := tool.Inputs(); !slices.Equal(in, []string{"Paris"}) {
		t.Errorf("tool inputs = %q, want [Paris]", in)
	}
}

func TestMRKLAgent(t *testing.T) {
	// The made-up observation after the stop word must never reach the agent,
	// exactly as with a real completion API.
	first := "Thought: I should look it up.\nAction: weather\nAction Input: Paris\nObservation: made up"
	final := "Thought: I now know the final answer\nFinal Answer: It is 21C in Paris."
	model := scripted.New(
		scripted.Reply{Text: first, Chunk: 5},
		scripted.Reply{Text: final, Chunk: 5},
	)
	tool := &weatherTool{}
	var got collector
	askParis(t, agents.NewExecutor(agents.NewOneShotAgent(model, []tools.Tool{tool})), tool, &got)

	cut, _, _ := strings.Cut(first, "\nObservation:")
	want := append(scripted.SplitChunks(cut, 5), scripted.SplitChunks(final, 5)...)
	if chunks := got.Chunks(); !slices.Equal(chunks, want) {
		t.Errorf("streamed chunks = %q, want %q", chunks, want)
	}

	calls := model.Calls()
	if len(calls) != 2 {
		t.Fatalf("got %d calls, want 2", len(calls))
	}
	if sw := calls[0].Options.StopWords; !slices.Equal(sw, []string{"\nObservation:", "\n\tObservation:"}) {
		t.Errorf("stop words = %q", sw)
	}
	if calls[1].N != 1 || len(calls[1].Messages) != 1 || calls[1].Messages[0].Role != llms.ChatMessageTypeHuman {
		t.Errorf("second call = %+v, want one human message", calls[1])
	}
	if p := calls[1].Text(); !strings.Contains(p, "Observation: 21C and sunny in Paris") {
		t.Errorf("second prompt lacks the observation:\n%s", p)
	}
	if strings.Contains(calls[1].Text(), "made up") {
		t.Error("text after the stop word leaked into the scratchpad")
	}
}

func TestOpenAIFunctionsAgent(t *testing.T) {
	model := scripted.New(
		scripted.Reply{ToolCalls: []llms.ToolCall{{
			FunctionCall: &llms.FunctionCall{Name: "weather", Arguments: `{"__arg1":"Paris"}`},
		}}},
		scripted.Reply{Text: "It is 21C in Paris.", Chunk: 3},
	)
	tool := &weatherTool{}
	var got collector
	askParis(t, agents.NewExecutor(agents.NewOpenAIFunctionsAgent(model, []tools.Tool{tool})), tool, &got)
	if chunks := got.Chunks(); !slices.Equal(chunks, scripted.SplitChunks("It is 21C in Paris.", 3)) {
		t.Errorf("streamed chunks = %q", chunks)
	}

	calls := model.Calls()
	if len(calls) != 2 {
		t.Fatalf("got %d calls, want 2", len(calls))
	}
	if fns := calls[0].Options.Functions; len(fns) != 1 || fns[0].Name != "weather" {
		t.Errorf("functions sent = %+v", fns)
	}
	msgs := calls[1].Messages
	if len(msgs) != 4 {
		t.Fatalf("second call has %d messages, want system, human, ai, tool", len(msgs))
	}
	// The agent replays the call with the unwrapped __arg1 value as its
	// arguments, not the JSON the model sent.
	ai, tool2 := msgs[2], msgs[3]
	tc, ok := ai.Parts[0].(llms.ToolCall)
	if ai.Role != llms.ChatMessageTypeAI || !ok || tc.ID != "call_1" ||
		*tc.FunctionCall != (llms.FunctionCall{Name: "weather", Arguments: "Paris"}) {
		t.Errorf("ai message = %+v", ai)
	}
	resp, ok := tool2.Parts[0].(llms.ToolCallResponse)
	if tool2.Role != llms.ChatMessageTypeTool || !ok || resp.ToolCallID != "call_1" || resp.Content != "21C and sunny in Paris" {
		t.Errorf("tool message = %+v", tool2)
	}
}

func TestResponseShape(t *testing.T) {
	ctx := context.Background()
	fa := &llms.FunctionCall{Name: "a", Arguments: `{"x":1}`}
	model := scripted.New(
		scripted.Reply{Text: "hi"},
		scripted.Reply{Text: "let me check", ToolCalls: []llms.ToolCall{
			{FunctionCall: fa},
			{ID: "mine", Type: "custom", FunctionCall: &llms.FunctionCall{Name: "b", Arguments: "{}"}},
		}},
	)
	resp, err := model.GenerateContent(ctx, []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "x")})
	if err != nil {
		t.Fatal(err)
	}
	if c := resp.Choices[0]; c.Content != "hi" || c.StopReason != "stop" || c.FuncCall != nil || c.ToolCalls != nil {
		t.Errorf("text choice = %+v", c)
	}

	resp, err = model.GenerateContent(ctx, []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "x")})
	if err != nil {
		t.Fatal(err)
	}
	c := resp.Choices[0]
	if c.Content != "let me check" || c.StopReason != "tool_calls" || len(c.ToolCalls) != 2 {
		t.Fatalf("tool choice = %+v", c)
	}
	if c.ToolCalls[0].ID != "call_1" || c.ToolCalls[0].Type != "function" || c.ToolCalls[1].ID != "mine" || c.ToolCalls[1].Type != "custom" {
		t.Errorf("tool calls = %+v", c.ToolCalls)
	}
	// The answer carries copies: callers cannot change the script through it.
	if got := c.ToolCalls[0].FunctionCall; got == fa || *got != *fa {
		t.Errorf("tool call 0 function = %p %+v, want a copy of %p %+v", got, *got, fa, *fa)
	}
	if c.FuncCall != c.ToolCalls[0].FunctionCall {
		t.Error("FuncCall must be the first tool call's FunctionCall, as in llms/openai")
	}
}

func TestStreaming(t *testing.T) {
	ctx := context.Background()
	model := scripted.New(
		scripted.Reply{Text: "abcdefghij", Chunk: 3},
		scripted.Reply{Text: "héllo wörld"},
		scripted.Reply{Text: "answer", Reasoning: "thinking hard", Chunk: 6},
	)

	// Like every provider, the model applies options in order: the last
	// StreamingFunc wins.
	var first, last collector
	_, err := model.Call(ctx, "q", llms.WithStreamingFunc(first.Func), llms.WithStreamingFunc(last.Func))
	if err != nil {
		t.Fatal(err)
	}
	if c := first.Chunks(); len(c) != 0 {
		t.Errorf("overridden StreamingFunc got %q", c)
	}
	if c := last.Chunks(); !slices.Equal(c, []string{"abc", "def", "ghi", "j"}) {
		t.Errorf("chunks = %q", c)
	}

	var utf collector
	if _, err := model.Call(ctx, "q", llms.WithStreamingFunc(utf.Func)); err != nil {
		t.Fatal(err)
	}
	if c := utf.Chunks(); !slices.Equal(c, []string{"hél", "lo w", "örl", "d"}) {
		t.Errorf("utf-8 chunks = %q (runes must not be split)", c)
	}

	var reasoning, text []string
	var plain collector
	resp, err := model.GenerateContent(ctx, nil,
		llms.WithStreamingFunc(plain.Func),
		llms.WithStreamingReasoningFunc(func(_ context.Context, r, c []byte) error {
			if len(r) > 0 {
				reasoning = append(reasoning, string(r))
			}
			if len(c) > 0 {
				text = append(text, string(c))
			}
			return nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(reasoning, []string{"thinki", "ng har", "d"}) || !slices.Equal(text, []string{"answer"}) {
		t.Errorf("reasoning stream = %q, text stream = %q", reasoning, text)
	}
	if c := plain.Chunks(); !slices.Equal(c, []string{"answer"}) {
		t.Errorf("StreamingFunc got %q, want only text", c)
	}
	if resp.Choices[0].ReasoningContent != "thinking hard" || resp.Choices[0].Content != "answer" {
		t.Errorf("choice = %+v", resp.Choices[0])
	}
}

func TestStreamingFuncError(t *testing.T) {
	errStop := errors.New("stop streaming")
	model := scripted.New(scripted.Reply{Text: "abcdefgh", Chunk: 2})
	n := 0
	_, err := model.Call(context.Background(), "q", llms.WithStreamingFunc(func(context.Context, []byte) error {
		n++
		return errStop
	}))
	if !errors.Is(err, errStop) {
		t.Fatalf("err = %v, want %v", err, errStop)
	}
	if n != 1 {
		t.Errorf("StreamingFunc called %d times after failing, want 1", n)
	}
}

func TestStopWords(t *testing.T) {
	model := scripted.New(scripted.Reply{Text: "one STOP two END three"})
	out, err := model.Call(context.Background(), "q", llms.WithStopWords([]string{"END", "", "STOP"}))
	if err != nil {
		t.Fatal(err)
	}
	if out != "one " {
		t.Errorf("out = %q, want cut at the earliest stop word", out)
	}
}

func TestErrors(t *testing.T) {
	errBoom := errors.New("provider exploded")
	model := scripted.New(scripted.Reply{Err: errBoom})
	exec := agents.NewExecutor(agents.NewOneShotAgent(model, []tools.Tool{&weatherTool{}}))
	if _, err := chains.Run(context.Background(), exec, "q"); !errors.Is(err, errBoom) {
		t.Errorf("reply error: got %v, want %v", err, errBoom)
	}

	// The failed call consumed reply 0, so the script is now exhausted.
	_, err := model.Call(context.Background(), "q")
	if !errors.Is(err, scripted.ErrNoReply) || err.Error() != "scripted: no reply left for call 1" {
		t.Errorf("exhausted: got %v", err)
	}
	if n := len(model.Calls()); n != 2 {
		t.Errorf("recorded %d calls, want 2", n)
	}

	// Tool errors come back out of the executor untouched.
	errTool := errors.New("tool broke")
	model = scripted.New(scripted.Reply{Text: "Action: weather\nAction Input: Paris"})
	exec = agents.NewExecutor(agents.NewOneShotAgent(model, []tools.Tool{&weatherTool{err: errTool}}))
	if _, err := chains.Run(context.Background(), exec, "q"); !errors.Is(err, errTool) {
		t.Errorf("tool error: got %v", err)
	}
}

func TestCancellation(t *testing.T) {
	t.Run("before the call", func(t *testing.T) {
		model := scripted.New(scripted.Reply{Text: "first"})
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := model.Call(ctx, "q"); !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v", err)
		}
		// Nothing reached the model: no call recorded, no reply consumed.
		if n := len(model.Calls()); n != 0 {
			t.Errorf("recorded %d calls", n)
		}
		if out, err := model.Call(context.Background(), "q"); err != nil || out != "first" {
			t.Errorf("next call = %q, %v", out, err)
		}
	})

	t.Run("while waiting", func(t *testing.T) {
		model := scripted.New(scripted.Reply{Text: "late", Delay: time.Minute})
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		start := time.Now()
		if _, err := model.Call(ctx, "q"); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v", err)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("cancellation took %v", d)
		}
	})

	t.Run("mid stream", func(t *testing.T) {
		model := scripted.New(scripted.Reply{Text: "abcdefgh", Chunk: 2})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		n := 0
		_, err := model.Call(ctx, "q", llms.WithStreamingFunc(func(context.Context, []byte) error {
			n++
			cancel()
			return nil
		}))
		if !errors.Is(err, context.Canceled) || n != 1 {
			t.Errorf("err = %v after %d chunks, want context.Canceled after 1", err, n)
		}
	})

	t.Run("through the executor", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		tool := &cancelTool{cancel: cancel}
		model := scripted.New(
			scripted.Reply{Text: "Action: cancel\nAction Input: now"},
			scripted.Reply{Text: "Final Answer: unreachable"},
		)
		exec := agents.NewExecutor(agents.NewOneShotAgent(model, []tools.Tool{tool}))
		if _, err := chains.Run(ctx, exec, "q"); !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v", err)
		}
		if n := len(model.Calls()); n != 1 {
			t.Errorf("model saw %d calls after cancellation, want 1", n)
		}
	})
}

// cancelTool cancels the run when called.
type cancelTool struct{ cancel context.CancelFunc }

func (*cancelTool) Name() string        { return "cancel" }
func (*cancelTool) Description() string { return "Cancels the run." }
func (c *cancelTool) Call(context.Context, string) (string, error) {
	c.cancel()
	return "cancelled", nil
}

func TestCallsAreDeepCopies(t *testing.T) {
	// The reply func scribbles over the call it gets, which is its own copy.
	model := scripted.NewFunc(func(c scripted.Call) scripted.Reply {
		c.Messages[0].Role = "func"
		c.Messages[0].Parts[1].(llms.ToolCall).FunctionCall.Name = "func"
		c.Messages[0].Parts[2].(llms.BinaryContent).Data[0] = 'f'
		c.Options.StopWords[0] = "func"
		c.Options.Tools[0].Function.Name = "func"
		return scripted.Reply{Text: "ok"}
	})
	msgs := []llms.MessageContent{{
		Role: llms.ChatMessageTypeAI,
		Parts: []llms.ContentPart{
			llms.TextContent{Text: "before"},
			llms.ToolCall{ID: "x", FunctionCall: &llms.FunctionCall{Name: "before"}},
			llms.BinaryContent{MIMEType: "text/plain", Data: []byte("before")},
		},
	}}
	stop := []string{"STOP"}
	tls := []llms.Tool{{Type: "function", Function: &llms.FunctionDefinition{Name: "before"}}}
	if _, err := model.GenerateContent(context.Background(), msgs, llms.WithStopWords(stop), llms.WithTools(tls)); err != nil {
		t.Fatal(err)
	}
	// Mutating what was sent, or what Calls returned, must not change the record.
	msgs[0].Parts[0] = llms.TextContent{Text: "after"}
	msgs[0].Parts[1].(llms.ToolCall).FunctionCall.Name = "after"
	msgs[0].Parts[2].(llms.BinaryContent).Data[0] = 'a'
	stop[0] = "after"
	tls[0].Function.Name = "after"
	got := model.Calls()
	got[0].Messages[0].Role = "after"
	got[0].Options.StopWords[0] = "after"
	got[0].Options.Tools[0].Function.Name = "after"

	c := model.Calls()[0]
	if c.Messages[0].Role != llms.ChatMessageTypeAI || c.Text() != "before" ||
		c.Messages[0].Parts[1].(llms.ToolCall).FunctionCall.Name != "before" ||
		string(c.Messages[0].Parts[2].(llms.BinaryContent).Data) != "before" ||
		c.Options.StopWords[0] != "STOP" || c.Options.Tools[0].Function.Name != "before" {
		t.Errorf("record changed: %+v", c)
	}
}

func TestNewFuncConcurrentChats(t *testing.T) {
	// Each chat asks for its own number and gets it back, with one tool call
	// per answer so that IDs can be checked for uniqueness.
	model := scripted.NewFunc(func(c scripted.Call) scripted.Reply {
		q := c.Messages[len(c.Messages)-1].Parts[0].(llms.TextContent).Text
		return scripted.Reply{
			Text:      "answer to " + q,
			ToolCalls: []llms.ToolCall{{FunctionCall: &llms.FunctionCall{Name: "noop", Arguments: "{}"}}},
			Chunk:     2,
		}
	})
	const chats = 50
	var wg sync.WaitGroup
	ids := make([]string, chats)
	errs := make(chan error, chats)
	for i := range chats {
		wg.Go(func() {
			q := fmt.Sprint("question ", i)
			var got collector
			resp, err := model.GenerateContent(context.Background(),
				[]llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, q)},
				llms.WithStreamingFunc(got.Func))
			if err != nil {
				errs <- err
				return
			}
			if c := resp.Choices[0].Content; c != "answer to "+q || strings.Join(got.Chunks(), "") != c {
				errs <- fmt.Errorf("chat %d: content %q, streamed %q", i, c, got.Chunks())
			}
			ids[i] = resp.Choices[0].ToolCalls[0].ID
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	calls := model.Calls()
	if len(calls) != chats {
		t.Fatalf("recorded %d calls", len(calls))
	}
	for i, c := range calls {
		if c.N != i {
			t.Errorf("calls[%d].N = %d", i, c.N)
		}
	}
	slices.Sort(ids)
	if len(slices.Compact(ids)) != chats {
		t.Errorf("tool call IDs are not unique: %q", ids)
	}
}

func TestSplitChunks(t *testing.T) {
	for _, tc := range []struct {
		text string
		size int
		want []string
	}{
		{"", 3, nil},
		{"abcdef", 0, []string{"abcd", "ef"}},
		{"abc", 10, []string{"abc"}},
		{"日本語", 1, []string{"日", "本", "語"}},
		{"aé", 2, []string{"aé"}}, // stretched to the end of é
	} {
		if got := scripted.SplitChunks(tc.text, tc.size); !slices.Equal(got, tc.want) {
			t.Errorf("SplitChunks(%q, %d) = %q, want %q", tc.text, tc.size, got, tc.want)
		}
	}
}

// TestSequence: replies come out once each, in order, then ok is false.
func TestSequence(t *testing.T) {
	next := scripted.Sequence(scripted.Reply{Text: "a"}, scripted.Reply{Text: "b"})
	for _, want := range []string{"a", "b"} {
		if r, ok := next(); !ok || r.Text != want {
			t.Fatalf("got %q %v, want %q", r.Text, ok, want)
		}
	}
	if r, ok := next(); ok {
		t.Fatalf("past the end: %+v", r)
	}
}
