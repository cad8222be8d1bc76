package middleware_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/tmc/langchaingo/agents"
	lcb "github.com/tmc/langchaingo/callbacks"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/memory"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/scripted"
	"github.com/streamrules/streamrules/middleware"
	"github.com/streamrules/streamrules/seeds"
)

// runFixture is a guard whose only client wiring is Config.Callbacks: no handler given to
// the agent, the executor or the stream by hand.
func runFixture(t *testing.T) *rig {
	t.Helper()
	return newRig(t, nil,
		softRule("ls_reminder", "shell", `"cmd":"ls"`, "Use the file tool."),
		textRule("no_image", `!\[[^\]]*\]\([^)]*\)`, "No markdown images.", seeds.EnvTelegram))
}

// One handler, given once: it gets the tool events with the clean output, the chain and
// agent events, and the accepted answer's stream; never a block or the discarded answer.
// The move is begun, counted and its firings written by Run alone.
func TestRunOneHandler(t *testing.T) {
	t.Parallel()
	for _, kind := range []agentKind{kindFunctions, kindMRKL} {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			r := runFixture(t)
			shell := &echoTool{name: "shell"}
			var model *scripted.Model
			var a agents.Agent
			if kind == kindMRKL {
				model = scripted.New(
					scripted.Reply{Text: "Thought: look\nAction: shell\nAction Input: {\"cmd\": \"ls\"}"},
					scripted.Reply{Text: "Thought: done\nFinal Answer: Here ![x](y)"},
					scripted.Reply{Text: "Thought: done\nFinal Answer: Here is the list."},
				)
				a = agents.NewOneShotAgent(r.guard.Model(model), r.guard.Tools(shell))
			} else {
				model = scripted.New(
					scripted.Reply{ToolCalls: []llms.ToolCall{toolCall("shell", `{"cmd": "ls"}`)}},
					scripted.Reply{Text: "Here ![x](y)"},
					scripted.Reply{Text: "Here is the list."},
				)
				a = agents.NewOpenAIFunctionsAgent(r.guard.Model(model), r.guard.Tools(shell))
			}
			mem := memory.NewConversationBuffer(memory.WithInputKey("input"), memory.WithOutputKey("output"))
			exec := r.guard.Executor(a, agents.WithMemory(mem))

			out, err := r.guard.Run(context.Background(), exec, "chat-1", "list the files", middleware.WithEnvironments(seeds.EnvTelegram))
			if err != nil {
				t.Fatal(err)
			}
			if out != "Here is the list." {
				t.Errorf("answer %q", out)
			}
			view := r.rec.all()
			assertClean(t, view, "![x](y)")
			for _, want := range []string{
				`tool start: {"cmd": "ls"}`,
				`tool end: output of {"cmd": "ls"}`,
				"chain start: map[input:list the files",
				"agent finish: map[output:Here is the list.]",
			} {
				if !strings.Contains(view, want) {
					t.Errorf("client did not get %q:\n%s", want, view)
				}
			}
			if got := strings.Join(r.rec.streamed(), ""); !strings.HasSuffix(got, "Here is the list.") {
				t.Errorf("client stream %q, want the accepted answer", got)
			}
			// The model was told: the reminder on the tool result, and the interrupt.
			calls := model.Calls()
			if len(calls) != 3 || !strings.Contains(fmt.Sprint(calls[1].Messages), `<system-reminder rule="ls_reminder">`) ||
				!strings.Contains(fmt.Sprint(calls[2].Messages), `rule="no_image"`) {
				t.Errorf("model calls %d, want 3 with the reminder and the interrupt", len(calls))
			}
			if n := strings.Count(fmt.Sprint(calls[2].Messages), `<system-reminder rule="ls_reminder">`); n != 1 {
				t.Errorf("reminder laid %d times on the prompt, want once (agent wrapped twice?)", n)
			}
			state, err := r.store.LoadChat(context.Background(), "chat-1")
			if err != nil {
				t.Fatal(err)
			}
			if state.Moves != 1 || state.LastFired["ls_reminder"] != 1 || state.LastFired["no_image"] != 1 {
				t.Errorf("chat state %+v, want the move counted and both firings written", state)
			}
			if mt := memoryText(t, mem); strings.Contains(mt, "![x]") || !strings.Contains(mt, "Here is the list.") {
				t.Errorf("memory:\n%s", mt)
			}
		})
	}
}

// A failed run ends the move as failed: not counted, its firings written, the run's error
// returned as it came.
func TestRunError(t *testing.T) {
	t.Parallel()
	r := runFixture(t)
	boom := errors.New("provider down")
	model := scripted.New(
		scripted.Reply{ToolCalls: []llms.ToolCall{toolCall("shell", `{"cmd":"ls"}`)}},
		scripted.Reply{Err: boom},
	)
	exec := r.guard.Executor(agents.NewOpenAIFunctionsAgent(r.guard.Model(model), r.guard.Tools(&echoTool{name: "shell"})))
	_, err := r.guard.Run(context.Background(), exec, "chat-2", "list", middleware.WithEnvironments(seeds.EnvTelegram))
	if !errors.Is(err, boom) {
		t.Fatalf("error %v, want the provider's", err)
	}
	state, _ := r.store.LoadChat(context.Background(), "chat-2")
	if state.Moves != 0 || state.LastFired["ls_reminder"] != 1 {
		t.Errorf("chat state %+v: want the failed move uncounted and its firing written", state)
	}
}

// panicky panics when called.
type panicky struct{ echoTool }

func (p *panicky) Call(context.Context, string) (string, error) { panic("tool exploded") }

// A panic ends the move (its firings are written) and goes on up to the caller.
func TestRunPanic(t *testing.T) {
	t.Parallel()
	r := runFixture(t)
	model := scripted.New(scripted.Reply{ToolCalls: []llms.ToolCall{
		toolCall("shell", `{"cmd":"ls"}`), toolCall("boom", `{}`),
	}})
	ts := r.guard.Tools(&echoTool{name: "shell"}, &panicky{echoTool{name: "boom"}})
	exec := r.guard.Executor(agents.NewOpenAIFunctionsAgent(r.guard.Model(model), ts))
	func() {
		defer func() {
			if p := recover(); p != "tool exploded" {
				t.Errorf("recovered %v, want the tool's panic", p)
			}
		}()
		_, _ = r.guard.Run(context.Background(), exec, "chat-3", "go")
		t.Error("Run returned; want the panic")
	}()
	state, _ := r.store.LoadChat(context.Background(), "chat-3")
	if state.Moves != 0 || state.LastFired["ls_reminder"] != 1 {
		t.Errorf("chat state %+v: want the move ended, uncounted, with its firing", state)
	}
}

// Call takes the caller's stream func after the guard's: it replaces the handler's.
func TestCallOwnStream(t *testing.T) {
	t.Parallel()
	r := runFixture(t)
	model := scripted.New(scripted.Reply{Text: "plain answer"})
	exec := r.guard.Executor(agents.NewOpenAIFunctionsAgent(r.guard.Model(model), nil))
	var own strings.Builder
	out, err := r.guard.Call(context.Background(), exec, "chat-4", map[string]any{"input": "hi"},
		middleware.WithChainOptions(chainsStream(func(chunk []byte) { own.Write(chunk) })))
	if err != nil {
		t.Fatal(err)
	}
	if out["output"] != "plain answer" || own.String() != "plain answer" || len(r.rec.streamed()) != 0 {
		t.Errorf("output %v, own stream %q, handler stream %q", out, own.String(), r.rec.streamed())
	}
}

func chainsStream(f func([]byte)) chains.ChainCallOption {
	return chains.WithStreamingFunc(func(_ context.Context, chunk []byte) error {
		f(chunk)
		return nil
	})
}

// The README's "Wrap your agent" snippet is ExampleGuard_Run_production's body,
// verbatim: it compiles, checks its errors and runs in every test run.
func TestReadmeSnippet(t *testing.T) {
	t.Parallel()
	example, err := os.ReadFile("production_example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, body, ok := strings.Cut(string(example), "// ---- README: production ----\n")
	body, _, ok2 := strings.Cut(body, "\t// ---- end ----")
	if !ok || !ok2 {
		t.Fatal("markers not found in production_example_test.go")
	}
	var snippet strings.Builder
	for _, line := range strings.SplitAfter(body, "\n") {
		snippet.WriteString(strings.TrimPrefix(line, "\t"))
	}
	if !strings.Contains(string(readme), "```go\n"+snippet.String()+"```\n") {
		t.Errorf("README.md does not hold ExampleGuard_Run_production's body as a go block; it should read:\n%s", snippet.String())
	}
}

// chatStreams is a client handler that files each streamed chunk under the chat of the
// move its context carries: it shows Run streams in the move's own context.
type chatStreams struct {
	lcb.SimpleHandler
	mu sync.Mutex
	by map[string]string
}

func (c *chatStreams) HandleStreamingFunc(ctx context.Context, chunk []byte) {
	chat := "(outside a move)"
	if m := streamrules.MoveFrom(ctx); m != nil {
		chat = m.ChatID()
	}
	c.mu.Lock()
	c.by[chat] += string(chunk)
	c.mu.Unlock()
}

// Many chats at once through one guard and one executor: each Run owns its own move.
func TestRunManyChats(t *testing.T) {
	t.Parallel()
	store, err := streamrules.NewMemoryStore([]streamrules.Rule{imageRule()}, seeds.Environments()...)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := streamrules.New(context.Background(), store, &streamrules.Config{Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	client := &chatStreams{by: map[string]string{}}
	guard := newGuard(t, eng, &middleware.Config{Callbacks: client})
	// The model answers from the prompt: the chat's name is the user's message; first a
	// markdown image, after the interrupt the plain answer.
	model := scripted.NewFunc(func(c scripted.Call) scripted.Reply {
		var chat string
		interrupted := false
		for _, m := range c.Messages {
			text := messageText(m)
			if m.Role == llms.ChatMessageTypeHuman && strings.HasPrefix(text, "chat-") {
				chat = text
			}
			interrupted = interrupted || strings.Contains(text, "<system-interrupt")
		}
		if interrupted {
			return scripted.Reply{Text: chat + " ok"}
		}
		return scripted.Reply{Text: "![" + chat + "](x)"}
	})
	exec := guard.Executor(agents.NewOpenAIFunctionsAgent(guard.Model(model), nil))
	const chats = 32
	var wg sync.WaitGroup
	errs := make(chan error, chats)
	for i := range chats {
		wg.Add(1)
		go func() {
			defer wg.Done()
			chat := fmt.Sprintf("chat-%02d", i)
			out, err := guard.Run(context.Background(), exec, chat, chat, middleware.WithEnvironments(seeds.EnvTelegram))
			if err != nil || out != chat+" ok" {
				errs <- fmt.Errorf("%s: %q, %v", chat, out, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for i := range chats {
		chat := fmt.Sprintf("chat-%02d", i)
		if got := client.by[chat]; got != chat+" ok" {
			t.Errorf("%s streamed %q, want its own accepted answer only", chat, got)
		}
		st, _ := store.LoadChat(context.Background(), chat)
		if st.Moves != 1 || st.LastFired["telegram_markdown_image"] != 1 {
			t.Errorf("%s state %+v", chat, st)
		}
	}
	if len(client.by) != chats {
		t.Errorf("streams under %d keys, want %d: %v", len(client.by), chats, client.by)
	}
}

// Check names every part a guard does not wrap, for each stock agent, and nothing when
// all is wrapped.
func TestCheck(t *testing.T) {
	t.Parallel()
	r := runFixture(t)
	other := runFixture(t).guard
	llm := scripted.New()
	shell, web := &echoTool{name: "shell"}, &echoTool{name: "web"}
	const toolMsg = `middleware: tool "web" is not wrapped by this guard (Guard.Tools): soft rules never see its calls`
	const modelMsg = "middleware: the agent's model is not wrapped by this guard (Guard.Model): text rules never judge its answers"
	tests := []struct {
		name  string
		agent agents.Agent
		want  string
	}{
		{"functions, all wrapped", agents.NewOpenAIFunctionsAgent(r.guard.Model(llm), r.guard.Tools(shell, web)), ""},
		{"functions, already guarded", r.guard.Agent(agents.NewOpenAIFunctionsAgent(r.guard.Model(llm), r.guard.Tools(shell))), ""},
		{"functions, bare model and a bare tool", agents.NewOpenAIFunctionsAgent(llm, append(r.guard.Tools(shell), web)), toolMsg + "\n" + modelMsg},
		{"functions, another guard's model", agents.NewOpenAIFunctionsAgent(other.Model(llm), r.guard.Tools(shell)), modelMsg},
		{"mrkl, all wrapped", agents.NewOneShotAgent(r.guard.Model(llm), r.guard.Tools(shell)), ""},
		{"mrkl, bare model", agents.NewOneShotAgent(llm, r.guard.Tools(shell)), modelMsg},
		{"conversational, another guard's tool", agents.NewConversationalAgent(r.guard.Model(llm), append(r.guard.Tools(shell), other.Tool(web))), toolMsg},
	}
	for _, tt := range tests {
		err := r.guard.Check(tt.agent)
		if got := fmt.Sprint(err); (err == nil) != (tt.want == "") || (err != nil && got != tt.want) {
			t.Errorf("%s: Check = %v, want %q", tt.name, err, tt.want)
		}
	}
}
