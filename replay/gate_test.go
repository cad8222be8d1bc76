package replay_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/replay"
)

// TestGatePerCall: a tool rule in mode interrupt counts a would-fire per matching call
// (not per move), reads its values as a shell does, marks its examples and its report
// in --json, and a stopped call reminds nothing (it would never have run).
func TestGatePerCall(t *testing.T) {
	t.Parallel()
	rules := []streamrules.Rule{
		{Name: "no_rm", Scope: "tool:shell", Mode: streamrules.ModeInterrupt, Shell: true, Field: "cmd",
			Condition: `^rm\s(?:.*\s)?-r\s(?:.*\s)?-f(?:\s|$)`, Text: "No forced recursive rm."},
		{Name: "shell_note", Scope: "tool:shell", Text: "This shell is the agent's."},
	}
	transcript := `{"chat":"c","tools":[{"name":"shell","args":"{\"cmd\":\"sudo \\\\rm -rf /a\"}"},{"name":"shell","args":"{\"cmd\":\"bash -c 'rm -r -f /b'\"}"}],"answer":"x"}
{"chat":"c","tools":[{"name":"shell","args":"{\"cmd\":\"echo rm -rf /c\"}"}],"answer":"y"}
`
	rep := run(t, rules, transcript, &replay.Options{Examples: 10})
	by := map[string]replay.RuleReport{}
	for _, r := range rep.Rules {
		by[r.Rule] = r
	}
	gate := by["no_rm"]
	if !gate.Gate || gate.Fired != 2 || gate.Calls != 3 || gate.Discards != 2 || len(gate.Examples) != 2 {
		t.Errorf("gate report %+v: want gate, 2 would-fires of 3 calls, both discards", gate)
	}
	for _, ex := range gate.Examples {
		if !ex.Gate || ex.Tool != "shell" {
			t.Errorf("example %+v: want a gate mark on the shell call", ex)
		}
	}
	// Move 1: both calls stopped, the soft rule never saw one; move 2 ran and reminded.
	if note := by["shell_note"]; note.Gate || note.Fired != 1 || len(note.Examples) != 1 || note.Examples[0].Move != 2 {
		t.Errorf("soft rule %+v: want one firing, in move 2", note)
	}
	// The same three calls: the gate's rate and the soft rule's are both shares of them,
	// and the table says so.
	if gate.RateOf != "calls" || gate.Rate != 2.0/3 || by["shell_note"].RateOf != "calls" || by["shell_note"].Rate != 1.0/3 {
		t.Errorf("rates: gate %v of %s, soft %v of %s; want 2/3 and 1/3 of calls",
			gate.Rate, gate.RateOf, by["shell_note"].Rate, by["shell_note"].RateOf)
	}
	var text strings.Builder
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"calls  fired  rate", "66.7% of calls", "33.3% of calls"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the table does not say %q:\n%s", want, text.String())
		}
	}
	out, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `"rule":"no_rm","scope":"tool:shell","gate":true`) || !strings.Contains(string(out), `"gate":true,"excerpt"`) {
		t.Errorf("--json does not mark the gate: %s", out)
	}
}
