// Package cputime measures the process's CPU time for benchmarks: on a loaded machine a
// benchmark's wall time counts the waits for a core, its CPU time (user and system, GC
// included) does not.
//
//	start := cputime.Process()
//	for b.Loop() { … }
//	cputime.Report(b, start) // cpu-ns/op
//
// Where the platform has no getrusage (not unix), Process is 0 and Report reports nothing.
package cputime
