package rulesdb_test

import (
	"context"
	"reflect"
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
		mctx, move := eng.BeginMove(ctx, "ops", streamrules.EnvClientOps)
		if rem := move.GateCall(mctx, "shell", `{"cmd":"bash -c \"\\\\rm -r --force /srv\""}`); len(rem) != 1 || rem[0].Rule != "destructive_shell" {
			t.Errorf("the stored gate let the call run: %v", rem)
		}
		if rem := move.GateCall(mctx, "shell", `{"cmd":"rm -rf node_modules"}`); rem != nil {
			t.Errorf("build output refused: %v", rem)
		}
	})
}
