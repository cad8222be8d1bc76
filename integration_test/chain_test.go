package integration_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/memory"
	"github.com/tmc/langchaingo/tools"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/openaitest"
	"github.com/streamrules/streamrules/internal/pgtest"
	"github.com/streamrules/streamrules/internal/scripted"
	"github.com/streamrules/streamrules/middleware"
	"github.com/streamrules/streamrules/rulesdb"
	"github.com/streamrules/streamrules/ruletools"
	"github.com/streamrules/streamrules/seeds"
	"github.com/streamrules/streamrules/statshttp"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

type shellTool struct {
	mu  sync.Mutex
	ins []string
}

func (s *shellTool) Name() string        { return "shell" }
func (s *shellTool) Description() string { return "runs a command on the agent's host" }
func (s *shellTool) Call(_ context.Context, in string) (string, error) {
	s.mu.Lock()
	s.ins = append(s.ins, in)
	s.mu.Unlock()
	return "12G free", nil
}

func call(name, arg string) llms.ToolCall {
	b, _ := json.Marshal(map[string]string{"__arg1": arg})
	return llms.ToolCall{Type: "function", FunctionCall: &llms.FunctionCall{Name: name, Arguments: string(b)}}
}

// chain is one agent process: store, engine, guard and a stock executor on the real
// openai client.
type chain struct {
	store *rulesdb.Store
	eng   *streamrules.Engine
	srv   *openaitest.Server
	exec  *agents.Executor
	mem   *memory.ConversationBuffer
	shell *shellTool
}

func newChain(t *testing.T, dsn string, replies ...scripted.Reply) *chain {
	t.Helper()
	ctx := context.Background()
	set, err := seeds.Default()
	if err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	store, err := rulesdb.Open(ctx, dsn, &rulesdb.Config{Seed: &set, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	eng, err := streamrules.New(ctx, store, &streamrules.Config{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(eng.Close)
	c := &chain{store: store, eng: eng, srv: openaitest.New(t, replies...), shell: &shellTool{}}
	guard, err := middleware.New(eng, nil)
	if err != nil {
		t.Fatal(err)
	}
	ts := append(guard.Tools(c.shell), ruletools.New(store, eng)...)
	agent := guard.Agent(agents.NewOpenAIFunctionsAgent(guard.Model(c.srv.LLM(t)), ts))
	c.mem = memory.NewConversationBuffer()
	c.exec = agents.NewExecutor(agent, agents.WithMemory(c.mem))
	return c
}

// move plays one user message and returns the output and what the client streamed.
func (c *chain) move(t *testing.T, chat, input string, env ...string) (string, string) {
	t.Helper()
	var streamed strings.Builder
	ctx, move := c.eng.BeginMove(context.Background(), chat, env...)
	out, err := chains.Run(ctx, c.exec, input, chains.WithStreamingFunc(func(_ context.Context, b []byte) error {
		streamed.Write(b)
		return nil
	}))
	if err = move.End(ctx, err); err != nil {
		t.Fatal(err)
	}
	return out, streamed.String()
}

// TestSeededRulesOnPostgres: a full LangChainGo agent on PostgreSQL. A seeded hard rule
// rewrites the move, a seeded soft rule reminds, and the stats endpoint counts both.
func TestSeededRulesOnPostgres(t *testing.T) {
	t.Parallel()
	// A bare emoji has no deterministic fix: the seeded rule replays the tour. (A markdown
	// image is repaired in place since seed version 2: TestFixOnPostgres.)
	bad := "👍\n↩ #7"
	good := "This server has 12G free: https://x/disk.png\n↩ #7"
	c := newChain(t, pgtest.DSN(t),
		scripted.Reply{Text: bad, Chunk: 4},                                  // discarded: telegram_react_not_emoji
		scripted.Reply{ToolCalls: []llms.ToolCall{call("shell", "df -h /")}}, // reminded: local_shell_for_his_machine
		scripted.Reply{Text: good, Chunk: 4},
	)
	out, streamed := c.move(t, "tg-7", "how much disk is free?", streamrules.EnvTelegram, streamrules.EnvClientOps)
	if out != good {
		t.Fatalf("output %q", out)
	}
	if strings.Contains(streamed, "👍") || !strings.Contains(streamed, good) {
		t.Errorf("client stream %q", streamed)
	}
	reqs := c.srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	retry := reqs[1].Body.Messages
	if n := len(retry); retry[n-2].Content.String() != bad ||
		!strings.HasPrefix(retry[n-1].Content.String(), `<system-interrupt reason="rule_violation" rule="telegram_react_not_emoji">`) {
		t.Errorf("retry tail: %+v", retry[len(retry)-2:])
	}
	var toolResult string
	for _, m := range reqs[2].Body.Messages {
		if m.Role == "tool" {
			toolResult = m.Content.String()
		}
	}
	if !strings.HasPrefix(toolResult, `<system-reminder rule="local_shell_for_his_machine">`) || !strings.HasSuffix(toolResult, "\n12G free") {
		t.Errorf("tool result in the prompt: %q", toolResult)
	}
	hist, _ := c.mem.ChatHistory.Messages(context.Background())
	for _, m := range hist {
		if strings.Contains(m.GetContent(), "system-") || strings.Contains(m.GetContent(), "👍") {
			t.Errorf("memory holds %q", m.GetContent())
		}
	}

	// The database holds the move and its firings.
	st, err := c.store.LoadChat(context.Background(), "tg-7")
	if err != nil || st.Moves != 1 || st.LastFired["telegram_react_not_emoji"] != 1 || st.LastFired["local_shell_for_his_machine"] != 1 {
		t.Errorf("chat state %+v %v", st, err)
	}
	firings, err := c.store.Firings(context.Background(), "tg-7")
	if err != nil || len(firings) != 2 {
		t.Fatalf("firings %+v %v", firings, err)
	}

	// GET /v1/stats counts them, every seeded rule listed, zero included.
	mux := http.NewServeMux()
	mux.Handle("/v1/stats", statshttp.Handler(c.eng))
	api := httptest.NewServer(mux)
	defer api.Close()
	resp, err := http.Get(api.URL + "/v1/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("content type %q", ct)
	}
	var stats streamrules.Stats
	if err := json.NewDecoder(resp.Body).Decode(&stats); err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{
		"write_diff_over_write_file": 0, "local_shell_for_his_machine": 1, "telegram_markdown_image": 0,
		"telegram_reply_tail": 0, "look_before_refusing": 0, "look_before_refusing_thinking": 0, "telegram_react_not_emoji": 1, "destructive_shell": 0,
		"unbacked_tool_claim": 0, "verify_before_done": 0,
	}
	if len(stats.Rules) != len(want) {
		t.Fatalf("stats %+v", stats)
	}
	for _, r := range stats.Rules {
		if n, ok := want[r.Rule]; !ok || n != r.Fired {
			t.Errorf("stats %s = %d, want %d", r.Rule, r.Fired, n)
		}
	}
}

// TestMasterEditsRulesThroughTheAgent: the master disables a seeded rule from the chat with
// the CRUD tool; a client cannot; the next move runs without it, in a second process too.
func TestMasterEditsRulesThroughTheAgent(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	edit := llms.ToolCall{Type: "function", FunctionCall: &llms.FunctionCall{
		Name: "stream_rule_edit", Arguments: `{"__arg1":"{\"name\":\"telegram_reply_tail\",\"enabled\":false}"}`}}
	c := newChain(t, dsn,
		scripted.Reply{ToolCalls: []llms.ToolCall{edit}}, // a client tries: refused
		scripted.Reply{Text: "I may not.\n↩ #1"},
		scripted.Reply{ToolCalls: []llms.ToolCall{edit}}, // the master does it
		scripted.Reply{Text: "Done, the tail rule is off.\n↩ #2"},
		scripted.Reply{Text: "no tail now"}, // accepted: the rule is off
	)
	other := newChain(t, dsn, scripted.Reply{Text: "no tail here either"})
	// The second process learns of the edit by NOTIFY, on the store's goroutine. Its
	// engine subscribed first, so when this subscriber is called that engine has reloaded:
	// wait on that, not on time.
	reloaded := make(chan struct{}, 1)
	stop := other.store.Subscribe(func() {
		select {
		case reloaded <- struct{}{}:
		default:
		}
	})
	defer stop()

	c.move(t, "tg-1", "turn off the tail rule", streamrules.EnvTelegram, streamrules.EnvClientOps)
	refusal := toolMessage(c.srv.Requests()[1])
	if !strings.Contains(refusal, `"ok":false`) || !strings.Contains(refusal, "master") {
		t.Fatalf("a client edited the rules: %s", refusal)
	}
	c.move(t, "tg-1", "turn off the tail rule", streamrules.EnvTelegram, streamrules.EnvMaster)
	if got := toolMessage(c.srv.Requests()[3]); !strings.Contains(got, `"ok":true`) {
		t.Fatalf("the master's edit failed: %s", got)
	}
	rule, err := c.store.GetRule(context.Background(), "telegram_reply_tail")
	if err != nil || !rule.Disabled {
		t.Fatalf("rule in the database: %+v %v", rule, err)
	}
	if out, _ := c.move(t, "tg-1", "hi", streamrules.EnvTelegram); out != "no tail now" {
		t.Errorf("output %q: the disabled rule still fired", out)
	}
	// Another process on the same database follows without a restart (NOTIFY).
	deadline := time.After(30 * time.Second)
	for loaded(other.eng, "telegram_reply_tail") {
		select {
		case <-reloaded:
		case <-deadline:
			t.Fatal("the second process did not reload within 30s")
		}
	}
	if out, _ := other.move(t, "tg-2", "hi", streamrules.EnvTelegram); out != "no tail here either" {
		t.Errorf("second process: output %q", out)
	}
}

func loaded(eng *streamrules.Engine, name string) bool {
	for _, r := range eng.Rules() {
		if r.Name == name {
			return true
		}
	}
	return false
}

func toolMessage(req openaitest.Request) string {
	for _, m := range req.Body.Messages {
		if m.Role == "tool" {
			return m.Content.String()
		}
	}
	return ""
}

var _ tools.Tool = (*shellTool)(nil)
