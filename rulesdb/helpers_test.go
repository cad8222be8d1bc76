package rulesdb_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/enginetest"
	"github.com/streamrules/streamrules/internal/pgtest"
	"github.com/streamrules/streamrules/internal/testlog"
	"github.com/streamrules/streamrules/rulesdb"
	"github.com/streamrules/streamrules/seeds"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// backend makes a fresh, empty database and returns its DSN.
type backend struct {
	name string
	dsn  func(t *testing.T) string
}

var backends = []backend{
	{"sqlite", func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "rules.db") }},
	{"postgres", func(t *testing.T) string { return pgtest.DSN(t) }},
}

// eachBackend runs fn as a parallel subtest per backend, each on its own fresh database.
func eachBackend(t *testing.T, fn func(t *testing.T, dsn string)) {
	t.Helper()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			fn(t, b.dsn(t))
		})
	}
}

func isPostgres(dsn string) bool { return strings.HasPrefix(dsn, "postgres") }

func open(t *testing.T, dsn string, cfg *rulesdb.Config) *rulesdb.Store {
	t.Helper()
	if cfg == nil {
		cfg = &rulesdb.Config{}
	}
	if cfg.Environments == nil {
		// The seeds' names, so a test may seed a set it built or Seed after Open; the
		// store's own list is TestStoreEnvironments'.
		cfg.Environments = seeds.Environments()
	}
	if cfg.Logger == nil {
		cfg.Logger = quietLogger()
	}
	s, err := rulesdb.Open(context.Background(), dsn, cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

func defaultSeeds(t *testing.T) seeds.Set {
	t.Helper()
	set, err := seeds.Default()
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func seeded(t *testing.T, dsn string) *rulesdb.Store {
	t.Helper()
	set := defaultSeeds(t)
	return open(t, dsn, &rulesdb.Config{Seed: &set})
}

func newEngine(t *testing.T, s streamrules.Store, log *slog.Logger) *streamrules.Engine {
	t.Helper()
	return enginetest.New(t, s, &streamrules.Config{Logger: log}) // log nil: quiet
}

func quietLogger() *slog.Logger { return testlog.Quiet() }

func capture() (*slog.Logger, *testlog.Buffer) { return testlog.New() }

func names(rules []streamrules.Rule) []string {
	out := make([]string, len(rules))
	for i, r := range rules {
		out[i] = r.Name
	}
	return out
}

func ruleNamed(t *testing.T, s *rulesdb.Store, name string) streamrules.Rule {
	t.Helper()
	r, err := s.GetRule(context.Background(), name)
	if err != nil {
		t.Fatalf("GetRule(%q): %v", name, err)
	}
	return r
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %s: %s", within, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func mustExec(t *testing.T, s *rulesdb.Store, query string, args ...any) {
	t.Helper()
	if _, err := s.DB().Exec(s.DB().Rebind(query), args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}
