package rulesdb

import (
	"context"

	"github.com/lib/pq"

	"github.com/streamrules/streamrules"
)

// SetDialer makes the store dial PostgreSQL through d (tests count the wire traffic).
func SetDialer(cfg *Config, d pq.Dialer) { cfg.dialer = d }

// ParseDSN exposes the DSN parsing for tests: the driver DSN and the description.
func ParseDSN(dsn, defaultSQLitePath string) (driver, about string, err error) {
	t, err := parseDSN(dsn, defaultSQLitePath)
	return t.driver, t.about, err
}

// WriteMoveAgain writes rec with seq as the write queue would on a retry: a test of the
// idempotency guard without cutting a connection at the right microsecond.
func WriteMoveAgain(ctx context.Context, s *Store, rec streamrules.MoveRecord, seq int64) error {
	return s.writeMove(ctx, s.stampMove(rec), seq, nil)
}

// LastSeq returns the seq of the last record SaveMove took.
func LastSeq(s *Store) int64 {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	return s.wq.nextSeq
}

// SetSeedHook makes Seed call fn inside its transaction, once it has read the seed state.
func SetSeedHook(s *Store, fn func()) { s.seedHook = fn }
