package middleware_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/scripted"
	"github.com/streamrules/streamrules/middleware"
	"github.com/streamrules/streamrules/seeds"
)

// A stock OpenAIFunctionsAgent wrapped in three lines. The scripted model stands in for
// a provider: first it sends a markdown image to Telegram (discarded unseen, the tour is
// replayed with an interrupt), then it answers properly.
func ExampleGuard() {
	ctx := context.Background()
	store, _ := streamrules.NewMemoryStore([]streamrules.Rule{{
		Name: "telegram_markdown_image", Scope: "text", Condition: `!\[[^\]]*\]\([^)]*\)`,
		When: []string{"telegram"}, Text: "Telegram does not render markdown images.",
	}}, seeds.Environments()...)

	eng, _ := streamrules.New(ctx, store, &streamrules.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	model := scripted.New(
		scripted.Reply{Text: "Here: ![cat](https://x/cat.jpg)"},
		scripted.Reply{Text: "Here: https://x/cat.jpg"},
	)

	guard, err := middleware.New(eng, nil)
	if err != nil {
		panic(err)
	}
	agent := guard.Agent(agents.NewOpenAIFunctionsAgent(guard.Model(model), guard.Tools()))
	exec := agents.NewExecutor(agent)

	ctx, move := eng.BeginMove(ctx, "chat-1", seeds.EnvTelegram)
	out, err := chains.Run(ctx, exec, "send me the cat")
	err = move.End(ctx, err)

	fmt.Println("client saw:", out, err)
	retry := model.Calls()[1].Messages
	for _, m := range retry[len(retry)-2:] {
		fmt.Printf("model was told (%s): %s\n", m.Role, m.Parts[0].(llms.TextContent).Text)
	}
	// Output:
	// client saw: Here: https://x/cat.jpg <nil>
	// model was told (ai): Here: ![cat](https://x/cat.jpg)
	// model was told (human): <system-interrupt reason="rule_violation" rule="telegram_markdown_image">Telegram does not render markdown images.
	// That reply was discarded and NOBODY saw it. Write the reply again, following the rule.</system-interrupt>
}

// What a text rule checks, per agent type.
func ExampleAnswerTarget() {
	react := &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: "Thought: done\nFinal Answer: 42"}}}
	step := &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: "Thought: look\nAction: shell\nAction Input: ls"}}}
	fmt.Printf("%q\n", middleware.AnswerTarget(middleware.FormatMRKL, react))
	fmt.Printf("%q\n", middleware.AnswerTarget(middleware.FormatMRKL, step))
	fmt.Printf("%q\n", middleware.AnswerTarget(middleware.FormatToolCalling, react))
	// Output:
	// "42"
	// ""
	// "Thought: done\nFinal Answer: 42"
}
