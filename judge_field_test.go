package streamrules

import "testing"

// TestJudgeFieldRuleAppliesWhen: a field rule's applies_when is judged on the field's
// values, as the engine judges it, not on the whole arguments: Judge.Check gives the
// engine's verdict.
func TestJudgeFieldRuleAppliesWhen(t *testing.T) {
	t.Parallel()
	sudo := Contains(`^sudo\b`)
	r := with(softRule("no_sudo_rm", "shell", `rm -rf`), func(r *Rule) {
		r.Field = "command"
		r.AppliesWhen = &sudo
	})
	j := mustJudge(t, r)
	f := newFixture(t, []Rule{r}, nil)
	tests := []struct {
		args string
		want Status
	}{
		{`{"command":"sudo rm -rf /"}`, StatusViolation},
		{`{"command":"sudo ls"}`, StatusPass},
		{`{"command":"rm -rf /"}`, StatusPass},  // applies_when fails on the value: not fired
		{`{"cwd":"sudo rm -rf /"}`, StatusPass}, // no such field: not fired
	}
	for _, tt := range tests {
		if got := j.Check(tt.args, nil).Status; got != tt.want {
			t.Errorf("Check(%s) = %s, want %s", tt.args, got, tt.want)
		}
		ctx, m := f.eng.BeginMove(t.Context(), "c")
		fired := len(m.ToolReminders(ctx, "shell", tt.args)) > 0
		if fired != (tt.want == StatusViolation) {
			t.Errorf("engine on %s: fired %v, Judge says %s", tt.args, fired, tt.want)
		}
	}
}
