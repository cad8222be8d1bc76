package middleware_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/openai"

	"github.com/streamrules/streamrules/internal/openaitest"
	"github.com/streamrules/streamrules/internal/scripted"
)

// TestOpenAIClientBothHalves drives LangChainGo's real openai client, over HTTP with SSE
// streaming, against a local chat-completions server: a soft reminder and a hard retry
// in one move, for both agent kinds.
func TestOpenAIClientBothHalves(t *testing.T) {
	t.Parallel()
	const bad = "Look: ![cat](https://x/cat.png)"
	const good = "Look: https://x/cat.png"
	scripts := map[agentKind][]scripted.Reply{
		kindFunctions: {
			{ToolCalls: []llms.ToolCall{toolCall("shell", `{"__arg1":"ls"}`)}},
			{Text: bad, Chunk: 5},
			{Text: good, Chunk: 5},
		},
		kindMRKL: {
			{Text: "Thought: look\nAction: shell\nAction Input: ls", Chunk: 7},
			{Text: "Thought: got it\nFinal Answer: " + bad, Chunk: 5},
			{Text: "Thought: got it\nFinal Answer: " + good, Chunk: 5},
		},
	}
	for kind, script := range scripts {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			r := newRig(t, nil, softRule("local_shell", "shell", ``, shellText), imageRule())
			srv := openaitest.New(t, script...)
			llm := srv.LLM(t, openai.WithCallback(r.clean)) // provider events go to the client too
			shell := &echoTool{name: "shell"}
			exec, mem := r.executor(kind, llm, shell)
			out, steps, err := r.run(context.Background(), exec, "chat-oa-"+string(kind), "show me", "telegram")
			if err != nil {
				t.Fatal(err)
			}
			if out != good {
				t.Fatalf("output %q", out)
			}
			if len(steps) != 1 || steps[0].Observation != "output of ls" {
				t.Fatalf("steps %+v", steps)
			}
			reqs := srv.Requests()
			if len(reqs) != 3 {
				t.Fatalf("%d requests", len(reqs))
			}
			for i, req := range reqs {
				if !req.Body.Stream {
					t.Errorf("request %d did not stream", i)
				}
			}
			block := `<system-reminder rule="local_shell">` + shellText + "</system-reminder>\noutput of ls"
			// The spliced result is byte-for-byte the same in both later requests.
			for _, i := range []int{1, 2} {
				if !strings.Contains(requestText(t, reqs[i]), block) {
					t.Errorf("request %d lacks the spliced tool result", i)
				}
			}
			if kind == kindFunctions {
				m1, m2 := rawMessages(t, reqs[1]), rawMessages(t, reqs[2])
				for i := range m1 {
					if string(m1[i]) != string(m2[i]) {
						t.Errorf("message %d changed between requests:\n%s\n%s", i, m1[i], m2[i])
					}
				}
			} else if !strings.HasPrefix(requestText(t, reqs[2]), requestText(t, reqs[1])) {
				t.Errorf("retry prompt does not extend the first")
			}
			last := reqs[2].Body.Messages
			if n := len(last); last[n-2].Role != "assistant" || !strings.Contains(last[n-2].Content.String(), bad) ||
				last[n-1].Role != "user" || !strings.HasPrefix(last[n-1].Content.String(), `<system-interrupt reason="rule_violation" rule="telegram_markdown_image">`) {
				t.Errorf("retry tail: %+v / %+v", last[n-2], last[n-1])
			}
			streamed := strings.Join(r.rec.streamed(), "")
			if strings.Contains(streamed, "![cat]") || !strings.Contains(streamed, good) {
				t.Errorf("client stream %q", streamed)
			}
			view := r.rec.all()
			assertClean(t, view, "![cat]")
			if !strings.Contains(view, "llm end: ") || !strings.Contains(view, good) {
				t.Errorf("the accepted answer's provider event is missing:\n%s", view)
			}
			assertClean(t, memoryText(t, mem), "![cat]")
		})
	}
}

func rawMessages(t *testing.T, req openaitest.Request) []json.RawMessage {
	t.Helper()
	var body struct {
		Messages []json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(req.Raw, &body); err != nil {
		t.Fatal(err)
	}
	return body.Messages
}

func requestText(t *testing.T, req openaitest.Request) string {
	t.Helper()
	var b strings.Builder
	for _, m := range req.Body.Messages {
		b.WriteString(m.Content.String())
		b.WriteString("\n")
	}
	return b.String()
}
