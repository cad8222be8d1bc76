package streamrules_test

import (
	"context"
	"strings"
	"testing"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/seeds"
)

// BenchmarkReleasePerChunk: the release logic's cost per chunk beside the early scan's,
// on the ~5 KB clean answer of BenchmarkScanPerChunk in 1,000 chunks, with a Telegram
// tail, the seeded rules all early, in a Telegram tour with no picture and message_id set
// (the image, tail and bare-emoji rules armed): "hold" appends the chunks to a buffer,
// "scan" adds the early scan (Scan), "release" adds Release to it, as the middleware's
// held path calls them per chunk. The move made its speech (a generate_speech call
// succeeded), so unbacked_tool_claim is folded away and the release streams; with the
// claim unbacked it would hold the Telegram tour whole. "release-claim" is a tour without
// the Telegram rules where the claim is live (the user asked for audio, no speech was
// made): the release follows its repair (a literal replace) on the answer. Compare ns/chunk and allocs of scan and release:
//
//	go test . -run '^$' -bench 'ReleasePerChunk|ScanPerChunk' -count 6 -benchmem
func BenchmarkReleasePerChunk(b *testing.B) {
	eng := quietEngine(b, nil, earlySeedRules(b)...) // gate_test.go
	clean := strings.Repeat("A plain answer, sentence after sentence, nothing amiss. ", 90) + "\n\n↩ #4711"
	chunks := make([][]byte, 0, 1000)
	for i := 0; i < len(clean); i += 5 {
		chunks = append(chunks, []byte(clean[i:min(i+5, len(clean))]))
	}
	ctx := context.Background()
	for _, mode := range []string{"hold", "scan", "release", "release-claim"} {
		b.Run(mode, func(b *testing.B) {
			buf := make([]byte, 0, 8192)
			released := 0
			for b.Loop() {
				var m *streamrules.Move
				if mode == "release-claim" {
					_, m = eng.BeginMove(ctx, "c")
					m.SetInput("Read this out as audio, please.")
				} else {
					_, m = eng.BeginMove(ctx, "c", seeds.EnvTelegram)
					m.ToolReminders(ctx, "generate_speech", `{"text":"hi"}`)
				}
				m.SetVar("message_id", "4711")
				var s *streamrules.Scanner
				switch mode {
				case "scan":
					s = m.EarlyScanner()
				case "release", "release-claim":
					s = m.HeldScanner()
				}
				buf = buf[:0]
				for _, c := range chunks {
					buf = append(buf, c...)
					if s != nil {
						if _, cut := s.Scan(ctx, buf); cut {
							b.Fatal("a clean answer was cut")
						}
						if mode != "scan" {
							released = len(s.Release(buf))
						}
					}
				}
			}
			if strings.HasPrefix(mode, "release") && released < len(clean)-len("↩ #4711")-2 {
				b.Fatalf("released %d of %d bytes", released, len(clean))
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(chunks)), "ns/chunk")
		})
	}
}

// earlySeedRules is seedRules, every rule early.
func earlySeedRules(t testing.TB) []streamrules.Rule {
	rules := seedRules(t)
	for i := range rules {
		rules[i].Early = true
	}
	return rules
}
