package middleware_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/llms"

	"github.com/streamrules/streamrules/internal/openaitest"
	"github.com/streamrules/streamrules/internal/providertest"
	"github.com/streamrules/streamrules/internal/scripted"
	"github.com/streamrules/streamrules/middleware"
)

// The provider matrix: LangChainGo's real anthropic, ollama and mistral clients, each
// against a local server that speaks its protocol and rejects what the real API rejects,
// through both halves (a soft reminder and a hard retry in one move) with held speech.
// The openai client has its own tests (openai_test.go); it is in the matrix below too,
// as the way to reach Ollama's and Mistral's OpenAI-compatible endpoints with tools.

const (
	badImage  = "Look: ![cat](https://x/cat.png)"
	goodImage = "Look: https://x/cat.png"
)

// providerCase is one row of the matrix: a client, an agent kind and its script.
type providerCase struct {
	name   string
	kind   agentKind
	server func(t *testing.T, replies ...scripted.Reply) (llms.Model, func() []providertest.Request)
	script []scripted.Reply
}

func viaProvider(k providertest.Kind) func(t *testing.T, replies ...scripted.Reply) (llms.Model, func() []providertest.Request) {
	return func(t *testing.T, replies ...scripted.Reply) (llms.Model, func() []providertest.Request) {
		srv := providertest.New(t, k, replies...)
		return srv.LLM(t), srv.Requests
	}
}

// viaOpenAI is the openai client against an OpenAI-protocol server: what Ollama's and
// Mistral's /v1 endpoints speak. openaitest rejects what the API rejects; its requests are
// given in the matrix's shape, so the row gets the same checks as the others.
func viaOpenAI(t *testing.T, replies ...scripted.Reply) (llms.Model, func() []providertest.Request) {
	srv := openaitest.New(t, replies...)
	return srv.LLM(t), func() []providertest.Request {
		var out []providertest.Request
		for _, req := range srv.Requests() {
			pr := providertest.Request{N: req.N, Header: req.Header, Raw: req.Raw, Stream: req.Body.Stream}
			for _, m := range req.Body.Messages {
				pm := providertest.Message{Role: m.Role, Text: m.Content.String(), ToolCallID: m.ToolCallID}
				for _, tc := range m.ToolCalls {
					pm.ToolUses = append(pm.ToolUses, providertest.ToolUse{ID: tc.ID, Name: tc.Function.Name, Input: tc.Function.Arguments})
				}
				pr.Messages = append(pr.Messages, pm)
			}
			out = append(out, pr)
		}
		return out
	}
}

var (
	functionsScript = []scripted.Reply{
		// Claude's usual shape: text and a tool call in one answer.
		{Text: "Let me check.", ToolCalls: []llms.ToolCall{toolCall("shell", `{"__arg1":"ls"}`)}},
		{Text: badImage, Chunk: 5},
		{Text: goodImage, Chunk: 5},
	}
	mrklScript = []scripted.Reply{
		{Text: "Thought: look\nAction: shell\nAction Input: ls", Chunk: 7},
		{Text: "Thought: got it\nFinal Answer: " + badImage, Chunk: 5},
		{Text: "Thought: got it\nFinal Answer: " + goodImage, Chunk: 5},
	}
)

func providerMatrix() []providerCase {
	return []providerCase{
		{"anthropic/functions", kindFunctions, viaProvider(providertest.Anthropic), functionsScript},
		{"anthropic/mrkl", kindMRKL, viaProvider(providertest.Anthropic), mrklScript},
		{"ollama/mrkl", kindMRKL, viaProvider(providertest.Ollama), mrklScript},
		{"mistral/mrkl", kindMRKL, viaProvider(providertest.Mistral), mrklScript},
		{"openai-compatible/functions", kindFunctions, viaOpenAI, functionsScript},
	}
}

func TestProviderMatrixBothHalves(t *testing.T) {
	t.Parallel()
	for _, pc := range providerMatrix() {
		t.Run(pc.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, nil, softRule("local_shell", "shell", ``, shellText), imageRule())
			llm, requests := pc.server(t, pc.script...)
			shell := &echoTool{name: "shell"}
			exec, mem := r.executor(pc.kind, llm, shell)
			out, steps, err := r.run(context.Background(), exec, "chat-"+pc.name, "show me", "telegram")
			if err != nil {
				t.Fatal(err)
			}
			if out != goodImage {
				t.Fatalf("output %q", out)
			}
			if got := shell.inputs(); len(got) != 1 || got[0] != "ls" {
				t.Fatalf("tool inputs %q", got)
			}
			if len(steps) != 1 || steps[0].Observation != "output of ls" {
				t.Fatalf("steps %+v", steps)
			}
			reqs := requests()
			if len(reqs) != 3 {
				t.Fatalf("%d requests", len(reqs))
			}
			block := `<system-reminder rule="local_shell">` + shellText + "</system-reminder>\noutput of ls"
			for i, req := range reqs {
				if len(req.Violations) > 0 {
					t.Errorf("request %d broke the provider's rules: %q", i, req.Violations)
				}
				if !req.Stream {
					t.Errorf("request %d did not stream", i)
				}
				if i == 0 {
					continue
				}
				if !strings.Contains(requestBody(req), block) {
					t.Errorf("request %d lacks the spliced tool result:\n%s", i, requestBody(req))
				}
			}
			last := reqs[2]
			n := len(last.Messages)
			tail := last.Messages[n-1]
			if tail.Role != "user" || !strings.HasPrefix(tail.Text, `<system-interrupt reason="rule_violation" rule="telegram_markdown_image">`) {
				t.Errorf("retry tail %+v", tail)
			}
			if !strings.Contains(requestBody(last), "![cat]") {
				t.Errorf("the retry does not show the model its discarded answer")
			}
			if requestBody(reqs[1]) != requestBody(last)[:len(requestBody(reqs[1]))] {
				t.Errorf("the retry does not extend the first request")
			}
			streamed := strings.Join(r.rec.streamed(), "")
			if strings.Contains(streamed, "![cat]") || !strings.Contains(streamed, goodImage) {
				t.Errorf("client stream %q", streamed)
			}
			assertClean(t, r.rec.all(), "![cat]")
			assertClean(t, memoryText(t, mem), "![cat]")
		})
	}
}

// requestBody is a request's conversation as text, in order, for prefix and content checks.
func requestBody(req providertest.Request) string {
	var b strings.Builder
	b.WriteString(req.System)
	for _, m := range req.Messages {
		b.WriteString("\n" + m.Role + ": " + m.Text)
		for _, u := range m.ToolUses {
			b.WriteString(" [use " + u.Name + " " + u.Input + "]")
		}
		for _, r := range m.ToolResults {
			b.WriteString(" [result " + r.Content + "]")
		}
	}
	return b.String()
}

// TestAnthropicParallelToolCalls: two tool calls in one answer, bare-string arguments.
// The functions agent groups calls whose log lines match (the same tool and arguments)
// into one AI message; the anthropic client sends only its first part, and cannot re-parse
// an unwrapped argument. Without the shims the server rejects the second request.
func TestAnthropicParallelToolCalls(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, a, b string }{{"distinct", "ls", "pwd"}, {"identical", "ls", "ls"}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, nil)
			srv := providertest.New(t, providertest.Anthropic,
				scripted.Reply{ToolCalls: []llms.ToolCall{toolCall("shell", `{"__arg1":"`+tc.a+`"}`), toolCall("shell", `{"__arg1":"`+tc.b+`"}`)}},
				scripted.Reply{Text: "Both done."})
			shell := &echoTool{name: "shell"}
			exec, _ := r.executor(kindFunctions, srv.LLM(t), shell)
			out, _, err := r.run(context.Background(), exec, "chat-par", "go")
			if err != nil {
				t.Fatal(err)
			}
			if out != "Both done." || strings.Join(shell.inputs(), ",") != tc.a+","+tc.b {
				t.Fatalf("output %q, inputs %q", out, shell.inputs())
			}
			reqs := srv.Requests()
			if len(reqs) != 2 || len(reqs[1].Violations) > 0 {
				t.Fatalf("requests %d, violations %q", len(reqs), reqs[len(reqs)-1].Violations)
			}
			var uses, results []string
			for _, m := range reqs[1].Messages {
				for _, u := range m.ToolUses {
					uses = append(uses, u.Input)
				}
				for _, r := range m.ToolResults {
					results = append(results, r.Content)
				}
			}
			if want := `{"__arg1":"` + tc.a + `"},{"__arg1":"` + tc.b + `"}`; strings.Join(uses, ",") != want {
				t.Errorf("tool uses sent %q, want %s", uses, want)
			}
			if want := "output of " + tc.a + ",output of " + tc.b; strings.Join(results, ",") != want {
				t.Errorf("tool results sent %q", results)
			}
			if len(reqs[0].Tools) != 1 || reqs[0].Tools[0] != "shell" {
				t.Errorf("tools declared %q", reqs[0].Tools)
			}
		})
	}
}

// TestMistralFunctionsAgentLimitation pins what the wrapper cannot fix: the v0.1.14
// mistral client sends tool messages without tool_call_id (its SDK's message type has no
// such field), which Mistral rejects. The README sends users to the openai client against
// Mistral's OpenAI-compatible endpoint instead (in the matrix above). If this test fails,
// LangChainGo fixed the client: update the README's provider table.
func TestMistralFunctionsAgentLimitation(t *testing.T) {
	t.Parallel()
	r := newRig(t, nil)
	srv := providertest.New(t, providertest.Mistral,
		scripted.Reply{ToolCalls: []llms.ToolCall{toolCall("shell", `{"__arg1":"ls"}`)}},
		scripted.Reply{Text: "done"})
	exec, _ := r.executor(kindFunctions, srv.LLM(t), &echoTool{name: "shell"})
	_, _, err := r.run(context.Background(), exec, "chat-mistral-fn", "go")
	if err == nil || !strings.Contains(err.Error(), "tool_call_id") {
		t.Fatalf("err %v; want the server's tool_call_id rejection", err)
	}
}

// TestProviderCancelMidStream cancels the context mid-stream on every client and in every
// path of the model wrapper: pass-through (no armed rule), held (an armed text rule) and
// the retry tour. Each run returns the context's error and nothing of the cut answer
// reaches the client after the cancel.
func TestProviderCancelMidStream(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("word ", 60)
	paths := []struct {
		name    string
		armed   bool
		script  func(final string) []scripted.Reply
		cutReq  int
		visible bool // chunks before the cut may reach the client (pass-through)
	}{
		{"pass-through", false, func(f string) []scripted.Reply { return []scripted.Reply{{Text: f + long, Chunk: 5}} }, 0, true},
		{"held", true, func(f string) []scripted.Reply { return []scripted.Reply{{Text: f + long, Chunk: 5}} }, 0, false},
		{"retry", true, func(f string) []scripted.Reply {
			return []scripted.Reply{{Text: f + badImage, Chunk: 5}, {Text: f + long, Chunk: 5}}
		}, 1, true}, // one retry per move: the retry tour streams through
	}
	for _, k := range providertest.Kinds {
		for _, p := range paths {
			t.Run(string(k)+"/"+p.name, func(t *testing.T) {
				t.Parallel()
				r := newRig(t, nil)
				if p.armed {
					// Two text rules: the image rule fires on the first answer and is then
					// silent; the other keeps the retry tour armed, so it is held too.
					r = newRig(t, nil, imageRule(), textRule("no_secrets", `SECRET-\d+`, "Never print secrets.", "telegram"))
				}
				final := "Thought: ok\nFinal Answer: "
				srv := providertest.New(t, k, p.script(final)...)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				cutAt := -1
				srv.OnChunk = func(req, piece int) {
					if req == p.cutReq && piece == 6 {
						cutAt = len(r.rec.streamed())
						cancel()
					}
				}
				exec, mem := r.executor(kindMRKL, srv.LLM(t))
				_, _, err := r.run(ctx, exec, "chat-cancel", "go", "telegram")
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("err %v, want context.Canceled", err)
				}
				streamed := r.rec.streamed()
				if !p.visible && len(streamed) > 0 {
					t.Errorf("held speech leaked: %q", streamed)
				}
				if p.visible && cutAt >= 0 && len(streamed) > cutAt+1 {
					// The chunk in flight when the cancel lands may still arrive; no more.
					t.Errorf("%d chunks reached the client after the cancel (at %d)", len(streamed)-cutAt, cutAt)
				}
				if strings.Contains(memoryText(t, mem), "word word") {
					t.Errorf("the cut answer reached memory")
				}
			})
		}
	}
}

// TestProviderNonStreamingRetry: a call without streaming (the model wrapper's other path)
// on each client: the violating answer is discarded and the tour replayed once.
func TestProviderNonStreamingRetry(t *testing.T) {
	t.Parallel()
	for _, k := range providertest.Kinds {
		t.Run(string(k), func(t *testing.T) {
			t.Parallel()
			r := newRig(t, nil, imageRule())
			srv := providertest.New(t, k,
				scripted.Reply{Text: "Final Answer: " + badImage}, scripted.Reply{Text: "Final Answer: " + goodImage})
			ctx, move := r.eng.BeginMove(context.Background(), "chat-ns-"+string(k), "telegram")
			ctx = middleware.AgentTour(ctx, middleware.FormatMRKL)
			resp, err := r.guard.Model(srv.LLM(t)).GenerateContent(ctx,
				[]llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "show me")})
			if err = move.End(ctx, err); err != nil {
				t.Fatal(err)
			}
			if got := resp.Choices[0].Content; got != "Final Answer: "+goodImage {
				t.Fatalf("answer %q", got)
			}
			reqs := srv.Requests()
			if len(reqs) != 2 || len(reqs[1].Violations) > 0 {
				t.Fatalf("%d requests; %q", len(reqs), reqs[len(reqs)-1].Violations)
			}
			msgs := reqs[1].Messages
			if n := len(msgs); n != 3 || msgs[1].Role != "assistant" || !strings.Contains(msgs[1].Text, "![cat]") ||
				!strings.HasPrefix(msgs[2].Text, `<system-interrupt reason="rule_violation" rule="telegram_markdown_image">`) {
				t.Errorf("retry request %+v", msgs)
			}
			if f := move.Firings(); len(f) != 1 || !f[0].Retry {
				t.Errorf("firings %+v", f)
			}
		})
	}
}
