package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestGateCommands: a gate with shell reading is created from flags, shows its mode and
// shell, and `replay --json` counts its would-fires per call and marks them.
func TestGateCommands(t *testing.T) {
	t.Parallel()
	env := sqliteEnv(t)
	must(t, cli(t, env, "", "rules", "create", "--name", "no_forced_rm", "--scope", "tool:shell", "--mode", "interrupt", "--shell",
		"--field", "cmd", "--condition", `^rm\s(?:.*\s)?-r\s(?:.*\s)?-f(?:\s|$)`, "--text", "No forced recursive rm."))
	var show struct {
		Mode  string `json:"mode"`
		Shell bool   `json:"shell"`
	}
	if err := json.Unmarshal([]byte(must(t, cli(t, env, "", "rules", "show", "no_forced_rm", "--json")).stdout), &show); err != nil || show.Mode != "interrupt" || !show.Shell {
		t.Fatalf("show: %+v %v", show, err)
	}
	if r := cli(t, env, "", "rules", "create", "--name", "bad", "--scope", "text", "--shell", "--text", "x"); r.code != 2 || !strings.Contains(r.stderr, "shell") {
		t.Errorf("shell on a text rule: exit %d, %q", r.code, r.stderr)
	}
	transcript := `{"chat":"c","tools":[{"name":"shell","args":"{\"cmd\":\"sudo rm -rf /a\"}"},{"name":"shell","args":"{\"cmd\":\"bash -c 'rm -r -f /b'\"}"}],"answer":"ok"}` + "\n"
	r := must(t, cli(t, env, transcript, "replay", "--from-db", "--json", "-"))
	var rep struct {
		Rules []struct {
			Rule     string `json:"rule"`
			Gate     bool   `json:"gate"`
			Fired    int    `json:"fired"`
			Examples []struct {
				Gate bool `json:"gate"`
			} `json:"examples"`
		} `json:"rules"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("replay --json: %v\n%s", err, r.stdout)
	}
	found := false
	for _, rr := range rep.Rules {
		if rr.Rule == "no_forced_rm" {
			found = true
			if !rr.Gate || rr.Fired != 2 || len(rr.Examples) == 0 || !rr.Examples[0].Gate {
				t.Errorf("replay of the gate: %+v", rr)
			}
		}
	}
	if !found {
		t.Errorf("replay --json has no report of the gate:\n%s\n%s", r.stdout, r.stderr)
	}
}
