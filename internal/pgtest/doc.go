// Package pgtest gives tests a real, throw-away PostgreSQL database.
//
// Use it from a test package like this:
//
//	func TestMain(m *testing.M) {
//		os.Exit(pgtest.Main(m))
//	}
//
//	func TestSomething(t *testing.T) {
//		db, err := sql.Open("postgres", pgtest.DSN(t))
//		...
//	}
//
// Every DSN call creates a new, empty database (named t_<random>) and drops it
// (DROP DATABASE ... WITH (FORCE)) when the test and its subtests have
// finished, so tests may run in parallel without seeing each other's tables.
// Close your *sql.DB in the test anyway; the forced drop only makes leaked
// connections harmless.
//
// # Which server
//
// If STREAMRULES_TEST_DSN is set, the databases are created on that server
// (the DSN's role needs the CREATEDB privilege, and the server must be
// PostgreSQL 13 or newer for DROP ... WITH (FORCE)). DSN then returns the same
// DSN with the database name replaced: a URL for a URL, key=value for key=value.
//
// Otherwise, on the first DSN call the test binary starts its own cluster:
// the PostgreSQL binaries are found with `pg_config --bindir` (falling back to
// the highest /usr/lib/postgresql/*/bin, then to initdb on $PATH), initdb
// writes a cluster into a fresh temporary directory (trust authentication,
// superuser postgres, encoding UTF8, locale C) and pg_ctl starts it on a free
// TCP port of 127.0.0.1 with fsync off. When the tests run as root the cluster
// is run as the "postgres" system user, because PostgreSQL refuses to run as
// root. One cluster serves the whole test binary; startup takes about a second.
// The returned DSN looks like
//
//	postgres://postgres@127.0.0.1:PORT/t_0123456789abcdef?sslmode=disable
//
// Main stops the cluster (pg_ctl stop -m immediate) and removes its directory
// when the tests are done, whether they passed or not. If the binary dies
// without returning from Main (go test -timeout, a panic, os.Exit in a test,
// SIGKILL, or no TestMain at all) a small watchdog process, which waits for the
// test binary's end of a pipe to close, stops the cluster and removes the
// directory instead. Only if the watchdog itself is killed can a cluster leak;
// look for "postgres -D .../pgtest-*/data" processes and pgtest-* directories
// under $TMPDIR.
//
// # Fault tests
//
// The shared server must never stop. A test that stops and starts its database takes a
// cluster of its own:
//
//	cl := pgtest.NewCluster(t) // initdb and start; removed in t.Cleanup
//	dsn := cl.DSN(t)
//	… run a store on dsn …
//	cl.Stop(t)  // pg_ctl stop -m immediate: every connection cut, as in a power loss
//	cl.Start(t) // the same port and data directory: what was committed is there
//
// # Leaks
//
// After a passing run Main looks for goroutines the tests left behind (go.uber.org/goleak)
// and fails the binary if it finds any; the ones that outlive tests for a reason are
// listed, each with it, in leakIgnores.
//
// # No PostgreSQL
//
// If no PostgreSQL installation can be found (or the tests run as root and
// there is no "postgres" user), DSN skips the test with a loud message. When
// the environment variable CI is true, it fails the test instead, so a CI
// machine without PostgreSQL cannot silently skip the database tests. Any
// other startup failure fails the test, with the tail of the server log.
package pgtest
