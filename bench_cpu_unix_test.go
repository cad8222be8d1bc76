//go:build unix

package streamrules

import (
	"syscall"
	"time"
)

// processCPU is the CPU time the process has used (user and system, GC included). On a
// busy machine a benchmark's wall time counts the waits for a core; its CPU time does not.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
