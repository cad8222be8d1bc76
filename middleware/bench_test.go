package middleware_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/scripted"
	"github.com/streamrules/streamrules/middleware"
	"github.com/streamrules/streamrules/seeds"
)

type quietTool struct{ name string }

func (t quietTool) Name() string                                      { return t.name }
func (t quietTool) Description() string                               { return t.name }
func (t quietTool) Call(_ context.Context, in string) (string, error) { return "ok " + in, nil }

// benchRules returns n rules that never fire on the bench model's traffic: half on the
// tool it calls, half on the answer.
func benchRules(n int) []streamrules.Rule {
	var rules []streamrules.Rule
	for i := 0; i < n; i++ {
		if i%2 == 0 {
			rules = append(rules, softRule(fmt.Sprintf("soft_%03d", i), "shell", fmt.Sprintf(`(?i)\brm\s+-rf\s+/%d\b`, i), "never"))
		} else {
			rules = append(rules, textRule(fmt.Sprintf("text_%03d", i), fmt.Sprintf(`(?i)\b(forbidden|banned)_word_%d\b`, i), "never", "telegram"))
		}
	}
	return rules
}

// BenchmarkMove runs one whole move (three tool calls and a streamed answer) through a
// stock LangChainGo executor, bare and wrapped with 100 rules that do not fire.
// Read the ratio wrapped/bare from the same run.
func BenchmarkMove(b *testing.B) {
	answer := strings.Repeat("All three listings are done. ", 20)
	stream := chains.WithStreamingFunc(func(context.Context, []byte) error { return nil })
	run := func(b *testing.B, exec *agents.Executor, begin func(context.Context) (context.Context, *streamrules.Move)) {
		ctx := context.Background()
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			mctx, move := ctx, (*streamrules.Move)(nil)
			if begin != nil {
				mctx, move = begin(ctx)
			}
			_, err := chains.Call(mctx, exec, map[string]any{"input": "list three dirs"}, stream)
			if move != nil {
				err = move.End(mctx, err)
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	model := &scripted.Bench{Calls: 3, Answer: answer, Chunk: 16}
	b.Run("bare", func(b *testing.B) {
		a := agents.NewOpenAIFunctionsAgent(model, []tools.Tool{quietTool{"shell"}})
		run(b, agents.NewExecutor(a), nil)
	})
	// The bare executor again, in a process that also holds the compiled 100 rules: it
	// separates the per-move cost from the cost of a larger live heap, which in a
	// microbenchmark's tiny heap shows up as garbage-collector work.
	b.Run("bare_engine_loaded", func(b *testing.B) {
		store, err := streamrules.NewMemoryStore(benchRules(100), seeds.Environments()...)
		if err != nil {
			b.Fatal(err)
		}
		eng, err := streamrules.New(context.Background(), store, &streamrules.Config{Logger: discardLogger()})
		if err != nil {
			b.Fatal(err)
		}
		a := agents.NewOpenAIFunctionsAgent(model, []tools.Tool{quietTool{"shell"}})
		run(b, agents.NewExecutor(a), nil)
		runtime.KeepAlive(eng)
	})
	b.Run("wrapped", func(b *testing.B) {
		store, err := streamrules.NewMemoryStore(benchRules(100), seeds.Environments()...)
		if err != nil {
			b.Fatal(err)
		}
		eng, err := streamrules.New(context.Background(), store, &streamrules.Config{Logger: discardLogger()})
		if err != nil {
			b.Fatal(err)
		}
		g := newGuard(b, eng, nil)
		a := g.Agent(agents.NewOpenAIFunctionsAgent(g.Model(model), g.Tools(quietTool{"shell"})))
		run(b, agents.NewExecutor(a), func(ctx context.Context) (context.Context, *streamrules.Move) {
			return eng.BeginMove(ctx, "bench-chat", seeds.EnvTelegram)
		})
	})
}

// BenchmarkStreamChunk measures the per-chunk cost of a 4 KB answer in 4-byte chunks:
// the bare model, the guarded model with no armed rule (pass-through), and with held
// speech. ns/chunk = ns/op / 1024.
func BenchmarkStreamChunk(b *testing.B) {
	answer := strings.Repeat("abcd", 1024)
	const chunks = 1024
	model := &scripted.Bench{Answer: answer, Chunk: 4}
	store, err := streamrules.NewMemoryStore(benchRules(100), seeds.Environments()...)
	if err != nil {
		b.Fatal(err)
	}
	eng, err := streamrules.New(context.Background(), store, &streamrules.Config{Logger: discardLogger()})
	if err != nil {
		b.Fatal(err)
	}
	guarded := newGuard(b, eng, nil).Model(model)
	msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hi")}
	sink := llms.WithStreamingFunc(func(context.Context, []byte) error { return nil })
	bench := func(llm llms.Model, env ...string) func(b *testing.B) {
		return func(b *testing.B) {
			ctx, _ := eng.BeginMove(context.Background(), "bench-stream", env...)
			ctx = middleware.AgentTour(ctx, middleware.FormatToolCalling)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := llm.GenerateContent(ctx, msgs, sink); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/chunks, "ns/chunk")
		}
	}
	b.Run("bare", bench(model))
	b.Run("passthrough", bench(guarded))             // text rules armed only under telegram
	b.Run("held", bench(guarded, seeds.EnvTelegram)) // armed: every chunk held
}
