package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// validate says of every rule whether it holds speech and why; the user's own replace
// rule whose pattern starts with a character class says it holds client tours whole.
func TestValidateSaysSpeech(t *testing.T) {
	t.Parallel()
	r := must(t, cli(t, nil, "", "validate", "../../seeds/seeds.json"))
	for _, want := range []string{
		"  write_diff_over_write_file: streams — a tool rule reminds",
		"  telegram_markdown_image: holds while a `![` is open when telegram — a replace_regex fix over its own condition",
		"  telegram_reply_tail: holds a bounded tail (16 bytes) when telegram — ",
		"holds the whole tour in a move without {{message_id}} set",
		"  look_before_refusing: holds the whole tour when picture — a condition that can match anywhere",
		"  telegram_react_not_emoji: holds the answer's start when telegram — ",
		"  destructive_shell: streams — a gate stops a call before it runs",
		"  unbacked_tool_claim: holds while a `audio saved:` is open when its context leaves it able to fire (input_contains_regex, tool_succeeded generate_speech)",
		"  verify_before_done: holds the whole tour when its context leaves it able to fire (edited_unchecked)",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("validate does not say %q:\n%s", want, r.stdout)
		}
	}
	if n := strings.Count(r.stdout, "\n  "); n != 10 {
		t.Errorf("%d verdicts for 10 rules:\n%s", n, r.stdout)
	}
	own := writeTemp(t, "own.yaml", `version: 1
rules:
  - name: calm_client_replies
    scope: text
    condition: '[A-Za-z]+!+'
    when: [client_ops]
    text: Answer calmly.
    fix:
      replace_regex: {pattern: '([A-Za-z]+)!+', with: '$1.'}
`)
	r = must(t, cli(t, nil, "", "validate", own))
	if want := "calm_client_replies: holds the whole tour when client_ops — a replace_regex fix whose pattern can start at any letter"; !strings.Contains(r.stdout, want) {
		t.Errorf("validate on the user's rule does not say %q:\n%s", want, r.stdout)
	}
}

// validate --stream exits 1 when a rule holds whole tours in the environments given, naming
// it and why; 0 when none does; 2 on an unknown environment name.
func TestValidateStream(t *testing.T) {
	t.Parallel()
	own := writeTemp(t, "own.yaml", `version: 1
rules:
  - name: calm_client_replies
    scope: text
    condition: '[A-Za-z]+!+'
    when: [client_ops]
    text: Answer calmly.
    fix:
      replace_regex: {pattern: '([A-Za-z]+)!+', with: '$1.'}
  - name: md_image
    scope: text
    condition: '!\[[^\]]*\]\([^)\s]+\)'
    when: [telegram]
    text: No markdown images.
    fix:
      replace_regex: {pattern: '!\[[^\]]*\]\(([^)\s]+)\)', with: '$1'}
`)
	r := cli(t, nil, "", "validate", "--stream", "telegram,client_ops", own)
	if r.code != 1 || !strings.Contains(r.stderr, `rule "calm_client_replies" holds the whole tour when client_ops — a replace_regex fix whose pattern can start at any letter`) ||
		strings.Contains(r.stderr, "md_image") || !strings.Contains(r.stderr, "1 rule holds whole tours in a telegram+client_ops tour") {
		t.Errorf("--stream telegram,client_ops: exit %d\nstderr: %s", r.code, r.stderr)
	}
	if r := cli(t, nil, "", "validate", "--stream", "telegram", own); r.code != 0 {
		t.Errorf("--stream telegram: the client_ops rule is not armed there, yet exit %d\n%s", r.code, r.stderr)
	}
	if r := cli(t, nil, "", "validate", "--stream", "client-ops", own); r.code != 2 || !strings.Contains(r.stderr, `unknown environment "client-ops"`) {
		t.Errorf("--stream client-ops: exit %d\n%s", r.code, r.stderr)
	}
}

// rules show writes a file that replay --rules and validate accept, and it says what the
// rule does to the stream; rules list has the column, and --json the verdict.
func TestShowReplaysAndSaysSpeech(t *testing.T) {
	t.Parallel()
	env := sqliteEnv(t)
	must(t, cli(t, env, "", "seed"))
	r := must(t, cli(t, env, "", "rules", "show", "telegram_markdown_image"))
	if !strings.Contains(r.stdout, "# speech: holds while a `![` is open when telegram — ") {
		t.Errorf("rules show does not say the speech verdict:\n%s", r.stdout)
	}
	file := filepath.Join(t.TempDir(), "one.yaml")
	if err := os.WriteFile(file, []byte(r.stdout), 0o600); err != nil {
		t.Fatal(err)
	}
	transcript := writeTemp(t, "t.jsonl", `{"chat":"c","env":["telegram"],"answer":"Here: ![cat](https://x.org/c.jpg)"}`+"\n")
	rep := cli(t, env, "", "replay", "--rules", file, "--json", transcript)
	var report struct {
		Rules []struct {
			Rule  string `json:"rule"`
			Fired int    `json:"fired"`
		} `json:"rules"`
	}
	if rep.code != 0 || json.Unmarshal([]byte(rep.stdout), &report) != nil || len(report.Rules) != 1 ||
		report.Rules[0].Rule != "telegram_markdown_image" || report.Rules[0].Fired != 1 {
		t.Errorf("replay --rules on rules show's output: exit %d\nstdout: %s\nstderr: %s", rep.code, rep.stdout, rep.stderr)
	}
	if v := cli(t, env, "", "validate", file); v.code != 0 || !strings.Contains(v.stdout, "ok, 1 rule (a single rule)") {
		t.Errorf("validate on rules show's output: %+v", v)
	}
	// A broken single rule names its own field, not the set's shape.
	bad := writeTemp(t, "bad.yaml", "name: x\nscope: text\ncondition: '('\ntext: hi\n")
	if v := cli(t, env, "", "validate", bad); v.code != 2 || !strings.Contains(v.stderr, "condition") || strings.Contains(v.stderr, "known: rules, version") {
		t.Errorf("validate on a broken single rule: %+v", v)
	}
	l := must(t, cli(t, env, "", "rules", "list"))
	if !strings.Contains(l.stdout, "SPEECH") || !strings.Contains(l.stdout, "holds a bounded tail (16 bytes) when telegram") {
		t.Errorf("rules list has no speech column:\n%s", l.stdout)
	}
	j := must(t, cli(t, env, "", "rules", "show", "--json", "look_before_refusing"))
	var view struct {
		Name   string `json:"name"`
		Speech struct {
			Kind   int    `json:"kind"`
			When   string `json:"when"`
			Reason string `json:"reason"`
		} `json:"speech"`
	}
	if err := json.Unmarshal([]byte(j.stdout), &view); err != nil || view.Name != "look_before_refusing" || view.Speech.When != "picture" || view.Speech.Reason == "" {
		t.Errorf("rules show --json: %v %+v\n%s", err, view, j.stdout)
	}
}
