package multimatch

import (
	"reflect"
	"regexp/syntax"
	"testing"
)

// TestCompileIntoSame holds compileInto to syntax.Compile: the same program, instruction
// for instruction, on the corpus, the worst-case patterns and some edge cases, so the
// facts Analyze reads from it (and the cost bound built on them) are regexp's own. A
// Go release that changes regexp's compiler fails here first.
func TestCompileIntoSame(t *testing.T) {
	patterns := append(RealisticPatterns(2000, 3),
		``, `a`, `(?i)k`, `(?i)abc`, `x*`, `(?:)*`, `(?:a*)*`, `(a|)+`, `a*?`, `a+?b??`, `(?U)a+b*`,
		`[^x]`, `.`, `(?s).`, `[\s\S]{0,1000}z`, `(\w+\s+){0,100}z`, `^$`, `(?m)^a$`, `\bx\B`,
		`\Aa|b\z`, `[a-c]{2,5}`, `x{0}`, `(?:a|b|c|)`, `\x{FFFD}`, `[^\x00-\x{10FFFF}]`, `(?:a{2}){3}`,
		`(a)(b)(?P<n>c)`, `(?i)straße`, `(?i)ǅ`, `ǅ`, `[[:alpha:]]+@x\.(?:com|org)`)
	var p syntax.Prog
	for _, pat := range patterns {
		re, err := syntax.Parse(pat, syntax.Perl)
		if err != nil {
			t.Fatalf("%q: %v", pat, err)
		}
		re = re.Simplify()
		want, err := syntax.Compile(re)
		if err != nil {
			t.Fatalf("%q: %v", pat, err)
		}
		compileInto(&p, re)
		if p.Start != want.Start || p.NumCap != want.NumCap || !reflect.DeepEqual(p.Inst, want.Inst) {
			t.Fatalf("%q: compileInto gave\n%v\nsyntax.Compile\n%v", pat, &p, want)
		}
		b := compileProg(re)
		if got, want := b.liveThreads(), liveThreadsOf(want); got != want {
			t.Fatalf("%q: pooled liveThreads %d, want %d", pat, got, want)
		}
		releaseProg(b)
	}
}

// liveThreadsOf is liveThreads on a program of its own (fresh working memory).
func liveThreadsOf(prog *syntax.Prog) int {
	b := progBuf{prog: *prog}
	return b.liveThreads()
}
