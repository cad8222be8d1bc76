package streamrules

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/streamrules/streamrules/internal/multimatch"
)

// textMatcher is the literal-prefilter matcher: one Aho–Corasick pass over the target
// finds which rules could match, and only those run their regexp. Its verdicts are the
// naive loop's (every regexp in turn), proven by differential and fuzz tests in
// internal/multimatch and here. A concrete type, so the hot path's scratch stays on the stack.
type textMatcher = *matcher

// matcher matches a group's patterns (a tool's rules, the text rules, the early rules), by
// their index in the group ("local" index). It is immutable and shared by every rule set
// it is reused in.
//
// Building the automaton of 10,000 patterns takes longer than an edit may (50 ms), so an
// edit does not rebuild it: a group's matcher after an edit keeps the previous one's
// base, the big set built at the last cold load or merge, and puts only the patterns the
// base lacks into a small overlay set. Both report in their own numbering, mapped to
// local indices here; base patterns no longer in the group are dropped. A merge in the
// background (merge.go) later builds one set of the group again.
type matcher struct {
	base   *matcherBase
	from   []int32                // base index -> local index, -1: not in the group; nil: the identity
	over   *multimatch.Set        // the patterns the base lacks; nil: none
	overTo []int32                // overlay index -> local index
	as     []*multimatch.Analysis // by local index
}

// matcherBase is one built set and the analyses it was built from.
type matcherBase struct {
	set   *multimatch.Set
	as    []*multimatch.Analysis
	once  sync.Once
	index map[string]int32 // pattern -> its first base index, made when first needed
}

// Match appends to dst the local indices, ascending, of the patterns that match text.
func (m *matcher) Match(text string, dst []int) []int {
	if m.from == nil && m.over == nil {
		return m.base.set.Match(text, dst)
	}
	n := len(dst)
	dst = m.base.set.Match(text, dst)
	if m.from != nil {
		k := n
		for _, j := range dst[n:] {
			if i := m.from[j]; i >= 0 {
				dst[k] = int(i)
				k++
			}
		}
		dst = dst[:k]
	}
	if m.over != nil {
		k := len(dst)
		dst = m.over.Match(text, dst)
		for x := k; x < len(dst); x++ {
			dst[x] = int(m.overTo[dst[x]])
		}
	}
	slices.Sort(dst[n:])
	return dst
}

// Explain matches text like Match and says how much work it took (see
// multimatch.Set.Explain). For benchmarks and tuning.
func (m *matcher) Explain(text string) (matched []int, verified, whole int) {
	got, verified, whole := m.base.set.Explain(text)
	for _, j := range got {
		if m.from == nil {
			matched = append(matched, j)
		} else if i := m.from[j]; i >= 0 {
			matched = append(matched, int(i))
		}
	}
	if m.over != nil {
		got, v, w := m.over.Explain(text)
		for _, j := range got {
			matched = append(matched, int(m.overTo[j]))
		}
		verified, whole = verified+v, whole+w
	}
	slices.Sort(matched)
	return matched, verified, whole
}

// overlaid reports whether m has an overlay or drops base patterns: a merge would make it
// one set again.
func (m *matcher) overlaid() bool { return m.from != nil || m.over != nil }

func (b *matcherBase) indexOf(pattern string) (int32, bool) {
	b.once.Do(func() {
		b.index = make(map[string]int32, len(b.as))
		for j := len(b.as) - 1; j >= 0; j-- {
			b.index[b.as[j].Pattern()] = int32(j)
		}
	})
	j, ok := b.index[pattern]
	return j, ok
}

// buildMatcher builds one set of the analysed patterns.
func buildMatcher(as []*multimatch.Analysis) *matcher {
	return &matcher{base: &matcherBase{set: multimatch.Build(as), as: as}, as: as}
}

// When an overlay is worth it. A group below minOverlayBase patterns is rebuilt whole (a
// few milliseconds). Otherwise the overlay may hold up to 1/maxOverlayShare of the group
// (a build of it costs that share of a whole one) and the base may hold as many patterns
// the group no longer has (verifying their candidates is wasted work); past either, the
// group is rebuilt whole at once.
const (
	minOverlayBase  = 256
	maxOverlayShare = 4
)

// matcherOn returns the matcher of the analysed patterns as (by local index) on base:
// the patterns base has are found there, the others go to an overlay. nil when the group
// is better rebuilt whole.
func matcherOn(base *matcherBase, as []*multimatch.Analysis) *matcher {
	if len(base.as) < minOverlayBase {
		return nil
	}
	from := make([]int32, len(base.as))
	for j := range from {
		from[j] = -1
	}
	var overTo []int32
	for i, a := range as {
		if j, ok := base.indexOf(a.Pattern()); ok && from[j] < 0 {
			from[j] = int32(i)
			continue
		}
		overTo = append(overTo, int32(i))
	}
	stale := len(base.as) - (len(as) - len(overTo))
	if len(overTo)*maxOverlayShare > len(as) || stale*maxOverlayShare > len(base.as) {
		return nil
	}
	m := &matcher{base: base, as: as, from: from}
	if stale == 0 && isIdentity(from) {
		m.from = nil
	}
	if len(overTo) > 0 {
		over := make([]*multimatch.Analysis, len(overTo))
		for k, i := range overTo {
			over[k] = as[i]
		}
		m.over, m.overTo = multimatch.Build(over), overTo
	}
	return m
}

func isIdentity(from []int32) bool {
	for j, i := range from {
		if int(i) != j {
			return false
		}
	}
	return true
}

// samePatterns reports whether m matches exactly patterns, in this order.
func (m *matcher) samePatterns(patterns []string) bool {
	if len(m.as) != len(patterns) {
		return false
	}
	for i, a := range m.as {
		if a.Pattern() != patterns[i] {
			return false
		}
	}
	return true
}

// compiles returns the error of the first pattern of r that its group's matcher (or its
// field matcher) would not compile, as a *ValidationError naming the field; nil when all
// compile. The patterns are the ones compileGroup registers (rulePatterns), looked up
// through the reload's cache, so the matcher meets them analysed.
func (e *Engine) compiles(r *Rule, next analysisCache) error {
	for _, n := range rulePatterns(r) {
		if _, err := e.analyses.analysis(next, "condition", n.pattern); err != nil {
			var ve *ValidationError
			if errors.As(err, &ve) {
				return &ValidationError{Field: n.field, Reason: fmt.Sprintf("%s does not compile: %s", n.pattern, ve.Reason), err: ve.err}
			}
			return err
		}
	}
	return nil
}

// neverMatches is the analysis of a pattern no text matches.
var neverMatches = sync.OnceValue(func() *multimatch.Analysis {
	a, err := multimatch.Analyze(`[^\x00-\x{10FFFF}]`)
	if err != nil {
		panic(err)
	}
	return a
})

// newTextMatcherOn is newTextMatcher on the base of prev, the same group's matcher in the
// set in force (nil: none). The conditions were validated already, so an error means a
// bug: it is logged, and the rules of this set then never match rather than stop a tour.
func (e *Engine) newTextMatcherOn(patterns []string, next analysisCache, prev textMatcher) textMatcher {
	if prev != nil && prev.samePatterns(patterns) {
		return prev
	}
	as := make([]*multimatch.Analysis, len(patterns))
	for i, p := range patterns {
		if prev != nil {
			// Not through the cache: the base holds the analyses of its patterns, and the
			// cache, what this reload analysed or validated.
			if j, ok := prev.base.indexOf(p); ok {
				as[i] = prev.base.as[j]
				continue
			}
		}
		a, err := e.analyses.analysis(next, "condition", p)
		if err != nil {
			// Unreachable: compile skipped every rule whose patterns do not compile
			// (Engine.compiles). Should it happen, this pattern alone never matches; the
			// group's other patterns keep theirs.
			e.log.Error("stream rules: a pattern did not compile; it never matches", "pattern", p, "err", err)
			a = neverMatches()
		}
		as[i] = a
	}
	if prev != nil {
		if m := matcherOn(prev.base, as); m != nil {
			if m.overlaid() {
				e.overlaid = true
			}
			return m
		}
	}
	return buildMatcher(as)
}
