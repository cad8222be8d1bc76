package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/streamrules/streamrules/replay"
	"github.com/streamrules/streamrules/seeds"
)

// The session's transcript replays, against the seeded rules, to the counts the session
// produced: after one run and after two (the file appends as the database keeps the chat).
func TestSessionTranscriptReplays(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dsn := "sqlite:" + filepath.Join(dir, "demo.db")
	jsonl := filepath.Join(t.TempDir(), "session.jsonl")
	set, err := seeds.Default()
	if err != nil {
		t.Fatal(err)
	}
	for run := 1; run <= 2; run++ {
		var stdout, stderr bytes.Buffer
		code := runMain(environ("STREAMRULES_DSN", dsn, "STREAMRULES_TRANSCRIPT", jsonl), &stdout, &stderr)
		if code != 0 {
			t.Fatalf("run %d: exit %d\n%s%s", run, code, stderr.String(), stdout.String())
		}
		out := stdout.String()
		if !strings.Contains(out, "transcript: each move is appended to "+jsonl) ||
			!strings.Contains(out, "go run ./cmd/streamrules replay --rules seeds/seeds.json "+jsonl) {
			t.Errorf("run %d does not say where the transcript is and how to replay it:\n%s", run, out)
		}
		checkHeaders(t, out)

		f, err := os.Open(jsonl)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := replay.Run(context.Background(), set.Rules, []replay.Source{{Name: jsonl, R: f}}, &replay.Options{Environments: set.Environments})
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if want := len(demoScenes()) * run; rep.Moves != want {
			t.Errorf("run %d: the transcript holds %d moves, want %d", run, rep.Moves, want)
		}
		stats := dbStats(t, dsn)
		for _, r := range rep.Rules {
			if int64(r.Fired) != stats[r.Rule] {
				t.Errorf("run %d: %s fires %d times in the replay, %d times in the session", run, r.Rule, r.Fired, stats[r.Rule])
			}
			if r.Fired == 0 {
				t.Errorf("run %d: %s never fires: the session shows every seeded miss", run, r.Rule)
			}
		}
	}
	checkOnlyDB(t, dir, "demo.db")
}

func runMain(getenv func(string) string, stdout, stderr *bytes.Buffer, args ...string) int {
	return run(context.Background(), args, getenv, strings.NewReader(""), stdout, stderr)
}

// checkHeaders: every move's header has the same width, two-digit moves included.
func checkHeaders(t *testing.T, out string) {
	t.Helper()
	n := 0
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "── move ") {
			n++
			if w := utf8.RuneCountInString(line); w != headerWidth {
				t.Errorf("header %q is %d wide, want %d", line, w, headerWidth)
			}
		}
	}
	if n == 0 {
		t.Error("no move headers")
	}
}

// An unwritable default SQLite file names STREAMRULES_SQLITE_PATH and the OS's reason.
func TestUnwritableSQLitePath(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ path, cause string }{
		{filepath.Join(dir, "missing", "x.db"), "no such file or directory"},
		{filepath.Join(file, "x.db"), "not a directory"},
	} {
		var stdout, stderr bytes.Buffer
		if code := runMain(environ("STREAMRULES_SQLITE_PATH", tt.path), &stdout, &stderr); code != 1 {
			t.Errorf("%s: exit %d, want 1", tt.path, code)
		}
		msg := stderr.String()
		want := progName + ": STREAMRULES_SQLITE_PATH: cannot open the SQLite file: open " + tt.path + ": " + tt.cause + "\n"
		if msg != want {
			t.Errorf("stderr\n %q\nwant\n %q", msg, want)
		}
	}
}

// A model that cannot be reached: each failed move names the model's URL, and a live
// session in which every move failed exits 1.
func TestLiveEveryMoveFailed(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String() + "/v1"
	ln.Close() // nothing listens there now: connection refused
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"-live"}, environ(
		"STREAMRULES_DSN", "sqlite:"+filepath.Join(dir, "x.db"), "OPENAI_BASE_URL", url, "OPENAI_MODEL", "m1",
	), strings.NewReader("hello\nanyone?\n"), &stdout, &stderr)
	if code != 1 {
		t.Fatalf("exit %d, want 1\nstdout: %s\nstderr: %s", code, stdout.String(), stderr.String())
	}
	if n := strings.Count(stdout.String(), "failed   │ model m1 at "+url+": "); n != 2 {
		t.Errorf("%d failed moves name the model's URL, want 2:\n%s", n, stdout.String())
	}
	if want := progName + ": every move failed (2 of 2); the errors are above\n"; stderr.String() != want {
		t.Errorf("stderr %q, want %q", stderr.String(), want)
	}
}

func TestOneLineEscapes(t *testing.T) {
	t.Parallel()
	if got := oneLine("a\tb\r\nc\n", 110); got != `a\tb\r⏎c` {
		t.Errorf("oneLine = %q", got)
	}
}
