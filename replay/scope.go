package replay

import (
	"github.com/streamrules/streamrules"
)

// Applicability says whether a rule could fire in a move at all. It is what "in scope"
// counts, and what a rate is taken over.
type Applicability int

const (
	// Applies: the rule's conditions on the move hold; it fires if its target matches.
	Applies Applicability = iota
	// OutOfScope: the rule's `when` does not hold in the move's environment.
	OutOfScope
)

// applicability is the one place a backtest decides whether rule r applies to move mv:
// today its `when`, asked of the engine's own move (so an environment name the engine
// ignores does not hold here either). Rule predicates beyond `when` belong here too,
// each with its own Applicability value.
func applicability(r *streamrules.Rule, mv *streamrules.Move) Applicability {
	for _, w := range r.When {
		if !mv.Has(w) {
			return OutOfScope
		}
	}
	return Applies
}
