package rulesdb_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/rulesdb"
)

// TestDescribeBadDSN: every malformed DSN is ErrBadDSN from Describe, before anything is
// dialled, and its message never holds the password. "sslmode=disable%zz" was dropped
// silently (the store then connected with the default sslmode); the others were
// errors of another kind, which a host could not tell from a database that is down.
func TestDescribeBadDSN(t *testing.T) {
	t.Parallel()
	const pw = "hunter2"
	tests := []struct{ name, dsn, want string }{
		{"port not a number", "postgres://u:" + pw + "@h:notaport/db", `invalid port ":notaport"`},
		{"port out of range", "postgres://u:" + pw + "@h:99999/db", `"port"`},
		{"unclosed bracket", "postgres://u:" + pw + "@[::1/db", "missing ']'"},
		{"bad sslmode", "postgres://u:" + pw + "@h/db?sslmode=bogus", `"sslmode": "bogus" is not supported`},
		{"undecodable query", "postgres://u:" + pw + "@h/db?sslmode=disable%zz", `invalid URL escape "%zz"`},
		{"undecodable password in query", "postgres://u@h/db?password=" + pw + "%zz", `invalid URL escape "%zz"`},
		{"bad connect_timeout", "postgres://u:" + pw + "@h/db?connect_timeout=soon", `"connect_timeout"`},
		{"bad SQLite query", "sqlite:rules.db?_pragma=%zz", `invalid URL escape "%zz"`},
		{"SQLite without a path", "sqlite:", "without a file path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := rulesdb.Describe(tt.dsn, "x.db")
			if !errors.Is(err, rulesdb.ErrBadDSN) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Describe(%q) = %v; want ErrBadDSN with %q", tt.dsn, err, tt.want)
			}
			if err != nil && strings.Contains(err.Error(), pw) {
				t.Errorf("the error shows the password: %v", err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			cancel() // Open must refuse before it dials
			if _, err := rulesdb.Open(ctx, tt.dsn, nil); !errors.Is(err, rulesdb.ErrBadDSN) {
				t.Errorf("Open(%q) = %v; want ErrBadDSN", tt.dsn, err)
			}
		})
	}
	for _, dsn := range []string{"postgres://u:" + pw + "@h:5432/db?sslmode=disable", "postgres://u@[::1]:5432/db?sslmode=verify-full", "sqlite:rules.db?_pragma=busy_timeout(5)"} {
		if _, err := rulesdb.Describe(dsn, "x.db"); err != nil {
			t.Errorf("Describe(%q) = %v, want no error", dsn, err)
		}
	}
}

// TestNameWithNUL: a name no rule can have (a NUL, invalid UTF-8) is "not found" on both
// stores, as any other missing name; PostgreSQL used to answer with its raw encoding
// error, which the tools passed on as a store failure.
func TestNameWithNUL(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn, nil)
		good := streamrules.Rule{Name: "good", Scope: "text", Condition: "x", Text: "t"}
		if _, err := s.CreateRule(ctx, good); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"good\x00", "\x00", "go\xffod"} {
			if _, err := s.GetRule(ctx, name); !errors.Is(err, streamrules.ErrNotFound) {
				t.Errorf("GetRule(%q) = %v, want ErrNotFound", name, err)
			}
			if _, err := s.UpdateRule(ctx, name, good); !errors.Is(err, streamrules.ErrNotFound) {
				t.Errorf("UpdateRule(%q) = %v, want ErrNotFound", name, err)
			}
			if err := s.DeleteRule(ctx, name); !errors.Is(err, streamrules.ErrNotFound) {
				t.Errorf("DeleteRule(%q) = %v, want ErrNotFound", name, err)
			}
		}
		if _, err := s.GetRule(ctx, "good"); err != nil {
			t.Errorf("the real rule: %v", err)
		}
	})
}
