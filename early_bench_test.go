package streamrules_test

import (
	"context"
	"strings"
	"testing"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/seeds"
)

// BenchmarkScanPerChunk: the scanner's own cost on a clean ~5 KB answer in 1,000 chunks,
// against appending the same chunks to a held buffer ("hold"). The rules are the seeded
// text rules, all early, in a tour where every one is armed (telegram and a picture).
//
//	go test . -run '^$' -bench ScanPerChunk -count 6 -benchmem
func BenchmarkScanPerChunk(b *testing.B) {
	eng := quietEngine(b, nil, earlySeedRules(b)...) // gate_test.go, release_bench_test.go
	clean := strings.Repeat("A plain answer, sentence after sentence, nothing amiss. ", 90)
	chunks := make([][]byte, 0, 1000)
	for i := 0; i < len(clean); i += 5 {
		chunks = append(chunks, []byte(clean[i:min(i+5, len(clean))]))
	}
	for _, mode := range []string{"hold", "scan"} {
		b.Run(mode, func(b *testing.B) {
			buf := make([]byte, 0, 8192)
			for b.Loop() {
				_, m := eng.BeginMove(context.Background(), "c", seeds.EnvTelegram, seeds.EnvPicture)
				var s *streamrules.Scanner
				if mode == "scan" {
					if s = m.EarlyScanner(); s == nil {
						b.Fatal("no scanner")
					}
				}
				buf = buf[:0]
				for _, c := range chunks {
					buf = append(buf, c...)
					if s != nil {
						if _, cut := s.Scan(context.Background(), buf); cut {
							b.Fatal("a clean answer was cut")
						}
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(chunks)), "ns/chunk")
		})
	}
}
