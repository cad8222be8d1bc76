package providertest_test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/llms"

	"github.com/streamrules/streamrules/internal/providertest"
	"github.com/streamrules/streamrules/internal/scripted"
)

// Each client, streaming and not, gets the scripted text back through its real parser.
func TestEachClientReadsItsProtocol(t *testing.T) {
	t.Parallel()
	for _, k := range providertest.Kinds {
		for _, stream := range []bool{false, true} {
			name := string(k) + map[bool]string{false: "/whole", true: "/stream"}[stream]
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				const text = "Hello there, ünïcode and all."
				srv := providertest.New(t, k, scripted.Reply{Text: text, Chunk: 3})
				var chunks []string
				var opts []llms.CallOption
				if stream {
					opts = append(opts, llms.WithStreamingFunc(func(_ context.Context, c []byte) error {
						if len(c) > 0 {
							chunks = append(chunks, string(c))
						}
						return nil
					}))
				}
				resp, err := srv.LLM(t).GenerateContent(context.Background(),
					[]llms.MessageContent{llms.TextParts(llms.ChatMessageTypeSystem, "Be brief."), llms.TextParts(llms.ChatMessageTypeHuman, "hi")}, opts...)
				if err != nil {
					t.Fatal(err)
				}
				if got := resp.Choices[0].Content; got != text {
					t.Fatalf("content %q", got)
				}
				if stream && (len(chunks) < 5 || strings.Join(chunks, "") != text) {
					t.Fatalf("streamed %q", chunks)
				}
				reqs := srv.Requests()
				// The ollama client leaves "stream" out when not streaming, which the real
				// server (and this one) reads as streaming; the client then gathers the lines.
				wantStream := stream || k == providertest.Ollama
				if len(reqs) != 1 || reqs[0].Stream != wantStream || len(reqs[0].Violations) > 0 {
					t.Fatalf("requests %+v", reqs)
				}
				sys := reqs[0].System
				if k != providertest.Anthropic {
					sys = reqs[0].Messages[0].Text
				}
				if sys != "Be brief." {
					t.Errorf("system prompt %q", sys)
				}
			})
		}
	}
}

// Anthropic's answer of text and a tool call comes back as two choices, as Claude's does.
func TestAnthropicBlocksAreChoices(t *testing.T) {
	t.Parallel()
	for _, stream := range []bool{false, true} {
		srv := providertest.New(t, providertest.Anthropic, scripted.Reply{
			Text: "Let me check.", ToolCalls: []llms.ToolCall{{FunctionCall: &llms.FunctionCall{Name: "shell", Arguments: `{"cmd":"ls -la"}`}}},
		})
		var opts []llms.CallOption
		if stream {
			opts = append(opts, llms.WithStreamingFunc(func(context.Context, []byte) error { return nil }))
		}
		resp, err := srv.LLM(t).GenerateContent(context.Background(), []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hi")}, opts...)
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Choices) != 2 || resp.Choices[0].Content != "Let me check." || len(resp.Choices[1].ToolCalls) != 1 ||
			resp.Choices[1].ToolCalls[0].FunctionCall.Arguments != `{"cmd":"ls -la"}` {
			t.Fatalf("stream=%v choices %+v", stream, resp.Choices)
		}
	}
}

// The validators reject what each provider's API rejects, with the provider's error shape.
func TestValidatorsReject(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		kind providertest.Kind
		body string
		want string
	}{
		{"anthropic first role", providertest.Anthropic,
			`{"model":"m","max_tokens":5,"messages":[{"role":"assistant","content":"x"}]}`, "first message must be a user message"},
		{"anthropic alternation", providertest.Anthropic,
			`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"x"},{"role":"user","content":"y"}]}`, "roles must alternate"},
		{"anthropic system role", providertest.Anthropic,
			`{"model":"m","max_tokens":5,"messages":[{"role":"system","content":"x"}]}`, "top-level system field"},
		{"anthropic empty text", providertest.Anthropic,
			`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"text","text":""}]}]}`, "text content blocks must be non-empty"},
		{"anthropic tool_use without result", providertest.Anthropic,
			`{"model":"m","max_tokens":5,"tools":[{"name":"t"}],"messages":[{"role":"user","content":"x"},{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"t","input":{}}]},{"role":"user","content":"y"}]}`,
			"without tool_result blocks"},
		{"anthropic tool blocks without tools", providertest.Anthropic,
			`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"x"},{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"t","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"r"}]}]}`,
			"must define tools"},
		{"anthropic string input", providertest.Anthropic,
			`{"model":"m","max_tokens":5,"tools":[{"name":"t"}],"messages":[{"role":"user","content":"x"},{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"t","input":"ls"}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"r"}]}]}`,
			"input must be an object"},
		{"anthropic max_tokens", providertest.Anthropic,
			`{"model":"m","messages":[{"role":"user","content":"x"}]}`, "max_tokens"},
		{"ollama role", providertest.Ollama,
			`{"model":"m","messages":[{"role":"wizard","content":"x"}]}`, "role: unknown"},
		{"mistral tool_call_id", providertest.Mistral,
			`{"model":"m","messages":[{"role":"user","content":"x"},{"role":"assistant","content":"","tool_calls":[{"id":"a","function":{"name":"t","arguments":"{}"}}]},{"role":"tool","content":"r"}]}`,
			"tool_call_id: required"},
		{"mistral last role", providertest.Mistral,
			`{"model":"m","messages":[{"role":"user","content":"x"},{"role":"assistant","content":"y"}]}`, "expected last role user or tool"},
		{"mistral late system", providertest.Mistral,
			`{"model":"m","messages":[{"role":"user","content":"x"},{"role":"system","content":"y"},{"role":"user","content":"z"}]}`, "system messages must come first"},
	}
	paths := map[providertest.Kind]string{providertest.Anthropic: "/v1/messages", providertest.Ollama: "/api/chat", providertest.Mistral: "/v1/chat/completions"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.New(t, tt.kind, scripted.Reply{Text: "never"})
			resp, err := http.Post(srv.URL+paths[tt.kind], "application/json", bytes.NewReader([]byte(tt.body)))
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			_, _ = buf.ReadFrom(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusBadRequest || !strings.Contains(buf.String(), tt.want) {
				t.Fatalf("HTTP %d %s; want 400 with %q", resp.StatusCode, buf.String(), tt.want)
			}
			reqs := srv.Requests()
			if len(reqs) != 1 || len(reqs[0].Violations) == 0 {
				t.Fatalf("recorded %+v", reqs)
			}
		})
	}
}
