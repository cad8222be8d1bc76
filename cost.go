package streamrules

import (
	"fmt"
	"math"
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
// What a regex costs, at most (patternCost). The matcher runs each pattern's cut form
// ([multimatch.Analysis.Run]) on its lazy DFA, and on regexp where the DFA gives up. An
// any_of's plain contains atoms run as one alternation (compilePredicate): one pattern,
// charged once.
//   - The DFA of the cut form is built whole, up to exploreStates states
//     ([multimatch.Analysis.WorstCase]; plain, or pruned by simulation where the plain one
//     is past the limit or large and the pruned one is complete and cheaper to build:
//     then the pattern's own DFA is pruned alike; one complete only pruned is kept only
//     when it costs less than the regexp estimate below, for a pattern that estimate is
//     valid for), on a DFA of its own that the process's memory
//     limit does not apply to: the verdict depends on the rule alone. When that is all of
//     it, the pattern's DFA is owned ([multimatch.Analysis.Own]): it never gives up to
//     regexp and keeps its states whatever the other DFAs hold, so every run, the first
//     included, costs at most costDFANs a byte plus the construction of every state and
//     transition the exploration built (its work, costWorkNs a unit), paid once.
//   - Otherwise the DFA may give up on an adversarial text and regexp runs: per byte
//     costBaseNs plus costThreadNs per live thread, the threads estimated
//     ([multimatch.Analysis.WorstCase]: those of ordinary text, plus the chains that a
//     frequent narrow character restarts at each occurrence, `e\w{20}\d` on `eeae…`).
//
// TestFirstAnswerWithinBound times the first answer of fresh judges on texts built
// against each rule; BenchmarkWorstRules measures warm ones.
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
	// costFieldNs is what walking a field path costs per byte of arguments (field.go:
	// the JSON is checked once and walked without being decoded; BenchmarkFieldWalk).
	costFieldNs = 30.0
	// exploreStates bounds the states validation builds of one pattern's DFA (below
	// lazydfa.MaxStates: a DFA that size keeps all its states).
	exploreStates = 1000
	// costWorkNs is what building a DFA costs per unit of lazydfa's work (an instruction
	// followed, tested or interned; a step and a new state count as several): the process's
	// CPU time over the work, 6.4 to 10.0 ns on small and large DFAs (lazydfa's
	// BenchmarkBuild, -cpu 1), rounded up with a fifth to spare.
	costWorkNs = 12.0
	// maxOwnedBytes bounds the memory one owned DFA (multimatch.Analysis.Own) may hold in
	// states: it is kept whatever the process's other DFAs hold.
	maxOwnedBytes = 4 << 20

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

// regexCost is what one regex costs a rule: ns per byte of the target at most, and build,
// the construction of its DFA, paid at most once per target (the first answers; later
// ones find the states built).
type regexCost struct {
	ns, build float64
	threads   int
	worst     multimatch.Worst
}

// fits reports whether per-byte cost ns and a fixed cost build (ns) fit both bounds.
func fits(ns, build float64) bool {
	return ns*costAnswerBytes+build <= float64(costAnswerLimit.Nanoseconds()) &&
		ns*costArgsBytes+build <= float64(costArgsLimit.Nanoseconds())
}

// onAnswer is what a cost comes to on costAnswerBytes, in ms (the stricter of the two
// bounds for a cost with a large fixed part).
func onAnswer(ns, build float64) float64 { return (ns*costAnswerBytes + build) / 1e6 }

// patternCost is what the analysed pattern costs at most, on any text (see the comment
// on the constants). Without explore it is the regexp estimate alone, which costs
// nothing to read; with it, the DFA is built (up to exploreStates states) and, when that
// is all of it, the pattern costs a DFA's steps plus the construction of every state and
// transition (Worst.Work, costWorkNs each): its DFA is owned from then on
// (multimatch.Analysis.Own), so no run hands the text to regexp, and the first answer
// costs no more than the bound says. The answer depends on the pattern alone.
func patternCost(a *multimatch.Analysis, explore bool) regexCost {
	limit := 0
	if explore {
		limit = exploreStates
	}
	w := a.WorstCase(limit)
	if w.Complete && w.Bytes <= maxOwnedBytes {
		dfa := regexCost{ns: costDFANs, build: float64(w.Work) * costWorkNs, threads: w.Threads, worst: w}
		if w.Simulated && !wideUnbounded(a) {
			// Complete only pruned by simulation: plain, the DFA is past the limit, so
			// without it the pattern runs as it did before simulation, on the lazy DFA
			// that gives up to regexp, with regexp's estimate as its bound (valid: the
			// pattern is not wide). The pruned DFA is owned only when it costs less than
			// that, so simulation never makes a pattern, or a rule adding its patterns
			// up, cost more than it did (when neither fits, the refusal names the DFA). (Its Threads are those of pruned states: fewer
			// than regexp keeps, so the estimate is the plain one.)
			re := regexCost{ns: regexpNs(a.WorstCase(0).Threads), threads: a.WorstCase(0).Threads, worst: w}
			re.worst.Complete, re.worst.Simulated, re.worst.SimStates = false, false, w.States
			if fits(re.ns, re.build) && share(re) <= share(dfa) {
				return re
			}
		}
		a.Own(w)
		return dfa
	}
	return regexCost{ns: regexpNs(w.Threads), threads: w.Threads, worst: w}
}

// share is the larger of the shares of the two bounds that cost c takes.
func share(c regexCost) float64 {
	return max((c.ns*costAnswerBytes+c.build)/float64(costAnswerLimit.Nanoseconds()),
		(c.ns*costArgsBytes+c.build)/float64(costArgsLimit.Nanoseconds()))
}

// wideUnbounded reports whether the pattern has more wide instructions than regexp's
// thread estimate is trusted for (maxWide), neither anchored nor behind a rare literal:
// only a DFA built whole bounds its cost.
func wideUnbounded(a *multimatch.Analysis) bool {
	return a.WideInsts() > maxWide && !a.Anchored() && !a.RarePrefix()
}

// checkRegex checks one regular expression of a rule, field naming it in the error:
// its length, its syntax (RE2, Go's regexp) and its cost bound.
func checkRegex(field, pattern string) error {
	_, _, err := analyzeRegex(field, pattern)
	return err
}

// analyzeRegex is checkRegex returning the analysis the matcher is built from and what
// the pattern costs at most (patternCost).
func analyzeRegex(field, pattern string) (*multimatch.Analysis, regexCost, error) {
	if len(writtenForm(pattern)) > MaxConditionBytes {
		return nil, regexCost{}, invalid(field, "longer than %d bytes", MaxConditionBytes)
	}
	a, err := multimatch.Analyze(pattern)
	if err != nil {
		return nil, regexCost{}, invalid(field, "not an RE2 regular expression: %v", err)
	}
	if n := a.Insts(); n > maxInsts {
		if rep, size := multimatch.LargestRepeat(pattern); rep != "" {
			return nil, regexCost{}, invalid(field, "too costly: the repetition %s expands to %d instructions, the whole program to %d; the limit is %d", rep, size, n, maxInsts)
		}
		return nil, regexCost{}, invalid(field, "too costly: the program has %d instructions; the limit is %d", n, maxInsts)
	}
	c := patternCost(a, false)
	wide := wideUnbounded(a)
	if wide || !fits(c.ns, c.build) {
		c = patternCost(a, true)
	}
	if wide && !c.worst.Complete {
		// The thread estimate is for threads asleep behind literals; past maxWide wide
		// instructions a frequent literal wakes more than it counts. Only a DFA built
		// whole lets such a pattern in.
		if rep, size := multimatch.LargestRepeat(pattern); rep != "" {
			return nil, regexCost{}, invalid(field, "too costly: the repetition %s expands to %d instructions; at most %d may match letters or spaces unless the pattern's DFA is small (this one has more than %d states)", rep, size, maxWide, exploreStates)
		}
		return nil, regexCost{}, invalid(field, "too costly: %d instructions match letters or spaces; the limit is %d unless the pattern's DFA is small (this one has more than %d states)", a.WideInsts(), maxWide, exploreStates)
	}
	if !fits(c.ns, c.build) {
		return nil, regexCost{}, invalid(field, "too costly: %s", explainCost(a, c))
	}
	return a, c, nil
}

// explainCost says why a pattern's cost is past the bound: the construct that costs, what
// it costs, and what kind of change lowers it (an equivalent rewrite is rarely known: the
// any_of case, where one alternation runs as one, is said by ruleCost).
func explainCost(a *multimatch.Analysis, c regexCost) string {
	bound := fmt.Sprintf("the limit is %v on %d KB and %v on %d MB", costAnswerLimit, costAnswerBytes>>10, costArgsLimit, costArgsBytes>>20)
	rep, size := multimatch.LargestRepeat(a.Pattern())
	what := ""
	if rep != "" {
		what = fmt.Sprintf("; its largest repetition, %s, expands to %d instructions", rep, size)
	}
	if c.worst.Complete {
		pruned := ""
		if c.worst.Simulated {
			pruned = " (pruned by simulation: the copies of a repetition that cover others dropped)"
		}
		return fmt.Sprintf("%q has a DFA of %d states%s whose construction costs about %.1f ms on the first answer (%.1f ms with its steps on %d KB; %s)%s; a smaller count, or a narrower class inside it, builds fewer states",
			a.Run(), c.worst.States, pruned, c.build/1e6, onAnswer(c.ns, c.build), costAnswerBytes>>10, bound, what)
	}
	pruned := ""
	if c.worst.SimStates > 0 {
		pruned = fmt.Sprintf(", %d pruned by simulation", c.worst.SimStates)
		if c.worst.SimStates >= exploreStates {
			pruned = ", also pruned by simulation"
		}
	}
	return fmt.Sprintf("%q has no small DFA (more than %d states%s), and regexp can keep %d threads alive on every byte of a text built against it (about %.0f ms on %d MB; %s: at most %d threads)%s; a shorter count, a count that is not exact before the end or a literal, or a class that cannot match the literal after it, keeps fewer alive",
		a.Run(), exploreStates, pruned, c.threads, float64(costArgsBytes)*c.ns/1e6, costArgsBytes>>20, bound, maxLiveThreads, what)
}

// checkRuleCost bounds the rule as a whole: the sum, over the distinct regexes its
// matchers run (rulePatterns) and its fix's regex, of what each costs, plus the walk of a
// field path. cost returns a regex's cost (the regexes are valid); refined, its bound
// with the DFA explored (patternCost), asked only when the cheap bounds add up past the
// limit. The error names the field whose regexes cost most.
func checkRuleCost(r *Rule, cost func(pattern string, refined bool) regexCost) error {
	err := ruleCost(r, func(p string) regexCost { return cost(p, false) })
	if err != nil {
		err = ruleCost(r, func(p string) regexCost { return cost(p, true) })
	}
	return err
}

func ruleCost(r *Rule, cost func(pattern string) regexCost) error {
	var total regexCost
	byField := map[string]float64{} // ms on costAnswerBytes
	count := map[string]int{}
	seen := map[string]bool{}
	add := func(field string, c regexCost) {
		total.ns += c.ns
		total.build += c.build
		byField[field] += onAnswer(c.ns, c.build)
		count[field]++
	}
	for _, n := range rulePatterns(r) {
		if seen[n.pattern] {
			continue
		}
		seen[n.pattern] = true
		add(n.field, cost(n.pattern))
	}
	if r.Fix != nil && r.Fix.ReplaceRegex != nil {
		// regexp.ReplaceAllString: regexp alone, on the answer; its threads as the
		// matcher's would be (cost bound) when the DFA is not known to be small.
		c := regexCost{ns: costBaseNs}
		if a, err := multimatch.Analyze(r.Fix.ReplaceRegex.Pattern); err == nil {
			c.ns = regexpNs(a.WorstCase(0).Threads)
		}
		add("fix.replace_regex.pattern", c)
	}
	if r.Field != "" {
		add("field", regexCost{ns: costFieldNs})
	}
	if fits(total.ns, total.build) {
		return nil
	}
	worst := ""
	for f, ms := range byField {
		if worst == "" || ms > byField[worst] || ms == byField[worst] && f < worst {
			worst = f
		}
	}
	return invalid(worst, "too costly as a whole: the rule's regexes and walks may cost about %.0f ns a byte together, and %.1f ms building their DFAs, on a text built against them (about %.1f ms on %d KB, %.0f ms on %d MB; the limit is %v on %d KB, %v on %d MB), %s's %d about %.1f ms on %d KB; combine the regexes of an any_of or all_of into fewer (one alternation runs as one)",
		total.ns, total.build/1e6, onAnswer(total.ns, total.build), costAnswerBytes>>10, (total.ns*costArgsBytes+total.build)/1e6, costArgsBytes>>20,
		costAnswerLimit, costAnswerBytes>>10, costArgsLimit, costArgsBytes>>20,
		worst, count[worst], byField[worst], costAnswerBytes>>10)
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
	cost    regexCost // patternCost, the DFA explored when refined (or when it had to be)
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
func (c analysisCache) cost(next analysisCache) func(pattern string, refined bool) regexCost {
	return func(pattern string, refined bool) regexCost {
		e := c.entry(next, "condition", pattern)
		if e.err != nil {
			// A form the engine made (an any_of's alternation, see compilePredicate) that
			// does not pass alone: never charged as free.
			return regexCost{ns: math.Inf(1)}
		}
		if refined && !e.refined && e.a != nil {
			e.cost = patternCost(e.a, true)
			e.refined = true
			next[analysisKey{"condition", pattern}] = e
		}
		return e.cost
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
			e.a, e.cost, e.err = analyzeRegex(field, pattern)
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
	if !inParallel(len(todo), func(i int) { out[i].a, out[i].cost, out[i].err = analyzeRegex("condition", todo[i]) }) {
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
