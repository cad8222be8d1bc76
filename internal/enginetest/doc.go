// Package enginetest starts engines for tests outside the root package: quiet unless told
// otherwise, closed when the test ends, and a failed start fails the test.
//
//	eng := enginetest.WithRules(t, nil, gate, note)                 // a MemoryStore on rules
//	eng := enginetest.New(t, store, &streamrules.Config{Logger: log}) // any store, logging
//
// It is test support: only tests import it.
package enginetest
