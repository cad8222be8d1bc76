package ruletest_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/ruletest"
	"github.com/streamrules/streamrules/seeds"
)

func ex(texts ...string) []streamrules.Example {
	out := make([]streamrules.Example, len(texts))
	for i, s := range texts {
		out[i] = streamrules.Example{Text: s}
	}
	return out
}

// TestRunRule: each kind of rule judged as a move judges it, and each way an example
// fails named with its reason.
func TestRunRule(t *testing.T) {
	t.Parallel()
	input := "Fix the failing test."
	tests := []struct {
		name   string
		rule   streamrules.Rule
		env    []string
		failed []string // the failed examples, as Result.String says them
	}{
		{"text rule passes", streamrules.Rule{Name: "no_lorem", Scope: "text", Condition: "(?i)lorem", Text: "t",
			Tests: &streamrules.RuleTests{Fires: ex("Lorem."), Passes: ex("Real.")}}, nil, nil},
		{"negated text rule", streamrules.Rule{Name: "tail", Scope: "text", Condition: `↩ #\d+\s*$`, Negate: true, Text: "t",
			Tests: &streamrules.RuleTests{Fires: ex("Done.", "Done ↩ #x"), Passes: ex("Done.\n↩ #4711", "↩ #1")}}, nil, nil},
		{"a fires example that passes", streamrules.Rule{Name: "no_lorem", Scope: "text", Condition: "(?i)lorem", Text: "t",
			Tests: &streamrules.RuleTests{Fires: ex("Lorem.", "Nothing here.")}}, nil,
			[]string{`tests.fires[1] "Nothing here.": must fire, but it passes`}},
		{"a passes example that fires", streamrules.Rule{Name: "no_lorem", Scope: "text", Condition: "(?i)lorem", Text: "t",
			Tests: &streamrules.RuleTests{Passes: ex("Say LOREM.")}}, nil,
			[]string{`tests.passes[0] "Say LOREM.": must pass, but it fires: the rule matched "LOREM" at bytes 4-9`}},
		{"tool rule: the call's arguments", streamrules.Rule{Name: "no_etc", Scope: "tool:write_file", Condition: `"path":"/etc/`, Text: "t",
			Tests: &streamrules.RuleTests{Fires: ex(`{"path":"/etc/hosts"}`, "{\n  \"path\": \"/etc/passwd\"\n}"), Passes: ex(`{"path":"/tmp/x"}`, `{"content":"\"path\":\"/etc/"}`, `{"path":"/etc/x"}`)}}, nil,
			[]string{`tests.passes[2] "{\"path\":\"/etc/x\"}": must pass, but it fires: the rule matched "\"path\":\"/etc/" at bytes 1-14`}},
		{"tool rule with a field", streamrules.Rule{Name: "no_todo", Scope: "tool:patch", Field: "edits.new_string", Condition: "TODO", Text: "t",
			Tests: &streamrules.RuleTests{Fires: ex(`{"edits":[{"new_string":"ok"},{"new_string":"x // TODO"}]}`), Passes: ex(`{"edits":[{"old_string":"TODO","new_string":"done"}]}`)}}, nil, nil},
		{"shell gate", streamrules.Rule{Name: "no_rm_rf", Scope: "tool:shell", Mode: streamrules.ModeInterrupt, Field: "cmd", Shell: true, Condition: `^rm -r`, Text: "t",
			Tests: &streamrules.RuleTests{Fires: ex(`{"cmd":"cd /x && sudo rm -rf build"}`), Passes: ex(`{"cmd":"echo 'rm -rf /'"}`)}}, nil, nil},
		{"context rule", streamrules.Rule{Name: "verify", Scope: "text", Condition: `^Done\.$`, Text: "t",
			AppliesWhen: &streamrules.Predicate{InputContainsRegex: "(?i)fix"},
			Tests: &streamrules.RuleTests{
				Fires:  []streamrules.Example{{Text: "Done.", Input: &input}, {Text: "Done."}},
				Passes: []streamrules.Example{{Text: "Done: fixed.", Input: &input}, {Text: "Done."}}}}, nil,
			[]string{`tests.fires[1] "Done.": must fire, but the rule does not apply to it: outside its applies_when, or it reads context the example does not give (add input or tools)`}},
		{"tool record", streamrules.Rule{Name: "checked", Scope: "text", Text: "t",
			Predicate: &streamrules.Predicate{AllOf: []streamrules.Predicate{streamrules.Contains("Done"), {EditedUnchecked: &streamrules.EditedUnchecked{Edits: []string{"write_file"}, Checks: []string{"run_tests"}}}}},
			Tests: &streamrules.RuleTests{
				Fires:  []streamrules.Example{{Text: "Done.", Tools: []streamrules.ToolRun{{Tool: "write_file", OK: true}}}},
				Passes: []streamrules.Example{{Text: "Done.", Tools: []streamrules.ToolRun{{Tool: "write_file", OK: true}, {Tool: "run_tests", OK: true}}}, {Text: "Done.", Tools: []streamrules.ToolRun{}}}}}, nil, nil},
		{"when: a host environment", streamrules.Rule{Name: "slack_only", Scope: "text", Condition: "x", When: []string{"slack", seeds.EnvTelegram}, Text: "t",
			Tests: &streamrules.RuleTests{Fires: ex("x"), Passes: ex("y")}}, []string{"slack", seeds.EnvTelegram}, nil},
		{"shadow and disabled: tested as live", streamrules.Rule{Name: "quiet", Scope: "text", Condition: "x", Shadow: true, Disabled: true, Text: "t",
			Tests: &streamrules.RuleTests{Fires: ex("x")}}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rep := ruletest.RunRule(tt.rule, tt.env...)
			if rep.Err != nil {
				t.Fatal(rep.Err)
			}
			if n := len(tt.rule.Tests.Fires) + len(tt.rule.Tests.Passes); len(rep.Results) != n {
				t.Fatalf("%d results for %d examples", len(rep.Results), n)
			}
			var got []string
			for _, res := range rep.Failed() {
				got = append(got, res.String())
			}
			if strings.Join(got, "\n") != strings.Join(tt.failed, "\n") || rep.OK() != (len(tt.failed) == 0) {
				t.Errorf("failed:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.failed, "\n"))
			}
		})
	}
}

// TestRunRefusedRule: a rule the judge refuses is reported with the validation error,
// and makes the report fail; a rule without tests is counted as untested and passes.
func TestRunRefusedRule(t *testing.T) {
	t.Parallel()
	rep := ruletest.Run([]streamrules.Rule{
		{Name: "bad", Scope: "text", Condition: "(", Text: "t", Tests: &streamrules.RuleTests{Fires: ex("x")}},
		{Name: "unknown_env", Scope: "text", Condition: "x", When: []string{"slack"}, Text: "t"},
		{Name: "untested", Scope: "text", Condition: "x", Text: "t"},
		{Name: "tested", Scope: "text", Condition: "x", Text: "t", Tests: &streamrules.RuleTests{Fires: ex("x", "xx"), Passes: ex("y")}},
	})
	if rep.OK() {
		t.Error("a report with a refused rule is OK")
	}
	var ve *streamrules.ValidationError
	if err := rep.Rules[0].Err; !errors.As(err, &ve) || ve.Field != "condition" {
		t.Errorf("bad rule: %v", err)
	}
	if err := rep.Rules[1].Err; !errors.As(err, &ve) || ve.Field != "when" {
		t.Errorf("a rule naming an environment the host did not give: %v", err)
	}
	if !rep.Rules[2].OK() || !rep.Rules[3].OK() {
		t.Errorf("good rules: %+v", rep.Rules[2:])
	}
	if examples, failed, untested := rep.Counts(); examples != 3 || failed != 0 || untested != 1 {
		t.Errorf("Counts() = %d, %d, %d; want 3, 0, 1", examples, failed, untested)
	}
	data, err := json.Marshal(rep.Rules[0])
	if err != nil || !strings.Contains(string(data), `"rule":"bad","results":null,"error":"streamrules: invalid condition: `) {
		t.Errorf("JSON of a refused rule: %s, %v", data, err)
	}
}
