package streamrules

import (
	"github.com/streamrules/streamrules/internal/multimatch"
)

// textMatcher is the literal-prefilter matcher: one Aho–Corasick pass over the target
// finds which rules could match, and only those run their regexp. Its verdicts are the
// naive loop's (every regexp in turn), proven by differential and fuzz tests in
// internal/multimatch and here. A concrete type, so the hot path's scratch stays on the stack.
type textMatcher = *multimatch.Set

// newTextMatcher builds the matcher of the conditions from their analyses, taken from
// next (this reload's) or the engine's cache. They were validated already, so an error
// means a bug: it is logged, and the rules of this set then never match rather than stop
// a tour.
func (e *Engine) newTextMatcher(patterns []string, next analysisCache) textMatcher {
	as := make([]*multimatch.Analysis, len(patterns))
	for i, p := range patterns {
		a, err := e.analyses.analysis(next, "condition", p)
		if err != nil {
			e.log.Error("stream rules: conditions did not compile; these rules are off", "err", err)
			return multimatch.Build(nil)
		}
		as[i] = a
	}
	return multimatch.Build(as)
}
