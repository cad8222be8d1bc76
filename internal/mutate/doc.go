// Package mutate measures a test suite by the one-line changes it catches: it makes
// mutants of a Go file (a comparison flipped, && for ||, a statement dropped, …), tests
// the file's package on each, and counts the mutants whose tests fail.
//
//	src, _ := os.ReadFile("judge.go")
//	ms, _ := mutate.Mutants("judge.go", src)
//	for _, m := range ms {
//		out, _, _ := mutate.Test(ctx, mutate.Config{Pkg: "."}, "judge.go", m.Apply(src))
//		…
//	}
//
// The command in cmd/mutate does this and prints the catch rate; run it from the module
// root:
//
//	go run ./internal/mutate/cmd/mutate -file judge.go
//	go run ./internal/mutate/cmd/mutate -table internal/mutate/testdata/regressions.tsv
//
// # No file is ever written
//
// A mutant reaches the compiler through go test's -overlay: the file on disk keeps its
// text whatever happens to the run (a panic, a kill, ^C), and no git restore is needed.
//
// # Operators
//
// See [Mutants]. Mutants that do not build are reported as invalid and left out of the
// rate; a mutant that changes nothing observable (an equivalent mutant) survives and
// lowers it, so 100 % is not always reachable.
//
// # Tables
//
// A table ([ParseTable]) lists hand-written mutants by the text they replace, so a known
// set (testdata/regressions.tsv: changes the suite once let through) stays reproducible
// while line numbers move.
//
// # Cost
//
// One package test per mutant: minutes for a file of the root package. Nothing here runs
// under go test ./... except this package's own quick tests.
package mutate
