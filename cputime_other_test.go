//go:build !unix

package streamrules_test

import "time"

// processCPU is not measured here: the benchmarks report the wall clock only.
func processCPU() time.Duration { return 0 }
