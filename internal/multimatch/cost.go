package multimatch

import (
	"regexp/syntax"
	"slices"
	"sync"

	"github.com/streamrules/streamrules/internal/lazydfa"
)

// A wide instruction is a class of letters or of spaces, which prose is made
// of (., [^"], \S, \w, [a-z], \s): a thread waiting on it, in a loop or a
// counted repetition, survives most bytes. Narrow ones (literals, \d,
// [\p{So}], [A-Z]) let a thread through only where the text has their runes.
func wide(in *syntax.Inst) bool {
	switch in.Op {
	case syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
		return true
	case syntax.InstRune:
		n := 0
		for i := 0; i+1 < len(in.Rune) && n < 16 && in.Op == syntax.InstRune; i += 2 {
			n += int(in.Rune[i+1]-in.Rune[i]) + 1
		}
		return n >= 16 && in.MatchRune('e') || n >= 4 && in.MatchRune(' ')
	}
	return false
}

// progBuf is a pattern's compiled program (syntax.Compile) and the working memory of
// the walks over it; the memory is kept from pattern to pattern in progBufPool.
type progBuf struct {
	prog  *syntax.Prog
	seen  []bool
	stack []uint32
}

var progBufPool = sync.Pool{New: func() any { return new(progBuf) }}

// maxPooledInsts bounds the walk memory that goes back to the pool: a rare huge
// program's is left to the garbage collector rather than kept.
const maxPooledInsts = 1 << 16

// release drops the program and returns the walk memory to the pool.
func (b *progBuf) release() {
	b.prog = nil
	if cap(b.seen) > maxPooledInsts || cap(b.stack) > maxPooledInsts {
		return
	}
	progBufPool.Put(b)
}

// liveThreads counts the rune instructions reachable from the start of the
// unanchored program through wide instructions (and \B): the threads that stay alive on ordinary text,
// each costing the regexp engine a step on every byte. [\s\S]{0,1000} at the
// start of a pattern keeps 1,000; a literal first keeps about none.
// It reads b.prog and works in b's memory.
func (b *progBuf) liveThreads() int {
	prog := b.prog
	seen := slices.Grow(b.seen[:0], len(prog.Inst))[:len(prog.Inst)]
	clear(seen)
	count := 0
	stack := append(b.stack[:0], uint32(prog.Start))
	for len(stack) > 0 {
		pc := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[pc] {
			continue
		}
		seen[pc] = true
		in := &prog.Inst[pc]
		switch in.Op {
		case syntax.InstAlt, syntax.InstAltMatch:
			stack = append(stack, in.Out, in.Arg)
		case syntax.InstCapture, syntax.InstNop:
			stack = append(stack, in.Out)
		case syntax.InstEmptyWidth:
			// \A, ^, $ and \b hold at few positions: a chain behind them
			// gets a thread now and then, not on every byte.
			if syntax.EmptyOp(in.Arg)&^syntax.EmptyNoWordBoundary == 0 {
				stack = append(stack, in.Out)
			}
		case syntax.InstRune, syntax.InstRune1, syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
			count++
			if wide(in) {
				stack = append(stack, in.Out)
			}
		}
	}
	b.seen, b.stack = seen, stack
	return count
}

// restartThreads counts the threads liveThreads misses: a narrow instruction reachable
// from the start through wide ones (the `e` of `\w*e\w{20}\d`, run as `e\w{20}\d`) gets a
// thread at every occurrence of its character, and when the instructions behind it read
// that character too, a text dense in it (`eeae…`) keeps a thread on each of them. It
// returns the most such instructions one character keeps alive, over the characters of
// the narrow instructions the start reaches.
func (b *progBuf) restartThreads() int {
	prog := b.prog
	entries := b.wideWalk([]uint32{uint32(prog.Start)}, nil)
	best := 0
	for _, pc := range entries {
		in := &prog.Inst[pc]
		for _, c := range repChars {
			if !in.MatchRune(c) {
				continue
			}
			best = max(best, b.chainOn(in.Out, c))
		}
	}
	return best
}

// repChars are the characters restartThreads tries: ASCII and two others.
var repChars = func() []rune {
	var rs []rune
	for c := rune(0); c < 0x80; c++ {
		rs = append(rs, c)
	}
	return append(rs, 0xe9, 0x4e2d)
}()

// chainOn counts the rune instructions reachable from pc through instructions that
// match c (and empty ones): the threads a run of c's keeps alive behind one start.
func (b *progBuf) chainOn(pc uint32, c rune) int {
	prog := b.prog
	seen := make([]bool, len(prog.Inst))
	n := 0
	stack := []uint32{pc}
	for len(stack) > 0 {
		pc := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[pc] {
			continue
		}
		seen[pc] = true
		in := &prog.Inst[pc]
		switch in.Op {
		case syntax.InstAlt, syntax.InstAltMatch:
			stack = append(stack, in.Out, in.Arg)
		case syntax.InstCapture, syntax.InstNop, syntax.InstEmptyWidth:
			stack = append(stack, in.Out)
		case syntax.InstRune, syntax.InstRune1, syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
			if in.MatchRune(c) {
				n++
				stack = append(stack, in.Out)
			}
		}
	}
	return n
}

// wideWalk follows the program from starts through empty and wide instructions; it
// calls each (when not nil) with every rune instruction met, and returns the narrow ones.
func (b *progBuf) wideWalk(starts []uint32, each func(pc uint32)) []uint32 {
	prog := b.prog
	seen := make([]bool, len(prog.Inst))
	var narrow []uint32
	stack := slices.Clone(starts)
	for len(stack) > 0 {
		pc := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[pc] {
			continue
		}
		seen[pc] = true
		in := &prog.Inst[pc]
		switch in.Op {
		case syntax.InstAlt, syntax.InstAltMatch:
			stack = append(stack, in.Out, in.Arg)
		case syntax.InstCapture, syntax.InstNop, syntax.InstEmptyWidth:
			stack = append(stack, in.Out)
		case syntax.InstRune, syntax.InstRune1, syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
			if each != nil {
				each(pc)
			}
			if wide(in) {
				stack = append(stack, in.Out)
			} else {
				narrow = append(narrow, pc)
			}
		}
	}
	return narrow
}

// wideInsts counts the program's wide rune instructions (see wide): the instructions
// that keep a thread alive on ordinary text.
func wideInsts(prog *syntax.Prog) int {
	n := 0
	for pc := range prog.Inst {
		if wide(&prog.Inst[pc]) {
			n++
		}
	}
	return n
}

// LargestRepeat returns the counted repetition of the pattern whose
// expansion is the biggest, as written (x{n,m}), and the instructions it
// expands to; "" when the pattern has none.
func LargestRepeat(pattern string) (string, int) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return "", 0
	}
	best, bestN := "", 0
	var walk func(*syntax.Regexp)
	walk = func(re *syntax.Regexp) {
		if re.Op == syntax.OpRepeat {
			if p, err := syntax.Compile(re.Simplify()); err == nil && len(p.Inst) > bestN {
				best, bestN = re.String(), len(p.Inst)
			}
		}
		for _, s := range re.Sub {
			walk(s)
		}
	}
	walk(re)
	return best, bestN
}

// WorstCase bounds what the pattern's form that runs can cost on any text, adversarial
// ones included. It builds the whole DFA of that form (a DFA of its own, dropped after)
// up to limit states (none when limit is 0: the estimate alone). complete says it has them all: then states is their number, and
// threads the most rune instructions one state holds, which is the most threads regexp
// keeps alive on any text. Otherwise threads is an estimate: the live threads of
// ordinary text (LiveThreads) plus those a frequent narrow character wakes at each of
// its occurrences (restartThreads).
func (a *Analysis) WorstCase(limit int) (states, threads int, complete bool) {
	if limit <= 0 {
		return 0, a.live + a.restart, false
	}
	d, err := lazydfa.Compile(a.runText)
	if err == nil {
		states, threads, complete = d.Explore(limit)
		if complete {
			return states, threads, true
		}
	}
	return states, a.live + a.restart, false
}
