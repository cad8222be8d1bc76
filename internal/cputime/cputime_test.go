//go:build unix

package cputime_test

import (
	"testing"

	"github.com/streamrules/streamrules/internal/cputime"
)

// TestProcessGrows spins until the CPU clock moves: on unix it is read, not 0, and it
// counts work done.
func TestProcessGrows(t *testing.T) {
	start := cputime.Process()
	if start <= 0 {
		t.Fatalf("Process() = %v, want > 0 on unix", start)
	}
	for x := 0; cputime.Process() == start; x++ {
		_ = x * x
	}
}

func BenchmarkReport(b *testing.B) {
	start := cputime.Process()
	for b.Loop() {
		_ = cputime.Process()
	}
	cputime.Report(b, start)
}
