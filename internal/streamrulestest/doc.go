// Package streamrulestest is test support: the values of the root package's insides that
// tests outside it assert against (the block texts a client or a model sees, the batch
// sizes a streamed answer is judged in). It is imported by tests only; no production
// package may import it.
//
// Each constant is a copy of an unexported one in the root package, and a test of the
// root package fails when the two differ, so a change there is a change here.
package streamrulestest
