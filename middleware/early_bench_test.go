package middleware_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/tmc/langchaingo/llms"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/openaitest"
	"github.com/streamrules/streamrules/internal/scripted"
	"github.com/streamrules/streamrules/middleware"
	"github.com/streamrules/streamrules/seeds"
)

// benchGuard is an engine on rules and its Guard, quiet.
func benchGuard(b *testing.B, cfg *streamrules.Config, rules ...streamrules.Rule) (*streamrules.Engine, *middleware.Guard) {
	b.Helper()
	store, err := streamrules.NewMemoryStore(rules, seeds.Environments()...)
	if err != nil {
		b.Fatal(err)
	}
	if cfg == nil {
		cfg = &streamrules.Config{}
	}
	cfg.Logger = slog.New(slog.DiscardHandler)
	eng, err := streamrules.New(context.Background(), store, cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(eng.Close)
	return eng, newGuard(b, eng, nil)
}

// seededTextRules is the seeded rule set, each rule firing every move and early or not.
func seededTextRules(b *testing.B, early bool) []streamrules.Rule {
	b.Helper()
	set, err := seeds.Default()
	if err != nil {
		b.Fatal(err)
	}
	var rules []streamrules.Rule
	for _, name := range set.Names() {
		r, _ := set.Rule(name)
		r.Repeat = "" // every move
		r.Early = early
		rules = append(rules, r)
	}
	return rules
}

// heldTour plays one tour in a new move of the telegram chat and returns its answer.
func heldTour(b *testing.B, eng *streamrules.Engine, llm llms.Model) string {
	ctx, move := eng.BeginMove(context.Background(), "chat-bench", seeds.EnvTelegram)
	ctx = middleware.AgentTour(ctx, middleware.FormatToolCalling)
	resp, err := llm.GenerateContent(ctx, []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "show the cat")},
		llms.WithStreamingFunc(func(context.Context, []byte) error { return nil }))
	if err = move.End(ctx, err); err != nil {
		b.Fatal(err)
	}
	return resp.Choices[0].Content
}

// BenchmarkTimeToAcceptedAnswer: a paced provider (1,000 tokens at 100 µs each) writes a
// doomed answer with its violation at token 100, then a short good one. "end" judges the
// finished answer, "early" cuts it at the first certain miss. ns/op is the time from the
// request to the accepted answer.
//
//	go test ./middleware -run '^$' -bench TimeToAcceptedAnswer -benchtime 20x
func BenchmarkTimeToAcceptedAnswer(b *testing.B) {
	const good = "Here it is: https://x/c.png"
	for _, mode := range []string{"end", "early"} {
		b.Run(mode, func(b *testing.B) {
			rule := imageRule()
			rule.Early = mode == "early"
			eng, guard := benchGuard(b, nil, rule)
			bad, _ := doomed(100 * time.Microsecond)
			bad.ToolCalls = nil
			srv := openaitest.NewFunc(b, func(req openaitest.Request) scripted.Reply {
				if req.N%2 == 0 {
					return bad
				}
				return scripted.Reply{Text: good, Chunk: 5}
			})
			llm := guard.Model(srv.LLM(b))
			b.ResetTimer()
			for b.Loop() {
				if got := heldTour(b, eng, llm); got != good {
					b.Fatalf("answer %q", got)
				}
			}
		})
	}
}

// BenchmarkHeldTourScanning: one held tour of a clean 1,000-chunk answer through the real
// openai client and a local server at full speed, with the seeded text rules not early
// ("held") and early ("scanned"). The difference is the scanning cost; divide by 1,000 for
// a chunk.
//
//	go test ./middleware -run '^$' -bench HeldTourScanning -count 6
func BenchmarkHeldTourScanning(b *testing.B) {
	clean := strings.Repeat("A plain answer, sentence after sentence, nothing amiss. ", 90) // ~5 KB
	for _, mode := range []string{"held", "scanned"} {
		b.Run(mode, func(b *testing.B) {
			eng, guard := benchGuard(b, nil, seededTextRules(b, mode == "scanned")...)
			srv := openaitest.NewFunc(b, func(openaitest.Request) scripted.Reply {
				return scripted.Reply{Text: clean, Chunk: 5}
			})
			llm := guard.Model(srv.LLM(b))
			b.ResetTimer()
			for b.Loop() {
				if got := heldTour(b, eng, llm); got != clean {
					b.Fatal("answer changed")
				}
			}
		})
	}
}

// BenchmarkHeldSpeechScanning: the same tour with a zero-latency in-process model, so only
// the middleware's own per-chunk work is measured: holding 1,000 chunks ("held") against
// holding and scanning them ("scanned"), the seeded text rules in place.
//
//	go test ./middleware -run '^$' -bench HeldSpeechScanning -count 6 -benchmem
func BenchmarkHeldSpeechScanning(b *testing.B) {
	clean := strings.Repeat("A plain answer, sentence after sentence, nothing amiss. ", 90) // ~5 KB
	for _, mode := range []string{"held", "scanned"} {
		b.Run(mode, func(b *testing.B) {
			eng, guard := benchGuard(b, nil, seededTextRules(b, mode == "scanned")...)
			llm := guard.Model(&scripted.Bench{Answer: clean, Chunk: 5})
			b.ResetTimer()
			for b.Loop() {
				if got := heldTour(b, eng, llm); got != clean {
					b.Fatal("answer changed")
				}
			}
		})
	}
}
