package middleware_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/openaitest"
	"github.com/streamrules/streamrules/internal/scripted"
	"github.com/streamrules/streamrules/middleware"
	"github.com/streamrules/streamrules/seeds"
)

// BenchmarkDiscardToReplay measures the gap between a gate's discarded response and its
// replay's request, at the server, through LangChainGo's real openai client with the
// seeded rules: by hand (eng.BeginMove, SetVar, chains.Run, End) and through Guard.Run
// (WithVars), on a move of a fresh engine (cold: lazy DFAs and plans made on first use)
// and on the next one (warm). gap-ns/op is the median-free mean over b.N moves.
func BenchmarkDiscardToReplay(b *testing.B) {
	for _, path := range []string{"run", "manual"} {
		for _, warm := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/warm=%v", path, warm), func(b *testing.B) {
				var total time.Duration
				for i := 0; i < b.N; i++ {
					total += discardGap(b, path == "manual", warm)
				}
				b.ReportMetric(float64(total.Nanoseconds())/float64(b.N), "gap-ns/op")
			})
		}
	}
}

// discardGap plays one gated move (two when warm, timing the second) on a fresh engine.
func discardGap(b *testing.B, manual, warm bool) time.Duration {
	store, err := streamrules.NewMemoryStore(seeds.MustDefault().Rules, seeds.Environments()...)
	if err != nil {
		b.Fatal(err)
	}
	eng, err := streamrules.New(context.Background(), store, &streamrules.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	defer eng.Close()
	var mu sync.Mutex
	var at []time.Time
	srv := openaitest.NewFunc(b, func(req openaitest.Request) scripted.Reply {
		mu.Lock()
		at = append(at, time.Now())
		mu.Unlock()
		if req.N%2 == 0 {
			return scripted.Reply{ToolCalls: []llms.ToolCall{toolCall("shell", `{"cmd":"rm -rf ./logs"}`)}}
		}
		return scripted.Reply{Text: "I won't.\n\n↩ #5", Chunk: 4}
	})
	guard := newGuard(b, eng, nil)
	exec := guard.Executor(agents.NewOpenAIFunctionsAgent(guard.Model(srv.LLM(b)), guard.Tools(&echoTool{name: "shell"})))
	stream := func(context.Context, []byte) error { return nil }
	env := []string{seeds.EnvTelegram, seeds.EnvClientOps}
	moves := 1
	if warm {
		moves = 2
	}
	for n := 0; n < moves; n++ {
		chat := fmt.Sprintf("chat-%d", n)
		if manual {
			ctx, move := eng.BeginMove(context.Background(), chat, env...)
			move.SetVar("message_id", "5")
			_, err := chains.Run(ctx, exec, "wipe logs", chains.WithStreamingFunc(stream))
			if err := move.End(ctx, err); err != nil {
				b.Fatal(err)
			}
		} else if _, err := guard.Run(context.Background(), exec, chat, "wipe logs", middleware.WithEnvironments(env...),
			middleware.WithVars(map[string]string{"message_id": "5"}), middleware.WithStreamingFunc(stream)); err != nil {
			b.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(at) != 2*moves {
		b.Fatalf("%d requests for %d gated moves", len(at), moves)
	}
	return at[2*moves-1].Sub(at[2*moves-2])
}
