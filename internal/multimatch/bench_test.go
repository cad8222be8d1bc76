package multimatch

import (
	"fmt"
	"regexp"
	"slices"
	"sync"
	"testing"

	"github.com/streamrules/streamrules/internal/workload"
)

var (
	benchRuleCounts = []int{10, 100, 1000, 10000}
	benchTextSizes  = []int{512, 4096, 65536}
)

type benchRules struct {
	once sync.Once
	set  *Set
	res  []*regexp.Regexp
}

var benchCache sync.Map // rule count -> *benchRules

func rulesFor(b *testing.B, n int) *benchRules {
	v, _ := benchCache.LoadOrStore(n, &benchRules{})
	br := v.(*benchRules)
	br.once.Do(func() {
		br.set, br.res = compile(b, workload.RealisticPatterns(n, 1))
	})
	return br
}

// benchText returns the text of a size and kind ("none" fires no rule,
// "one" fires rule 0 only) with the indices Match must report.
func benchText(size int, kind string) (string, []int) {
	if kind == "one" {
		return workload.RealisticText(size, int64(size), workload.FireText), []int{0}
	}
	return workload.RealisticText(size, int64(size), ""), nil
}

func runBench(b *testing.B, naive bool) {
	for _, n := range benchRuleCounts {
		for _, size := range benchTextSizes {
			for _, kind := range []string{"none", "one"} {
				b.Run(fmt.Sprintf("rules=%d/text=%d/%s", n, size, kind), func(b *testing.B) {
					if naive && testing.Short() && n*size > 1000*65536 {
						b.Skip("naive baseline too slow for -short")
					}
					br := rulesFor(b, n)
					text, want := benchText(size, kind)
					dst := make([]int, 0, n)
					if got := br.set.Match(text, dst); !slices.Equal(got, want) {
						b.Fatalf("Match = %v, want %v", got, want)
					}
					b.SetBytes(int64(size))
					b.ReportAllocs()
					b.ResetTimer()
					if naive {
						for b.Loop() {
							dst = dst[:0]
							for i, re := range br.res {
								if re.MatchString(text) {
									dst = append(dst, i)
								}
							}
						}
					} else {
						for b.Loop() {
							dst = br.set.Match(text, dst[:0])
						}
					}
				})
			}
		}
	}
}

// BenchmarkMatch measures Set.Match on the realistic rule mix.
func BenchmarkMatch(b *testing.B) { runBench(b, false) }

// BenchmarkNaive is the baseline: every regexp's MatchString in turn.
func BenchmarkNaive(b *testing.B) { runBench(b, true) }

// BenchmarkNew measures building a set.
func BenchmarkNew(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		pats := workload.RealisticPatterns(n, 1)
		b.Run(fmt.Sprintf("rules=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := New(pats); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkBuild: making a set of 10,000 analysed patterns (what a reload does after
// an edit, the analyses being cached) against analysing them all (a cold start).
func BenchmarkBuild(b *testing.B) {
	patterns := workload.RealisticPatterns(10000, 1)
	as := make([]*Analysis, len(patterns))
	for i, p := range patterns {
		a, err := Analyze(p)
		if err != nil {
			b.Fatal(err)
		}
		as[i] = a
	}
	b.Run("build", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			Build(as)
		}
	})
	b.Run("analyze", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, p := range patterns {
				if _, err := Analyze(p); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
