// Package depcheck holds a test of the module's layering, and no code: no production
// package (the root, the public packages, the commands and examples, the internal
// packages they use) imports a test-support package (a test double, a workload
// generator, a fault or mutation harness). Its test lists every internal package as one
// or the other, so a new one is classified when it is added.
package depcheck
