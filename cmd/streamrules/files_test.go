package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/rulefile"
	"github.com/streamrules/streamrules/rulesdb"
	"github.com/streamrules/streamrules/seeds"
)

// TestExportImport: export then import changes nothing; an edited file's dry run lists
// the changes field by field and writes nothing; the real import writes them as edits.
func TestExportImport(t *testing.T) {
	t.Parallel()
	env := sqliteEnv(t)
	must(t, cli(t, env, "", "seed"))
	for _, format := range []string{"yaml", "json"} {
		exported := must(t, cli(t, env, "", "export", "--format", format)).stdout
		set, err := rulefile.Parse([]byte(exported))
		if err != nil {
			t.Fatalf("%s export does not parse: %v\n%s", format, err, exported)
		}
		def, _ := seeds.Default()
		if len(set.Rules) != len(def.Rules) || set.Version != def.Version {
			t.Errorf("%s export: %+v", format, set)
		}
		path := writeTemp(t, "rules."+format, exported)
		before := listJSON(t, env)
		r := must(t, cli(t, env, "", "import", path))
		if strings.Contains(r.stdout, "~") || strings.Contains(r.stdout, "+") || !strings.Contains(r.stderr, "0 to create, 0 to update, 10 unchanged") {
			t.Errorf("re-import of the export changed something:\n%s%s", r.stdout, r.stderr)
		}
		if after := listJSON(t, env); !reflect.DeepEqual(after, before) {
			t.Errorf("re-import of the %s export changed the rules", format)
		}
	}

	// Export to a file, edit it as a person would, and import it.
	path := t.TempDir() + "/rules.yaml"
	must(t, cli(t, env, "", "export", "-o", path))
	if st, err := os.Stat(path); err != nil {
		t.Fatal(err)
	} else if st.Mode().Perm() != 0o644 {
		t.Errorf("export -o: mode %v, want 0644 (not the temporary file's 0600)", st.Mode())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(data), `repeat: "after:5"`, `repeat: "after:7"`, 1)
	edited = strings.Replace(edited, "  enabled: true\n- name: telegram_react_not_emoji", "  enabled: false\n- name: telegram_react_not_emoji", 1)
	edited += "- name: no_lorem\n  scope: text\n  condition: (?i)lorem\n  text: No placeholder text.\n"
	if err := os.WriteFile(path, []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	before := listJSON(t, env)
	dry := must(t, cli(t, env, "", "import", "--dry-run", path))
	want := []string{
		"+ no_lorem (new)",
		"~ telegram_markdown_image\n    enabled: true -> false\n",
		"~ write_diff_over_write_file\n    repeat: \"after:5\" -> \"after:7\"\n",
		"= telegram_reply_tail",
	}
	for _, w := range want {
		if !strings.Contains(dry.stdout, w) {
			t.Errorf("dry run lacks %q:\n%s", w, dry.stdout)
		}
	}
	if !strings.Contains(dry.stderr, "would import") || !strings.Contains(dry.stderr, "1 to create, 2 to update, 8 unchanged") {
		t.Errorf("dry run summary: %q", dry.stderr)
	}
	if after := listJSON(t, env); !reflect.DeepEqual(after, before) {
		t.Error("the dry run wrote")
	}
	var doc struct {
		DryRun  bool `json:"dry_run"`
		Changes []struct {
			Rule, Action string
			Fields       []struct {
				Field    string
				From, To json.RawMessage
			}
		} `json:"changes"`
	}
	if err := json.Unmarshal([]byte(must(t, cli(t, env, "", "import", "--dry-run", "--json", path)).stdout), &doc); err != nil || !doc.DryRun || len(doc.Changes) != 11 {
		t.Errorf("dry run --json: %v %+v", err, doc)
	}

	must(t, cli(t, env, "", "import", path))
	after := listJSON(t, env)
	if !after["telegram_markdown_image"].Disabled || after["write_diff_over_write_file"].Repeat != "after:7" || !after["no_lorem"].Loaded {
		t.Errorf("import did not write: %+v", after)
	}
	// An import is an edit like the master's: updated_at moved, so a calibration wave
	// would leave the rule alone.
	if !after["write_diff_over_write_file"].UpdatedAt.After(before["write_diff_over_write_file"].UpdatedAt) {
		t.Error("updated_at did not move")
	}
	if !after["telegram_reply_tail"].UpdatedAt.Equal(before["telegram_reply_tail"].UpdatedAt) {
		t.Error("an unchanged rule was written")
	}
	// And the file is now what the database holds.
	again := must(t, cli(t, env, "", "import", "--dry-run", path))
	if !strings.Contains(again.stderr, "0 to create, 0 to update, 11 unchanged") {
		t.Errorf("after import: %s", again.stderr)
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	good := writeTemp(t, "good.yaml", "version: 1\nrules:\n  - name: a\n    scope: text\n    text: t\n")
	bad := writeTemp(t, "bad.yaml", "version: 1\nrules:\n  - name: a\n    scope: text\n    text: t\n  - name: b\n    scope: text\n    condition: (\n    text: t\n")
	custom := writeTemp(t, "custom.json", `{"version": 1, "rules": [{"name": "p", "scope": "tool:deploy", "when": ["prod"], "text": "t"}]}`)
	r := cli(t, nil, "", "validate", good, bad, "../../seeds/seeds.json")
	if r.code != 2 {
		t.Errorf("exit %d", r.code)
	}
	if !strings.Contains(r.stderr, bad+`:8: rule #2 "b": streamrules: invalid condition: `) {
		t.Errorf("stderr: %q", r.stderr)
	}
	if !strings.Contains(r.stdout, good+": ok, 1 rule") || !strings.Contains(r.stdout, "seeds.json: ok, 10 rules") {
		t.Errorf("stdout: %q", r.stdout)
	}
	if r := cli(t, nil, "", "validate", custom); r.code != 2 || !strings.Contains(r.stderr, `invalid when: unknown environment "prod"`) {
		t.Errorf("unregistered environment: %+v", r)
	}
	if r := cli(t, map[string]string{"STREAMRULES_ENVIRONMENTS": "prod,staging"}, "", "validate", custom); r.code != 0 {
		t.Errorf("registered environment: %+v", r)
	}
}

// TestStats: after firings (written as a move's end writes them), stats lists every rule
// with its firings, outcomes and would-fires, then a deleted rule's history; rules list
// counts the same live firings.
func TestStats(t *testing.T) {
	t.Parallel()
	env := sqliteEnv(t)
	must(t, cli(t, env, "", "seed"))
	ctx := context.Background()
	store, err := rulesdb.Open(ctx, env[rulesdb.EnvDSN], &rulesdb.Config{ReloadInterval: -1, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	err = store.SaveMove(ctx, streamrules.MoveRecord{ChatID: "c", Move: 1, Answered: true, Firings: []streamrules.Firing{
		{Rule: "telegram_reply_tail", ChatID: "c", Move: 1, Mode: streamrules.ModeInterrupt, Retry: true, Outcome: streamrules.OutcomeCorrected, At: now},
		{Rule: "telegram_markdown_image", ChatID: "c", Move: 1, Mode: streamrules.ModeInterrupt, Outcome: streamrules.OutcomeShadow, At: now},
		{Rule: "gone_rule", ChatID: "c", Move: 1, Mode: streamrules.ModeRemind, Outcome: streamrules.OutcomeComplied, At: now},
	}})
	store.Close()
	if err != nil {
		t.Fatal(err)
	}
	r := must(t, cli(t, env, "", "stats", "--json"))
	var stats streamrules.Stats
	if err := json.Unmarshal([]byte(r.stdout), &stats); err != nil || len(stats.Rules) != 11 || r.stderr != "" {
		t.Fatalf("stats --json: %v %+v %q", err, stats, r.stderr)
	}
	by := map[string]streamrules.RuleStat{}
	for _, st := range stats.Rules {
		by[st.Rule] = st
	}
	if st := by["telegram_reply_tail"]; st.Fired != 1 || st.Outcomes[streamrules.OutcomeCorrected] != 1 || st.LastFiredAt.IsZero() {
		t.Errorf("telegram_reply_tail: %+v", st)
	}
	if st := by["telegram_markdown_image"]; st.Fired != 0 || st.Shadow != 1 {
		t.Errorf("telegram_markdown_image: %+v", st)
	}
	if st := by["gone_rule"]; stats.Rules[10].Rule != "gone_rule" || st.Fired != 1 || st.Outcomes[streamrules.OutcomeComplied] != 1 {
		t.Errorf("deleted rule: %+v", stats.Rules[10])
	}
	table := must(t, cli(t, env, "", "stats")).stdout
	for _, want := range []string{"telegram_reply_tail  1  corrected 1", "gone_rule (deleted)"} {
		if !strings.Contains(strings.Join(strings.Fields(table), " "), strings.Join(strings.Fields(want), " ")) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	if v := listJSON(t, env)["telegram_reply_tail"]; *v.Fired != 1 {
		t.Errorf("rules list: fired %d", *v.Fired)
	}
}

// TestSeedFile: seed FILE seeds that set, not the embedded one; a bad file is exit 2
// naming it.
func TestSeedFile(t *testing.T) {
	t.Parallel()
	env := sqliteEnv(t)
	set := writeTemp(t, "mine.yaml", "version: 1\nrules:\n  - name: mine\n    scope: text\n    text: Ours.\n")
	if r := must(t, cli(t, env, "", "seed", set)); !strings.Contains(r.stdout, "with version 1 (was 0): 1 added") {
		t.Errorf("seed FILE: %q", r.stdout)
	}
	if rules := listJSON(t, env); len(rules) != 1 || !rules["mine"].Loaded {
		t.Errorf("after seed FILE: %+v", rules)
	}
	bad := writeTemp(t, "bad.yaml", "version: 1\nrules:\n  - name: mine\n    scope: txt\n    text: Ours.\n")
	if r := cli(t, env, "", "seed", bad); r.code != 2 || !strings.Contains(r.stderr, bad+":") {
		t.Errorf("seed a bad FILE: %+v", r)
	}
}
