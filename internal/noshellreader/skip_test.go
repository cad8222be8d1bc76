package noshellreader_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/streamrules/streamrules"
)

// TestShellRuleSkippedLoudly: with no shell reader registered or configured, a shell rule
// is never matched raw (it would look enforced and miss `rm -r -f`): it is skipped, named
// in Engine.Skipped with its field and in the load summary, and warned about once; a
// reader in Config brings it in. NewJudge refuses it the same way.
func TestShellRuleSkippedLoudly(t *testing.T) {
	gate := streamrules.Rule{Name: "no_rm", Scope: "tool:shell", Mode: streamrules.ModeInterrupt, Shell: true,
		Condition: `^rm -r -f`, Text: "No forced recursive rm."}
	store, err := streamrules.NewMemoryStore([]streamrules.Rule{gate})
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	eng, err := streamrules.New(context.Background(), store, &streamrules.Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	sk := eng.Skipped()
	if len(eng.Rules()) != 0 || len(sk) != 1 || sk[0].Name != "no_rm" || sk[0].Field != "shell" || !strings.Contains(sk[0].Reason, "shellcmd") {
		t.Errorf("rules %v, skipped %+v: want no_rm skipped on field shell, naming the package to import", eng.Rules(), sk)
	}
	if !strings.Contains(logs.String(), "stream rule skipped: no shell reader") || !strings.Contains(logs.String(), "skipped_rules=[no_rm]") {
		t.Errorf("the log does not say it:\n%s", logs.String())
	}
	ctx, move := eng.BeginMove(context.Background(), "c")
	if v := move.CheckResponse(ctx, "", []streamrules.DeclaredCall{{Tool: "shell", Input: "rm -r -f x"}}); v.Discard {
		t.Errorf("a skipped rule discarded: %+v", v)
	}
	if _, err := streamrules.NewJudge(gate); err == nil {
		t.Error("NewJudge compiled a shell rule without a reader")
	}

	// A reader in Config: the rule loads and reads what it is given.
	words := func(script string) ([]string, error) { return []string{strings.Join(strings.Fields(script), " ")}, nil }
	eng2, err := streamrules.New(context.Background(), store, &streamrules.Config{ShellReader: words, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer eng2.Close()
	ctx, move = eng2.BeginMove(context.Background(), "c")
	if v := move.CheckResponse(ctx, "", []streamrules.DeclaredCall{{Tool: "shell", Input: "rm   -r -f x"}}); !v.Discard {
		t.Errorf("with Config.ShellReader the gate did not fire: %+v", v)
	}
}
