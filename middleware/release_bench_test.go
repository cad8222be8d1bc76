package middleware_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/tmc/langchaingo/llms"

	"github.com/streamrules/streamrules/internal/openaitest"
	"github.com/streamrules/streamrules/internal/scripted"
	"github.com/streamrules/streamrules/middleware"
	"github.com/streamrules/streamrules/seeds"
)

// firstChunkClock sits between the guard and the provider and notes when the
// provider's first chunk of a call came.
type firstChunkClock struct {
	llms.Model
	mu    sync.Mutex
	first time.Time
}

func (c *firstChunkClock) GenerateContent(ctx context.Context, ms []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error) {
	var opts llms.CallOptions
	for _, o := range options {
		o(&opts)
	}
	if f := opts.StreamingFunc; f != nil {
		options = append(options, llms.WithStreamingFunc(func(ctx context.Context, chunk []byte) error {
			c.mu.Lock()
			if c.first.IsZero() {
				c.first = time.Now()
			}
			c.mu.Unlock()
			return f(ctx, chunk)
		}))
	}
	return c.Model.GenerateContent(ctx, ms, options...)
}

// BenchmarkFirstVisible: time from the provider's first chunk to the client's first
// chunk, for the compliant 2 KB Telegram reply of TestReleaseCompliantStreams streamed by
// LangChainGo's openai client from a local server at 1 ms a chunk (8 bytes), the nine
// seeded rules loaded, in one run: "plain" (no environment, the move made its speech:
// the two context rules are folded away and nothing can fire, so speech goes as it
// comes), "plain-claim" (no environment, no speech made: unbacked_tool_claim is live and
// its repair streams), "armed" (a Telegram chat, no picture, speech made: the image,
// tail and bare-emoji rules armed, speech released as it becomes final), "client" (a
// client's Telegram chat: telegram and client_ops, speech made: the same text rules and
// the destructive_shell gate armed; a gate does not hold text, so it streams as "armed"
// does; before, the gate held every client reply whole), "armed-claim"
// (the same with the claim live: no prefix is final, the tour is held whole), "held" (a
// Telegram chat with a picture: look_before_refusing, a discard rule with an unbounded
// unanchored condition, holds the whole tour, as every armed tour did before the release).
//
//	go test ./middleware -run '^$' -bench FirstVisible -benchtime 5x
func BenchmarkFirstVisible(b *testing.B) {
	eng, guard := benchGuard(b, nil, seededTextRules(b, false)...) // early_bench_test.go
	text := compliant2K()
	tg, pic, ops := seeds.EnvTelegram, seeds.EnvPicture, seeds.EnvClientOps
	for _, mode := range []struct {
		name   string
		env    []string
		speech bool
	}{{"plain", nil, true}, {"plain-claim", nil, false}, {"armed", []string{tg}, true}, {"client", []string{tg, ops}, true},
		{"armed-claim", []string{tg}, false}, {"held", []string{tg, pic}, true}} {
		b.Run(mode.name, func(b *testing.B) {
			srv := openaitest.NewFunc(b, func(openaitest.Request) scripted.Reply {
				return scripted.Reply{Text: text, Chunk: 8, Pace: time.Millisecond}
			})
			var total time.Duration
			for b.Loop() {
				clock := &firstChunkClock{Model: srv.LLM(b)}
				llm := guard.Model(clock)
				ctx, move := eng.BeginMove(context.Background(), "tg", mode.env...)
				move.SetVar("message_id", "4711")
				if mode.speech {
					move.ToolReminders(ctx, "generate_speech", `{"text":"hi"}`)
				}
				var seen time.Time
				stream := llms.WithStreamingFunc(func(_ context.Context, chunk []byte) error {
					if seen.IsZero() && len(chunk) > 0 {
						seen = time.Now()
					}
					return nil
				})
				resp, err := llm.GenerateContent(middleware.AgentTour(ctx, middleware.FormatToolCalling),
					[]llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hi")}, stream)
				if err = move.End(ctx, err); err != nil {
					b.Fatal(err)
				}
				if resp.Choices[0].Content != text {
					b.Fatalf("answer %q", resp.Choices[0].Content)
				}
				total += seen.Sub(clock.first)
			}
			b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms-to-first-visible")
		})
	}
}
