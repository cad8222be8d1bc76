package streamrules

import (
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/streamrules/streamrules/internal/multimatch"
)

// The cost bound of a rule.
//
// A regular expression that validates must cost at most costAnswerLimit on an answer
// of costAnswerBytes and costArgsLimit on costArgsBytes of tool arguments, on the
// engine's path: the matcher runs each pattern with its unbounded edges cut
// ([multimatch.Analysis.Run]: `(?s)[\s\S]{0,1000}z` runs as `z`, and gives the same
// verdicts), and Go's regexp costs, per byte, a step for every thread the program keeps
// alive. Validate estimates that from the compiled program ([multimatch.Analysis.LiveThreads]:
// the instructions reachable from the start through wide classes) and rejects, naming
// the field, what would exceed the bound. BenchmarkWorstRules measures the worst rules
// that pass.
const (
	costAnswerBytes = 64 << 10
	costAnswerLimit = 10 * time.Millisecond
	costArgsBytes   = 1 << 20
	costArgsLimit   = 100 * time.Millisecond

	// Per byte: what a pattern keeping no thread alive costs, and what each live
	// thread adds (measured on this project's CI machine, regexp of Go 1.26:
	// BenchmarkWorstRules; rounded up).
	costBaseNs   = 40.0
	costThreadNs = 12.0

	// maxWide bounds the wide instructions (., [^x], \S, \w, \s) of the program, but
	// for rules anchored at the start or starting with a rare literal ("github_pat_").
	// Threads behind a literal are asleep in the estimate above, but a frequent
	// literal wakes them: after each "x", `x(?:\S+\s*){0,126}` fills its 252 wide
	// instructions. A gap of .{0,120} fits.
	maxWide = 128
	// maxInsts bounds the program as a whole (a rule of MaxConditionBytes literal
	// characters compiles to about as many instructions).
	maxInsts = 2 * MaxConditionBytes
)

// maxNsPerByte is the stricter of the two bounds, per byte.
var maxNsPerByte = min(
	float64(costAnswerLimit.Nanoseconds())/costAnswerBytes,
	float64(costArgsLimit.Nanoseconds())/costArgsBytes,
)

// maxLiveThreads is how many live threads fit in the bound.
var maxLiveThreads = int((maxNsPerByte - costBaseNs) / costThreadNs)

// checkRegex checks one regular expression of a rule, field naming it in the error:
// its length, its syntax (RE2, Go's regexp) and its cost bound.
func checkRegex(field, pattern string) error {
	_, err := analyzeRegex(field, pattern)
	return err
}

// analyzeRegex is checkRegex returning the analysis the matcher is built from.
func analyzeRegex(field, pattern string) (*multimatch.Analysis, error) {
	if len(writtenForm(pattern)) > MaxConditionBytes {
		return nil, invalid(field, "longer than %d bytes", MaxConditionBytes)
	}
	a, err := multimatch.Analyze(pattern)
	if err != nil {
		return nil, invalid(field, "not an RE2 regular expression: %v", err)
	}
	if n := a.Insts(); n > maxInsts {
		if rep, size := multimatch.LargestRepeat(pattern); rep != "" {
			return nil, invalid(field, "too costly: the repetition %s expands to %d instructions, the whole program to %d; the limit is %d", rep, size, n, maxInsts)
		}
		return nil, invalid(field, "too costly: the program has %d instructions; the limit is %d", n, maxInsts)
	}
	if n := a.WideInsts(); n > maxWide && !a.Anchored() && !a.RarePrefix() {
		if rep, size := multimatch.LargestRepeat(pattern); rep != "" {
			return nil, invalid(field, "too costly: the repetition %s expands to %d instructions; at most %d may match letters or spaces", rep, size, maxWide)
		}
		return nil, invalid(field, "too costly: %d instructions match letters or spaces; the limit is %d", n, maxWide)
	}
	if live := a.LiveThreads(); live > maxLiveThreads {
		return nil, invalid(field, "too costly: %q keeps %d regexp threads alive on every byte (about %.0f ms on %d KB); the limit is %d threads (%v on %d KB, %v on %d MB)",
			a.Run(), live, float64(costArgsBytes)*(costBaseNs+costThreadNs*float64(live))/1e6, costArgsBytes>>10,
			maxLiveThreads, costAnswerLimit, costAnswerBytes>>10, costArgsLimit, costArgsBytes>>20)
	}
	return a, nil
}

// writtenForm returns the regex a pattern the engine compiles was written as: a
// starts_with_regex or ends_with_regex runs anchored (anchorStart, anchorEnd), and the
// limit on its length is the limit on what the user wrote.
func writtenForm(pattern string) string {
	switch {
	case strings.HasPrefix(pattern, `\A(?:`) && strings.HasSuffix(pattern, `)`):
		return pattern[len(`\A(?:`) : len(pattern)-len(`)`)]
	case strings.HasPrefix(pattern, `(?:`) && strings.HasSuffix(pattern, `)\z`):
		return pattern[len(`(?:`) : len(pattern)-len(`)\z`)]
	}
	return pattern
}

// analysisCache keeps the analyses (compiled regexp, literals, windows) that a reload
// made or validated with, by text, for the next: a row that changed is validated with
// its patterns' analyses made once. The analyses of unchanged rows live in the matchers'
// bases (matcher.go) and are not looked up. Only the reload path uses it, under reloadMu.
type analysisCache map[analysisKey]analysisEntry

// analysisKey is a pattern and the field its errors name.
type analysisKey struct{ field, pattern string }

type analysisEntry struct {
	a   *multimatch.Analysis
	err error
}

// check is checkRegex through the cache c; next collects what this reload used, so
// patterns no longer loaded drop out when next replaces c.
func (c analysisCache) check(next analysisCache) func(field, pattern string) error {
	return func(field, pattern string) error {
		_, err := c.analysis(next, field, pattern)
		return err
	}
}

// analysis returns the analysis of pattern in field from next, else from c, else
// made now; next keeps it.
func (c analysisCache) analysis(next analysisCache, field, pattern string) (*multimatch.Analysis, error) {
	key := analysisKey{field, pattern}
	e, ok := next[key]
	if !ok {
		if e, ok = c[key]; !ok {
			e.a, e.err = analyzeRegex(field, pattern)
		}
		next[key] = e
	}
	return e.a, e.err
}

// prefetch analyses into next, on every core, the patterns (field "condition") that
// neither c nor next holds: a cold load spends most of its time in Analyze, and patterns
// are analysed independently of one another. A few are left to the reload's own pass.
func (c analysisCache) prefetch(next analysisCache, patterns []string) {
	var todo []string
	seen := make(map[string]bool, len(patterns))
	for _, p := range patterns {
		key := analysisKey{"condition", p}
		if _, ok := c[key]; ok || seen[p] {
			continue
		}
		if _, ok := next[key]; ok {
			continue
		}
		seen[p] = true
		todo = append(todo, p)
	}
	out := make([]analysisEntry, len(todo))
	if !inParallel(len(todo), func(i int) { out[i].a, out[i].err = analyzeRegex("condition", todo[i]) }) {
		return
	}
	for i, p := range todo {
		next[analysisKey{"condition", p}] = out[i]
	}
}

// inParallel calls f(0) … f(n-1) from one goroutine per core, each taking the next index,
// and waits for them; it does nothing and returns false when n is too small for that to
// pay (fewer than minPrefetch calls a goroutine).
func inParallel(n int, f func(i int)) bool {
	workers := min(runtime.GOMAXPROCS(0), n/minPrefetch)
	if workers < 2 {
		return false
	}
	var taken atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(taken.Add(1) - 1)
				if i >= n {
					return
				}
				f(i)
			}
		}()
	}
	wg.Wait()
	return true
}

// minPrefetch is how many calls a goroutine of inParallel must have to be worth starting.
const minPrefetch = 32
