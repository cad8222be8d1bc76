package middleware_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/tmc/langchaingo/agents"
	lcb "github.com/tmc/langchaingo/callbacks"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/memory"
	"github.com/tmc/langchaingo/schema"
	"github.com/tmc/langchaingo/tools"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/clientview"
	"github.com/streamrules/streamrules/internal/testlog"
	"github.com/streamrules/streamrules/middleware"
	"github.com/streamrules/streamrules/seeds"
)

// recorder is the client's side: every callback event it receives, as text lines.
type recorder struct {
	lcb.SimpleHandler
	mu     sync.Mutex
	events []string
	chunks []string
}

func (r *recorder) add(format string, args ...any) {
	r.mu.Lock()
	r.events = append(r.events, fmt.Sprintf(format, args...))
	r.mu.Unlock()
}

func (r *recorder) HandleToolStart(_ context.Context, in string) { r.add("tool start: %s", in) }
func (r *recorder) HandleToolEnd(_ context.Context, out string)  { r.add("tool end: %s", out) }
func (r *recorder) HandleLLMGenerateContentStart(_ context.Context, ms []llms.MessageContent) {
	for _, m := range ms {
		for _, p := range m.Parts {
			r.add("llm start %s: %v", m.Role, p)
		}
	}
}
func (r *recorder) HandleLLMGenerateContentEnd(_ context.Context, res *llms.ContentResponse) {
	for _, c := range res.Choices {
		r.add("llm end: %s %v", c.Content, c.ToolCalls)
	}
}
func (r *recorder) HandleChainStart(_ context.Context, in map[string]any) {
	r.add("chain start: %v", in)
}
func (r *recorder) HandleChainEnd(_ context.Context, out map[string]any) { r.add("chain end: %v", out) }
func (r *recorder) HandleAgentAction(_ context.Context, a schema.AgentAction) {
	r.add("agent action: %s %s %s", a.Tool, a.ToolInput, a.Log)
}
func (r *recorder) HandleAgentFinish(_ context.Context, f schema.AgentFinish) {
	r.add("agent finish: %v", f.ReturnValues)
}
func (r *recorder) HandleStreamingFunc(_ context.Context, chunk []byte) {
	r.mu.Lock()
	r.chunks = append(r.chunks, string(chunk))
	r.events = append(r.events, "chunk: "+string(chunk))
	r.mu.Unlock()
}

func (r *recorder) all() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.events, "\n")
}

func (r *recorder) streamed() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.chunks...)
}

// echoTool is a real tool: it records its inputs and answers with a fixed function of them.
type echoTool struct {
	name string
	out  func(input string) string
	mu   sync.Mutex
	ins  []string
}

func (t *echoTool) Name() string        { return t.name }
func (t *echoTool) Description() string { return "runs " + t.name }
func (t *echoTool) Call(_ context.Context, input string) (string, error) {
	t.mu.Lock()
	t.ins = append(t.ins, input)
	t.mu.Unlock()
	if t.out != nil {
		return t.out(input), nil
	}
	return "output of " + input, nil
}

func (t *echoTool) inputs() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.ins...)
}

// rig is one engine, one guard and a client recorder.
type rig struct {
	t     *testing.T
	store *streamrules.MemoryStore
	eng   *streamrules.Engine
	guard *middleware.Guard
	rec   *recorder
	clean lcb.Handler
	logs  *testlog.Buffer // the engine's log
}

// newGuard is middleware.New for a test: an error fails it.
func newGuard(tb testing.TB, eng *streamrules.Engine, cfg *middleware.Config) *middleware.Guard {
	tb.Helper()
	g, err := middleware.New(eng, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return g
}

func newRig(t *testing.T, cfg *streamrules.Config, rules ...streamrules.Rule) *rig {
	t.Helper()
	if cfg == nil {
		cfg = &streamrules.Config{}
	}
	logs := &testlog.Buffer{}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(logs, nil))
	}
	store, err := streamrules.NewMemoryStore(rules, seeds.Environments()...)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := streamrules.New(context.Background(), store, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(eng.Close)
	rec := &recorder{}
	clean := clientview.Clean(rec)
	return &rig{t: t, store: store, eng: eng, rec: rec, clean: clean, logs: logs,
		guard: newGuard(t, eng, &middleware.Config{Callbacks: clean})}
}

type agentKind string

const (
	kindMRKL      agentKind = "mrkl"
	kindFunctions agentKind = "functions"
)

// executor builds a stock LangChainGo executor around the wrapped parts, with memory.
func (r *rig) executor(kind agentKind, llm llms.Model, ts ...tools.Tool) (*agents.Executor, *memory.ConversationBuffer) {
	mem := memory.NewConversationBuffer(memory.WithInputKey("input"), memory.WithOutputKey("output"))
	wrapped := r.guard.Tools(ts...)
	var a agents.Agent
	switch kind {
	case kindMRKL:
		a = agents.NewOneShotAgent(r.guard.Model(llm), wrapped, agents.WithCallbacksHandler(r.clean))
	default:
		a = agents.NewOpenAIFunctionsAgent(r.guard.Model(llm), wrapped, agents.WithCallbacksHandler(r.clean))
	}
	return agents.NewExecutor(r.guard.Agent(a), agents.WithMemory(mem), agents.WithReturnIntermediateSteps(),
		agents.WithCallbacksHandler(r.clean)), mem
}

// run plays one move and returns the output and intermediate steps.
func (r *rig) run(ctx context.Context, exec *agents.Executor, chat, input string, env ...string) (string, []schema.AgentStep, error) {
	ctx, move := r.eng.BeginMove(ctx, chat, env...)
	// The client's stream, as a bot passes it. (OpenAIFunctionsAgent overrides its own
	// handler-based stream func with the chain options' one, so this is the reliable way.)
	stream := chains.WithStreamingFunc(func(ctx context.Context, chunk []byte) error {
		r.rec.HandleStreamingFunc(ctx, chunk)
		return nil
	})
	out, err := chains.Call(ctx, exec, map[string]any{"input": input}, stream)
	err = move.End(ctx, err)
	if err != nil {
		return "", nil, err
	}
	steps, _ := out["intermediateSteps"].([]schema.AgentStep)
	s, _ := out["output"].(string)
	return s, steps, nil
}

func memoryText(t *testing.T, mem *memory.ConversationBuffer) string {
	t.Helper()
	msgs, err := mem.ChatHistory.Messages(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString(string(m.GetType()) + ": " + m.GetContent() + "\n")
	}
	return b.String()
}

func softRule(name, tool, cond, text string) streamrules.Rule {
	return streamrules.Rule{Name: name, Scope: "tool:" + tool, Condition: cond, Text: text}
}

func textRule(name, cond, text string, when ...string) streamrules.Rule {
	return streamrules.Rule{Name: name, Scope: "text", Condition: cond, Text: text, When: when}
}

// assertClean fails if the client's view holds an engine block.
func assertClean(t *testing.T, view string, forbidden ...string) {
	t.Helper()
	for _, bad := range append([]string{"<system-reminder", "<system-interrupt", "system-reminder", "system-interrupt"}, forbidden...) {
		if strings.Contains(view, bad) {
			t.Errorf("client view holds %q:\n%s", bad, view)
		}
	}
}

func toolCall(name, args string) llms.ToolCall {
	return llms.ToolCall{Type: "function", FunctionCall: &llms.FunctionCall{Name: name, Arguments: args}}
}

// agentsFunctions builds a functions-agent executor with some tools left unwrapped.
func agentsFunctions(r *rig, llm llms.Model, unwrapped []tools.Tool, ts ...tools.Tool) *agents.Executor {
	all := append(r.guard.Tools(ts...), unwrapped...)
	a := agents.NewOpenAIFunctionsAgent(r.guard.Model(llm), all)
	return agents.NewExecutor(r.guard.Agent(a), agents.WithReturnIntermediateSteps(), agents.WithMaxIterations(10))
}

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
