package rulesdb_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streamrules/streamrules/rulesdb"
)

func TestParseDSN(t *testing.T) {
	t.Parallel()
	cases := []struct {
		dsn, driverHas, about string
		err                   bool
	}{
		{"", "streamrules.db?", "SQLite file streamrules.db", false},
		{"sqlite:/var/lib/a.db", "/var/lib/a.db?", "SQLite file /var/lib/a.db", false},
		{"sqlite:///var/lib/a.db", "/var/lib/a.db?", "SQLite file /var/lib/a.db", false},
		{"sqlite:rel.db?_pragma=busy_timeout(1)", "_pragma=busy_timeout%281%29", "SQLite file rel.db", false},
		{"file:rules.db?cache=shared", "file:rules.db?", "SQLite file file:rules.db", false},
		{"sqlite::memory:", ":memory:?", "SQLite in memory", false},
		{"postgres://u:pw@db.example:5433/rules?sslmode=disable", "binary_parameters=yes", "PostgreSQL host db.example:5433 database rules", false},
		{"postgresql://u@/rules?host=/run/postgresql", "postgresql://", "PostgreSQL host /run/postgresql database rules", false},
		{"postgres://u@h/x?binary_parameters=no", "binary_parameters=no", "PostgreSQL host h database x", false},
		{"mysql://u:pw@h/db", "", "", true},
		{"rules.db", "", "", true},
		{"sqlite:", "", "", true},
	}
	for _, c := range cases {
		driver, about, err := rulesdb.ParseDSN(c.dsn, "streamrules.db")
		if (err != nil) != c.err {
			t.Errorf("%q: err %v", c.dsn, err)
			continue
		}
		if err != nil {
			if strings.Contains(err.Error(), "pw") {
				t.Errorf("%q: error shows the password: %v", c.dsn, err)
			}
			continue
		}
		if !strings.Contains(driver, c.driverHas) || about != c.about {
			t.Errorf("%q: driver %q about %q; want driver with %q, about %q", c.dsn, driver, about, c.driverHas, c.about)
		}
		if strings.HasPrefix(c.about, "SQLite") && (!strings.Contains(driver, "_txlock=immediate") || !strings.Contains(driver, "_time_format=sqlite")) {
			t.Errorf("%q: SQLite DSN %q lacks _txlock=immediate or _time_format", c.dsn, driver)
		}
	}
}

func TestOpenErrors(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	const secret = "S3cr3t-Passw0rd"

	_, err := rulesdb.Open(ctx, "mysql://root:"+secret+"@h/db", nil)
	if !errors.Is(err, rulesdb.ErrUnknownScheme) || strings.Contains(err.Error(), secret) {
		t.Errorf("unknown scheme: %v", err)
	}

	// Nothing listens on port 1: the error names host and database, not the password.
	_, err = rulesdb.Open(ctx, "postgres://alice:"+secret+"@127.0.0.1:1/ordersdb?sslmode=disable&connect_timeout=5", nil)
	if err == nil {
		t.Fatal("connected to port 1")
	}
	for _, want := range []string{"127.0.0.1:1", "ordersdb"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("connection error %q does not name %q", err, want)
		}
	}
	if strings.Contains(err.Error(), secret) {
		t.Errorf("connection error shows the password: %v", err)
	}

	// A DSN that is not a URL: url.Parse would quote it whole.
	_, err = rulesdb.Open(ctx, "postgres://alice:"+secret+"@host:notaport/db", nil)
	if err == nil || strings.Contains(err.Error(), secret) {
		t.Errorf("bad URL: %v", err)
	}

	// A SQLite file in a directory that does not exist names the file.
	missing := filepath.Join(t.TempDir(), "no", "such", "dir", "r.db")
	_, err = rulesdb.Open(ctx, "sqlite:"+missing, nil)
	if err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing dir: %v", err)
	}

	_, err = rulesdb.Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "x.db"), &rulesdb.Config{Environments: []string{"Bad Name"}})
	if err == nil {
		t.Error("bad environment name accepted")
	}
}

func TestOpenDefaultSQLiteFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "default.db")
	s := open(t, "", &rulesdb.Config{DefaultSQLitePath: path})
	if s.Driver() != "sqlite" {
		t.Errorf("driver %s", s.Driver())
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("default file not created: %v", err)
	}
	var mode string
	if err := s.DB().Get(&mode, "PRAGMA journal_mode"); err != nil || mode != "wal" {
		t.Errorf("journal_mode %q, %v", mode, err)
	}
}

func TestOpenSQLiteMemory(t *testing.T) {
	t.Parallel()
	s := seeded(t, "sqlite::memory:")
	rules, err := s.ListRules(context.Background())
	if err != nil || len(rules) != 10 {
		t.Fatalf("%d rules, %v", len(rules), err)
	}
}

func TestMigrationsOnce(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		for range 3 {
			s := open(t, dsn, nil)
			var versions []int
			if err := s.DB().Select(&versions, "SELECT version FROM stream_rules_migration ORDER BY version"); err != nil {
				t.Fatal(err)
			}
			entries, err := fs.ReadDir(os.DirFS("migrations/sqlite"), ".")
			if err != nil {
				t.Fatal(err)
			}
			if len(versions) != len(entries) {
				t.Fatalf("migration rows %v, want one per file (%d)", versions, len(entries))
			}
			// One row per file, by the file's number (numbers may leave gaps: branches number ahead).
			for i, v := range versions {
				if want := fmt.Sprintf("%04d_", v); !strings.HasPrefix(entries[i].Name(), want) {
					t.Fatalf("migration rows %v, want the files' numbers (%s is file %d)", versions, entries[i].Name(), i)
				}
			}
			for _, table := range []string{"stream_rules", "stream_rule_stat", "stream_chat", "stream_chat_rule", "stream_rule_seed", "stream_seed_state"} {
				var n int
				if err := s.DB().Get(&n, "SELECT COUNT(*) FROM "+table); err != nil {
					t.Errorf("table %s: %v", table, err)
				}
			}
			s.Close()
		}
	})
}

func TestDescribe(t *testing.T) {
	t.Parallel()
	about, err := rulesdb.Describe("postgres://u:hunter2@db.example:5432/rules?sslmode=disable", "x.db")
	if err != nil || !strings.Contains(about, "db.example") || !strings.Contains(about, "rules") || strings.Contains(about, "hunter2") {
		t.Errorf("Describe = %q, %v", about, err)
	}
	if about, err := rulesdb.Describe("", "default.db"); err != nil || !strings.Contains(about, "default.db") {
		t.Errorf("Describe(\"\") = %q, %v", about, err)
	}
	if _, err := rulesdb.Describe("mysql://u:hunter2@h/db", "x.db"); !errors.Is(err, rulesdb.ErrUnknownScheme) || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("Describe(mysql) error %v", err)
	}
}
