package pgtest_test

import (
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"

	_ "github.com/lib/pq"

	"github.com/streamrules/streamrules/internal/pgtest"
)

func TestMain(m *testing.M) {
	os.Exit(pgtest.Main(m))
}

func open(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Ping(); err != nil {
		t.Fatalf("ping %s: %v", dsn, err)
	}
	return db
}

func currentDatabase(t *testing.T, db *sql.DB) string {
	t.Helper()
	var name string
	if err := db.QueryRow(`SELECT current_database()`).Scan(&name); err != nil {
		t.Fatal(err)
	}
	return name
}

func tableExists(t *testing.T, db *sql.DB, table string) bool {
	t.Helper()
	var exists bool
	if err := db.QueryRow(`SELECT to_regclass($1) IS NOT NULL`, table).Scan(&exists); err != nil {
		t.Fatal(err)
	}
	return exists
}

func TestDSNFormat(t *testing.T) {
	if os.Getenv(pgtest.EnvDSN) != "" {
		t.Skip("DSN format follows " + pgtest.EnvDSN)
	}
	dsn := pgtest.DSN(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	if u.Scheme != "postgres" || u.User.Username() != "postgres" || u.Hostname() != "127.0.0.1" ||
		u.Port() == "" || u.Query().Get("sslmode") != "disable" ||
		!regexp.MustCompile(`^/t_[0-9a-f]{16}$`).MatchString(u.Path) {
		t.Errorf("unexpected DSN %q", dsn)
	}
	if got := currentDatabase(t, open(t, dsn)); "/"+got != u.Path {
		t.Errorf("connected to %q, DSN %q", got, dsn)
	}
}

func TestDatabasesAreSeparate(t *testing.T) {
	dsn1, dsn2 := pgtest.DSN(t), pgtest.DSN(t)
	if dsn1 == dsn2 {
		t.Fatalf("two DSN calls gave the same DSN %q", dsn1)
	}
	db1, db2 := open(t, dsn1), open(t, dsn2)
	name1, name2 := currentDatabase(t, db1), currentDatabase(t, db2)
	if name1 == name2 {
		t.Fatalf("both DSNs lead to database %q", name1)
	}

	for i, db := range []*sql.DB{db1, db2} {
		if _, err := db.Exec(`CREATE TABLE rules (id int PRIMARY KEY, body text NOT NULL)`); err != nil {
			t.Fatalf("db%d: %v", i+1, err)
		}
		if _, err := db.Exec(`INSERT INTO rules VALUES ($1, $2)`, i+1, fmt.Sprint("rule in db", i+1)); err != nil {
			t.Fatalf("db%d: %v", i+1, err)
		}
	}
	if _, err := db1.Exec(`CREATE TABLE only_in_db1 (x int)`); err != nil {
		t.Fatal(err)
	}
	if !tableExists(t, db1, "only_in_db1") {
		t.Error("only_in_db1 not visible in db1")
	}
	if tableExists(t, db2, "only_in_db1") {
		t.Error("only_in_db1, created in db1, is visible in db2")
	}
	for i, db := range []*sql.DB{db1, db2} {
		var n int
		var body string
		if err := db.QueryRow(`SELECT count(*), min(body) FROM rules`).Scan(&n, &body); err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprint("rule in db", i+1); n != 1 || body != want {
			t.Errorf("db%d: %d rows, body %q; want 1 row, %q", i+1, n, body, want)
		}
	}
}

func TestDatabaseDroppedAfterCleanup(t *testing.T) {
	var name string
	var leaked *sql.DB
	t.Run("sub", func(t *testing.T) {
		dsn := pgtest.DSN(t)
		var err error
		// Deliberately left open until after the subtest: the drop must not
		// be stopped by connections the test forgot to close.
		leaked, err = sql.Open("postgres", dsn)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := leaked.Exec(`CREATE TABLE t (x int); INSERT INTO t VALUES (1)`); err != nil {
			t.Fatal(err)
		}
		name = currentDatabase(t, open(t, dsn))
	})
	if leaked != nil {
		defer leaked.Close()
	}
	if t.Failed() || name == "" {
		t.FailNow()
	}
	if !strings.HasPrefix(name, "t_") {
		t.Errorf("database name %q does not start with t_", name)
	}

	observer := open(t, pgtest.DSN(t)) // a third connection, to yet another database
	var n int
	if err := observer.QueryRow(`SELECT count(*) FROM pg_database WHERE datname = $1`, name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("database %q still exists after its test's cleanup", name)
	}
	// And the database of the test that is still running is there.
	if err := observer.QueryRow(`SELECT count(*) FROM pg_database WHERE datname = current_database()`).Scan(&n); err != nil || n != 1 {
		t.Errorf("own database: count %d, err %v", n, err)
	}
}

func TestParallel(t *testing.T) {
	for i := range 8 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			db := open(t, pgtest.DSN(t))
			if _, err := db.Exec(`CREATE TABLE p (i int)`); err != nil {
				t.Fatal(err)
			}
			if _, err := db.Exec(`INSERT INTO p VALUES ($1)`, i); err != nil {
				t.Fatal(err)
			}
			var got int
			if err := db.QueryRow(`SELECT i FROM p`).Scan(&got); err != nil || got != i {
				t.Errorf("got %d, %v; want %d", got, err, i)
			}
		})
	}
}
