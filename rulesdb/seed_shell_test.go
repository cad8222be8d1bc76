package rulesdb_test

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/rulesdb"
	"github.com/streamrules/streamrules/seeds"
)

// TestSeedShellGate: the shipped seed version adds destructive_shell to a database seeded
// with the version before it, keeps the master's edits, and stores the gate whole (mode
// interrupt, field, shell: the 0007_tool_shell column); an engine on the store then stops
// a forced recursive rm written to get past a regex.
func TestSeedShellGate(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		shipped := defaultSeeds(t)
		gate, ok := shipped.Rule("destructive_shell")
		if !ok {
			t.Fatal("no destructive_shell in the shipped seeds")
		}
		before := seeds.Set{Version: shipped.Version - 1}
		for _, r := range shipped.Rules {
			if r.Name != "destructive_shell" {
				before.Rules = append(before.Rules, r)
			}
		}
		s := open(t, dsn, &rulesdb.Config{Seed: &before})
		edited := ruleNamed(t, s, "local_shell_for_his_machine")
		edited.Text = "This shell is the agent's own server. (master's words)"
		if _, err := s.UpdateRule(ctx, edited.Name, edited); err != nil {
			t.Fatal(err)
		}
		rep, err := s.Seed(ctx, shipped)
		if err != nil {
			t.Fatal(err)
		}
		if !rep.Applied || strings.Join(rep.Added, ",") != "destructive_shell" || strings.Join(rep.Kept, ",") != "local_shell_for_his_machine" {
			t.Errorf("report %+v", rep)
		}
		if got := ruleNamed(t, s, "local_shell_for_his_machine"); got.Text != edited.Text {
			t.Errorf("the master's edit was overwritten: %q", got.Text)
		}
		stored := ruleNamed(t, s, "destructive_shell")
		if !stored.Shell || stored.Mode != streamrules.ModeInterrupt || stored.Field != "cmd" || !reflect.DeepEqual(stored.Predicate, gate.Predicate) {
			t.Errorf("stored %+v, want the shipped %+v", stored, gate)
		}

		eng := newEngine(t, s, nil)
		mctx, move := eng.BeginMove(ctx, "ops", seeds.EnvClientOps)
		if rem := move.GateCall(mctx, "shell", `{"cmd":"bash -c \"\\\\rm -r --force /srv\""}`); len(rem) != 1 || rem[0].Rule != "destructive_shell" {
			t.Errorf("the stored gate let the call run: %v", rem)
		}
		if rem := move.GateCall(mctx, "shell", `{"cmd":"rm -rf node_modules"}`); rem != nil {
			t.Errorf("build output refused: %v", rem)
		}
	})
}

// TestSeedWave4ShellGate: the calibration wave that ships the shell gate reading words
// (seed version 4) rewrites a destructive_shell seeded by version 3 and left untouched:
// the stored gate then refuses rm -r with no -f on an absolute path and the symlink
// trick, and lets the quoted look-alikes version 3 refused run.
func TestSeedWave4ShellGate(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		shipped := defaultSeeds(t)
		if shipped.Version < 4 {
			t.Fatalf("shipped seed version %d, want 4 or later", shipped.Version)
		}
		var v3pred streamrules.Predicate
		if err := json.Unmarshal([]byte(v3Predicate), &v3pred); err != nil {
			t.Fatal(err)
		}
		v3 := seeds.Set{Version: 3}
		for _, r := range shipped.Rules {
			if r.Name == "destructive_shell" {
				r.Predicate = &v3pred
			}
			v3.Rules = append(v3.Rules, r)
		}
		s := open(t, dsn, &rulesdb.Config{Seed: &v3})
		rep, err := s.Seed(ctx, shipped)
		if err != nil {
			t.Fatal(err)
		}
		if !rep.Applied || !slices.Contains(rep.Updated, "destructive_shell") {
			t.Errorf("report %+v, want destructive_shell updated", rep)
		}
		eng := newEngine(t, s, nil)
		mctx, move := eng.BeginMove(ctx, "ops", seeds.EnvClientOps)
		for _, cmd := range []string{`rm -r /srv/data`, `ln -s /srv/data build && rm -rf build/`} {
			in, _ := json.Marshal(map[string]string{"cmd": cmd})
			if rem := move.GateCall(mctx, "shell", string(in)); len(rem) != 1 {
				t.Errorf("the recalibrated gate let %q run", cmd)
			}
		}
		for _, cmd := range []string{`git commit -m "docs: never git push --force"`, `rm -r -- -f`, `rm -rf node_modules/.cache`} {
			in, _ := json.Marshal(map[string]string{"cmd": cmd})
			if rem := move.GateCall(mctx, "shell", string(in)); rem != nil {
				t.Errorf("the recalibrated gate refused %q: %v", cmd, rem)
			}
		}
	})
}

// v3Predicate is destructive_shell's predicate as seed version 3 shipped it.
const v3Predicate = `{"any_of": [{"all_of": [{"starts_with_regex": "rm\\s"}, {"contains_regex": "\\s(?:-[rR]|--r[a-z]*)(?:\\s|$)"}, {"contains_regex": "\\s(?:-f|--f[a-z]*)(?:\\s|$)"}, {"not_": {"contains_regex": "^rm(?:\\s+-\\S*)*\\s+(?:\\./)?(?:build|dist|out|target|node_modules|coverage|__pycache__|\\.cache|\\.next|\\.pytest_cache|\\.turbo)(?:/[\\w-][\\w.-]*)*/?(?:\\s+(?:-\\S*|(?:\\./)?(?:build|dist|out|target|node_modules|coverage|__pycache__|\\.cache|\\.next|\\.pytest_cache|\\.turbo)(?:/[\\w-][\\w.-]*)*/?))*$"}}]}, {"contains_regex": "^git\\s(?:.*\\s)?push(?:\\s.*)?\\s(?:-f|--force|\\+[^\\s+]+)(?:\\s|$)"}]}`
