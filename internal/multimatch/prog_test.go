package multimatch

import (
	"math/rand/v2"
	"reflect"
	"regexp/syntax"
	"slices"
	"testing"

	"github.com/streamrules/streamrules/internal/regexgen"
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

// TestSimplifySame holds the pooled simplifier to syntax.Regexp.Simplify: the same
// tree, on the corpus, random patterns and counted repetitions of every shape,
// through pooled reuse (each pattern's simplifier was used before).
func TestSimplifySame(t *testing.T) {
	patterns := append(RealisticPatterns(2000, 5),
		`x{0}`, `x{1}`, `x{0,}`, `x{1,}`, `x{4,}`, `x{2,5}`, `x{0,5}`, `(?:)*`, `(?:){3,9}`, `(?:a*){2,4}`,
		`(?:a+){1,}`, `(?:a?)?`, `(?U)(?:ab){2,}?`, `(?s)[\s\S]{0,1000}z`, `(\w+\s+){0,100}z`,
		`(?:(?:a{0,3}){0,3}){0,3}b`, `x{600}`, `(?:x{0,9}y){2,3}`)
	r := rand.New(rand.NewPCG(9, 43))
	for range 3000 {
		patterns = append(patterns, regexgen.Pattern(r, 0))
	}
	for _, pat := range patterns {
		re, err := syntax.Parse(pat, syntax.Perl)
		if err != nil {
			continue
		}
		want := re.Simplify()
		got, s := simplify(re)
		if !sameTree(got, want) {
			t.Fatalf("%q: simplify gave %v, Simplify %v", pat, got, want)
		}
		releaseSimplifier(s)
	}
}

func sameTree(a, b *syntax.Regexp) bool {
	if a.Op != b.Op || a.Flags != b.Flags || a.Min != b.Min || a.Max != b.Max || a.Cap != b.Cap ||
		a.Name != b.Name || !slices.Equal(a.Rune, b.Rune) || len(a.Sub) != len(b.Sub) {
		return false
	}
	for i := range a.Sub {
		if !sameTree(a.Sub[i], b.Sub[i]) {
			return false
		}
	}
	return true
}

// FuzzSimplifyCompileSame holds the pooled simplifier and compiler to regexp/syntax's
// on any pattern that parses.
func FuzzSimplifyCompileSame(f *testing.F) {
	for _, p := range RealisticPatterns(50, 1) {
		f.Add(p)
	}
	f.Add(`(?:(?:a{0,3}){0,3}){0,3}b`)
	f.Add(`(?s)[\s\S]{0,1000}z`)
	var p syntax.Prog
	f.Fuzz(func(t *testing.T, pat string) {
		re, err := syntax.Parse(pat, syntax.Perl)
		if err != nil {
			return
		}
		want := re.Simplify()
		got, s := simplify(re)
		defer releaseSimplifier(s)
		if !sameTree(got, want) {
			t.Fatalf("%q: simplify gave %v, Simplify %v", pat, got, want)
		}
		prog, err := syntax.Compile(want)
		if err != nil {
			return
		}
		compileInto(&p, got)
		if p.Start != prog.Start || p.NumCap != prog.NumCap || !reflect.DeepEqual(p.Inst, prog.Inst) {
			t.Fatalf("%q: compileInto differs from syntax.Compile", pat)
		}
	})
}

// TestRestartThreads: a narrow character the start reaches, read again by the chain behind
// it, wakes a thread per instruction of that chain on a text dense in it; a literal the
// chain does not read, or a multi-character entry, does not.
func TestRestartThreads(t *testing.T) {
	for _, c := range []struct {
		pattern string
		want    int
	}{
		{`e\w{20}\d`, 20}, // the \w chain (\d does not read e)
		{`a[ab]{14}c`, 14},
		{`f[\W_]*u`, 0},
		{`\bnevi.{0,30}\bsupa\b`, 0},
		{`darn`, 0},
	} {
		a, err := Analyze(c.pattern)
		if err != nil {
			t.Fatal(err)
		}
		if a.restart != c.want {
			t.Errorf("%q: %d restarted threads, want %d", c.pattern, a.restart, c.want)
		}
	}
}
