package streamrules

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	corpus "github.com/streamrules/streamrules/internal/workload"
)

func benchEngine(b *testing.B, rules []Rule) *Engine {
	b.Helper()
	store, err := NewMemoryStore(rules, testEnvs...)
	if err != nil {
		b.Fatal(err)
	}
	eng, err := New(context.Background(), store, &Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	return eng
}

func textRules(patterns []string) []Rule {
	rules := make([]Rule, len(patterns))
	for i, p := range patterns {
		rules[i] = Rule{Name: fmt.Sprintf("rule_%05d", i), Scope: ScopeText, Condition: p, Text: "fix it"}
	}
	return rules
}

// resetMove lets one move judge answers again and again, as a fresh move would.
func resetMove(m *Move) { m.fired, m.retries, m.firings, m.pending = nil, 0, m.firings[:0], nil }

// BenchmarkHardCheck judges one answer against N text rules of a realistic mix (the
// engine, with its literal prefilter), against the naive loop that runs every rule's
// regexp over the text (the baseline, in the same run).
func BenchmarkHardCheck(b *testing.B) {
	for _, n := range []int{10, 100, 1000, 10000} {
		patterns := corpus.RealisticPatterns(n, 1)
		var eng *Engine
		var naive []*regexp.Regexp
		for _, size := range []int{512, 4096, 65536} {
			for _, kind := range []string{"none", "one"} {
				fire := ""
				if kind == "one" {
					fire = corpus.FireText
				}
				text := corpus.RealisticText(size, int64(size), fire)
				name := fmt.Sprintf("rules=%d/text=%d/%s", n, size, kind)
				b.Run("engine/"+name, func(b *testing.B) {
					if eng == nil {
						eng = benchEngine(b, textRules(patterns))
					}
					_, m := eng.BeginMove(context.Background(), "bench")
					v := m.CheckAnswer(context.Background(), text)
					if v.Discard != (kind == "one") {
						b.Fatalf("verdict %+v for %s", v, kind)
					}
					b.SetBytes(int64(size))
					b.ReportAllocs()
					b.ResetTimer()
					for b.Loop() {
						resetMove(m)
						m.CheckAnswer(context.Background(), text)
					}
				})
				b.Run("naive/"+name, func(b *testing.B) {
					if testing.Short() && n*size > 1000*4096 {
						b.Skip("naive baseline too slow for -short")
					}
					if naive == nil {
						for _, p := range patterns {
							naive = append(naive, regexp.MustCompile(p))
						}
					}
					b.SetBytes(int64(size))
					b.ReportAllocs()
					for b.Loop() {
						var hits []int
						for i, re := range naive {
							if re.MatchString(text) {
								hits = append(hits, i)
							}
						}
						_ = hits
					}
				})
			}
		}
	}
}

// BenchmarkSoftCheck records one tool call: 1,000 rules spread over 100 tools, arguments
// of 200 B and 8 KB, none firing; and a tool with no rules at all.
func BenchmarkSoftCheck(b *testing.B) {
	var rules []Rule
	for i := 0; i < 1000; i++ {
		rules = append(rules, Rule{
			Name: fmt.Sprintf("soft_%04d", i), Scope: fmt.Sprintf("tool:tool_%02d", i%100),
			Condition: fmt.Sprintf(`(?i)"(cmd|path)":"[^"]*\b(rm\s+-rf|shred)_%d\b`, i), Text: "careful",
		})
	}
	eng := benchEngine(b, rules)
	args := func(size int) string {
		body := strings.Repeat("harmless words ", size/15)
		return fmt.Sprintf(`{"cmd": "ls -la", "note": %q}`, body[:max(0, size-30)])
	}
	for _, c := range []struct {
		name, tool, args string
	}{
		{"no_rules", "unruled_tool", args(200)},
		{"rules=10/args=200", "tool_07", args(200)},
		{"rules=10/args=8192", "tool_07", args(8192)},
	} {
		b.Run(c.name, func(b *testing.B) {
			_, m := eng.BeginMove(context.Background(), "bench")
			b.ReportAllocs()
			for b.Loop() {
				m.ncalls = 0
				if r := m.ToolReminders(context.Background(), c.tool, c.args); r != nil {
					b.Fatal("a rule fired")
				}
			}
		})
	}
}

// BenchmarkBeginMove reports the bytes of per-move state (B/op) with 100 rules loaded.
func BenchmarkBeginMove(b *testing.B) {
	eng := benchEngine(b, textRules(corpus.RealisticPatterns(100, 1)))
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_, m := eng.BeginMove(ctx, "bench", envTelegram)
		_ = m
	}
}

// BenchmarkCompiledSetMemory reports the heap held by a compiled set of 10,000 rules
// (metric MiB/set: mebibytes, 2^20 bytes).
func BenchmarkCompiledSetMemory(b *testing.B) {
	rules := textRules(corpus.RealisticPatterns(10000, 1))
	eng := benchEngine(b, nil)
	var held float64
	for b.Loop() {
		var before, after runtime.MemStats
		eng.analyses = nil // count the analyses too, as a first load holds them
		runtime.GC()
		runtime.ReadMemStats(&before)
		set := eng.compile(rules, nil)
		runtime.GC()
		runtime.ReadMemStats(&after)
		held = float64(after.HeapAlloc-before.HeapAlloc) / (1 << 20)
		runtime.KeepAlive(set)
	}
	b.ReportMetric(held, "MiB/set")
}

// BenchmarkReload, at 1,000 and 10,000 rules: a reload that finds the same rows (every
// change notification that is not about them, every backstop tick); one edited row (a
// new condition: one analysis, and a small automaton beside the big one); one edited row
// and the merge that follows it in the background once the rules are quiet (the big
// automaton built again); and a cold compile of every rule (nothing cached, no automaton
// to build on, as the first load).
func BenchmarkReload(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		rules := textRules(corpus.RealisticPatterns(n, 1))
		store, err := NewMemoryStore(rules, testEnvs...)
		if err != nil {
			b.Fatal(err)
		}
		eng, err := New(context.Background(), store, &Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			b.Fatal(err)
		}
		eng.merge.after = func(time.Duration) <-chan time.Time { return nil } // merges only where measured
		b.Run(fmt.Sprintf("rules=%d/unchanged", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := eng.Reload(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
		})
		k := 0
		edit := func(b *testing.B) {
			edited := rules[n/2]
			k++
			edited.Condition = fmt.Sprintf(`(?i)\bedited_%d\b`, k)
			// The store notifies the engine, which reloads before UpdateRule returns.
			if _, err := store.UpdateRule(context.Background(), edited.Name, edited); err != nil {
				b.Fatal(err)
			}
			if err := eng.Reload(context.Background()); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(fmt.Sprintf("rules=%d/one_edit", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				edit(b)
			}
		})
		b.Run(fmt.Sprintf("rules=%d/edit_and_merge", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				edit(b)
				if eng.mergeOnce().overlaid() {
					b.Fatal("the merge left an overlay")
				}
			}
		})
		b.Run(fmt.Sprintf("rules=%d/cold", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				eng.loaded, eng.analyses = nil, nil
				eng.rules.Store(nil) // no automaton to build on either
				if err := eng.Reload(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
		})
		eng.Close()
	}
}
