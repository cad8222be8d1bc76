package lazydfa

import (
	"regexp/syntax"
	"slices"
)

// Walker walks a program's instructions (Walk); its memory is kept from walk to walk.
// The zero Walker is ready.
type Walker struct {
	seen  []bool
	stack []uint32
}

// Walk calls visit once with each instruction of prog reachable from starts. It goes
// through Alt and AltMatch both ways and through Nop and Capture on its own; from any
// other instruction (empty-width, rune, match, fail) it goes on to in.Out when visit
// returns true.
func (w *Walker) Walk(prog *syntax.Prog, starts []uint32, visit func(pc uint32, in *syntax.Inst) bool) {
	w.seen = slices.Grow(w.seen[:0], len(prog.Inst))[:len(prog.Inst)]
	clear(w.seen)
	w.stack = append(w.stack[:0], starts...)
	for len(w.stack) > 0 {
		pc := w.stack[len(w.stack)-1]
		w.stack = w.stack[:len(w.stack)-1]
		if w.seen[pc] {
			continue
		}
		w.seen[pc] = true
		switch in := &prog.Inst[pc]; in.Op {
		case syntax.InstAlt, syntax.InstAltMatch:
			w.stack = append(w.stack, in.Out, in.Arg)
		case syntax.InstNop, syntax.InstCapture:
			w.stack = append(w.stack, in.Out)
		default:
			if visit(pc, in) {
				w.stack = append(w.stack, in.Out)
			}
		}
	}
}

// Cap returns the walk memory's size, in instructions.
func (w *Walker) Cap() int { return max(cap(w.seen), cap(w.stack)) }
