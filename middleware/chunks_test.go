package middleware_test

import (
	"context"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/llms"

	"github.com/streamrules/streamrules/clientview"
	"github.com/streamrules/streamrules/internal/openaitest"
	"github.com/streamrules/streamrules/internal/scripted"
	"github.com/streamrules/streamrules/middleware"
	"github.com/streamrules/streamrules/seeds"
)

// LangChainGo's real openai client streams a response's tool calls as JSON through the
// streaming func; inside a move the guard keeps them out of the client's stream, held
// tours and streamed ones alike, so the client gets the answer's words only.
// Config.StreamToolCalls lets them through, as before.
func TestToolCallJSONKeptOutOfStream(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name       string
		env        []string
		toolChunks bool
	}{
		{"streamed tour", nil, false},
		{"held tour", []string{seeds.EnvTelegram}, false},
		{"StreamToolCalls", nil, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, nil, imageRule()) // a Telegram text rule: armed (held) in Telegram tours only
			guard := newGuard(t, r.eng, &middleware.Config{Callbacks: clientview.Clean(r.rec), StreamToolCalls: tt.toolChunks})
			srv := openaitest.New(t,
				scripted.Reply{Text: "Let me look.", ToolCalls: []llms.ToolCall{toolCall("shell", `{"cmd":"df -h"}`)}, Chunk: 3},
				scripted.Reply{Text: "12G are free on the disk.", Chunk: 3},
			)
			shell := &echoTool{name: "shell"}
			exec := guard.Executor(agents.NewOpenAIFunctionsAgent(guard.Model(srv.LLM(t)), guard.Tools(shell)))
			out, err := guard.Run(context.Background(), exec, "chat-"+tt.name, "disk?", middleware.WithEnvironments(tt.env...))
			if err != nil || out != "12G are free on the disk." || len(shell.inputs()) != 1 {
				t.Fatalf("out %q, err %v, tool inputs %q", out, err, shell.inputs())
			}
			streamed := strings.Join(r.rec.streamed(), "")
			hasJSON := strings.Contains(streamed, `"function"`) || strings.Contains(streamed, `df -h`)
			if tt.toolChunks != hasJSON {
				t.Errorf("StreamToolCalls %v, but the client's stream %q tool-call JSON", tt.toolChunks, streamed)
			}
			if !strings.HasPrefix(streamed, "Let me look.") || !strings.HasSuffix(streamed, "12G are free on the disk.") {
				t.Errorf("the client's stream lost words: %q", streamed)
			}
			if !tt.toolChunks && streamed != "Let me look.12G are free on the disk." {
				t.Errorf("the client's stream is %q, want the two answers' words only", streamed)
			}
		})
	}
}
