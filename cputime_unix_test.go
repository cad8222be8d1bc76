//go:build unix

package streamrules_test

import (
	"syscall"
	"time"
)

// processCPU is the CPU time the process has used, user and system: unlike the wall
// clock, it does not grow while the benchmark waits for a core on a loaded machine.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
