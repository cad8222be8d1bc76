package cputime

import (
	"testing"
	"time"
)

// Report reports the process's CPU time per iteration since start as cpu-ns/op; nothing
// where start is 0 (not measured) or the benchmark ran no iteration. Run with -cpu 1 so
// the benchmark's goroutine is the only one running Go code.
func Report(b *testing.B, start time.Duration) {
	if start > 0 && b.N > 0 {
		b.ReportMetric(float64(Process()-start)/float64(b.N), "cpu-ns/op")
	}
}
