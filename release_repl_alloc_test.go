package streamrules_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/cputime"
	"github.com/streamrules/streamrules/seeds"
)

// TestImageFixAllocLinear: repairing an answer dense with markdown images (the seeded
// telegram_markdown_image, in a Telegram tour) allocates in proportion to the answer, in
// CheckAnswer and in the held stream the guard runs (Release per chunk, then the check):
// the bytes allocated per byte of answer at 256 KB stay within a small factor of those
// at 32 KB. Copying the rest of the answer after each rewrite allocated the answer once
// per image (2 GB for 256 KB) and took seconds; the repair is the same either way.
func TestImageFixAllocLinear(t *testing.T) {
	var rules []streamrules.Rule
	for _, r := range seedRules(t) {
		if r.Name == "telegram_markdown_image" {
			rules = append(rules, r)
		}
	}
	eng := quietEngine(t, nil, rules...)
	ctx := context.Background()
	allocated := func(f func()) float64 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		f()
		runtime.ReadMemStats(&after)
		return float64(after.TotalAlloc - before.TotalAlloc)
	}
	var perByte [2][2]float64 // [check, stream][32 KB, 256 KB]
	for k, size := range []int{32 << 10, 256 << 10} {
		text := strings.Repeat("![a](b) ", size/8)
		want := strings.Repeat("b ", size/8)
		perByte[0][k] = allocated(func() {
			_, m := eng.BeginMove(ctx, "c", seeds.EnvTelegram)
			if v := m.CheckAnswer(ctx, text); v.Fixed != want || v.Discard {
				t.Fatalf("%d bytes: verdict %+v, want the images repaired", size, v.Rules)
			}
		}) / float64(size)
		perByte[1][k] = allocated(func() {
			_, m := eng.BeginMove(ctx, "c", seeds.EnvTelegram)
			s := m.HeldScanner()
			buf := []byte(text)
			var released []byte
			for i := 64; i <= len(buf); i += 64 {
				released = s.Release(buf[:i])
			}
			if len(released) < len(want)-16 || !strings.HasPrefix(want, string(released)) {
				t.Fatalf("%d bytes: released %d bytes, not the repair's prefix", size, len(released))
			}
			if v := m.CheckAnswer(ctx, text); v.Fixed != want {
				t.Fatalf("%d bytes: the check after the stream did not repair", size)
			}
		}) / float64(size)
	}
	for j, path := range []string{"CheckAnswer", "held stream"} {
		small, large := perByte[j][0], perByte[j][1]
		t.Logf("%s: %.1f bytes allocated a byte on 32 KB, %.1f on 256 KB", path, small, large)
		if large > 2*small+8 {
			t.Errorf("%s: %.1f bytes allocated a byte on 32 KB, %.1f on 256 KB: it grows with the answer", path, small, large)
		}
	}
}

// BenchmarkImageFix: repairing 64 KB, 100 KB and 10 MB of markdown images with the seeded
// image rule in a Telegram tour: "check" is CheckAnswer on the whole answer, "stream" the
// held stream (Release per 64-byte chunk, then the check). Compare cpu-ns/op: 10 MB
// against 100 KB is the growth (100 times the bytes); 64 KB against the 10 ms bound.
//
//	go test . -run '^$' -bench ImageFix -cpu 1 -count 3
func BenchmarkImageFix(b *testing.B) {
	var rules []streamrules.Rule
	for _, r := range seedRules(b) {
		if r.Name == "telegram_markdown_image" {
			rules = append(rules, r)
		}
	}
	eng := quietEngine(b, nil, rules...)
	ctx := context.Background()
	for _, mode := range []string{"check", "stream"} {
		for _, size := range []int{64 << 10, 100 << 10, 10 << 20} {
			text := strings.Repeat("![a](b) ", size/8)
			buf := []byte(text)
			b.Run(fmt.Sprintf("%s/%dKB", mode, size>>10), func(b *testing.B) {
				start := cputime.Process()
				for b.Loop() {
					_, m := eng.BeginMove(ctx, "c", seeds.EnvTelegram)
					if mode == "stream" {
						s := m.HeldScanner()
						for i := 64; i <= len(buf); i += 64 {
							s.Release(buf[:i])
						}
					}
					if v := m.CheckAnswer(ctx, text); len(v.Fixed) != size/4 {
						b.Fatal("not repaired")
					}
				}
				cputime.Report(b, start)
			})
		}
	}
}
