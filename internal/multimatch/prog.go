// Adapted from Go's regexp/syntax/compile.go: Copyright 2011 The Go Authors. All rights
// reserved. Use of this source code is governed by a BSD-style license that can be
// found in Go's LICENSE file (https://go.dev/LICENSE).

package multimatch

import (
	"regexp/syntax"
	"sync"
	"unicode"
)

// Analyze reads four facts from a pattern's compiled program (its size, its live
// threads, its wide instructions, whether it has a literal prefix) and then drops the
// program: the pattern's lazy DFA (and, where that gives up, regexp) compiles its own
// when the pattern is first verified. syntax.Compile grows a
// fresh instruction slice for each pattern: 70 MB of the 240 MB that analysing 10,000
// patterns allocated. compileInto is the same compiler writing into a pooled slice: the
// same instructions in the same order (TestCompileIntoSame and FuzzSimplifyCompileSame
// hold it to syntax.Compile), so every fact, and the cost bound read from them, is
// unchanged.

// progBuf is a program and the working memory of the walks over it, kept in progPool.
type progBuf struct {
	prog  syntax.Prog
	seen  []bool
	stack []uint32
}

var progPool = sync.Pool{New: func() any { return new(progBuf) }}

// maxPooledInsts bounds the programs whose memory goes back to the pool: a rare huge
// one is left to the garbage collector rather than kept.
const maxPooledInsts = 1 << 16

// compileProg compiles re (simplified) into a pooled program; release it with
// releaseProg once its facts are read.
func compileProg(re *syntax.Regexp) *progBuf {
	b := progPool.Get().(*progBuf)
	compileInto(&b.prog, re)
	return b
}

func releaseProg(b *progBuf) {
	if cap(b.prog.Inst) > maxPooledInsts {
		return
	}
	clear(b.prog.Inst) // the runes belong to the pattern's tree: do not keep it alive
	b.prog.Inst = b.prog.Inst[:0]
	progPool.Put(b)
}

// compileInto is syntax.Compile into p, reusing p's instruction slice. It follows
// regexp/syntax's compile.go (Go 1.26) step for step.
func compileInto(p *syntax.Prog, re *syntax.Regexp) {
	p.Inst = p.Inst[:0]
	p.NumCap = 2 // implicit ( and ) for whole match $0
	c := progCompiler{p: p}
	c.inst(syntax.InstFail)
	f := c.compile(re)
	f.out.patch(p, c.inst(syntax.InstMatch).i)
	p.Start = int(f.i)
}

type patchList struct{ head, tail uint32 }

func makePatchList(n uint32) patchList { return patchList{n, n} }

func (l patchList) patch(p *syntax.Prog, val uint32) {
	head := l.head
	for head != 0 {
		i := &p.Inst[head>>1]
		if head&1 == 0 {
			head = i.Out
			i.Out = val
		} else {
			head = i.Arg
			i.Arg = val
		}
	}
}

func (l patchList) append(p *syntax.Prog, l2 patchList) patchList {
	if l.head == 0 {
		return l2
	}
	if l2.head == 0 {
		return l
	}
	i := &p.Inst[l.tail>>1]
	if l.tail&1 == 0 {
		i.Out = l2.head
	} else {
		i.Arg = l2.head
	}
	return patchList{l.head, l2.tail}
}

type frag struct {
	i        uint32    // index of first instruction
	out      patchList // where to record end instruction
	nullable bool      // whether fragment can match empty string
}

type progCompiler struct{ p *syntax.Prog }

var (
	anyRuneNotNL = []rune{0, '\n' - 1, '\n' + 1, unicode.MaxRune}
	anyRune      = []rune{0, unicode.MaxRune}
)

func (c *progCompiler) compile(re *syntax.Regexp) frag {
	switch re.Op {
	case syntax.OpNoMatch:
		return frag{}
	case syntax.OpEmptyMatch:
		return c.nop()
	case syntax.OpLiteral:
		if len(re.Rune) == 0 {
			return c.nop()
		}
		var f frag
		for j := range re.Rune {
			f1 := c.rune(re.Rune[j:j+1], re.Flags)
			if j == 0 {
				f = f1
			} else {
				f = c.cat(f, f1)
			}
		}
		return f
	case syntax.OpCharClass:
		return c.rune(re.Rune, re.Flags)
	case syntax.OpAnyCharNotNL:
		return c.rune(anyRuneNotNL, 0)
	case syntax.OpAnyChar:
		return c.rune(anyRune, 0)
	case syntax.OpBeginLine:
		return c.empty(syntax.EmptyBeginLine)
	case syntax.OpEndLine:
		return c.empty(syntax.EmptyEndLine)
	case syntax.OpBeginText:
		return c.empty(syntax.EmptyBeginText)
	case syntax.OpEndText:
		return c.empty(syntax.EmptyEndText)
	case syntax.OpWordBoundary:
		return c.empty(syntax.EmptyWordBoundary)
	case syntax.OpNoWordBoundary:
		return c.empty(syntax.EmptyNoWordBoundary)
	case syntax.OpCapture:
		bra := c.cap(uint32(re.Cap << 1))
		sub := c.compile(re.Sub[0])
		ket := c.cap(uint32(re.Cap<<1 | 1))
		return c.cat(c.cat(bra, sub), ket)
	case syntax.OpStar:
		return c.star(c.compile(re.Sub[0]), re.Flags&syntax.NonGreedy != 0)
	case syntax.OpPlus:
		return c.plus(c.compile(re.Sub[0]), re.Flags&syntax.NonGreedy != 0)
	case syntax.OpQuest:
		return c.quest(c.compile(re.Sub[0]), re.Flags&syntax.NonGreedy != 0)
	case syntax.OpConcat:
		if len(re.Sub) == 0 {
			return c.nop()
		}
		var f frag
		for i, sub := range re.Sub {
			if i == 0 {
				f = c.compile(sub)
			} else {
				f = c.cat(f, c.compile(sub))
			}
		}
		return f
	case syntax.OpAlternate:
		var f frag
		for _, sub := range re.Sub {
			f = c.alt(f, c.compile(sub))
		}
		return f
	}
	panic("multimatch: unhandled case in compile")
}

func (c *progCompiler) inst(op syntax.InstOp) frag {
	f := frag{i: uint32(len(c.p.Inst)), nullable: true}
	c.p.Inst = append(c.p.Inst, syntax.Inst{Op: op})
	return f
}

func (c *progCompiler) nop() frag {
	f := c.inst(syntax.InstNop)
	f.out = makePatchList(f.i << 1)
	return f
}

func (c *progCompiler) cap(arg uint32) frag {
	f := c.inst(syntax.InstCapture)
	f.out = makePatchList(f.i << 1)
	c.p.Inst[f.i].Arg = arg
	if c.p.NumCap < int(arg)+1 {
		c.p.NumCap = int(arg) + 1
	}
	return f
}

func (c *progCompiler) cat(f1, f2 frag) frag {
	// concat of failure is failure
	if f1.i == 0 || f2.i == 0 {
		return frag{}
	}
	f1.out.patch(c.p, f2.i)
	return frag{f1.i, f2.out, f1.nullable && f2.nullable}
}

func (c *progCompiler) alt(f1, f2 frag) frag {
	// alt of failure is other
	if f1.i == 0 {
		return f2
	}
	if f2.i == 0 {
		return f1
	}
	f := c.inst(syntax.InstAlt)
	i := &c.p.Inst[f.i]
	i.Out = f1.i
	i.Arg = f2.i
	f.out = f1.out.append(c.p, f2.out)
	f.nullable = f1.nullable || f2.nullable
	return f
}

func (c *progCompiler) quest(f1 frag, nongreedy bool) frag {
	f := c.inst(syntax.InstAlt)
	i := &c.p.Inst[f.i]
	if nongreedy {
		i.Arg = f1.i
		f.out = makePatchList(f.i << 1)
	} else {
		i.Out = f1.i
		f.out = makePatchList(f.i<<1 | 1)
	}
	f.out = f.out.append(c.p, f1.out)
	return f
}

// loop returns the fragment for the main loop of a plus or star.
func (c *progCompiler) loop(f1 frag, nongreedy bool) frag {
	f := c.inst(syntax.InstAlt)
	i := &c.p.Inst[f.i]
	if nongreedy {
		i.Arg = f1.i
		f.out = makePatchList(f.i << 1)
	} else {
		i.Out = f1.i
		f.out = makePatchList(f.i<<1 | 1)
	}
	f1.out.patch(c.p, f.i)
	return f
}

func (c *progCompiler) star(f1 frag, nongreedy bool) frag {
	if f1.nullable {
		// Use (f1+)? to get priority match order correct.
		return c.quest(c.plus(f1, nongreedy), nongreedy)
	}
	return c.loop(f1, nongreedy)
}

func (c *progCompiler) plus(f1 frag, nongreedy bool) frag {
	return frag{f1.i, c.loop(f1, nongreedy).out, f1.nullable}
}

func (c *progCompiler) empty(op syntax.EmptyOp) frag {
	f := c.inst(syntax.InstEmptyWidth)
	c.p.Inst[f.i].Arg = uint32(op)
	f.out = makePatchList(f.i << 1)
	return f
}

func (c *progCompiler) rune(r []rune, flags syntax.Flags) frag {
	f := c.inst(syntax.InstRune)
	f.nullable = false
	i := &c.p.Inst[f.i]
	i.Rune = r
	flags &= syntax.FoldCase // only relevant flag is FoldCase
	if len(r) != 1 || unicode.SimpleFold(r[0]) == r[0] {
		// and sometimes not even that
		flags &^= syntax.FoldCase
	}
	i.Arg = uint32(flags)
	f.out = makePatchList(f.i << 1)

	// Special cases for exec machine.
	switch {
	case flags&syntax.FoldCase == 0 && (len(r) == 1 || len(r) == 2 && r[0] == r[1]):
		i.Op = syntax.InstRune1
	case len(r) == 2 && r[0] == 0 && r[1] == unicode.MaxRune:
		i.Op = syntax.InstRuneAny
	case len(r) == 4 && r[0] == 0 && r[1] == '\n'-1 && r[2] == '\n'+1 && r[3] == unicode.MaxRune:
		i.Op = syntax.InstRuneAnyNotNL
	}
	return f
}
