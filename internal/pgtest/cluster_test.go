package pgtest_test

import (
	"testing"

	"github.com/streamrules/streamrules/internal/pgtest"
)

// TestClusterStopStart: a stopped cluster refuses connections; started again it listens
// on the same port and holds what was committed before the stop.
func TestClusterStopStart(t *testing.T) {
	t.Parallel()
	cl := pgtest.NewCluster(t)
	dsn := cl.DSN(t)
	db := open(t, dsn)
	if _, err := db.Exec(`CREATE TABLE kept (v TEXT); INSERT INTO kept VALUES ('before')`); err != nil {
		t.Fatal(err)
	}
	port := cl.Port()
	cl.Stop(t)
	if err := db.Ping(); err == nil {
		t.Fatal("ping succeeded with the server stopped")
	}
	cl.Start(t)
	if cl.Port() != port {
		t.Fatalf("port %d after Start, was %d", cl.Port(), port)
	}
	var v string
	if err := db.QueryRow(`SELECT v FROM kept`).Scan(&v); err != nil || v != "before" {
		t.Fatalf("after the restart: %q, %v", v, err)
	}
}
