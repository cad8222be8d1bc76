package streamrules

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sync"
	"testing"

	corpus "github.com/streamrules/streamrules/internal/workload"
)

// realworld is the corpus of real guardrail rules and real assistant answers.
const realworld = "internal/workload/testdata/realworld"

// workload is one row of the README's performance table: a rule set, a text,
// and whether the rules are negates (the text then satisfies every one).
type workload struct {
	name     string
	patterns []string
	text     string
	negate   bool
}

var (
	workloadsOnce sync.Once
	workloadsList []workload
	workloadsErr  error
)

// workloads builds the rule sets and texts of the performance table.
func workloads(tb testing.TB) []workload {
	tb.Helper()
	workloadsOnce.Do(func() {
		rules, err := corpus.ReadRules(realworld + "/guardrails.txt")
		if err != nil {
			workloadsErr = err
			return
		}
		answers, err := corpus.ReadAnswers(realworld)
		if err != nil {
			workloadsErr = err
			return
		}
		real4k := corpus.AnswerText(answers, 4096, 0)
		w := []workload{
			{"readme_generator/readme_text", corpus.RealisticPatterns(1000, 1), corpus.RealisticText(4096, 4096, ""), false},
			{"readme_generator/real_answer", corpus.RealisticPatterns(1000, 1), real4k, false},
			{"topic_words/real_answer", validOnly(corpus.TopicPatterns(1200, 1), 1000), real4k, false},
		}
		for _, size := range []int{512, 4096, 65536} {
			for v := 0; v < len(answers); v++ {
				w = append(w, workload{fmt.Sprintf("guardrails/%d/answer%d", size, v+1), rules, corpus.AnswerText(answers, size, v), false})
			}
		}
		w = append(w,
			workload{"common_words", corpus.CommonWordPatterns(1000, 1), real4k, false},
			workload{"short_keywords", corpus.ShortKeywordPatterns(1000, 1), real4k, false},
			workload{"literal_free", validOnly(corpus.LiteralFreePatterns(1024, 1), 1000), real4k, false},
			workload{"satisfied_negates", corpus.SatisfiedPatterns(1000, real4k, 1), real4k, true},
			workload{"anchored/10", corpus.AnchoredPatterns(10, 1), real4k, false},
			workload{"fixed_prefix/10", corpus.FixedPrefixPatterns(10, 1), real4k, false},
			workload{"literal_free/10", validOnly(corpus.LiteralFreePatterns(20, 2), 10), real4k, false},
			// Rule sets users bring from elsewhere (internal/workload/secrets.go): a
			// secret-scanning set with credentials planted in a 4 KB answer, and PII rules.
			workload{"secrets/221", validOnly(corpus.SecretPatterns(221), 221), corpus.SecretText(4096, 1), false},
			workload{"pii", validOnly(corpus.PIIPatterns(), 100), corpus.PIIText(4096, 1), false},
		)
		workloadsList = w
	})
	if workloadsErr != nil {
		tb.Fatal(workloadsErr)
	}
	return workloadsList
}

// validOnly returns the first n patterns that validate (the generators vary counts
// freely; a rule set is made of rules that validate).
func validOnly(patterns []string, n int) []string {
	var out []string
	for _, p := range patterns {
		if len(out) < n && checkRegex("condition", p) == nil {
			out = append(out, p)
		}
	}
	return out
}

// warmChecks is how many times a workload's text is matched before it is timed.
const warmChecks = 8

func (w workload) rules() []Rule {
	rules := textRules(w.patterns)
	for i := range rules {
		rules[i].Negate = w.negate
	}
	return rules
}

// BenchmarkWorkloads is the README's performance table: each workload judged
// by the engine (CheckAnswer, the literal prefilter and windows) and by the
// naive loop (every rule's regexp over the whole text), in the same run. The
// metric regexps/op counts the runs the engine made (a combo's pass is one),
// whole/op those over the whole answer, once the engine is warm.
func BenchmarkWorkloads(b *testing.B) {
	for _, w := range workloads(b) {
		var naive []*regexp.Regexp
		for _, p := range w.patterns {
			naive = append(naive, regexp.MustCompile(p))
		}
		var want []int
		for i, re := range naive {
			if re.MatchString(w.text) {
				want = append(want, i)
			}
		}
		b.Run("engine/"+w.name, func(b *testing.B) {
			eng := benchEngine(b, w.rules())
			set := eng.rules.Load()
			// Warm: the DFAs build their states on the first texts they see (up to a
			// budget per text), as a long-lived engine's have.
			for range warmChecks {
				set.match.Match(w.text, nil)
			}
			got, runs, whole := set.match.Explain(w.text)
			if !slices.Equal(got, want) {
				b.Fatalf("engine %v, naive %v", got, want)
			}
			_, m := eng.BeginMove(context.Background(), "bench")
			b.SetBytes(int64(len(w.text)))
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				resetMove(m)
				m.CheckAnswer(context.Background(), w.text)
			}
			b.ReportMetric(float64(runs), "regexps/op")
			b.ReportMetric(float64(whole), "whole/op")
		})
		b.Run("naive/"+w.name, func(b *testing.B) {
			b.SetBytes(int64(len(w.text)))
			b.ReportAllocs()
			for b.Loop() {
				var hits []int
				for i, re := range naive {
					if re.MatchString(w.text) != w.negate {
						hits = append(hits, i)
					}
				}
				_ = hits
			}
			b.ReportMetric(float64(len(naive)), "regexps/op")
		})
	}
}

// TestWorkloadsAgree: on every workload of the performance table the engine's
// matcher reports what the naive loop reports, and the guardrail corpus
// validates.
func TestWorkloadsAgree(t *testing.T) {
	for _, w := range workloads(t) {
		for _, p := range w.patterns {
			if err := checkRegex("condition", p); err != nil {
				t.Errorf("%s: %q: %v", w.name, p, err)
			}
		}
		want := newNaiveMatcher(w.patterns).Match(w.text, nil)
		got := newTextMatcher(w.patterns).Match(w.text, nil)
		if !slices.Equal(got, want) {
			t.Errorf("%s: matcher %v, naive %v", w.name, got, want)
		}
		if w.negate && len(want) != len(w.patterns) {
			t.Errorf("%s: %d of %d negates satisfied", w.name, len(want), len(w.patterns))
		}
	}
}

// BenchmarkFirstCheck is what a fresh engine's first check costs on the guardrail
// rules: every pattern's DFA and every combo's start with no states, and build those
// the answer needs (within their budgets; where they give up, regexp runs). The
// engine is built with the timer stopped.
func BenchmarkFirstCheck(b *testing.B) {
	for _, w := range workloads(b) {
		if w.name != "guardrails/4096/answer1" && w.name != "guardrails/65536/answer1" {
			continue
		}
		b.Run(w.name, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				eng := benchEngine(b, w.rules())
				_, m := eng.BeginMove(context.Background(), "bench")
				b.StartTimer()
				m.CheckAnswer(context.Background(), w.text)
				b.StopTimer()
				eng.Close()
				b.StartTimer()
			}
		})
	}
}
