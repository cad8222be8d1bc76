package integration_test

import (
	"context"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/llms"

	"github.com/streamrules/streamrules/internal/pgtest"
	"github.com/streamrules/streamrules/internal/scripted"
	"github.com/streamrules/streamrules/seeds"
)

// TestSeededGateOnPostgres: the whole chain (rulesdb on PostgreSQL with the shipped seeds,
// the real openai client, a stock functions agent): the seeded destructive_shell reads an
// obfuscated forced rm as a shell would; the response is discarded before the agent sees
// it, the rm never reaches the tool, the client streams nothing of it, and the firing is
// stored as corrected.
func TestSeededGateOnPostgres(t *testing.T) {
	t.Parallel()
	c := newChain(t, pgtest.DSN(t),
		scripted.Reply{ToolCalls: []llms.ToolCall{call("shell", `cd /srv && sudo -E "rm" -r --force data`)}},
		scripted.Reply{ToolCalls: []llms.ToolCall{call("shell", "du -sh /srv/data")}},
		scripted.Reply{Text: "It holds 12G; I will not delete it without the master.\n↩ #3", Chunk: 4},
	)
	out, streamed := c.move(t, "tg-3", "wipe the data folder", seeds.EnvTelegram, seeds.EnvClientOps)
	if !strings.HasPrefix(out, "It holds 12G") {
		t.Fatalf("output %q", out)
	}
	if strings.Contains(streamed, "rm") || strings.Contains(streamed, "force") {
		t.Errorf("the client streamed the discarded call: %q", streamed)
	}
	c.shell.mu.Lock()
	ran := strings.Join(c.shell.ins, "|")
	c.shell.mu.Unlock()
	if ran != "du -sh /srv/data" {
		t.Errorf("the shell ran %q", ran)
	}
	reqs := c.srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	last := reqs[1].Body.Messages[len(reqs[1].Body.Messages)-1]
	if !strings.HasPrefix(last.Content.String(), `<system-interrupt reason="rule_violation" rule="destructive_shell">`) {
		t.Errorf("the replay's last message: %+v", last)
	}
	firings, err := c.store.Firings(context.Background(), "tg-3")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range firings {
		got = append(got, f.Rule+"/"+f.Tool+"/"+string(f.Outcome))
	}
	if !strings.Contains(strings.Join(got, ","), "destructive_shell/shell/corrected") {
		t.Errorf("stored firings %v", got)
	}
}
