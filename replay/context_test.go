package replay_test

import (
	"context"
	"strings"
	"testing"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/replay"
	"github.com/streamrules/streamrules/seeds"
)

// TestContextRulesReplay: a transcript's input and each call's ok are the move's context,
// as live: a claim after a failed call fires, after a successful one does not; a rule
// scoped by the input is not applicable where the line has no input; the examples mark
// the span the engine's firing gives.
func TestContextRulesReplay(t *testing.T) {
	t.Parallel()
	claim := streamrules.AllOf(streamrules.Contains(`(?i)audio saved:`), streamrules.Not(streamrules.ToolSucceeded("generate_speech")))
	urgent := streamrules.InputContains(`(?i)safety`)
	rules := []streamrules.Rule{
		{Name: "unbacked_tool_claim", Scope: "text", Predicate: &claim, Text: "Only claim audio the tool made."},
		{Name: "urgent_line", Scope: "text", AppliesWhen: &urgent, Predicate: &streamrules.Predicate{NotContainsRegex: "If this is urgent"}, Text: "Add the urgent line."},
	}
	transcript := `{"chat":"a","input":"say hi","tools":[{"name":"generate_speech","args":"{}","ok":false}],"answer":"Sure. Audio saved: hi.mp3"}
{"chat":"a","input":"say hi","tools":[{"name":"generate_speech","args":"{}"}],"answer":"Audio saved: hi.mp3"}
{"chat":"a","input":"Is this safety gear ok?","answer":"Yes."}
{"chat":"a","input":"Weather?","answer":"Sunny."}
{"chat":"a","answer":"No input here."}
`
	rep, err := replay.Run(context.Background(), rules, []replay.Source{{Name: "t.jsonl", R: strings.NewReader(transcript)}}, &replay.Options{Environments: seeds.Environments()})
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]replay.RuleReport{}
	for _, r := range rep.Rules {
		by[r.Rule] = r
	}
	c := by["unbacked_tool_claim"]
	if c.Fired != 1 || c.InScope != 5 || len(c.Examples) != 1 || c.Examples[0].Line != 1 || c.Examples[0].Match != "Audio saved:" ||
		!strings.Contains(c.Examples[0].Excerpt, replay.MarkStart+"Audio saved:"+replay.MarkEnd) {
		t.Errorf("unbacked_tool_claim: %+v", c)
	}
	u := by["urgent_line"]
	if u.Fired != 1 || u.InScope != 1 || u.NotApplicable != 4 || len(u.Examples) != 1 || u.Examples[0].Line != 3 {
		t.Errorf("urgent_line: %+v", u)
	}
}
