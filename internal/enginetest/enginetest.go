package enginetest

import (
	"context"
	"testing"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/testlog"
	"github.com/streamrules/streamrules/seeds"
)

// New starts an engine on store with cfg (nil: the defaults). The engine logs nothing
// unless cfg has a Logger; cfg itself is not changed. The engine is closed when the test
// ends (Close is idempotent, so a test may close it before), and an error from
// streamrules.New fails the test.
func New(tb testing.TB, store streamrules.Store, cfg *streamrules.Config) *streamrules.Engine {
	tb.Helper()
	var c streamrules.Config
	if cfg != nil {
		c = *cfg
	}
	if c.Logger == nil {
		c.Logger = testlog.Quiet()
	}
	eng, err := streamrules.New(context.Background(), store, &c)
	if err != nil {
		tb.Fatalf("streamrules.New: %v", err)
	}
	tb.Cleanup(eng.Close)
	return eng
}

// Store returns a MemoryStore on rules that knows the seeds' environments (telegram,
// client_ops, master, picture), as a store seeded with them does; invalid rules fail the
// test.
func Store(tb testing.TB, rules ...streamrules.Rule) *streamrules.MemoryStore {
	tb.Helper()
	store, err := streamrules.NewMemoryStore(rules, seeds.Environments()...)
	if err != nil {
		tb.Fatalf("streamrules.NewMemoryStore: %v", err)
	}
	return store
}

// WithRules starts an engine, as New does, on a MemoryStore on rules.
func WithRules(tb testing.TB, cfg *streamrules.Config, rules ...streamrules.Rule) *streamrules.Engine {
	tb.Helper()
	return New(tb, Store(tb, rules...), cfg)
}
