package lazydfa

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/streamrules/streamrules/internal/cputime"
)

// BenchmarkMatch: the DFA (warm) against regexp on a 4 KB real answer, per pattern.
//
//	go test ./internal/lazydfa -run '^$' -bench Match -benchmem
func BenchmarkMatch(b *testing.B) {
	raw, err := os.ReadFile("../workload/testdata/realworld/answer2.md")
	if err != nil {
		b.Fatal(err)
	}
	text := strings.Repeat(string(raw), 4)[:4096]
	for _, p := range []string{
		`(?m)^\s*\|(?:\s*:?-{3,}:?\s*\|){6,}`,
		`(?i)\bf+u+c+k+\b`,
		`\b\d{1,5}\s+(?:[A-Z][a-z]+\s+){1,3}(?:street|st|avenue|ave|road|rd)\b`,
		`[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}`,
		`xyzzy`,
	} {
		re := regexp.MustCompile(p)
		d := mustDFA(b, p)
		want := re.MatchString(text)
		b.Run("dfa/"+p, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				if m, ok := d.Match(text); !ok || m != want {
					b.Fatal("wrong")
				}
			}
		})
		b.Run("regexp/"+p, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				re.MatchString(text)
			}
		})
	}
}

// BenchmarkBuild measures what building a DFA costs per unit of Exploration.Work, on
// small DFAs (a word, a counted hex class) and large ones (hundreds of instructions per
// state): the figure the cost bound charges per unit (costWorkNs in the root package) is
// the largest, rounded up. It reports the process's CPU time per unit (cpu-ns/unit; run
// with -cpu 1), which other processes on the machine do not inflate.
//
//	go test ./internal/lazydfa -run '^$' -bench Build -cpu 1 -count 3
func BenchmarkBuild(b *testing.B) {
	for _, p := range []string{`(?i)\bbanned\d\b`, `[a-fA-F0-9]{40}`, `e\w{5}\d`, `\b((?:hvs\.[\w-]{90,120}|s\.(?i:[a-z0-9]{24})))(?:[\x60'"\s;]|\\[nr]|$)`, `(a|aa){400}b`} {
		b.Run(p[:min(len(p), 16)], func(b *testing.B) {
			var work int64
			var cpu time.Duration
			for b.Loop() {
				d, err := Compile(p)
				if err != nil {
					b.Fatal(err)
				}
				start := cputime.Process()
				work += d.Explore(1000).Work
				cpu += cputime.Process() - start
			}
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(work), "cpu-ns/unit")
		})
	}
}
