package rulesdb

import (
	"time"

	"github.com/lib/pq"
)

// SetDialer makes the store dial PostgreSQL through d (tests count the wire traffic).
func SetDialer(cfg *Config, d pq.Dialer) { cfg.dialer = d }

// ParseDSN exposes the DSN parsing for tests: the driver DSN and the description.
func ParseDSN(dsn, defaultSQLitePath string) (driver, about string, err error) {
	t, err := parseDSN(dsn, defaultSQLitePath)
	return t.driver, t.about, err
}

// SetPruning drives the stat pruning from tick and reports each prune to done.
func SetPruning(cfg *Config, tick <-chan time.Time, done func(n int64, err error)) {
	cfg.pruneTick, cfg.onPrune = tick, done
}

// SetMigrateTo stops Open's migrations after version v: a database as an older release left it.
func SetMigrateTo(cfg *Config, v int) { cfg.migrateTo = v }
