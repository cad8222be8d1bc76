package rulesdb_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/streamrules/streamrules/internal/pgtest"
	"github.com/streamrules/streamrules/rulesdb"
)

// TestSeedersTakeTurns fails every time the seeding lock is missing, not only when the
// scheduler happens to interleave: seeder A stops inside its transaction right after
// reading the seed state; seeder B must then wait on the lock rather than read the state
// itself (with no lock it would read version 0 and seed a second time).
func TestSeedersTakeTurns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	set := defaultSeeds(t)
	a := open(t, dsn, &rulesdb.Config{ReloadInterval: -1})
	b := open(t, dsn, &rulesdb.Config{ReloadInterval: -1})
	aRead, releaseA := make(chan struct{}), make(chan struct{})
	rulesdb.SetSeedHook(a, func() {
		close(aRead)
		<-releaseA
	})
	bRead := make(chan struct{}, 1)
	rulesdb.SetSeedHook(b, func() { bRead <- struct{}{} })

	type result struct {
		rep rulesdb.SeedReport
		err error
	}
	aDone, bDone := make(chan result, 1), make(chan result, 1)
	go func() {
		rep, err := a.Seed(ctx, set)
		aDone <- result{rep, err}
	}()
	<-aRead
	go func() {
		rep, err := b.Seed(ctx, set)
		bDone <- result{rep, err}
	}()
	select {
	case <-bRead:
		t.Error("seeder B read the seed state while A's seeding transaction was open: the lock is missing")
	case err := <-waitLockWaiter(dsn):
		if err != nil {
			t.Error(err)
		}
	}
	close(releaseA)
	ra, rb := <-aDone, <-bDone
	if ra.err != nil || rb.err != nil {
		t.Fatalf("Seed: %v, %v", ra.err, rb.err)
	}
	if !ra.rep.Applied || rb.rep.Applied || rb.rep.StoredVersion != set.Version {
		t.Fatalf("A %+v, B %+v: want A to seed and B to find it done", ra.rep, rb.rep)
	}
}

// waitLockWaiter reports when a session waits on an advisory lock in dsn's database (the
// server is shared with the package's other tests, which take such locks in theirs). The
// server sends no signal for a lock wait, so this polls pg_locks (each poll one cheap
// query), within one generous deadline.
func waitLockWaiter(dsn string) <-chan error {
	out := make(chan error, 1)
	go func() {
		s, err := rulesdb.Open(context.Background(), dsn, &rulesdb.Config{Logger: quietLogger(), ReloadInterval: -1})
		if err != nil {
			out <- err
			return
		}
		defer s.Close()
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			var n int
			if err := s.DB().Get(&n, `SELECT COUNT(*) FROM pg_locks
				WHERE locktype = 'advisory' AND NOT granted
				AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`); err != nil {
				out <- err
				return
			}
			if n > 0 {
				out <- nil
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
		out <- errTimeout
	}()
	return out
}

var errTimeout = errors.New("no session waited on the seeding lock within 30s")
