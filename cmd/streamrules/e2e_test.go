package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/streamrules/streamrules/internal/pgtest"
	"github.com/streamrules/streamrules/replay"
	"github.com/streamrules/streamrules/seeds"
)

// binary is the command built once for the whole test binary, by mainWithBinary.
var binary string

// mainWithBinary builds the real command once, runs the tests, and stops the throw-away
// PostgreSQL cluster if one was started.
func mainWithBinary(m *testing.M) int {
	dir, err := os.MkdirTemp("", "streamrules-cli")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	binary = filepath.Join(dir, "streamrules")
	if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		return 1
	}
	return pgtest.Main(m)
}

// exe runs the built binary with only the given environment (and PATH/HOME).
func exe(t *testing.T, environ map[string]string, args ...string) result {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	for k, v := range environ {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Dir = t.TempDir() // the default SQLite file, if any, lands here
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return result{code, out.String(), errb.String()}
}

// withPassword returns dsn with a password in it, and that password: the one it has, or
// a made-up one (the throw-away cluster trusts local connections and ignores it).
func withPassword(t *testing.T, dsn string) (string, string) {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	if pw, ok := u.User.Password(); ok && pw != "" {
		return dsn, pw
	}
	user := "postgres"
	if u.User != nil && u.User.Username() != "" {
		user = u.User.Username()
	}
	const pw = "Hunter2-never-print-me"
	u.User = url.UserPassword(user, pw)
	return u.String(), pw
}

const replayRules = `version: 1
rules:
  - name: no_lorem
    scope: text
    condition: (?i)lorem
    text: No placeholder text.
  - name: reply_tail
    scope: text
    condition: '↩ #\d+\s*$'
    negate: true
    when: [telegram]
    text: End a Telegram reply with the tail.
  - name: shell_here
    scope: tool:shell
    when: [client_ops]
    repeat: once
    text: This shell is the agent's host.
`

// replayTranscript: five moves of two chats. By hand:
//
//	no_lorem    in scope 5 (no when), fired 2 (moves a/1 and a/4)
//	reply_tail  in scope 3 (telegram: a/1-3), fired 1 (a/2 has no tail)
//	shell_here  in scope 3 (client_ops: a/3, a/4, b/1), fired 2 (a/3; a/4 is silent,
//	            once per chat; b/1 once though it calls shell twice)
const replayTranscript = `{"chat":"a","env":["telegram"],"answer":"Lorem ipsum ↩ #1"}
{"chat":"a","env":["telegram"],"answer":"Done."}
{"chat":"a","env":["telegram","client_ops"],"tools":[{"name":"shell","args":"{\"cmd\":\"ls\"}"}],"answer":"ok ↩ #3"}
{"chat":"a","env":["client_ops"],"tools":[{"name":"shell","args":"{\"cmd\":\"df\"}"}],"answer":"lorem"}
{"chat":"b","env":["client_ops"],"tools":[{"name":"shell","args":"{}"},{"name":"shell","args":"{}"}],"answer":"fine"}
`

func checkReplay(t *testing.T, r result) {
	t.Helper()
	var rep replay.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("replay --json: %v\n%s", err, r.stdout)
	}
	want := map[string][2]int{"no_lorem": {5, 2}, "reply_tail": {3, 1}, "shell_here": {3, 2}}
	if rep.Moves != 5 || len(rep.Rules) != len(want) {
		t.Fatalf("replay: %+v", rep)
	}
	for _, rr := range rep.Rules {
		if w := want[rr.Rule]; rr.InScope != w[0] || rr.Fired != w[1] || len(rr.Examples) != w[1] {
			t.Errorf("%s: in scope %d, fired %d, %d examples; want %d, %d", rr.Rule, rr.InScope, rr.Fired, len(rr.Examples), w[0], w[1])
		}
	}
	if !strings.Contains(r.stderr, "replayed 5 moves from 1 transcript against 3 rules") || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("replay stderr (a pipe: the summary only): %q", r.stderr)
	}
}

// TestReplayInProcess runs the backtest through run, on a file and on stdin.
func TestReplayInProcess(t *testing.T) {
	t.Parallel()
	rules := writeTemp(t, "rules.yaml", replayRules)
	tr := writeTemp(t, "week.jsonl", replayTranscript)
	checkReplay(t, cli(t, nil, "", "replay", "--rules", rules, "--json", tr))
	checkReplay(t, cli(t, nil, replayTranscript, "replay", "--rules", rules, "--json", "-"))
	text := must(t, cli(t, nil, "", "replay", "--rules", rules, tr)).stdout
	if !strings.Contains(text, "reply_tail") || !strings.Contains(text, "5 moves replayed") {
		t.Errorf("text report:\n%s", text)
	}
	bad := writeTemp(t, "bad.jsonl", `{"chat":"a","anwser":"x"}`+"\n")
	if r := cli(t, nil, "", "replay", "--rules", rules, bad); r.code != 2 || !strings.Contains(r.stderr, bad+`:1: `) {
		t.Errorf("bad transcript: %+v", r)
	}
}

// TestBinary drives the built command through the whole story on a fresh SQLite file and
// on the throw-away PostgreSQL.
func TestBinary(t *testing.T) {
	t.Parallel()
	backends := []struct {
		name string
		dsn  func(t *testing.T) (string, string) // the DSN and a secret that must never show
	}{
		{"sqlite", func(t *testing.T) (string, string) {
			return "sqlite:" + filepath.Join(t.TempDir(), "rules.db"), "\x00no-secret"
		}},
		{"postgres", func(t *testing.T) (string, string) { return withPassword(t, pgtest.DSN(t)) }},
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			dsn, secret := b.dsn(t)
			env := map[string]string{"STREAMRULES_DSN": dsn}
			run := func(want int, args ...string) result {
				t.Helper()
				r := exe(t, env, args...)
				if r.code != want {
					t.Fatalf("%v: exit %d, want %d\nstdout: %s\nstderr: %s", args, r.code, want, r.stdout, r.stderr)
				}
				if strings.Contains(r.stdout+r.stderr, secret) {
					t.Fatalf("%v printed the DSN's password", args)
				}
				return r
			}
			jsonOK := func(r result, v any) {
				t.Helper()
				// Into a zero value: Unmarshal keeps what an absent (omitempty) field held.
				reflect.ValueOf(v).Elem().SetZero()
				if err := json.Unmarshal([]byte(r.stdout), v); err != nil {
					t.Fatalf("not JSON: %v\n%s", err, r.stdout)
				}
			}

			def, err := seeds.Default()
			if err != nil {
				t.Fatal(err)
			}
			if r := run(0, "seed"); !strings.Contains(r.stdout, fmt.Sprintf("with version %d (was 0)", def.Version)) || !strings.Contains(strings.ToLower(r.stdout), b.name) || r.stderr != "" {
				t.Errorf("seed: %+v", r)
			}
			dir := t.TempDir()
			exported := filepath.Join(dir, "rules.yaml")
			run(0, "export", "-o", exported)
			if r := run(0, "validate", exported); !strings.Contains(r.stdout, "ok, 10 rules") {
				t.Errorf("validate export: %+v", r)
			}
			// The seeds' tests went through the database and the file: they still pass.
			if r := run(0, "test", exported); !strings.Contains(r.stdout, exported+": ok, 10 rules, 43 examples") || !strings.Contains(r.stderr, "tested 10 rules: 43 examples, 0 failed") {
				t.Errorf("test export: %+v", r)
			}

			// A broken file: exit 2, file, line, rule and field named.
			data, err := os.ReadFile(exported)
			if err != nil {
				t.Fatal(err)
			}
			broken := filepath.Join(dir, "broken.yaml")
			os.WriteFile(broken, bytes.Replace(data, []byte("  repeat: once"), []byte("  repeat: twice"), 1), 0o600)
			if r := run(2, "validate", broken); !strings.Contains(r.stderr, broken+`:`) ||
				!strings.Contains(r.stderr, `rule #2 "local_shell_for_his_machine": streamrules: invalid repeat`) {
				t.Errorf("validate broken: %q", r.stderr)
			}

			// Import: a dry run with the diff, then the real one.
			edited := filepath.Join(dir, "edited.yaml")
			os.WriteFile(edited, bytes.Replace(data, []byte("  repeat: once"), []byte(`  repeat: "after:2"`), 1), 0o600)
			if r := run(0, "import", "--dry-run", edited); !strings.Contains(r.stdout, "~ local_shell_for_his_machine\n    repeat: \"once\" -> \"after:2\"\n") {
				t.Errorf("dry run: %q", r.stdout)
			}
			var show struct {
				Repeat string `json:"repeat"`
			}
			jsonOK(run(0, "rules", "show", "local_shell_for_his_machine", "--json"), &show)
			if show.Repeat != "once" {
				t.Errorf("the dry run wrote: %+v", show)
			}
			run(0, "import", edited)
			jsonOK(run(0, "rules", "show", "local_shell_for_his_machine", "--json"), &show)
			if show.Repeat != "after:2" {
				t.Errorf("import did not write: %+v", show)
			}

			// A changed example goes into the database by import and back out by export; the
			// test of the new export fails, naming the rule and the example.
			failing := filepath.Join(dir, "failing.yaml")
			os.WriteFile(failing, bytes.Replace(data, []byte("Thanks!"), []byte("🎉"), 1), 0o600)
			run(0, "import", failing)
			again := filepath.Join(dir, "again.yaml")
			run(0, "export", "-o", again)
			if r := run(1, "test", again); !strings.Contains(r.stderr, again+`: rule "telegram_react_not_emoji": tests.passes[1] "🎉\n↩ #12": must pass, but it fires`) ||
				!strings.Contains(r.stdout, again+": 1 failed, 10 rules, 43 examples") {
				t.Errorf("test of a failing example: %+v", r)
			}

			// List, shadow, disable and enable.
			var list struct {
				Rules []struct {
					Name     string `json:"name"`
					Enabled  bool   `json:"enabled"`
					Shadow   bool   `json:"shadow"`
					Loaded   bool   `json:"loaded"`
					Fired    *int64 `json:"fired"`
					UpdateAt string `json:"updated_at"`
				} `json:"rules"`
			}
			r := run(0, "rules", "list", "--json")
			jsonOK(r, &list)
			if len(list.Rules) != 10 || r.stderr != "" {
				t.Errorf("list: %+v %q", list, r.stderr)
			}
			run(0, "rules", "shadow", "telegram_reply_tail")
			jsonOK(run(0, "rules", "list", "--json"), &list)
			if list.Rules[6].Name != "telegram_reply_tail" || !list.Rules[6].Shadow || !list.Rules[6].Loaded {
				t.Errorf("after shadow: %+v", list.Rules[6])
			}
			run(0, "rules", "enforce", "telegram_reply_tail")
			run(0, "rules", "disable", "telegram_reply_tail")
			run(0, "rules", "enable", "telegram_reply_tail")
			jsonOK(run(0, "rules", "list", "--json"), &list)
			if !list.Rules[6].Enabled || !list.Rules[6].Loaded || list.Rules[6].Shadow {
				t.Errorf("after enable: %+v", list.Rules[6])
			}

			// Stats, and a replay of the database's rules.
			var stats struct {
				Rules []struct {
					Rule  string `json:"rule"`
					Fired int64  `json:"fired"`
				} `json:"rules"`
			}
			jsonOK(run(0, "stats", "--json"), &stats)
			if len(stats.Rules) != 10 {
				t.Errorf("stats: %+v", stats)
			}
			tr := filepath.Join(dir, "week.jsonl")
			os.WriteFile(tr, []byte(replayTranscript), 0o600)
			var rep replay.Report
			jsonOK(run(0, "replay", "--from-db", "--json", tr), &rep)
			if rep.Moves != 5 {
				t.Errorf("replay --from-db: %+v", rep)
			}
			for _, rr := range rep.Rules {
				// telegram_reply_tail by hand: in scope on a/1-3, fired on a/2 only.
				if rr.Rule == "telegram_reply_tail" && (rr.InScope != 3 || rr.Fired != 1) {
					t.Errorf("telegram_reply_tail: %+v", rr)
				}
			}
			rules := filepath.Join(dir, "replay.yaml")
			os.WriteFile(rules, []byte(replayRules), 0o600)
			checkReplay(t, run(0, "replay", "--rules", rules, "--json", tr))
		})
	}
}

// TestReplayProgress: on a terminal's stderr the progress bar shows, then the summary;
// stdout carries only the report either way.
func TestReplayProgress(t *testing.T) {
	t.Parallel()
	rules := writeTemp(t, "rules.yaml", replayRules)
	tr := writeTemp(t, "week.jsonl", replayTranscript)
	var out bytes.Buffer
	var errTTY fakeTerminal
	code := run(t.Context(), []string{"replay", "--rules", rules, "--json", tr}, func(string) string { return "" }, strings.NewReader(""), &out, &errTTY)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errTTY.String())
	}
	checkReplay(t, result{code, out.String(), lastLine(errTTY.String())})
	if !strings.Contains(errTTY.String(), "replaying") {
		t.Errorf("no progress bar on a terminal: %q", errTTY.String())
	}
}

func lastLine(s string) string {
	s = strings.TrimSuffix(s, "\n")
	if i := strings.LastIndexAny(s, "\r\n"); i >= 0 {
		s = s[i+1:]
	}
	return s + "\n"
}
