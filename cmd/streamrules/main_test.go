package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streamrules/streamrules/rulefile"
	"github.com/streamrules/streamrules/rulesdb"
	"github.com/streamrules/streamrules/ruletools"
)

func TestMain(m *testing.M) { os.Exit(mainWithBinary(m)) }

type result struct {
	code           int
	stdout, stderr string
}

// cli runs the command in-process with the given environment variables.
func cli(t *testing.T, environ map[string]string, stdin string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	getenv := func(k string) string { return environ[k] }
	code := run(context.Background(), args, getenv, strings.NewReader(stdin), &out, &errb)
	return result{code, out.String(), errb.String()}
}

// sqliteEnv is the environment of a command on a fresh SQLite file.
func sqliteEnv(t *testing.T) map[string]string {
	t.Helper()
	return map[string]string{rulesdb.EnvDSN: "sqlite:" + filepath.Join(t.TempDir(), "rules.db")}
}

func must(t *testing.T, r result, args ...string) result {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("%v: exit %d\nstdout: %s\nstderr: %s", args, r.code, r.stdout, r.stderr)
	}
	return r
}

func writeTemp(t *testing.T, name, data string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestHelp(t *testing.T) {
	t.Parallel()
	r := cli(t, nil, "", "--help")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("--help: %+v", r)
	}
	for _, c := range commands {
		if !strings.Contains(r.stdout, c.path) {
			t.Errorf("--help does not list %q", c.path)
		}
		args := append(strings.Fields(c.path), "--help")
		h := cli(t, nil, "", args...)
		if h.code != 0 || h.stderr != "" || !strings.HasPrefix(h.stdout, "Usage: streamrules "+c.path) {
			t.Errorf("%v: %+v", args, h)
		}
	}
	if r := cli(t, nil, "", "rules", "--help"); r.code != 0 || !strings.Contains(r.stdout, "rules shadow") {
		t.Errorf("rules --help: %+v", r)
	}
}

// TestBadUsage: each mistake exits 2 with one line on stderr naming what to fix, and
// nothing on stdout.
func TestBadUsage(t *testing.T) {
	t.Parallel()
	env := sqliteEnv(t)
	tests := []struct {
		name    string
		environ map[string]string
		args    []string
		want    string
	}{
		{"unknown command", env, []string{"frobnicate"}, `unknown command "frobnicate"`},
		{"unknown verb", env, []string{"rules", "frobnicate"}, `unknown command "rules frobnicate"`},
		{"unknown flag", env, []string{"rules", "list", "--colour"}, "flag provided but not defined: -colour"},
		{"extra argument", env, []string{"rules", "list", "x"}, "takes no arguments"},
		{"show without a name", env, []string{"rules", "show"}, "one rule NAME"},
		{"bad format", env, []string{"export", "--format", "xml"}, `--format "xml"`},
		{"create without fields", env, []string{"rules", "create", "--name", "x"}, "--name, --scope and --text"},
		{"create with both", env, []string{"rules", "create", "-f", "x.yaml", "--name", "x"}, "not both"},
		{"edit with nothing", env, []string{"rules", "edit", "x"}, "say what to change"},
		{"bad bool", env, []string{"rules", "edit", "x", "--negate=maybe"}, "want true or false"},
		{"replay without rules", env, []string{"replay", "t.jsonl"}, "--rules FILE or --from-db"},
		{"replay with both", env, []string{"replay", "--rules", "r.yaml", "--from-db", "t.jsonl"}, "--rules FILE or --from-db"},
		{"replay missing transcript", env, []string{"replay", "--rules", "../../seeds/seeds.json", "no-such.jsonl"}, "no-such.jsonl"},
		{"validate nothing", env, []string{"validate"}, "one or more FILEs"},
		{"bad dsn flag", env, []string{"rules", "list", "--dsn", "mysql://bob:hunter2@db/rules"}, "--dsn: rulesdb: scheme"},
		{"bad dsn variable", map[string]string{rulesdb.EnvDSN: "mysql://bob:hunter2@db/rules"}, []string{"stats"}, "STREAMRULES_DSN: rulesdb: scheme"},
		{"bad environments", map[string]string{"STREAMRULES_ENVIRONMENTS": "Prod"}, []string{"validate", "x.yaml"}, "STREAMRULES_ENVIRONMENTS"},
		{"bad interval", map[string]string{"STREAMRULES_RELOAD_INTERVAL": "soon"}, []string{"stats"}, "STREAMRULES_RELOAD_INTERVAL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := cli(t, tt.environ, "", tt.args...)
			if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, tt.want) || strings.Count(r.stderr, "\n") != 1 {
				t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", tt.args, r.code, r.stdout, r.stderr, tt.want)
			}
			if strings.Contains(r.stderr, "hunter2") {
				t.Errorf("the password is printed: %s", r.stderr)
			}
		})
	}
	if r := cli(t, nil, ""); r.code != 2 || !strings.Contains(r.stderr, "Usage:") {
		t.Errorf("no arguments: %+v", r)
	}
}

func listJSON(t *testing.T, env map[string]string) map[string]ruletools.RuleView {
	t.Helper()
	r := must(t, cli(t, env, "", "rules", "list", "--json"))
	var doc struct {
		Rules []ruletools.RuleView `json:"rules"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("rules list --json: %v\n%s", err, r.stdout)
	}
	out := map[string]ruletools.RuleView{}
	for _, v := range doc.Rules {
		out[v.Name] = v
	}
	return out
}

func TestRulesCommands(t *testing.T) {
	t.Parallel()
	env := sqliteEnv(t)
	must(t, cli(t, env, "", "seed"))
	if r := must(t, cli(t, env, "", "seed")); !strings.Contains(r.stdout, "already seeded") {
		t.Errorf("second seed: %q", r.stdout)
	}
	rules := listJSON(t, env)
	if len(rules) != 10 || !rules["telegram_reply_tail"].Loaded || rules["telegram_reply_tail"].Fired == nil {
		t.Fatalf("seeded list: %+v", rules)
	}
	table := must(t, cli(t, env, "", "rules", "list")).stdout
	if lines := strings.Split(table, "\n"); !strings.HasPrefix(table, "NAME") ||
		strings.Join(strings.Fields(lines[7]), " ") != "telegram_reply_tail text enabled yes 0 holds a bounded tail (16 bytes) when telegram" {
		t.Errorf("table:\n%s", table)
	}

	// Create from flags; a bad one names the field and exits 2; a taken name exits 1.
	r := must(t, cli(t, env, "", "rules", "create", "--name", "no_lorem", "--scope", "text", "--condition", "(?i)lorem", "--text", "No placeholder text.", "--when", "telegram,master"))
	if !strings.Contains(r.stdout, "name: no_lorem") || !strings.Contains(r.stdout, "when: [master, telegram]") {
		t.Errorf("create printed:\n%s", r.stdout)
	}
	if r := cli(t, env, "", "rules", "create", "--name", "bad_re", "--scope", "text", "--condition", "(", "--text", "t"); r.code != 2 || !strings.Contains(r.stderr, `streamrules: rule "bad_re": streamrules: invalid condition: `) {
		t.Errorf("bad regex: %+v", r)
	}
	if r := cli(t, env, "", "rules", "create", "--name", "no_lorem", "--scope", "text", "--text", "t"); r.code != 1 || !strings.Contains(r.stderr, "already exists") {
		t.Errorf("taken name: %+v", r)
	}
	// The wave-2 fields from flags: a predicate tree and a fix, strict at every depth.
	r = must(t, cli(t, env, "", "rules", "create", "--name", "tail_fix", "--scope", "text", "--text", "End with the tail.",
		"--predicate", `{"ends_with_regex": "↩ #\\d+"}`, "--negate", "--fix", `{"append_if_missing": "\n↩ #1"}`, "--severity", "high", "--json"))
	var tf ruletools.RuleView
	if err := json.Unmarshal([]byte(r.stdout), &tf); err != nil || tf.Predicate == nil || tf.Fix == nil || tf.Severity != "high" || !tf.Loaded {
		t.Errorf("create with a predicate and a fix: %v %s", err, r.stdout)
	}
	if r := cli(t, env, "", "rules", "edit", "tail_fix", "--predicate", `{"Ends_With_Regex": "x"}`); r.code != 2 || !strings.Contains(r.stderr, `unknown field "Ends_With_Regex"`) {
		t.Errorf("a nested key in another case: %+v", r)
	}
	// From a file, and from a file with a key in another case (line and field named).
	good := writeTemp(t, "r.yaml", "name: from_file\nscope: tool:shell\nrepeat: once\ntext: Ours.\n")
	must(t, cli(t, env, "", "rules", "create", "-f", good))
	bad := writeTemp(t, "bad.yaml", "name: from_file2\nscope: text\nText: Ours.\n")
	if r := cli(t, env, "", "rules", "create", "-f", bad); r.code != 2 || !strings.Contains(r.stderr, bad+`:3: rule "from_file2": unknown field "Text"`) {
		t.Errorf("bad file: %+v", r)
	}
	must(t, cli(t, env, `{"name":"from_stdin","scope":"text","text":"t"}`, "rules", "create", "-f", "-"))

	// --disabled is the wire's "enabled", inverted: it must land as Disabled, and
	// --disabled=false must bring the rule back.
	must(t, cli(t, env, "", "rules", "create", "--name", "off_rule", "--scope", "text", "--text", "t", "--disabled"))
	if v := listJSON(t, env)["off_rule"]; !v.Disabled || v.Loaded {
		t.Errorf("created with --disabled: %+v", v)
	}
	must(t, cli(t, env, "", "rules", "edit", "off_rule", "--disabled=false"))
	if v := listJSON(t, env)["off_rule"]; v.Disabled || !v.Loaded {
		t.Errorf("edited with --disabled=false: %+v", v)
	}

	// Edit some fields, keep the rest; rename.
	r = must(t, cli(t, env, "", "rules", "edit", "no_lorem", "--text", "Never lorem.", "--new-name", "no_lorem_ipsum", "--json"))
	var v ruletools.RuleView
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil || v.Name != "no_lorem_ipsum" || v.Text != "Never lorem." || v.Condition != "(?i)lorem" || !v.Loaded {
		t.Errorf("edit: %v %+v", err, v)
	}
	// Disable, enable, delete.
	must(t, cli(t, env, "", "rules", "disable", "no_lorem_ipsum"))
	if v := listJSON(t, env)["no_lorem_ipsum"]; !v.Disabled || v.Loaded {
		t.Errorf("after disable: %+v", v)
	}
	if r := must(t, cli(t, env, "", "rules", "disable", "no_lorem_ipsum")); !strings.Contains(r.stdout, "already disabled") {
		t.Errorf("disable twice: %q", r.stdout)
	}
	must(t, cli(t, env, "", "rules", "enable", "no_lorem_ipsum"))
	if v := listJSON(t, env)["no_lorem_ipsum"]; v.Disabled || !v.Loaded {
		t.Errorf("after enable: %+v", v)
	}
	must(t, cli(t, env, "", "rules", "delete", "no_lorem_ipsum"))
	if r := cli(t, env, "", "rules", "show", "no_lorem_ipsum"); r.code != 1 || !strings.Contains(r.stderr, "not found") {
		t.Errorf("show deleted: %+v", r)
	}
	// show prints a rule file that create -f reads back.
	shown := must(t, cli(t, env, "", "rules", "show", "from_file")).stdout
	if got, err := rulefile.ParseRule([]byte(shown)); err != nil || got.Name != "from_file" || got.Scope != "tool:shell" || got.Repeat != "once" || got.Text != "Ours." {
		t.Errorf("show's output is not the rule's file: %v %+v\n%s", err, got, shown)
	}
	if !strings.HasPrefix(shown, "# loaded: yes; fired: 0") {
		t.Errorf("show's header: %q", shown)
	}
}

// TestShadowEnforce: shadow and enforce set Rule.Shadow in the database; a shadowed rule
// stays loaded (it is watched) and list shows it.
func TestShadowEnforce(t *testing.T) {
	t.Parallel()
	env := sqliteEnv(t)
	must(t, cli(t, env, "", "seed"))
	if r := must(t, cli(t, env, "", "rules", "shadow", "telegram_reply_tail")); r.stdout != "rule \"telegram_reply_tail\" is now enabled,shadow\n" {
		t.Errorf("shadow: %q", r.stdout)
	}
	if v := listJSON(t, env)["telegram_reply_tail"]; !v.Shadow || !v.Loaded {
		t.Fatalf("after shadow: %+v", v)
	}
	table := must(t, cli(t, env, "", "rules", "list")).stdout
	if !strings.Contains(table, "enabled,shadow") {
		t.Errorf("table:\n%s", table)
	}
	if r := must(t, cli(t, env, "", "rules", "shadow", "telegram_reply_tail")); r.stdout != "rule \"telegram_reply_tail\" is already enabled,shadow\n" {
		t.Errorf("shadow twice: %q", r.stdout)
	}
	must(t, cli(t, env, "", "rules", "enforce", "telegram_reply_tail"))
	if listJSON(t, env)["telegram_reply_tail"].Shadow {
		t.Error("still in shadow after enforce")
	}
}

// fakeTerminal is a buffer that says it is a terminal, as main's terminal does.
type fakeTerminal struct{ bytes.Buffer }

func (*fakeTerminal) IsTerminal() bool { return true }

// TestTerminal: colour on a terminal unless NO_COLOR, none in a pipe; the columns line
// up either way.
func TestTerminal(t *testing.T) {
	t.Parallel()
	env := sqliteEnv(t)
	must(t, cli(t, env, "", "seed"))
	must(t, cli(t, env, "", "rules", "disable", "look_before_refusing"))
	listOn := func(environ map[string]string) string {
		var out fakeTerminal
		var errb bytes.Buffer
		if code := run(context.Background(), []string{"rules", "list"}, func(k string) string { return environ[k] }, strings.NewReader(""), &out, &errb); code != 0 {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
		return out.String()
	}
	pipe := must(t, cli(t, env, "", "rules", "list")).stdout
	tty := listOn(env)
	if strings.Contains(pipe, "\x1b[") || !strings.Contains(tty, "\x1b[02mlook_before_refusing") {
		t.Errorf("pipe:\n%q\nterminal:\n%q", pipe, tty)
	}
	noColor := map[string]string{rulesdb.EnvDSN: env[rulesdb.EnvDSN], "NO_COLOR": "1"}
	if got := listOn(noColor); got != pipe {
		t.Errorf("NO_COLOR:\n%q\nwant\n%q", got, pipe)
	}
	// Stripped of colour, the terminal's table is the pipe's.
	stripped := tty
	for _, code := range []string{plain, bold, dim, red, yellow, reset} {
		stripped = strings.ReplaceAll(stripped, code, "")
	}
	if stripped != pipe {
		t.Errorf("columns differ:\n%s\n%s", stripped, pipe)
	}
}

// TestStoreDown: a database that does not answer is a failure (exit 1) naming the host,
// never the password.
func TestStoreDown(t *testing.T) {
	t.Parallel()
	dsn := "postgres://bob:hunter2@127.0.0.1:1/rules?sslmode=disable&connect_timeout=5"
	for _, args := range [][]string{{"rules", "list", "--dsn", dsn}, {"stats"}} {
		r := cli(t, map[string]string{rulesdb.EnvDSN: dsn}, "", args...)
		if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, "127.0.0.1") || strings.Contains(r.stderr, "hunter2") {
			t.Errorf("%v: %+v", args, r)
		}
	}
}
