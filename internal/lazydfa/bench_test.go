package lazydfa

import (
	"os"
	"regexp"
	"strings"
	"testing"
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
