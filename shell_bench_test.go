package streamrules_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/cputime"
	"github.com/streamrules/streamrules/seeds"
	_ "github.com/streamrules/streamrules/shellcmd" // the shell reader
)

// BenchmarkShellRule: one tool call of 200 bytes judged by one tool rule on its cmd field,
// without shell (what a tool rule cost before shell rules existed: the path is the same
// but for one nil check) and with shell (the command read as a shell reads it, then the
// same condition on each command), as a remind rule and as a gate. Compare in one run:
// shell/plain is the price of the reading.
//
//	go test . -run '^$' -bench ShellRule -benchmem -count 6
func BenchmarkShellRule(b *testing.B) {
	args := `{"cmd":"cd /srv && sudo -u ops env A=1 bash -c 'git pull --ff-only && make -j4 build' && find tmp -name '*.log' -exec rm -f {} \\; | tee -a /var/log/dep.log; echo \"done: $(date)\"","timeout":30}`
	if len(args) < 195 || len(args) > 205 {
		b.Fatalf("args are %d bytes", len(args))
	}
	cond := `^rm\s(?:.*\s)?-r\s(?:.*\s)?-f(?:\s|$)`
	for _, c := range []struct {
		name  string
		shell bool
		mode  streamrules.Mode
	}{
		{"plain", false, streamrules.ModeRemind},
		{"shell", true, streamrules.ModeRemind},
		{"gate_plain", false, streamrules.ModeInterrupt},
		{"gate_shell", true, streamrules.ModeInterrupt},
	} {
		rule := streamrules.Rule{Name: "no_forced_rm", Scope: "tool:shell", Field: "cmd", Condition: cond, Shell: c.shell, Mode: c.mode, Text: "No."}
		store, err := streamrules.NewMemoryStore([]streamrules.Rule{rule}, seeds.Environments()...)
		if err != nil {
			b.Fatal(err)
		}
		eng, err := streamrules.New(context.Background(), store, &streamrules.Config{Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			ctx, m := eng.BeginMove(context.Background(), "bench")
			b.ReportAllocs()
			cpu := cputime.Process()
			defer func() {
				if cpu := cputime.Process() - cpu; cpu > 0 {
					b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op") // not inflated by a loaded machine
				}
			}()
			for b.Loop() {
				if c.mode == streamrules.ModeInterrupt {
					if m.GateCall(ctx, "shell", args) != nil {
						b.Fatal("refused")
					}
					continue
				}
				if m.ToolReminders(ctx, "shell", args) != nil {
					b.Fatal("reminded")
				}
			}
		})
		eng.Close()
	}
}
