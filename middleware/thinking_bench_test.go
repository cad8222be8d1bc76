package middleware_test

import (
	"context"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/llms"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/openaitest"
	"github.com/streamrules/streamrules/internal/scripted"
	"github.com/streamrules/streamrules/middleware"
)

// BenchmarkThinkingCut: LangChainGo's openai client streams about 4 KB of
// reasoning_content with a miss at 5% of it; the thinking rule cuts the stream and the
// replay answers. It reports how far past the miss the cut came (after-miss-B) and the
// share of the doomed reasoning never read (saved-%), from the firing's CutAtBytes.
//
//	go test ./middleware -run '^$' -bench ThinkingCut -benchtime 200x
func BenchmarkThinkingCut(b *testing.B) {
	bad, missAt := doomedThinking()
	good := scripted.Reply{Reasoning: "The picture shows a cat.", Text: "A cat.", Chunk: 6}
	var cutAt []int
	cfg := &streamrules.Config{OnFire: func(_ context.Context, f streamrules.Firing) {
		if f.Thinking && f.Early {
			cutAt = append(cutAt, f.CutAtBytes)
		}
	}}
	eng, guard := benchGuard(b, cfg, blindThinkingRule())
	srv := openaitest.NewFunc(b, func(req openaitest.Request) scripted.Reply {
		if req.N%2 == 0 {
			return bad
		}
		return good
	})
	llm := guard.Model(srv.LLM(b))
	b.ResetTimer()
	for b.Loop() {
		ctx, move := eng.BeginMove(context.Background(), "chat-bench", streamrules.EnvPicture)
		ctx = middleware.AgentTour(ctx, middleware.FormatToolCalling)
		resp, err := llm.GenerateContent(ctx, []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "picture?")},
			llms.WithStreamingFunc(func(context.Context, []byte) error { return nil }))
		if err = move.End(ctx, err); err != nil {
			b.Fatal(err)
		}
		if resp.Choices[0].Content != good.Text {
			b.Fatalf("answer %q", resp.Choices[0].Content)
		}
	}
	b.StopTimer()
	if len(cutAt) != b.N {
		b.Fatalf("%d cuts in %d tours", len(cutAt), b.N)
	}
	worst := 0
	for _, c := range cutAt {
		worst = max(worst, c)
	}
	b.ReportMetric(float64(worst-missAt), "after-miss-B")
	b.ReportMetric(100*(1-float64(worst)/float64(len(bad.Reasoning))), "saved-%")
	b.ReportMetric(float64(len(bad.Reasoning)), "reasoning-B")
	if !strings.Contains(bad.Reasoning[:missAt], "can't see the image") {
		b.Fatalf("the miss is not where it is said to be")
	}
}
