package lazydfa

import (
	"regexp/syntax"
	"slices"
)

// What a step and a new state cost besides the instructions they follow, in those
// instructions (the lock, the scratch, sorting, the map lookup; a new state's slices and
// table row), measured by Explore's time over its Work on small and large patterns.
const (
	stepWork  = 40
	stateWork = 120
)

// step computes, under mu, what follows st on r (kindEnd: the end of the text): the
// instructions pending after r in d.pcs and the patterns that matched before it in
// d.out, both sorted and without repeats.
func (d *DFA) step(st *state, r rune, rkind uint8) {
	d.work += stepWork
	d.closure(st, rkind)
	d.pcs = d.pcs[:0]
	d.work += int64(len(d.runes))
	if rkind != kindEnd {
		for _, pc := range d.runes {
			if in := &d.prog.Inst[pc]; MatchRune(in, r) {
				d.pcs = append(d.pcs, in.Out)
			}
		}
	}
	slices.Sort(d.pcs)
	d.pcs = slices.Compact(d.pcs)
	d.prune(rkind)
}

// closure follows, under mu, the empty transitions from st's pending instructions (and
// the starts) under the assertions that hold between st's character and one of kind
// rkind: the rune instructions reached go to d.runes, the patterns that matched to
// d.out (sorted, without repeats). It depends on the kind of the next rune, not on the
// rune: escape reads it once per kind.
func (d *DFA) closure(st *state, rkind uint8) {
	d.closeFrom(st.pcs, st.kind, !d.anchored || st.kind == kindStart, rkind)
}

// closeFrom is closure of the instructions pcs pending after a character of kind kind,
// with the starts when starts is set.
func (d *DFA) closeFrom(pcs []uint32, kind uint8, starts bool, rkind uint8) {
	flags := syntax.EmptyOpContext(repRune[kind], repRune[rkind])
	d.gen++
	if d.gen == 0 {
		clear(d.seen)
		d.gen = 1
	}
	d.runes, d.out = d.runes[:0], d.out[:0]
	stack := append(d.stack[:0], pcs...)
	if starts {
		stack = append(stack, d.starts...)
	}
	for len(stack) > 0 {
		pc := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		d.work++
		if d.seen[pc] == d.gen {
			continue
		}
		d.seen[pc] = d.gen
		in := &d.prog.Inst[pc]
		switch in.Op {
		case syntax.InstAlt, syntax.InstAltMatch:
			stack = append(stack, in.Arg, in.Out)
		case syntax.InstNop, syntax.InstCapture:
			stack = append(stack, in.Out)
		case syntax.InstEmptyWidth:
			if syntax.EmptyOp(in.Arg)&^flags == 0 {
				stack = append(stack, in.Out)
			}
		case syntax.InstMatch:
			d.out = append(d.out, d.matchOf[pc])
		case syntax.InstRune, syntax.InstRune1, syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
			d.runes = append(d.runes, pc)
		}
	}
	d.stack = stack
	slices.Sort(d.out)
	d.out = slices.Compact(d.out)
}
