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
// A rule that validates must cost at most costAnswerLimit on an answer of
// costAnswerBytes and costArgsLimit on costArgsBytes of tool arguments, whatever the
// text, adversarial texts included: the bound is per rule, the sum over every regex its
// group's matcher runs for it (its condition, every regex of its predicate and
// applies_when trees as compiled, its fix's regex) plus, for a field rule, the walk of
// the arguments. Validate rejects, naming the field, a regex or a rule past it.
//
// What a regex costs per byte, at most (patternCost). The matcher runs each pattern's cut
// form ([multimatch.Analysis.Run]) on its lazy DFA, and on regexp where the DFA gives up.
//   - The DFA of the cut form is built whole, up to exploreStates states
//     ([multimatch.Analysis.WorstCase]). When that is all of it, the DFA never needs a
//     state it has not built once (exploreStates is below lazydfa.MaxStates, so they are
//     kept), and non-ASCII runes step by class: it gives up only while its first states
//     are built (more than 64 in one run), a few times in its life, or when the process's
//     DFAs hold their memory limit. The pattern then costs costDFANs a byte.
//   - Otherwise the DFA may give up on an adversarial text and regexp runs: per byte
//     costBaseNs plus costThreadNs per live thread, the threads estimated
//     ([multimatch.Analysis.WorstCase]: those of ordinary text, plus the chains that a
//     frequent narrow character restarts at each occurrence, `e\w{20}\d` on `eeae…`).
//
// BenchmarkWorstRules measures the worst rules that pass, on texts a search builds
// against each.
const (
	costAnswerBytes = 64 << 10
	costAnswerLimit = 10 * time.Millisecond
	costArgsBytes   = 1 << 20
	costArgsLimit   = 100 * time.Millisecond

	// Per byte: what regexp costs keeping no thread alive, and what each live thread adds
	// (Go 1.26 regexp; BenchmarkWorstRules; rounded up).
	costBaseNs   = 40.0
	costThreadNs = 12.0
	// costDFANs is what a pattern whose DFA is small costs per byte on the worst text the
	// search of BenchmarkWorstRules builds for it, rounded up: a DFA step, the windows and
	// the automaton's share.
	costDFANs = 8.0
	// costFieldNs is what walking a field path costs per byte of arguments (fieldwalk.go:
	// the JSON is checked once and walked without being decoded; BenchmarkFieldWalk).
	costFieldNs = 30.0
	// exploreStates bounds the states validation builds of one pattern's DFA (below
	// lazydfa.MaxStates: a DFA that size keeps all its states).
	exploreStates = 1000

	// maxWide bounds the wide instructions (., [^x], \S, \w, \s) of the program, but
	// for rules anchored at the start or starting with a rare literal ("github_pat_").
	// Threads behind a literal are asleep on most text, but a frequent literal wakes
	// them: after each "x", `x(?:\S+\s*){0,126}` fills its 252 wide instructions.
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

// maxLiveThreads is how many live threads regexp may keep for a pattern alone to fit in
// the bound when its DFA is not known to be small.
var maxLiveThreads = int((maxNsPerByte - costBaseNs) / costThreadNs)

// regexpNs is what regexp costs per byte keeping threads alive.
func regexpNs(threads int) float64 { return costBaseNs + costThreadNs*float64(threads) }

// patternCost is what the analysed pattern costs per byte at most, on any text (see the
// comment on the constants), and the threads regexp could keep alive for it. Without
// explore it is the regexp estimate alone, which costs nothing to read; with it, the
// DFA is built (up to exploreStates states, a millisecond or so) and, when that is all
// of it, the pattern costs a DFA's steps.
func patternCost(a *multimatch.Analysis, explore bool) (ns float64, threads int) {
	limit := 0
	if explore {
		limit = exploreStates
	}
	_, threads, complete := a.WorstCase(limit)
	if complete {
		return costDFANs, threads
	}
	return regexpNs(threads), threads
}

// checkRegex checks one regular expression of a rule, field naming it in the error:
// its length, its syntax (RE2, Go's regexp) and its cost bound.
func checkRegex(field, pattern string) error {
	_, _, err := analyzeRegex(field, pattern)
	return err
}

// analyzeRegex is checkRegex returning the analysis the matcher is built from and what
// the pattern costs per byte at most (patternCost).
func analyzeRegex(field, pattern string) (*multimatch.Analysis, float64, error) {
	if len(writtenForm(pattern)) > MaxConditionBytes {
		return nil, 0, invalid(field, "longer than %d bytes", MaxConditionBytes)
	}
	a, err := multimatch.Analyze(pattern)
	if err != nil {
		return nil, 0, invalid(field, "not an RE2 regular expression: %v", err)
	}
	if n := a.Insts(); n > maxInsts {
		if rep, size := multimatch.LargestRepeat(pattern); rep != "" {
			return nil, 0, invalid(field, "too costly: the repetition %s expands to %d instructions, the whole program to %d; the limit is %d", rep, size, n, maxInsts)
		}
		return nil, 0, invalid(field, "too costly: the program has %d instructions; the limit is %d", n, maxInsts)
	}
	if n := a.WideInsts(); n > maxWide && !a.Anchored() && !a.RarePrefix() {
		if rep, size := multimatch.LargestRepeat(pattern); rep != "" {
			return nil, 0, invalid(field, "too costly: the repetition %s expands to %d instructions; at most %d may match letters or spaces", rep, size, maxWide)
		}
		return nil, 0, invalid(field, "too costly: %d instructions match letters or spaces; the limit is %d", n, maxWide)
	}
	ns, threads := patternCost(a, false)
	if ns > maxNsPerByte {
		ns, threads = patternCost(a, true)
	}
	if ns > maxNsPerByte {
		return nil, 0, invalid(field, "too costly: %q can keep %d regexp threads alive on every byte of a text built against it (about %.0f ms on %d MB); the limit is %d threads (%v on %d KB, %v on %d MB)",
			a.Run(), threads, float64(costArgsBytes)*ns/1e6, costArgsBytes>>20,
			maxLiveThreads, costAnswerLimit, costAnswerBytes>>10, costArgsLimit, costArgsBytes>>20)
	}
	return a, ns, nil
}

// checkRuleCost bounds the rule as a whole: the sum, over the distinct regexes its
// matchers run (rulePatterns) and its fix's regex, of what each costs per byte, plus the
// walk of a field path. cost returns a regex's cost per byte (the regexes are valid);
// refined, its bound with the DFA explored (patternCost), asked only when the cheap
// bounds add up past the limit. The error names the field whose regexes cost most.
func checkRuleCost(r *Rule, cost func(pattern string, refined bool) float64) error {
	err := ruleCost(r, func(p string) float64 { return cost(p, false) })
	if err != nil {
		err = ruleCost(r, func(p string) float64 { return cost(p, true) })
	}
	return err
}

func ruleCost(r *Rule, cost func(pattern string) float64) error {
	total := 0.0
	byField := map[string]float64{}
	count := map[string]int{}
	seen := map[string]bool{}
	for _, n := range rulePatterns(r) {
		if seen[n.pattern] {
			continue
		}
		seen[n.pattern] = true
		ns := cost(n.pattern)
		total += ns
		byField[n.field] += ns
		count[n.field]++
	}
	if r.Fix != nil && r.Fix.ReplaceRegex != nil {
		// regexp.ReplaceAllString: regexp alone, on the answer; its threads as the
		// matcher's would be (cost bound) when the DFA is not known to be small.
		ns := costBaseNs
		if a, err := multimatch.Analyze(r.Fix.ReplaceRegex.Pattern); err == nil {
			_, threads, _ := a.WorstCase(0)
			ns = regexpNs(threads)
		}
		total += ns
		byField["fix.replace_regex.pattern"] += ns
		count["fix.replace_regex.pattern"]++
	}
	if r.Field != "" {
		total += costFieldNs
		byField["field"] += costFieldNs
		count["field"]++
	}
	if total <= maxNsPerByte {
		return nil
	}
	worst := ""
	for f, ns := range byField {
		if worst == "" || ns > byField[worst] || ns == byField[worst] && f < worst {
			worst = f
		}
	}
	return invalid(worst, "too costly as a whole: the rule's regexes and walks may cost about %.0f ns a byte together on a text built against them (about %.0f ms on %d MB; the limit is %v on %d KB, %v on %d MB), %s's %d about %.0f; combine the regexes of an any_of or all_of into fewer (one alternation runs as one)",
		total, total*costArgsBytes/1e6, costArgsBytes>>20, costAnswerLimit, costAnswerBytes>>10, costArgsLimit, costArgsBytes>>20,
		worst, count[worst], byField[worst])
}

// namedPattern is a regex a rule's matcher runs and the field it comes from.
type namedPattern struct{ field, pattern string }

// rulePatterns lists the regexes the matchers run for r, as compileGroup registers them:
// the condition of a rule without a predicate, and the compiled forms of its predicate
// and applies_when trees.
func rulePatterns(r *Rule) []namedPattern {
	var list []namedPattern
	if r.Predicate == nil {
		list = append(list, namedPattern{"condition", r.Condition})
	}
	for _, t := range []struct {
		field string
		p     *Predicate
	}{{"predicate", r.Predicate}, {"applies_when", r.AppliesWhen}} {
		if t.p != nil {
			var ps patterns
			compilePredicate(t.p, &ps)
			for _, p := range ps.list {
				list = append(list, namedPattern{t.field, p})
			}
		}
	}
	return list
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
	a       *multimatch.Analysis
	ns      float64 // patternCost, the DFA explored when refined (or when it had to be)
	refined bool
	err     error
}

// check is checkRegex through the cache c; next collects what this reload used, so
// patterns no longer loaded drop out when next replaces c.
func (c analysisCache) check(next analysisCache) func(field, pattern string) error {
	return func(field, pattern string) error {
		_, err := c.analysis(next, field, pattern)
		return err
	}
}

// cost returns patternCost of pattern (a valid regex) through the cache, as check does;
// refined, with the DFA explored (kept in next).
func (c analysisCache) cost(next analysisCache) func(pattern string, refined bool) float64 {
	return func(pattern string, refined bool) float64 {
		e := c.entry(next, "condition", pattern)
		if refined && !e.refined && e.a != nil {
			e.ns, _ = patternCost(e.a, true)
			e.refined = true
			next[analysisKey{"condition", pattern}] = e
		}
		return e.ns
	}
}

// analysis returns the analysis of pattern in field from next, else from c, else
// made now; next keeps it.
func (c analysisCache) analysis(next analysisCache, field, pattern string) (*multimatch.Analysis, error) {
	e := c.entry(next, field, pattern)
	return e.a, e.err
}

func (c analysisCache) entry(next analysisCache, field, pattern string) analysisEntry {
	key := analysisKey{field, pattern}
	e, ok := next[key]
	if !ok {
		if e, ok = c[key]; !ok {
			e.a, e.ns, e.err = analyzeRegex(field, pattern)
		}
		next[key] = e
	}
	return e
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
	if !inParallel(len(todo), func(i int) { out[i].a, out[i].ns, out[i].err = analyzeRegex("condition", todo[i]) }) {
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
