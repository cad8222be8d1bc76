package openaitest_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/openai"
	"github.com/tmc/langchaingo/tools"

	"github.com/streamrules/streamrules/internal/openaitest"
	"github.com/streamrules/streamrules/internal/scripted"
)

// weatherTool is a tools.Tool that records its inputs.
type weatherTool struct {
	mu     sync.Mutex
	inputs []string
}

func (*weatherTool) Name() string        { return "weather" }
func (*weatherTool) Description() string { return "Returns the weather for a city." }

func (w *weatherTool) Call(_ context.Context, input string) (string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.inputs = append(w.inputs, input)
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

// Text returns the non-empty chunks that are not tool-call JSON: llms/openai
// hands StreamingFunc an empty chunk for role-only and finish events, and
// the JSON of each tool-call delta.
func (c *collector) Text() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, ch := range c.chunks {
		if ch != "" && !strings.HasPrefix(ch, `[{"`) {
			out = append(out, ch)
		}
	}
	return out
}

func (c *collector) ToolJSON() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, ch := range c.chunks {
		if strings.HasPrefix(ch, `[{"`) {
			out = append(out, ch)
		}
	}
	return out
}

func human(text string) []llms.MessageContent {
	return []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, text)}
}

// askParis runs exec on the Paris weather question, streaming into got unless
// it is nil, and checks the final answer and that the tool was asked about
// Paris once.
func askParis(t *testing.T, exec *agents.Executor, tool *weatherTool, got *collector) {
	t.Helper()
	var opts []chains.ChainCallOption
	if got != nil {
		opts = append(opts, chains.WithStreamingFunc(got.Func))
	}
	out, err := chains.Run(context.Background(), exec, "What is the weather in Paris?", opts...)
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

// post sends body to the server's chat path, with a bearer token if auth.
func post(t *testing.T, srv *openaitest.Server, auth bool, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, srv.URL+openaitest.ChatPath, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if auth {
		req.Header.Set("Authorization", "Bearer test")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func TestMRKLAgent(t *testing.T) {
	// The made-up observation after the stop word must be cut by the server.
	first := "Thought: I should look it up.\nAction: weather\nAction Input: Paris\nObservation: made up"
	final := "Thought: I now know the final answer\nFinal Answer: It is 21C in Paris."
	cut, _, _ := strings.Cut(first, "\nObservation:")

	for _, streaming := range []bool{true, false} {
		t.Run(fmt.Sprint("streaming=", streaming), func(t *testing.T) {
			srv := openaitest.New(t, scripted.Reply{Text: first, Chunk: 5}, scripted.Reply{Text: final, Chunk: 5})
			tool := &weatherTool{}
			var got *collector
			if streaming {
				got = new(collector)
			}
			askParis(t, agents.NewExecutor(agents.NewOneShotAgent(srv.LLM(t), []tools.Tool{tool})), tool, got)
			if streaming {
				want := append(scripted.SplitChunks(cut, 5), scripted.SplitChunks(final, 5)...)
				if c := got.Text(); !slices.Equal(c, want) {
					t.Errorf("streamed chunks = %q, want %q", c, want)
				}
			}

			reqs := srv.Requests()
			if len(reqs) != 2 {
				t.Fatalf("got %d requests, want 2", len(reqs))
			}
			b0 := reqs[0].Body
			if b0.Stream != streaming || (b0.StreamOptions != nil) != streaming || b0.Model != "gpt-test" {
				t.Errorf("request 0: stream=%v stream_options=%v model=%q", b0.Stream, b0.StreamOptions, b0.Model)
			}
			if !slices.Equal(b0.Stop, openaitest.Stop{"\nObservation:", "\n\tObservation:"}) {
				t.Errorf("stop = %q", b0.Stop)
			}
			msgs := reqs[1].Body.Messages
			if len(msgs) != 1 || msgs[0].Role != "user" {
				t.Fatalf("request 1 messages = %+v, want one user message", msgs)
			}
			prompt := msgs[0].Content.String()
			if !strings.Contains(prompt, "Observation: 21C and sunny in Paris") || strings.Contains(prompt, "made up") {
				t.Errorf("request 1 prompt:\n%s", prompt)
			}
		})
	}
}

func TestOpenAIFunctionsAgent(t *testing.T) {
	for _, streaming := range []bool{true, false} {
		t.Run(fmt.Sprint("streaming=", streaming), func(t *testing.T) {
			srv := openaitest.New(t,
				scripted.Reply{Chunk: 4, ToolCalls: []llms.ToolCall{{
					ID: "call_abc", FunctionCall: &llms.FunctionCall{Name: "weather", Arguments: `{"__arg1":"Paris"}`},
				}}},
				scripted.Reply{Text: "It is 21C in Paris.", Chunk: 3},
			)
			tool := &weatherTool{}
			var got *collector
			if streaming {
				got = new(collector)
			}
			askParis(t, agents.NewExecutor(agents.NewOpenAIFunctionsAgent(srv.LLM(t), []tools.Tool{tool})), tool, got)
			if streaming {
				if c := got.Text(); !slices.Equal(c, scripted.SplitChunks("It is 21C in Paris.", 3)) {
					t.Errorf("streamed text = %q", c)
				}
				// One announcing delta plus one per argument piece.
				if n, want := len(got.ToolJSON()), 1+len(scripted.SplitChunks(`{"__arg1":"Paris"}`, 4)); n != want {
					t.Errorf("got %d tool-call JSON chunks, want %d", n, want)
				}
			}

			reqs := srv.Requests()
			if len(reqs) != 2 {
				t.Fatalf("got %d requests, want 2", len(reqs))
			}
			tools0 := reqs[0].Body.Tools
			if len(tools0) != 1 || tools0[0].Type != "function" || tools0[0].Function.Name != "weather" ||
				!strings.Contains(string(tools0[0].Function.Parameters), `"__arg1"`) {
				t.Errorf("tools sent = %+v", tools0)
			}

			msgs := reqs[1].Body.Messages
			roles := make([]string, len(msgs))
			for i, m := range msgs {
				roles[i] = m.Role
			}
			if !slices.Equal(roles, []string{"system", "user", "assistant", "tool"}) {
				t.Fatalf("request 1 roles = %q", roles)
			}
			// The agent replays the call with the unwrapped __arg1 value as
			// its arguments, not the JSON the model sent.
			ai, res := msgs[2], msgs[3]
			if len(ai.ToolCalls) != 1 || ai.ToolCalls[0].ID != "call_abc" ||
				ai.ToolCalls[0].Function != (openaitest.FunctionCall{Name: "weather", Arguments: "Paris"}) {
				t.Errorf("assistant message = %+v", ai)
			}
			if res.ToolCallID != "call_abc" || res.Content.String() != "21C and sunny in Paris" {
				t.Errorf("tool message = %+v", res)
			}
		})
	}
}

// The functions agent executes parallel tool calls, but replays each one as
// its own assistant message followed by its tool message.
func TestParallelToolCalls(t *testing.T) {
	for _, streaming := range []bool{true, false} {
		t.Run(fmt.Sprint("streaming=", streaming), func(t *testing.T) {
			srv := openaitest.New(t,
				scripted.Reply{Chunk: 3, ToolCalls: []llms.ToolCall{
					{FunctionCall: &llms.FunctionCall{Name: "weather", Arguments: `{"__arg1":"Paris"}`}},
					{FunctionCall: &llms.FunctionCall{Name: "weather", Arguments: `{"__arg1":"Rome"}`}},
				}},
				scripted.Reply{Text: "Sunny in both."},
			)
			tool := &weatherTool{}
			exec := agents.NewExecutor(agents.NewOpenAIFunctionsAgent(srv.LLM(t), []tools.Tool{tool}))
			var opts []chains.ChainCallOption
			if streaming {
				opts = append(opts, chains.WithStreamingFunc(new(collector).Func))
			}
			if out, err := chains.Run(context.Background(), exec, "Paris and Rome?", opts...); err != nil || out != "Sunny in both." {
				t.Fatalf("Run = %q, %v", out, err)
			}
			if in := tool.Inputs(); !slices.Equal(in, []string{"Paris", "Rome"}) {
				t.Errorf("tool inputs = %q", in)
			}
			var got []string
			for _, m := range srv.Requests()[1].Body.Messages[2:] {
				switch m.Role {
				case "assistant":
					for _, tc := range m.ToolCalls {
						got = append(got, "assistant:"+tc.ID)
					}
				case "tool":
					got = append(got, "tool:"+m.ToolCallID)
				}
			}
			want := []string{"assistant:call_1", "tool:call_1", "assistant:call_2", "tool:call_2"}
			if !slices.Equal(got, want) {
				t.Errorf("replayed history = %q, want %q", got, want)
			}
		})
	}
}

// TestStreamWire checks the SSE stream itself, without the client.
func TestStreamWire(t *testing.T) {
	srv := openaitest.New(t, scripted.Reply{Text: "Hi!", Chunk: 2, ToolCalls: []llms.ToolCall{
		{FunctionCall: &llms.FunctionCall{Name: "weather", Arguments: `{"city":"Paris"}`}},
	}})
	resp := post(t, srv, true,
		`{"model":"gpt-test","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`)
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || ct != "text/event-stream" {
		t.Fatalf("status %d, content type %q", resp.StatusCode, ct)
	}

	type event struct {
		Object  string `json:"object"`
		Choices []struct {
			Delta struct {
				Role      string  `json:"role"`
				Content   *string `json:"content"`
				ToolCalls []struct {
					Index    int    `json:"index"`
					ID       string `json:"id"`
					Type     string `json:"type"`
					Function struct {
						Name      string `json:"name"`
						Arguments string `json:"arguments"`
					} `json:"function"`
				} `json:"tool_calls"`
			} `json:"delta"`
			FinishReason *string `json:"finish_reason"`
		} `json:"choices"`
		Usage *openaitest.Usage `json:"usage"`
	}
	var events []event
	done := false
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok || done {
			t.Fatalf("unexpected line %q (after [DONE]: %v)", line, done)
		}
		if data == "[DONE]" {
			done = true
			continue
		}
		var e event
		if err := json.Unmarshal([]byte(data), &e); err != nil {
			t.Fatalf("bad event %q: %v", data, err)
		}
		events = append(events, e)
	}
	if !done {
		t.Fatal("stream did not end with [DONE]")
	}

	var text, args strings.Builder
	var finish string
	for i, e := range events {
		if e.Object != "chat.completion.chunk" {
			t.Errorf("event %d object = %q", i, e.Object)
		}
		last := i == len(events)-1
		if last != (e.Usage != nil) {
			t.Errorf("event %d: usage = %v; only the last event carries usage", i, e.Usage)
		}
		if last {
			if len(e.Choices) != 0 || e.Usage.TotalTokens == 0 {
				t.Errorf("usage event = %+v", e)
			}
			continue
		}
		c := e.Choices[0]
		if (i == 0) != (c.Delta.Role == "assistant") {
			t.Errorf("event %d role = %q; only the first event carries the role", i, c.Delta.Role)
		}
		if c.Delta.Content != nil {
			text.WriteString(*c.Delta.Content)
		}
		for _, tc := range c.Delta.ToolCalls {
			if tc.Index != 0 {
				t.Errorf("tool call index = %d", tc.Index)
			}
			if tc.ID != "" {
				// The announcing delta: id, type and name, no arguments yet.
				if tc.ID != "call_1" || tc.Type != "function" || tc.Function.Name != "weather" || tc.Function.Arguments != "" {
					t.Errorf("announcing delta = %+v", tc)
				}
			} else if tc.Type != "" || tc.Function.Name != "" || len(tc.Function.Arguments) > 2 {
				t.Errorf("arguments delta = %+v", tc)
			}
			args.WriteString(tc.Function.Arguments)
		}
		if c.FinishReason != nil {
			finish = *c.FinishReason
		}
	}
	if text.String() != "Hi!" || args.String() != `{"city":"Paris"}` || finish != "tool_calls" {
		t.Errorf("text %q, arguments %q, finish reason %q", text.String(), args.String(), finish)
	}
}

// TestCompletionWire checks a non-streamed answer that only calls a tool:
// like the real API, its content is null rather than "".
func TestCompletionWire(t *testing.T) {
	srv := openaitest.New(t, scripted.Reply{ToolCalls: []llms.ToolCall{
		{FunctionCall: &llms.FunctionCall{Name: "weather", Arguments: `{"city":"Paris"}`}},
	}})
	resp := post(t, srv, true, `{"model":"gpt-test","messages":[{"role":"user","content":"hi"}]}`)
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || ct != "application/json" {
		t.Fatalf("status %d, content type %q", resp.StatusCode, ct)
	}
	var body struct {
		Object  string `json:"object"`
		Model   string `json:"model"`
		Choices []struct {
			Message      map[string]json.RawMessage `json:"message"`
			FinishReason string                     `json:"finish_reason"`
		} `json:"choices"`
		Usage openaitest.Usage `json:"usage"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if body.Object != "chat.completion" || body.Model != "gpt-test" || len(body.Choices) != 1 {
		t.Fatalf("completion = %+v", body)
	}
	c := body.Choices[0]
	if string(c.Message["content"]) != "null" || c.FinishReason != "tool_calls" {
		t.Errorf("content %s, finish reason %q; want null, tool_calls", c.Message["content"], c.FinishReason)
	}
	var calls []openaitest.ToolCall
	if err := json.Unmarshal(c.Message["tool_calls"], &calls); err != nil || len(calls) != 1 ||
		calls[0] != (openaitest.ToolCall{ID: "call_1", Type: "function", Function: openaitest.FunctionCall{Name: "weather", Arguments: `{"city":"Paris"}`}}) {
		t.Errorf("tool_calls = %s (%v)", c.Message["tool_calls"], err)
	}
	if u := body.Usage; u.PromptTokens <= 0 || u.CompletionTokens <= 0 || u.TotalTokens != u.PromptTokens+u.CompletionTokens {
		t.Errorf("usage = %+v", u)
	}
}

// TestRejections checks the requests the server refuses, with the real API's
// status codes, before they can consume a reply.
func TestRejections(t *testing.T) {
	srv := openaitest.New(t, scripted.Reply{Text: "only for the valid request"})
	const user = `{"role":"user","content":"q"}`
	for _, tc := range []struct {
		name string
		auth bool
		body string
		code int
		msg  string
	}{
		{"no API key", false, `{"model":"m","messages":[` + user + `]}`, 401, "API key"},
		{"bad JSON", true, `{"model":`, 400, "parse the JSON"},
		{"no model", true, `{"messages":[` + user + `]}`, 400, "model parameter"},
		{"no messages", true, `{"model":"m","messages":[]}`, 400, "too short"},
		{"stream_options without stream", true, `{"model":"m","stream_options":{"include_usage":true},"messages":[` + user + `]}`, 400, "stream_options"},
		{"tool type", true, `{"model":"m","tools":[{"type":"web","function":{"name":"f"}}],"messages":[` + user + `]}`, 400, "tools[0].type"},
		{"tool name", true, `{"model":"m","tools":[{"type":"function","function":{}}],"messages":[` + user + `]}`, 400, "tools[0].function.name"},
		{"unknown role", true, `{"model":"m","messages":[{"role":"robot","content":"q"}]}`, 400, "'robot'"},
		{"tool calls on a user message", true, `{"model":"m","messages":[{"role":"user","content":"q","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]}]}`, 400, "'tool_calls' was unexpected"},
		{"tool call without id", true, `{"model":"m","messages":[` + user + `,{"role":"assistant","content":null,"tool_calls":[{"type":"function","function":{"name":"f","arguments":"{}"}}]}]}`, 400, "tool_calls[0].id"},
		{"tool call without name", true, `{"model":"m","messages":[` + user + `,{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"arguments":"{}"}}]}]}`, 400, "needs a name"},
		{"unanswered tool call at the end", true, `{"model":"m","messages":[` + user + `,{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]}]}`, 400, "did not have response messages: c"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := post(t, srv, tc.auth, tc.body)
			var e struct {
				Error struct{ Message, Type string }
			}
			if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tc.code || e.Error.Type != "invalid_request_error" || !strings.Contains(e.Error.Message, tc.msg) {
				t.Errorf("got %d %q %q, want %d invalid_request_error containing %q", resp.StatusCode, e.Error.Type, e.Error.Message, tc.code, tc.msg)
			}
		})
	}
	resp := post(t, srv, true, `{"model":"m","messages":[`+user+`]}`)
	if resp.StatusCode != 200 {
		t.Errorf("valid request after the rejected ones: status %d; they must not consume the script", resp.StatusCode)
	}
}

func TestReasoning(t *testing.T) {
	srv := openaitest.New(t,
		scripted.Reply{Reasoning: "let me think", Text: "42", Chunk: 5},
		scripted.Reply{Reasoning: "let me think", Text: "42"},
	)
	llm := srv.LLM(t)
	var reasoning, text []string
	resp, err := llm.GenerateContent(context.Background(), human("q"),
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
	if !slices.Equal(reasoning, []string{"let m", "e thi", "nk"}) || !slices.Equal(text, []string{"42"}) {
		t.Errorf("reasoning stream = %q, text stream = %q", reasoning, text)
	}
	if c := resp.Choices[0]; c.ReasoningContent != "let me think" || c.Content != "42" {
		t.Errorf("streamed choice = %+v", c)
	}
	// A StreamingReasoningFunc alone is enough to make the client stream.
	if !srv.Requests()[0].Body.Stream {
		t.Error("request 0 was not streamed")
	}

	resp, err = llm.GenerateContent(context.Background(), human("q"))
	if err != nil {
		t.Fatal(err)
	}
	if c := resp.Choices[0]; c.ReasoningContent != "let me think" || c.Content != "42" || c.StopReason != "stop" {
		t.Errorf("non-streamed choice = %+v", c)
	}
}

func TestErrors(t *testing.T) {
	ctx := context.Background()

	t.Run("reply error", func(t *testing.T) {
		srv := openaitest.New(t,
			scripted.Reply{Err: errors.New("the model melted")},
			scripted.Reply{Err: &openaitest.StatusError{Code: 429, Type: "rate_limit_exceeded", Message: "slow down"}},
		)
		exec := agents.NewExecutor(agents.NewOpenAIFunctionsAgent(srv.LLM(t), []tools.Tool{&weatherTool{}}))
		_, err := chains.Run(ctx, exec, "q")
		if err == nil || !strings.Contains(err.Error(), "500") || !strings.Contains(err.Error(), "the model melted") {
			t.Errorf("500: err = %v", err)
		}
		_, err = srv.LLM(t).Call(ctx, "q")
		if err == nil || !strings.Contains(err.Error(), "429") || !strings.Contains(err.Error(), "slow down") {
			t.Errorf("429: err = %v", err)
		}
		_, err = srv.LLM(t).Call(ctx, "q")
		if err == nil || !strings.Contains(err.Error(), "no reply left for request 2") {
			t.Errorf("exhausted: err = %v", err)
		}
	})

	t.Run("streaming func error", func(t *testing.T) {
		errStop := errors.New("stop streaming")
		srv := openaitest.New(t, scripted.Reply{Text: "abcdefgh", Chunk: 2})
		var got []string
		_, err := srv.LLM(t).Call(ctx, "q", llms.WithStreamingFunc(func(_ context.Context, b []byte) error {
			got = append(got, string(b))
			if len(b) > 0 {
				return errStop
			}
			return nil
		}))
		if !errors.Is(err, errStop) {
			t.Errorf("err = %v", err)
		}
		if !slices.Equal(got, []string{"", "ab"}) {
			t.Errorf("chunks = %q, want the role event then one text chunk", got)
		}
	})

	t.Run("malformed tool history", func(t *testing.T) {
		srv := openaitest.New(t, scripted.Reply{Text: "never sent"})
		llm := srv.LLM(t)
		orphan := append(human("q"), llms.MessageContent{
			Role:  llms.ChatMessageTypeTool,
			Parts: []llms.ContentPart{llms.ToolCallResponse{ToolCallID: "call_x", Content: "r"}},
		})
		_, err := llm.GenerateContent(ctx, orphan)
		if err == nil || !strings.Contains(err.Error(), "400") || !strings.Contains(err.Error(), "role 'tool'") {
			t.Errorf("orphan tool message: err = %v", err)
		}
		unanswered := append(human("q"), llms.MessageContent{
			Role:  llms.ChatMessageTypeAI,
			Parts: []llms.ContentPart{llms.ToolCall{ID: "call_y", Type: "function", FunctionCall: &llms.FunctionCall{Name: "f"}}},
		}, llms.TextParts(llms.ChatMessageTypeHuman, "and?"))
		_, err = llm.GenerateContent(ctx, unanswered)
		if err == nil || !strings.Contains(err.Error(), "call_y") {
			t.Errorf("unanswered tool call: err = %v", err)
		}
		// Rejected requests are recorded but do not consume the script.
		if n := len(srv.Requests()); n != 2 {
			t.Errorf("recorded %d requests", n)
		}
		if out, err := llm.Call(ctx, "q"); err != nil || out != "never sent" {
			t.Errorf("next call = %q, %v", out, err)
		}
	})

	t.Run("wrong base URL", func(t *testing.T) {
		srv := openaitest.New(t, scripted.Reply{Text: "x"})
		_, err := srv.LLM(t, openai.WithBaseURL(srv.URL)).Call(ctx, "q")
		if err == nil || !strings.Contains(err.Error(), "404") {
			t.Errorf("err = %v", err)
		}
	})
}

// TestCancellation also pins down how llms/openai reports cancellation:
// context errors are replaced by plain strings, and a cancellation during
// the stream yields a truncated response and no error at all.
func TestCancellation(t *testing.T) {
	t.Run("before the call", func(t *testing.T) {
		srv := openaitest.New(t, scripted.Reply{Text: "x"})
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := srv.LLM(t).Call(ctx, "q")
		if err == nil || err.Error() != "request cancelled" || errors.Is(err, context.Canceled) {
			t.Errorf("err = %v", err)
		}
		if n := len(srv.Requests()); n != 0 {
			t.Errorf("server saw %d requests", n)
		}
	})

	t.Run("while the server waits", func(t *testing.T) {
		srv := openaitest.New(t, scripted.Reply{Text: "late", Delay: time.Minute})
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := srv.LLM(t).Call(ctx, "q")
		if err == nil || !strings.Contains(err.Error(), "request timeout") {
			t.Errorf("err = %v", err)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("cancellation took %v", d)
		}
	})

	t.Run("mid stream", func(t *testing.T) {
		srv := openaitest.New(t, scripted.Reply{Text: strings.Repeat("abcd", 100), Chunk: 4})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var got collector
		out, err := srv.LLM(t).Call(ctx, "q", llms.WithStreamingFunc(func(ctx context.Context, b []byte) error {
			if len(b) > 0 {
				cancel()
			}
			return got.Func(ctx, b)
		}))
		if err != nil {
			t.Logf("llms/openai now reports mid-stream cancellation: %v", err)
		} else if len(out) >= 400 || out != strings.Join(got.Text(), "") {
			t.Errorf("out = %q, streamed %q; want the truncated text that was streamed", out, got.Text())
		}
	})

	t.Run("through the executor", func(t *testing.T) {
		srv := openaitest.New(t,
			scripted.Reply{ToolCalls: []llms.ToolCall{{FunctionCall: &llms.FunctionCall{Name: "cancel", Arguments: `{"__arg1":"now"}`}}}},
			scripted.Reply{Text: "unreachable"},
		)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		exec := agents.NewExecutor(agents.NewOpenAIFunctionsAgent(srv.LLM(t), []tools.Tool{&cancelTool{cancel: cancel}}))
		if _, err := chains.Run(ctx, exec, "q"); err == nil || ctx.Err() == nil {
			t.Errorf("err = %v, ctx.Err() = %v", err, ctx.Err())
		}
		if n := len(srv.Requests()); n != 1 {
			t.Errorf("server saw %d requests after cancellation, want 1", n)
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

func TestNewFuncConcurrentChats(t *testing.T) {
	// Each chat asks about its own city: the model calls the tool for it,
	// then answers with the tool's result, found by tool_call_id.
	srv := openaitest.NewFunc(t, func(req openaitest.Request) scripted.Reply {
		msgs := req.Body.Messages
		last := msgs[len(msgs)-1]
		if last.Role == "user" {
			city := strings.TrimPrefix(last.Content.String(), "Weather in ")
			return scripted.Reply{ToolCalls: []llms.ToolCall{{
				FunctionCall: &llms.FunctionCall{Name: "weather", Arguments: fmt.Sprintf(`{"__arg1":%q}`, city)},
			}}}
		}
		for _, m := range msgs {
			for _, tc := range m.ToolCalls {
				if tc.ID == last.ToolCallID {
					return scripted.Reply{Text: tc.ID + ": " + last.Content.String(), Chunk: 3}
				}
			}
		}
		return scripted.Reply{Err: errors.New("tool_call_id did not round-trip")}
	})
	llm := srv.LLM(t)

	const chats = 20
	tool := &weatherTool{}
	var wg sync.WaitGroup
	outs := make([]string, chats)
	errs := make([]error, chats)
	for i := range chats {
		wg.Go(func() {
			exec := agents.NewExecutor(agents.NewOpenAIFunctionsAgent(llm, []tools.Tool{tool}))
			outs[i], errs[i] = chains.Run(context.Background(), exec, fmt.Sprint("Weather in city", i),
				chains.WithStreamingFunc(new(collector).Func))
		})
	}
	wg.Wait()
	ids := map[string]bool{}
	for i := range chats {
		id, res, ok := strings.Cut(outs[i], ": ")
		if errs[i] != nil || !ok || res != fmt.Sprint("21C and sunny in city", i) {
			t.Errorf("chat %d: %q, %v", i, outs[i], errs[i])
		}
		ids[id] = true
	}
	if len(ids) != chats {
		t.Errorf("tool call IDs are not unique: %v", ids)
	}
	if n := len(srv.Requests()); n != 2*chats {
		t.Errorf("server saw %d requests, want %d", n, 2*chats)
	}
}

func TestRequestsAreDeepCopies(t *testing.T) {
	srv := openaitest.New(t, scripted.Reply{Text: "ok"})
	if _, err := srv.LLM(t).Call(context.Background(), "hello"); err != nil {
		t.Fatal(err)
	}
	r := srv.Requests()[0]
	r.Raw[0] = 'X'
	r.Body.Messages[0].Content.Text = "changed"
	r.Header.Set("Authorization", "changed")
	again := srv.Requests()[0]
	if again.Raw[0] != '{' || again.Body.Messages[0].Content.String() != "hello" || again.Header.Get("Authorization") != "Bearer test" {
		t.Errorf("record changed: %+v", again)
	}
}

func TestContentForms(t *testing.T) {
	var b openaitest.ChatRequest
	raw := `{"model":"m","stop":"END","messages":[
		{"role":"user","content":"plain"},
		{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"u"}},{"type":"text","text":"b"}]},
		{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]}]}`
	if err := json.Unmarshal([]byte(raw), &b); err != nil {
		t.Fatal(err)
	}
	m := b.Messages
	if m[0].Content.String() != "plain" || m[1].Content.String() != "ab" || m[1].Content.Parts[1].ImageURL.URL != "u" ||
		m[2].Content.String() != "" || m[2].ToolCalls[0].ID != "c" || !slices.Equal(b.Stop, openaitest.Stop{"END"}) {
		t.Errorf("decoded = %+v", b)
	}
}
