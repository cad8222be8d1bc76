package replay_test

import (
	"strings"
	"testing"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/replay"
)

// TestRunThinking: a thinking rule judges each line's reasoning, never its answer; its
// rate is per move; its discard spends the move's retry, so a text miss after it is kept;
// a line without reasoning gives it nothing to fire on. FromOpenAI reads the assistant's
// reasoning_content into the line.
func TestRunThinking(t *testing.T) {
	t.Parallel()
	rules := []streamrules.Rule{
		{Name: "blind", Scope: streamrules.ScopeThinking, Condition: `can't see`, Text: "Look at the picture."},
		{Name: "img", Scope: streamrules.ScopeText, Condition: `!\[`, Text: "No markdown images."},
	}
	lines := `{"chat":"c","reasoning":"I can't see it.","answer":"Here ![x](y)"}
{"chat":"c","reasoning":"A cat.","answer":"I can't see it."}
{"chat":"c","answer":"![z](w)"}
`
	rep := run(t, rules, lines, nil)
	got := map[string]replay.RuleReport{}
	for _, r := range rep.Rules {
		got[r.Rule] = r
	}
	if b := got["blind"]; b.Scope != "thinking" || b.InScope != 3 || b.Fired != 1 || b.Discards != 1 || b.RateOf != "moves" {
		t.Errorf("blind: %+v", b)
	}
	if i := got["img"]; i.Fired != 2 || i.Discards != 1 {
		t.Errorf("img: %+v (the first move's miss comes after the thinking discard: kept)", i)
	}

	out, _ := convert(t, `{"chat":"c","messages":[{"role":"user","content":"pic?"},{"role":"assistant","content":"A cat.","reasoning_content":"I can't see it."}]}`, nil)
	if want := `{"chat":"c","input":"pic?","answer":"A cat.","reasoning":"I can't see it."}` + "\n"; out != want {
		t.Errorf("FromOpenAI:\n%s\nwant\n%s", out, want)
	}
	if m, err := replay.ParseMove([]byte(strings.TrimSpace(out))); err != nil || m.Reasoning != "I can't see it." {
		t.Errorf("ParseMove: %+v, %v", m, err)
	}
}
