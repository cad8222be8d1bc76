package pgtest

import (
	"os/exec"
	"slices"
	"testing"
)

func TestNewestFirst(t *testing.T) {
	got := newestFirst([]string{
		"/usr/lib/postgresql/9.6/bin",
		"/usr/lib/postgresql/15/bin",
		"/usr/lib/postgresql/devel/bin",
		"/usr/lib/postgresql/10/bin",
		"/usr/lib/postgresql/9/bin",
	})
	want := []string{
		"/usr/lib/postgresql/15/bin",
		"/usr/lib/postgresql/10/bin",
		"/usr/lib/postgresql/9.6/bin",
		"/usr/lib/postgresql/9/bin",
		"/usr/lib/postgresql/devel/bin",
	}
	if !slices.Equal(got, want) {
		t.Errorf("newestFirst = %q, want %q", got, want)
	}
}

func TestExternalDSN(t *testing.T) {
	for _, tc := range []struct{ dsn, want, about string }{
		{
			"postgres://u:secret@db.example:5433/app?sslmode=require",
			"postgres://u:secret@db.example:5433/t_x?sslmode=require",
			EnvDSN + " server postgres://u:xxxxx@db.example:5433/app?sslmode=require",
		},
		{
			"postgresql://u@db.example/",
			"postgresql://u@db.example/t_x",
			EnvDSN + " server postgresql://u@db.example/",
		},
		{
			"host=db.example user=u dbname=app",
			"host=db.example user=u dbname=app dbname=t_x",
			EnvDSN + " server",
		},
	} {
		s, err := externalServer(tc.dsn)
		if err != nil {
			t.Fatalf("%q: %v", tc.dsn, err)
		}
		if got := s.dsnFor("t_x"); got != tc.want || s.about != tc.about {
			t.Errorf("%q: dsnFor = %q, about %q; want %q, %q", tc.dsn, got, s.about, tc.want, tc.about)
		}
	}
	if _, err := externalServer("postgres://u@[bad"); err == nil {
		t.Error("a malformed URL was accepted")
	}
}

func TestShellQuote(t *testing.T) {
	for _, s := range []string{"", "/tmp/plain", "/tmp/it's here", `a"b $HOME \n`} {
		out, err := exec.Command("/bin/sh", "-c", "printf %s "+shellQuote(s)).Output()
		if err != nil || string(out) != s {
			t.Errorf("shellQuote(%q) read back by sh as %q, %v", s, out, err)
		}
	}
}
