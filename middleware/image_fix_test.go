package middleware_test

import (
	"context"
	"log/slog"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/llms"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/cputime"
	"github.com/streamrules/streamrules/internal/scripted"
	"github.com/streamrules/streamrules/middleware"
	"github.com/streamrules/streamrules/seeds"
)

// imageGuard is an engine with only the seeded image rule and the guard's model over a
// scripted model that streams answer in 64-byte chunks.
func imageGuard(tb testing.TB, answer string) (*streamrules.Engine, llms.Model) {
	tb.Helper()
	set, err := seeds.Default()
	if err != nil {
		tb.Fatal(err)
	}
	rule, _ := set.Rule("telegram_markdown_image")
	store, err := streamrules.NewMemoryStore([]streamrules.Rule{rule}, seeds.Environments()...)
	if err != nil {
		tb.Fatal(err)
	}
	eng, err := streamrules.New(context.Background(), store, &streamrules.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(eng.Close)
	guard, err := middleware.New(eng, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return eng, guard.Model(&scripted.Bench{Answer: answer, Chunk: 64})
}

// imageTour runs one Telegram tour through llm and returns what the client was sent,
// joined, and the response's text.
func imageTour(tb testing.TB, eng *streamrules.Engine, llm llms.Model) (sent, content string) {
	tb.Helper()
	ctx, move := eng.BeginMove(context.Background(), "chat-images", seeds.EnvTelegram)
	ctx = middleware.AgentTour(ctx, middleware.FormatToolCalling)
	var b strings.Builder
	resp, err := llm.GenerateContent(ctx, []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "show the cats")},
		llms.WithStreamingFunc(func(_ context.Context, chunk []byte) error { b.Write(chunk); return nil }))
	if err = move.End(ctx, err); err != nil {
		tb.Fatal(err)
	}
	return b.String(), resp.Choices[0].Content
}

// TestGuardImageFixLinear: an answer dense with markdown images, streamed through the
// guard in a Telegram tour, is repaired as it streams; the client gets exactly the
// repaired text, and the bytes allocated per byte of answer at 256 KB stay within a small
// factor of those at 32 KB (copying the rest of the answer after each rewrite allocated
// it once per image).
func TestGuardImageFixLinear(t *testing.T) {
	var perByte [2]float64
	for k, size := range []int{32 << 10, 256 << 10} {
		answer := strings.Repeat("![a](b) ", size/8)
		want := strings.Repeat("b ", size/8)
		eng, llm := imageGuard(t, answer) // setup outside the window: only the tour counts
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		sent, content := imageTour(t, eng, llm)
		runtime.ReadMemStats(&after)
		if sent != want || content != want {
			t.Fatalf("%d bytes: the client got %d bytes, the response %d; want the %d of the repair", size, len(sent), len(content), len(want))
		}
		perByte[k] = float64(after.TotalAlloc-before.TotalAlloc) / float64(size)
	}
	t.Logf("%.1f bytes allocated a byte on 32 KB, %.1f on 256 KB", perByte[0], perByte[1])
	if perByte[1] > 1.25*perByte[0]+2 {
		t.Errorf("%.1f bytes allocated a byte on 32 KB, %.1f on 256 KB: it grows with the answer", perByte[0], perByte[1])
	}
}

// BenchmarkGuardImageFix: the tour above on 64 KB, 100 KB and 10 MB of images. Compare
// cpu-ns/op: 10 MB against 100 KB is the growth (100 times the bytes).
//
//	go test ./middleware -run '^$' -bench GuardImageFix -cpu 1 -count 3
func BenchmarkGuardImageFix(b *testing.B) {
	for _, size := range []int{64 << 10, 100 << 10, 10 << 20} {
		answer := strings.Repeat("![a](b) ", size/8)
		b.Run(strconv.Itoa(size>>10)+"KB", func(b *testing.B) {
			eng, llm := imageGuard(b, answer)
			start := cputime.Process()
			for b.Loop() {
				if _, content := imageTour(b, eng, llm); len(content) != len(answer)/4 {
					b.Fatal("not repaired")
				}
			}
			cputime.Report(b, start)
		})
	}
}
