package shellcmd_test

import (
	"strings"
	"testing"

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
