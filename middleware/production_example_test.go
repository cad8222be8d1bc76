package middleware_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/tmc/langchaingo/agents"
	lcb "github.com/tmc/langchaingo/callbacks"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/memory"
	"github.com/tmc/langchaingo/tools"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/scripted"
	"github.com/streamrules/streamrules/metrics"
	"github.com/streamrules/streamrules/middleware"
	"github.com/streamrules/streamrules/replay"
	"github.com/streamrules/streamrules/rulesdb"
	"github.com/streamrules/streamrules/seeds"
	"github.com/streamrules/streamrules/statshttp"
)

// shellTool is one of your tools: it would run the command on your server.
type shellTool struct{}

func (shellTool) Name() string        { return "shell" }
func (shellTool) Description() string { return "runs a shell command" }
func (shellTool) Call(_ context.Context, in string) (string, error) {
	return "ran " + in, nil
}

// quietClient stands for your client's handler; the example prints the answers instead.
type quietClient struct{ lcb.SimpleHandler }

// The integration as a service runs it: the seeded rules in a store, the engine with
// Prometheus metrics, the guard with the client handler and a transcript, stats and
// metrics on the host's HTTP mux, and one Run per user message with the environments
// that hold and the message's variables (the seeded tail fix writes ↩ #{{message_id}}).
// The part between the markers is the README's "Wrap your agent" block: 24 lines beside
// the host's own agent (agent and exec, marked) and its message handler (the loop).
//
// A Telegram client asks for the free disk space (the reply lacks its tail: the fix
// appends it, no extra model call) and then to wipe a folder (the gate discards the
// response that declares rm -rf, and the replay declines). The transcript the guard
// wrote replays, against the same seeds, to exactly the stats the service serves.
func ExampleGuard_Run_production() {
	llm := scripted.New( // stands in for your provider, e.g. openai.New()
		scripted.Reply{ToolCalls: []llms.ToolCall{{Type: "function", FunctionCall: &llms.FunctionCall{Name: "shell", Arguments: `{"cmd":"df -h"}`}}}},
		scripted.Reply{Text: "12G free."},
		scripted.Reply{ToolCalls: []llms.ToolCall{{Type: "function", FunctionCall: &llms.FunctionCall{Name: "shell", Arguments: `{"cmd":"rm -rf ./logs"}`}}}},
		scripted.Reply{Text: "I won't delete files on this server without the owner's go-ahead.\n\n↩ #102"},
	)
	myTools := []tools.Tool{shellTool{}}
	clientHandler := quietClient{}
	ctx := context.Background()
	dsn := "sqlite::memory:"            // yours: os.Getenv(rulesdb.EnvDSN)
	transcriptFile := new(bytes.Buffer) // yours: a file opened with O_APPEND
	mux, reg := http.NewServeMux(), prometheus.NewRegistry()
	messages := []struct{ chatID, userText, messageID string }{
		{"tg-7", "How much disk is free?", "101"},
		{"tg-7", "Wipe the logs folder.", "102"},
	}

	// ---- README: production ----
	store, err := rulesdb.Open(ctx, dsn, &rulesdb.Config{Seed: seeds.MustDefault()}) // seeded once per database
	if err != nil {
		panic(err)
	}
	defer store.Close()
	col := metrics.NewCollector(&metrics.Config{StoreStats: func() metrics.StoreStats { return metrics.StoreStats(store.Stats()) }})
	eng, err := streamrules.New(ctx, store, col.Instrument(&streamrules.Config{ToolResultMaxChars: 20000}))
	if err != nil {
		panic(err)
	}
	defer eng.Close()
	guard, err := middleware.New(eng, &middleware.Config{Callbacks: clientHandler, Transcript: replay.NewRecorder(transcriptFile)})
	if err != nil {
		panic(err)
	}
	agent := agents.NewOpenAIFunctionsAgent(guard.Model(llm), guard.Tools(myTools...)) // your agent
	exec := guard.Executor(agent, agents.WithMemory(memory.NewConversationBuffer()))   // your agent
	reg.MustRegister(col)
	mux.Handle("/v1/stats", statshttp.Handler(eng))
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	for _, msg := range messages { // your handler of each user message
		out, err := guard.Run(ctx, exec, msg.chatID, msg.userText, // the environments that hold, the message's variables
			middleware.WithEnvironments(seeds.EnvTelegram, seeds.EnvClientOps),
			middleware.WithVars(map[string]string{"message_id": msg.messageID}))
		if err != nil {
			panic(err)
		}
		fmt.Printf("answer: %q\n", out) // already streamed to clientHandler
	}
	// ---- end ----

	// What the service serves, and what the transcript backtests to.
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/stats", nil))
	var live streamrules.Stats
	if err := json.Unmarshal(rec.Body.Bytes(), &live); err != nil {
		panic(err)
	}
	rep, err := replay.Run(ctx, seeds.MustDefault().Rules, []replay.Source{{Name: "transcript", R: transcriptFile}},
		&replay.Options{Environments: eng.Environments()}) // the names the engine took from its store
	if err != nil {
		panic(err)
	}
	backtest := map[string]int{}
	for _, r := range rep.Rules {
		backtest[r.Rule] = r.Fired
	}
	for _, st := range live.Rules {
		if st.Fired > 0 || backtest[st.Rule] > 0 {
			fmt.Printf("%s: live %d, backtest %d\n", st.Rule, st.Fired, backtest[st.Rule])
		}
	}
	rec = httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		if strings.HasPrefix(line, "streamrules_engine_answers_discarded_total ") {
			fmt.Println(line)
		}
	}
	// Output:
	// answer: "12G free.\n\n↩ #101"
	// answer: "I won't delete files on this server without the owner's go-ahead.\n\n↩ #102"
	// destructive_shell: live 1, backtest 1
	// local_shell_for_his_machine: live 1, backtest 1
	// telegram_reply_tail: live 1, backtest 1
	// streamrules_engine_answers_discarded_total 1
}
