package shellcmd_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"mvdan.cc/sh/v3/syntax"

	"github.com/streamrules/streamrules/internal/cputime"
	"github.com/streamrules/streamrules/shellcmd"
)

// BenchmarkCommands reads a 200-byte command line (budget: 20 µs) and inputs built to be
// costly. Beside the wall clock it reports the process's CPU time per reading and per
// byte (cpu-ns/op, cpu-ns/byte; unix), which a loaded machine does not inflate, to set
// against the engine's per-byte cost bound for a rule on tool arguments (100 ms per MiB,
// about 95 ns/byte).
//
//	go test ./shellcmd -run '^$' -bench Commands -benchmem -count 6
func BenchmarkCommands(b *testing.B) {
	cmd200 := `cd /srv && sudo -u ops env RAILS_ENV=production bash -c 'git pull --ff-only && bundle exec rake assets:precompile' && find tmp -name "*.log" -exec rm -f {} \; | tee -a /var/log/dep.log; echo "$(date)"`
	if len(cmd200) != 200 {
		b.Fatalf("the command is %d bytes", len(cmd200))
	}
	cases := []struct{ name, script string }{
		{"200B", cmd200},
		{"plain_words", "sudo -u ops timeout 30 rsync -av --delete /srv/app/ backup:/srv/app/"},
		{"nested_bash_c", strings.Repeat(`bash -c '`, 8) + "rm -rf x" + strings.Repeat(`'`, 8)},
		{"braces", strings.Repeat("{a,b}", 6) + " " + strings.Repeat("x{1..9} ", 20)},
		{"64KiB", strings.Repeat(`printf '%s\n' "$HOME" `+strings.Repeat("word ", 16)+"> log; ", 700)[:60<<10]},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.script)))
			cpu := cputime.Process()
			for b.Loop() {
				if _, err := shellcmd.Commands(c.script); err != nil {
					b.Fatal(err)
				}
			}
			if cpu := cputime.Process() - cpu; cpu > 0 {
				// CPU time, GC included: what a reading costs, however loaded the machine.
				b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
				b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/float64(len(c.script)), "cpu-ns/byte")
			}
		})
	}
}

// hostile are arguments built to make a gate check costly, each at a given size: one
// brace word crossing itself, brace lists in budget, nested substitutions (past the
// nesting bound), groups nested to just below it, pipelines just below the chain bound,
// one long quoted word, many quoted words, assignments only, functions calling each other
// twice over, commands past MaxCommands. TestHostileShapes holds what each is read as.
func hostile(shape string, size int) string {
	// fill repeats whole units and pads with spaces to size: a unit cut short (an open
	// quote, a pipe or a parenthesis left open) would make a parse error of one size and
	// not the other, and the ratio of the two would not measure the shape.
	fill := func(unit string) string {
		n := size / len(unit)
		return strings.Repeat(unit, n) + strings.Repeat(" ", size-n*len(unit))
	}
	switch shape {
	case "brace_word":
		return "echo " + fill("{a,b}")
	case "brace_lists":
		return "echo " + strings.TrimRight(fill("{a,b} "), "{a,b")
	case "nested":
		n := size / 16
		return strings.Repeat(`"$(echo `, n) + "x" + strings.Repeat(`)"`, n)
	case "long_word":
		return "echo '" + fill("rm -rf x ") + "'"
	case "assignments":
		return fill("a=b ") + "true"
	case "functions":
		var b strings.Builder
		for i := 0; b.Len() < size; i++ {
			fmt.Fprintf(&b, "f%d() { f%d; f%d; }; ", i, i+1, i+1)
		}
		return b.String() + "f0"
	case "commands":
		return fill("rm -f x; ")
	case "nest_max":
		return fill(strings.Repeat("(", 99) + "x" + strings.Repeat(")", 99) + "; ")
	case "chain_max":
		return fill(strings.Repeat("cat | ", 255) + "x; ")
	case "dq_words":
		return "echo " + fill(`"a b" `)
	}
	panic(shape)
}

// BenchmarkHostileGate: one gate check (the seeded destructive_shell rule, Move.GateCall
// on {"cmd": …}) of hostile arguments of 4 KB and of 64 KiB less the JSON around them.
// The cost is linear in the input when each shape's 64 KiB figure is about 16 times its
// 4 KB one; the goal is at most 20 times, and 50 ms at 64 KiB.
//
//	go test ./shellcmd -run '^$' -bench HostileGate -benchmem -count 3
func BenchmarkHostileGate(b *testing.B) {
	for _, shape := range []string{"brace_word", "brace_lists", "nested", "nest_max", "chain_max", "long_word", "dq_words", "assignments", "functions", "commands"} {
		for _, size := range []int{4 << 10, 64<<10 - 64} {
			script := hostile(shape, size)
			arg, _ := json.Marshal(map[string]string{"cmd": script})
			name := fmt.Sprintf("%s/%dKB", shape, (size+512)>>10)
			b.Run(name, func(b *testing.B) {
				ctx, m := shellGate(b)
				b.ReportAllocs()
				b.SetBytes(int64(len(arg)))
				cpu := cputime.Process()
				for b.Loop() {
					_ = m.GateCall(ctx, "shell", string(arg))
				}
				if cpu := cputime.Process() - cpu; cpu > 0 {
					b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
				}
			})
		}
	}
}

// TestHostileShapes: each hostile shape parses at both sizes, so BenchmarkHostileGate's
// ratio compares two readings of one shape, not a parse error of one size with a reading
// of the other (a unit cut short at the end leaves a quote, a pipe or a group open).
func TestHostileShapes(t *testing.T) {
	for _, shape := range []string{"brace_word", "brace_lists", "nested", "nest_max", "chain_max", "long_word", "dq_words", "assignments", "functions", "commands"} {
		for _, size := range []int{4 << 10, 64<<10 - 64} {
			_, err := shellcmd.Commands(hostile(shape, size))
			var perr syntax.ParseError
			if errors.As(err, &perr) {
				t.Errorf("%s at %d bytes: %v", shape, size, err)
			}
		}
	}
}

// BenchmarkHostileGC: the gate check of many quoted words with the collector on (and the
// collections per check, gc/op) and off (a collection outside the timer before each
// check), to tell the reading's cost from the collector's.
//
//	go test ./shellcmd -run '^$' -bench HostileGC -benchmem -count 3
func BenchmarkHostileGC(b *testing.B) {
	for _, size := range []int{4 << 10, 64<<10 - 64} {
		arg, _ := json.Marshal(map[string]string{"cmd": hostile("dq_words", size)})
		for _, gc := range []string{"on", "off"} {
			b.Run(fmt.Sprintf("%dKB/gc=%s", (size+512)>>10, gc), func(b *testing.B) {
				ctx, m := shellGate(b)
				if gc == "off" {
					defer debug.SetGCPercent(debug.SetGCPercent(-1))
				}
				b.ReportAllocs()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				gcs := ms.NumGC
				var cpu time.Duration
				for b.Loop() {
					if gc == "off" {
						b.StopTimer()
						runtime.GC()
						b.StartTimer()
					}
					c := cputime.Process()
					_ = m.GateCall(ctx, "shell", string(arg))
					cpu += cputime.Process() - c
				}
				runtime.ReadMemStats(&ms)
				if gc == "on" {
					b.ReportMetric(float64(ms.NumGC-gcs)/float64(b.N), "gc/op")
				}
				b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
			})
		}
	}
}
