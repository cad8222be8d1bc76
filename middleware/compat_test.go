package middleware_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/anthropic"

	"github.com/streamrules/streamrules/internal/providertest"
	"github.com/streamrules/streamrules/internal/scripted"
)

// The provider shims of compat.go, each through the real client on a local server. The
// two below are the shims' own tests; the others are proven end to end elsewhere:
// objectArgsOnly and firstPartOnly by TestAnthropicParallelToolCalls (providers_test.go),
// cutStreamNilError by TestProviderCancelMidStream (the same file).

// TestShimToolsFromFunctions: the anthropic client reads only CallOptions.Tools. The
// functions an agent passes are sent as tools, unless the caller set tools itself: the
// caller's tools win and are sent as given.
func TestShimToolsFromFunctions(t *testing.T) {
	t.Parallel()
	fn := func(name string) llms.FunctionDefinition {
		return llms.FunctionDefinition{Name: name, Description: "runs " + name,
			Parameters: map[string]any{"type": "object", "properties": map[string]any{}}}
	}
	tests := []struct {
		name string
		opts []llms.CallOption
		want []string
	}{
		{"functions only", []llms.CallOption{llms.WithFunctions([]llms.FunctionDefinition{fn("shell")})}, []string{"shell"}},
		{"the caller's tools win", []llms.CallOption{
			llms.WithFunctions([]llms.FunctionDefinition{fn("shell")}),
			llms.WithTools([]llms.Tool{{Type: "function", Function: &llms.FunctionDefinition{Name: "lookup", Description: "looks up",
				Parameters: map[string]any{"type": "object", "properties": map[string]any{}}}}}),
		}, []string{"lookup"}},
		{"neither", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, nil)
			srv := providertest.New(t, providertest.Anthropic, scripted.Reply{Text: "ok"})
			llm := r.guard.Model(srv.LLM(t))
			if _, err := llm.GenerateContent(context.Background(), []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hi")}, tt.opts...); err != nil {
				t.Fatal(err)
			}
			reqs := srv.Requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests", len(reqs))
			}
			if got := reqs[0].Tools; !slices.Equal(got, tt.want) {
				t.Errorf("tools sent %q, want %q", got, tt.want)
			}
		})
	}
}

// TestShimMergeBlockChoices: the anthropic client returns one choice per content block.
// The agent reads one choice, so the blocks are merged: the text blocks back to back, as
// the client streams them and AnswerTarget judges them, every tool call in order.
func TestShimMergeBlockChoices(t *testing.T) {
	t.Parallel()
	// Claude may answer with several text blocks around a tool call; providertest writes
	// one, so this server answers the Messages API with a fixed message.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id":"msg_1","type":"message","role":"assistant","model":"claude-test",
"content":[{"type":"text","text":"First."},{"type":"tool_use","id":"tu_1","name":"shell","input":{"cmd":"ls"}},
{"type":"text","text":"Second."},{"type":"tool_use","id":"tu_2","name":"shell","input":{"cmd":"pwd"}}],
"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":5}}`))
	}))
	t.Cleanup(srv.Close)
	raw, err := anthropic.New(anthropic.WithToken("test"), anthropic.WithBaseURL(srv.URL+"/v1"),
		anthropic.WithModel("claude-test"), anthropic.WithHTTPClient(srv.Client()))
	if err != nil {
		t.Fatal(err)
	}
	r := newRig(t, nil)
	resp, err := r.guard.Model(raw).GenerateContent(context.Background(), []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hi")})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Choices) != 1 {
		t.Fatalf("%d choices, want the blocks merged into one", len(resp.Choices))
	}
	c := resp.Choices[0]
	if c.Content != "First.Second." {
		t.Errorf("content %q, want the text blocks back to back, as they stream", c.Content)
	}
	var ids []string
	for _, tc := range c.ToolCalls {
		ids = append(ids, tc.ID)
	}
	if !slices.Equal(ids, []string{"tu_1", "tu_2"}) || c.FuncCall == nil || c.FuncCall.Name != "shell" {
		t.Errorf("tool calls %v, func call %+v", ids, c.FuncCall)
	}
}
