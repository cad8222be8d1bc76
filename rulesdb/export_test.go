package rulesdb

import "github.com/lib/pq"

// SetDialer makes the store dial PostgreSQL through d (tests count the wire traffic).
func SetDialer(cfg *Config, d pq.Dialer) { cfg.dialer = d }

// ParseDSN exposes the DSN parsing for tests: the driver DSN and the description.
func ParseDSN(dsn, defaultSQLitePath string) (driver, about string, err error) {
	t, err := parseDSN(dsn, defaultSQLitePath)
	return t.driver, t.about, err
}
