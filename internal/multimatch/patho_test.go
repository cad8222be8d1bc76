package multimatch

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/streamrules/streamrules/internal/workload"
)

// TestPathologicalPatterns: New and Match give regexp's verdicts on large patterns.
// (How fast New is on them is BenchmarkNew's to say: a timed assertion fails on a busy
// machine, as this one did under -race.)
func TestPathologicalPatterns(t *testing.T) {
	var words []string
	r := rand.New(rand.NewPCG(9, 9))
	for i := 0; i < 5000; i++ {
		words = append(words, workload.Word(r)+fmt.Sprint(i))
	}
	pats := []string{
		"(?i)" + strings.Join(words, "|"),
		`\b(?:` + strings.Join(words, "|") + `)\b`,
		strings.Repeat("abcdefghij", 1000),
		"(?i)" + strings.Repeat("kiss", 500),
		strings.Repeat("(?:a|b)?", 500) + "c",
		`[\x{0}-\x{10FFFF}]{2,}x`,
		strings.Repeat(`(x+y*)+`, 100),
	}
	for _, p := range pats {
		set, err := New([]string{p})
		if err != nil {
			t.Fatalf("%.40q: %v", p, err)
		}
		text := "xx " + words[4321] + " yy " + strings.Repeat("abcdefghij", 1000)
		if got, want := len(set.Match(text, nil)) == 1, regexp.MustCompile(p).MatchString(text); got != want {
			t.Errorf("%.40q: Match %v, regexp %v", p, got, want)
		}
	}
}
