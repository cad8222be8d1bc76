package middleware_test

import (
	"context"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/agents"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/scripted"
	"github.com/streamrules/streamrules/middleware"
	"github.com/streamrules/streamrules/seeds"
)

// BenchmarkRunUntraced plays one whole move through Guard.Run with no tracer set
// (Config.Tracer nil): its allocs/op are the ones of the guard before tracing existed.
func BenchmarkRunUntraced(b *testing.B) {
	store, err := streamrules.NewMemoryStore(benchRules(100), seeds.Environments()...)
	if err != nil {
		b.Fatal(err)
	}
	eng, err := streamrules.New(context.Background(), store, &streamrules.Config{Logger: discardLogger()})
	if err != nil {
		b.Fatal(err)
	}
	defer eng.Close()
	g := newGuard(b, eng, nil)
	model := &scripted.Bench{Calls: 3, Answer: strings.Repeat("All three listings are done. ", 20), Chunk: 16}
	exec := g.Executor(agents.NewOpenAIFunctionsAgent(g.Model(model), g.Tools(quietTool{"shell"})))
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := g.Run(ctx, exec, "bench-chat", "list three dirs", middleware.WithEnvironments(seeds.EnvTelegram)); err != nil {
			b.Fatal(err)
		}
	}
}
