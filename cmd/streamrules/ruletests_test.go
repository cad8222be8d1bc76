package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestTestCommand: test exits 0 when every example comes out as it says (the seeds, the
// constitution), 1 naming the file, rule and example that did not, 2 on a file that does
// not validate; --json is one document; a host's environment is taken from
// STREAMRULES_ENVIRONMENTS as validate takes it.
func TestTestCommand(t *testing.T) {
	t.Parallel()
	const seedsFile, constitution = "../../seeds/seeds.json", "../../examples/constitution/rules.yaml"
	r := cli(t, nil, "", "test", seedsFile, constitution)
	if r.code != 0 || !strings.Contains(r.stdout, seedsFile+": ok, 10 rules, 43 examples\n") ||
		!strings.Contains(r.stdout, constitution+": ok, 7 rules, 27 examples\n") || r.stderr != "tested 17 rules: 70 examples, 0 failed\n" {
		t.Errorf("seeds and constitution: %+v", r)
	}

	failing := writeTemp(t, "failing.yaml", `version: 1
rules:
  - name: no_lorem
    scope: text
    condition: (?i)lorem ipsum
    text: Never send placeholder text.
    tests:
      fires: [Lorem ipsum dolor., Nothing here.]
      passes: [A real answer., Here is your lorem ipsum.]
  - name: no_etc
    scope: tool:write_file
    condition: '"path":"/etc/'
    text: Not in /etc.
    tests:
      fires: ['{"path": "/etc/hosts"}']
  - name: untested
    scope: text
    text: t
`)
	r = cli(t, nil, "", "test", failing)
	wantErr := failing + `: rule "no_lorem": tests.fires[1] "Nothing here.": must fire, but it passes` + "\n" +
		failing + `: rule "no_lorem": tests.passes[1] "Here is your lorem ipsum.": must pass, but it fires: the rule matched "lorem ipsum" at bytes 13-24` + "\n" +
		"tested 3 rules: 5 examples, 2 failed, 1 rule without tests\n" +
		"streamrules: test: 2 of 5 examples failed\n"
	if r.code != 1 || r.stderr != wantErr || r.stdout != failing+": 2 failed, 3 rules, 5 examples (1 rule without tests)\n" {
		t.Errorf("failing examples: exit %d\nstdout %q\nstderr %q\nwant   %q", r.code, r.stdout, r.stderr, wantErr)
	}

	var doc struct {
		Files []struct {
			File  string `json:"file"`
			Rules []struct {
				Rule    string `json:"rule"`
				Results []struct {
					Kind    string          `json:"kind"`
					Index   int             `json:"index"`
					Example json.RawMessage `json:"example"`
					Status  string          `json:"status"`
					OK      bool            `json:"ok"`
					Reason  string          `json:"reason"`
				} `json:"results"`
			} `json:"rules"`
		} `json:"files"`
	}
	r = cli(t, nil, "", "test", "--json", failing)
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || r.code != 1 {
		t.Fatalf("--json: exit %d, %v\n%s", r.code, err, r.stdout)
	}
	if len(doc.Files) != 1 || len(doc.Files[0].Rules) != 3 {
		t.Fatalf("--json: %+v", doc)
	}
	res := doc.Files[0].Rules[0].Results
	if len(res) != 4 || res[1].Kind != "fires" || res[1].Index != 1 || res[1].OK || res[1].Status != "pass" ||
		string(res[1].Example) != `"Nothing here."` || res[3].Kind != "passes" || res[3].Status != "violation" || !strings.Contains(res[3].Reason, "it fires") {
		t.Errorf("--json results: %+v", res)
	}

	bad := writeTemp(t, "bad.yaml", "version: 1\nrules:\n  - name: a\n    scope: text\n    text: t\n    tests:\n      fires: [\"a\\0b\"]\n")
	r = cli(t, nil, "", "test", bad, seedsFile)
	if r.code != 2 || !strings.Contains(r.stderr, bad+`:7: rule #1 "a": streamrules: invalid tests.fires[0].text: contains a NUL byte at byte 1`) ||
		!strings.Contains(r.stderr, "1 of 2 files invalid") {
		t.Errorf("invalid file: %+v", r)
	}
	if r := cli(t, nil, "", "test"); r.code != 2 || !strings.Contains(r.stderr, "test takes one or more FILEs") {
		t.Errorf("no file: %+v", r)
	}

	custom := writeTemp(t, "custom.yaml", "version: 1\nrules:\n  - name: p\n    scope: text\n    condition: x\n    when: [prod]\n    text: t\n    tests:\n      fires: [x]\n      passes: [y]\n")
	if r := cli(t, nil, "", "test", custom); r.code != 2 || !strings.Contains(r.stderr, `unknown environment "prod"`) {
		t.Errorf("unregistered environment: %+v", r)
	}
	if r := cli(t, map[string]string{"STREAMRULES_ENVIRONMENTS": "prod"}, "", "test", custom); r.code != 0 {
		t.Errorf("registered environment: %+v", r)
	}
}

// TestRuleTestsFlag: rules create and edit take --tests, rules show prints them as a rule
// file does (so test reads the shown rule), and a bad example is exit 2 naming it.
func TestRuleTestsFlag(t *testing.T) {
	t.Parallel()
	env := sqliteEnv(t)
	must(t, cli(t, env, "", "rules", "create", "--name", "no_lorem", "--scope", "text", "--condition", "(?i)lorem", "--text", "No placeholders.",
		"--tests", `{"fires":["Lorem."],"passes":["Real.",{"text":"Fine.","input":"Write it","tools":[]}]}`))
	shown := must(t, cli(t, env, "", "rules", "show", "no_lorem"))
	file := writeTemp(t, "shown.yaml", shown.stdout)
	if r := cli(t, nil, "", "test", file); r.code != 0 || !strings.Contains(r.stdout, ": ok, 1 rule, 3 examples") {
		t.Errorf("test of the shown rule: %+v\n%s", r, shown.stdout)
	}
	must(t, cli(t, env, "", "rules", "edit", "no_lorem", "--tests", `{"fires":["Nothing."]}`))
	shown = must(t, cli(t, env, "", "rules", "show", "no_lorem"))
	file = writeTemp(t, "edited.yaml", shown.stdout)
	if r := cli(t, nil, "", "test", file); r.code != 1 || !strings.Contains(r.stderr, `rule "no_lorem": tests.fires[0] "Nothing.": must fire, but it passes`) {
		t.Errorf("test of the edited rule: %+v", r)
	}
	if r := cli(t, env, "", "rules", "edit", "no_lorem", "--tests", `{"passes":[{"text":"x","tools":[{"tool":""}]}]}`); r.code != 2 || !strings.Contains(r.stderr, "invalid tests.passes[0].tools[0].tool") {
		t.Errorf("bad example: %+v", r)
	}
}
