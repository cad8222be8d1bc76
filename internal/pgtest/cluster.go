package pgtest

import (
	"context"
	"database/sql"
	"testing"
	"time"
)

// Cluster is a throw-away PostgreSQL cluster of its own, for a fault test that stops and
// starts the server under a running store. The shared server of DSN serves the whole test
// binary and must never stop; a Cluster serves one test and is removed in its Cleanup.
type Cluster struct {
	c     *cluster
	admin func(db string) string
}

// NewCluster starts a cluster for t (about a second), or skips t like DSN does when there
// is no PostgreSQL installation. It needs the PostgreSQL binaries even when
// STREAMRULES_TEST_DSN points the other tests at a server.
func NewCluster(t testing.TB) *Cluster {
	t.Helper()
	s, err := startCluster()
	if err != nil {
		if np, ok := err.(*noPostgresError); ok {
			if inCI() {
				t.Fatalf("pgtest: no PostgreSQL found (%s) and %s is true", np.reason, envCI)
			}
			t.Skipf("pgtest: no PostgreSQL found (%s): SKIPPING a fault test", np.reason)
		}
		t.Fatalf("pgtest: %v", err)
	}
	s.admin.Close() // each DSN call opens its own: the server will stop under it
	t.Cleanup(func() {
		if err := s.cluster.destroy(); err != nil {
			t.Errorf("pgtest: %v", err)
		}
	})
	return &Cluster{c: s.cluster, admin: s.dsnFor}
}

// DSN creates a fresh database on the cluster and returns its DSN. The cluster must run.
func (c *Cluster) DSN(t testing.TB) string {
	t.Helper()
	name, err := randomName()
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("postgres", c.admin("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), ddlTimeout)
	defer cancel()
	if _, err := db.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("pgtest: CREATE DATABASE %s: %v", name, err)
	}
	return c.admin(name)
}

// Port is the TCP port the cluster listens on, the same after every Start.
func (c *Cluster) Port() int { return c.c.port }

// Stop stops the server the hard way (pg_ctl stop -m immediate): every connection is cut
// at once and nothing is flushed, as when the host loses power. It returns once the
// server is gone.
func (c *Cluster) Stop(t testing.TB) {
	t.Helper()
	if out, err := c.c.run("pg_ctl", "stop", "-D", c.c.dataDir, "-m", "immediate", "-w"); err != nil {
		t.Fatalf("pgtest: pg_ctl stop: %v\n%s\n--- tail of %s ---\n%s", err, out, c.c.logFile, c.c.logTail())
	}
}

// Start starts the server again on the same port and data directory, and returns once it
// accepts connections (crash recovery included).
func (c *Cluster) Start(t testing.TB) {
	t.Helper()
	begin := time.Now()
	for {
		out, err := c.c.start()
		if err == nil {
			return
		}
		// The port is ours, but the kernel may hold it a moment after an immediate stop.
		if time.Since(begin) > 30*time.Second {
			t.Fatalf("pgtest: pg_ctl start: %v\n%s\n--- tail of %s ---\n%s", err, out, c.c.logFile, c.c.logTail())
		}
		time.Sleep(100 * time.Millisecond) // the kernel's port, not a goroutine: nothing to wait on
	}
}
