package main

import (
	"strings"
	"testing"

	"github.com/streamrules/streamrules/rulefile"
)

// budgetFile holds three 250-character rules on shell (charlie always whole), one on grep,
// one shadowed and one disabled on shell (neither counts).
func budgetFile(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("version: 1\nrules:\n")
	rule := func(name, scope, extra string, n int) {
		b.WriteString("  - name: " + name + "\n    scope: " + scope + "\n    text: " + strings.Repeat("x", n) + "\n" + extra)
	}
	rule("alpha", "tool:shell", "", 250)
	rule("bravo", "tool:shell", "    when: [telegram]\n", 250)
	rule("charlie", "tool:shell", "    delivery: full\n    hint: Charlie in short.\n", 250)
	rule("watched", "tool:shell", "    shadow: true\n", 400)
	rule("off", "tool:shell", "    enabled: false\n", 400)
	rule("grep_rule", "tool:grep", "", 300)
	rule("answer", "text", "", 400)
	return writeTemp(t, "rules.yaml", b.String())
}

func TestValidateBudget(t *testing.T) {
	t.Parallel()
	path := budgetFile(t)
	r := cli(t, nil, "", "validate", "--budget", "400", path)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1: %+v", r.code, r)
	}
	want := `over budget: tool "shell": 3 rules can fire together on one call, 750 characters in full, budget 400: alpha (250), bravo (250), charlie (250, delivery: full)`
	if !strings.Contains(r.stderr, want) || strings.Contains(r.stderr, "grep") || strings.Contains(r.stderr, "watched") {
		t.Fatalf("stderr:\n%s\nwant the line\n%s", r.stderr, want)
	}
	if !strings.Contains(r.stderr, "streamrules: 1 tool over the reminder budget of 400 characters") {
		t.Errorf("stderr summary: %s", r.stderr)
	}
	if !strings.Contains(r.stdout, path+": ok, 7 rules") {
		t.Errorf("stdout: %s", r.stdout)
	}
	// Both tools over 200; everything fits 750; no budget, no check.
	if r := cli(t, nil, "", "validate", "--budget", "299", path); r.code != 1 || !strings.Contains(r.stderr, `tool "grep"`) || !strings.Contains(r.stderr, "2 tools over") {
		t.Errorf("budget 299: %+v", r)
	}
	for _, args := range [][]string{{"validate", "--budget", "750", path}, {"validate", path}} {
		if r := cli(t, nil, "", args...); r.code != 0 || r.stderr != "" {
			t.Errorf("%v: %+v", args, r)
		}
	}
	// An invalid file is exit 2, budget or not; a negative budget is bad usage.
	bad := writeTemp(t, "bad.yaml", "version: 1\nrules:\n  - name: a\n    scope: tool:shell\n    text: t\n    hint: "+strings.Repeat("h", 121)+"\n")
	if r := cli(t, nil, "", "validate", "--budget", "10", bad); r.code != 2 || !strings.Contains(r.stderr, "invalid hint: 121 characters, at most 120") {
		t.Errorf("bad file: %+v", r)
	}
	if r := cli(t, nil, "", "validate", "--budget", "-1", path); r.code != 2 || !strings.Contains(r.stderr, "negative") {
		t.Errorf("negative budget: %+v", r)
	}
	// The rules of several files are one set: the same tool's rules fire together across them.
	other := writeTemp(t, "more.yaml", "version: 1\nrules:\n  - name: delta\n    scope: tool:grep\n    text: "+strings.Repeat("y", 200)+"\n")
	if r := cli(t, nil, "", "validate", "--budget", "400", path, other); r.code != 1 || !strings.Contains(r.stderr, `tool "grep": 2 rules`) {
		t.Errorf("two files: %+v", r)
	}
}

// TestRuleDeliveryFlags: create, edit and show carry delivery and hint.
func TestRuleDeliveryFlags(t *testing.T) {
	t.Parallel()
	env := sqliteEnv(t)
	must(t, cli(t, env, "", "rules", "create", "--name", "teeth", "--scope", "tool:shell", "--text", "Never rm -rf. Ask first.", "--delivery", "full", "--hint", "No rm -rf."))
	shown := must(t, cli(t, env, "", "rules", "show", "teeth"))
	got, err := rulefile.ParseRule([]byte(shown.stdout))
	if err != nil || got.Delivery != "full" || got.Hint != "No rm -rf." {
		t.Fatalf("shown %q: %+v, %v", shown.stdout, got, err)
	}
	must(t, cli(t, env, "", "rules", "edit", "teeth", "--delivery", "", "--hint", "Ask before rm."))
	shown = must(t, cli(t, env, "", "rules", "show", "teeth", "--json"))
	if !strings.Contains(shown.stdout, `"hint": "Ask before rm."`) || strings.Contains(shown.stdout, `"delivery"`) {
		t.Fatalf("after edit: %s", shown.stdout)
	}
	if r := cli(t, env, "", "rules", "edit", "teeth", "--delivery", "manifest"); r.code != 2 || !strings.Contains(r.stderr, "invalid delivery") {
		t.Fatalf("bad delivery: %+v", r)
	}
}
