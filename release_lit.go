package streamrules

import (
	"regexp/syntax"
	"strings"
	"unicode"

	"github.com/streamrules/streamrules/internal/rxprog"
)

// The claim rule's shape: a replace fix whose replacement is a plain text (no group, no
// variable) over a pattern [\b]K[C*] (K a literal, C a character class), on a rule that,
// its context folded, fires exactly when the answer contains [\b]K (unbacked_tool_claim
// once no generate_speech call succeeded). The fix is applied once (ReplaceAllString);
// it streams as the normal form does (replState) because it is proven per rule that no
// match ever involves a replacement, so rewriting the leftmost match again and again is
// replacing each match once:
//
//   - K does not occur in the replacement L, nor straddle either of its ends (K's head
//     is never L's tail nor K's tail L's head): no match starts inside L, and none that
//     starts before L reaches into it (its literal would, and a match whose literal ends
//     before L was the leftmost match, which L replaces);
//   - with \b, the text after a match is judged as before: a match ends where C stops,
//     so K cannot start right after it (K's first rune is in C), or, without C, the
//     match's last rune and L's are alike for \b.
//
// A match is final once a rune outside C comes (or, without C, once K is read).

// litPlan is a claim-shaped fix: its stream plan and the condition it must be armed on.
type litPlan struct {
	repl *replPlan
	cond string // the simplified pattern [\b]K the folded rule must fire on
	// on marks the rule's atoms (releasePlan.atoms) whose pattern is cond, found once
	// when the plan is made (markAtoms), so a move's releaser parses nothing.
	on []bool
}

// planLit returns the plan of r's replace fix when it has the claim's shape, or nil.
func planLit(r *Rule) *litPlan {
	f := r.Fix.ReplaceRegex
	if r.Negate || r.Field != "" || f == nil || strings.ContainsAny(f.With, "$") || strings.Contains(f.With, "{{") {
		return nil
	}
	tree, err := syntax.Parse(f.Pattern, syntax.Perl)
	if err != nil {
		return nil
	}
	tree = tree.Simplify()
	parts := []*syntax.Regexp{tree} // the pattern as a concatenation: [\b] K [C*]
	if tree.Op == syntax.OpConcat {
		parts = tree.Sub
	}
	subs := parts
	wb := len(subs) > 0 && subs[0].Op == syntax.OpWordBoundary
	if wb {
		subs = subs[1:]
	}
	if len(subs) == 0 || len(subs) > 2 || subs[0].Op != syntax.OpLiteral || len(subs[0].Rune) == 0 {
		return nil
	}
	k, fold := subs[0].Rune, subs[0].Flags&syntax.FoldCase != 0
	var class *syntax.Regexp
	if len(subs) == 2 {
		if subs[1].Op != syntax.OpStar || subs[1].Sub[0].Op != syntax.OpCharClass {
			return nil
		}
		class = subs[1].Sub[0]
	}
	inClass := func(r rune) bool {
		for i := 0; i+1 < len(class.Rune); i += 2 {
			if class.Rune[i] <= r && r <= class.Rune[i+1] {
				return true
			}
		}
		return false
	}
	eq := func(a, b rune) bool { return a == b || fold && rxprog.FoldsTo(a, b) }
	l := []rune(f.With)
	if len(l) == 0 {
		return nil // a deletion joins the text on its two sides, which may make a match
	}
	// K nowhere in L, nor straddling L's start or end.
	for i := -len(k) + 1; i < len(l); i++ {
		ok := false // K placed at L's offset i differs from L somewhere they overlap
		for j := range k {
			if p := i + j; p >= 0 && p < len(l) && !eq(k[j], l[p]) {
				ok = true
				break
			}
		}
		if !ok {
			return nil
		}
	}
	if wb {
		word := func(r rune) bool { return r < 128 && syntax.IsWordChar(r) }
		for r := k[0]; ; {
			if !word(r) {
				return nil // a valid start is then one after a non-word rune (replState.valid)
			}
			if r = unicode.SimpleFold(r); r == k[0] || !fold {
				break
			}
		}
		switch {
		case class != nil:
			for r := k[0]; ; {
				if !inClass(r) {
					return nil
				}
				if r = unicode.SimpleFold(r); r == k[0] || !fold {
					break
				}
			}
		case word(l[len(l)-1]) != word(k[len(k)-1]) || fold && !rxprog.FoldsAlike(k[len(k)-1], word):
			return nil
		}
	}
	repl := compileRepl(f, tree)
	if repl == nil {
		return nil
	}
	repl.wb, repl.lit, repl.grp = wb, l, len(l)
	cond := &syntax.Regexp{Op: syntax.OpConcat, Flags: tree.Flags, Sub: parts[:len(parts)-len(subs)+1]}
	return &litPlan{repl: repl, cond: rxprog.Simplified(cond)}
}

// markAtoms marks which of the rule's atoms are a match of the plan's condition.
func (l *litPlan) markAtoms(atoms []*relAtom) {
	l.on = make([]bool, len(atoms))
	for i, a := range atoms {
		t, err := syntax.Parse(a.pattern, syntax.Perl)
		l.on[i] = err == nil && rxprog.Simplified(t) == l.cond
	}
}

// armedOn reports whether fires, a rule's tree folded on the tour's facts, is exactly a
// match of the plan's condition.
func (l *litPlan) armedOn(fires relNode) bool {
	return fires.op == relAtomOp && l.on[fires.atom]
}
