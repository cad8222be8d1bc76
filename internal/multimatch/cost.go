package multimatch

import (
	"regexp/syntax"
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
	prog *syntax.Prog
	walk lazydfa.Walker
}

var progBufPool = sync.Pool{New: func() any { return new(progBuf) }}

// maxPooledInsts bounds the walk memory that goes back to the pool: a rare huge
// program's is left to the garbage collector rather than kept.
const maxPooledInsts = 1 << 16

// release drops the program and returns the walk memory to the pool.
func (b *progBuf) release() {
	b.prog = nil
	if b.walk.Cap() > maxPooledInsts {
		return
	}
	progBufPool.Put(b)
}

// isRune reports whether in consumes a rune.
func isRune(in *syntax.Inst) bool {
	switch in.Op {
	case syntax.InstRune, syntax.InstRune1, syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
		return true
	}
	return false
}

// liveThreads counts the rune instructions reachable from the start of the
// unanchored program through wide instructions (and \B): the threads that stay alive on ordinary text,
// each costing the regexp engine a step on every byte. [\s\S]{0,1000} at the
// start of a pattern keeps 1,000; a literal first keeps about none.
// It reads b.prog and works in b's memory.
func (b *progBuf) liveThreads() int {
	count := 0
	b.walk.Walk(b.prog, []uint32{uint32(b.prog.Start)}, func(_ uint32, in *syntax.Inst) bool {
		switch {
		case in.Op == syntax.InstEmptyWidth:
			// \A, ^, $ and \b hold at few positions: a chain behind them
			// gets a thread now and then, not on every byte.
			return syntax.EmptyOp(in.Arg)&^syntax.EmptyNoWordBoundary == 0
		case isRune(in):
			count++
			return wide(in)
		}
		return false
	})
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
	best := 0
	for _, pc := range b.narrowEntries() {
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
	n := 0
	b.walk.Walk(b.prog, []uint32{pc}, func(_ uint32, in *syntax.Inst) bool {
		switch {
		case in.Op == syntax.InstEmptyWidth:
			return true
		case isRune(in) && in.MatchRune(c):
			n++
			return true
		}
		return false
	})
	return n
}

// narrowEntries follows the program from its start through empty and wide instructions,
// and returns the narrow rune instructions it meets.
func (b *progBuf) narrowEntries() []uint32 {
	var narrow []uint32
	b.walk.Walk(b.prog, []uint32{uint32(b.prog.Start)}, func(pc uint32, in *syntax.Inst) bool {
		switch {
		case in.Op == syntax.InstEmptyWidth:
			return true
		case isRune(in):
			if wide(in) {
				return true
			}
			narrow = append(narrow, pc)
		}
		return false
	})
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

// Worst is what WorstCase found of a pattern's form that runs.
type Worst struct {
	// Threads is, when Complete, the most threads regexp keeps alive on any text;
	// otherwise an estimate: the live threads of ordinary text (LiveThreads) plus those a
	// frequent narrow character wakes at each of its occurrences (restartThreads).
	Threads int
	// States, Work and Bytes are the DFA's states, what building all of them costs (in
	// lazydfa's units: instructions followed, tested and interned) and the memory they
	// hold; see lazydfa.Exploration.
	States int
	Work   int64
	Bytes  int64
	// Complete says the DFA was built whole within the limit: the pattern's DFA then
	// never gives up (lazydfa.DFA.Own), and no text costs more than Work of construction
	// and a table step per byte.
	Complete bool
	// Simulated says the DFA is complete only pruned by simulation (lazydfa.DFA.Simulate):
	// plain, it had more than limit states. Own then makes the pattern's DFA simulated
	// too, and Work includes computing the relation.
	Simulated bool
	// SimStates is what the DFA pruned by simulation came to when WorstCase tried it and
	// it was not kept (past limit: limit; 0: not tried, or the relation was too costly).
	SimStates int
}

// WorstCase bounds what the pattern's form that runs can cost on any text, adversarial
// ones included. It builds the whole DFA of that form (a DFA of its own, dropped after)
// up to limit states (none when limit is 0: the estimate alone). When that is all of it,
// the pattern's own DFA is owned from then on (lazydfa.DFA.Own): it never gives up to
// regexp, nor drops its states for the process's memory limit, so what WorstCase found is
// what every run, the first included, can cost at most. The answer depends on the
// pattern alone, never on the process's other DFAs.
func (a *Analysis) WorstCase(limit int) Worst {
	w := Worst{Threads: a.live + a.restart}
	if limit <= 0 {
		return w
	}
	d, err := lazydfa.Compile(a.runText)
	if err != nil {
		return w
	}
	x := d.Explore(limit)
	var simWork int64
	if !x.Complete || x.States > simAbove {
		// Past the limit plain, or large: pruned by simulation, wide bounded repetitions
		// (`[ A-Z0-9_-]{0,20}PRIVATE KEY`) may have far fewer states. Kept when it is
		// complete and cheaper to build.
		d, err = lazydfa.Compile(a.runText)
		if err != nil {
			return w
		}
		if sw, ok := d.Simulate(); ok {
			sx := d.Explore(limit)
			if sx.Complete && (!x.Complete || sx.Work+sw < x.Work) {
				x, simWork, w.Simulated = sx, sw, true
			} else {
				w.SimStates = sx.States
			}
		}
	}
	w.States, w.Work, w.Bytes = x.States, x.Work, x.Bytes
	if x.Complete {
		w.Threads, w.Complete = x.Widest, true
		if w.Simulated {
			w.Work += simWork
		}
	}
	return w
}

// simAbove is the size past which WorstCase tries simulation on a complete DFA.
const simAbove = 64

// Own makes the pattern's DFA owned (lazydfa.DFA.Own) with the states WorstCase found:
// the caller relies on the DFA never handing a text to regexp. The first answer builds
// the states; Own does not build them.
func (a *Analysis) Own(w Worst) {
	if !w.Complete {
		return
	}
	if w.Simulated {
		a.sim.Store(true)
	}
	a.own.Store(int64(w.States))
	if a.dfaMade.Load() {
		if w.Simulated {
			a.dfa.Simulate()
		}
		a.dfa.Own(w.States)
	}
}

// owned reports whether Own was called: the pattern runs on its own DFA only.
func (a *Analysis) owned() bool { return a.own.Load() > 0 }
