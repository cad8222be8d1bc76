package middleware_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/tmc/langchaingo/agents"
	lcb "github.com/tmc/langchaingo/callbacks"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/memory"
	"github.com/tmc/langchaingo/tools"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/scripted"
	"github.com/streamrules/streamrules/middleware"
	"github.com/streamrules/streamrules/rulesdb"
	"github.com/streamrules/streamrules/seeds"
)

// client stands for your client's handler: what it prints is what your user would see.
type client struct{ lcb.SimpleHandler }

func (client) HandleToolEnd(_ context.Context, out string) { fmt.Println("client: tool said", out) }
func (client) HandleStreamingFunc(_ context.Context, chunk []byte) {
	fmt.Printf("client: streamed %q\n", chunk)
}

// diskTool is one of your tools.
type diskTool struct{}

func (diskTool) Name() string                                 { return "disk_free" }
func (diskTool) Description() string                          { return "free disk space" }
func (diskTool) Call(context.Context, string) (string, error) { return "12G", nil }

// The smallest integration: the seeded rules and one of your own, one client handler given once, one call per user message. The
// scripted model stands in for your provider: its first answer shouts, is discarded
// unseen, and the tour is played again. (The corrected answer streams as it becomes
// final: the rule fired and is silent for the rest of the move; two seeded rules with no
// `when` are armed, but their context folds them away in this tour, so the release lets
// the first chunk through at once and the rest with the accepted answer.)
func ExampleGuard_Run() {
	llm := scripted.New(
		scripted.Reply{ToolCalls: []llms.ToolCall{{Type: "function", FunctionCall: &llms.FunctionCall{Name: "disk_free", Arguments: "{}"}}}},
		scripted.Reply{Text: "12G free!!!"},
		scripted.Reply{Text: "12G free."},
	)
	myTools := []tools.Tool{diskTool{}}
	clientHandler := client{}
	chatID, userText := "chat-42", "How much disk is free?"
	ctx := context.Background()
	dsn := "sqlite::memory:" // yours: os.Getenv(rulesdb.EnvDSN): postgres://…, sqlite:PATH, or empty for a file

	store, err := rulesdb.Open(ctx, dsn, &rulesdb.Config{Seed: seeds.MustDefault()}) // the seeded rules, once per database
	if err != nil {
		panic(err)
	}
	defer store.Close()
	if _, err := store.CreateRule(ctx, streamrules.Rule{ // a rule of your own, once per database
		Name: "calm_answers", Scope: "text", Condition: `!!`,
		Text: "Answer calmly: no exclamation marks.",
	}); err != nil && !errors.Is(err, streamrules.ErrExists) {
		panic(err)
	}
	eng, err := streamrules.New(ctx, store, &streamrules.Config{ToolResultMaxChars: 20000})
	if err != nil {
		panic(err)
	}
	defer eng.Close()
	guard, err := middleware.New(eng, &middleware.Config{Callbacks: clientHandler}) // the one place for your handler
	if err != nil {
		panic(err)
	}
	agent := agents.NewOpenAIFunctionsAgent(guard.Model(llm), guard.Tools(myTools...))
	exec := guard.Executor(agent, agents.WithMemory(memory.NewConversationBuffer()))

	// per user message (one "move"): the chat's ID, and with WithEnvironments the
	// environments that hold now (none here: only rules without `when` are armed)
	out, err := guard.Run(ctx, exec, chatID, userText)
	if err != nil {
		panic(err)
	}
	fmt.Println("answer:", out)
	// Output:
	// client: tool said 12G
	// client: streamed "12G "
	// client: streamed "free."
	// answer: 12G free.
}
