package streamrules_test

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/seeds"
)

// A predicate tree with applies_when, judged outside an engine: the seed constitution's
// "code ends with a fence or an assumption".
func ExampleJudge() {
	must := streamrules.AnyOf(streamrules.EndsWith("```\\s*$"), streamrules.Contains("(?i)assumption:"))
	code := streamrules.Contains("```python")
	j, err := streamrules.NewJudge(streamrules.Rule{
		Name: "end_with_runnable_or_assumption", Scope: streamrules.ScopeText,
		AppliesWhen: &code, Predicate: &must, Negate: true,
		Fix:  &streamrules.Fix{AppendIfMissing: "\n\nAssumption: example inputs are valid."},
		Text: "End code with a closing fence or an explicit assumption.",
	}, seeds.Environments()...)

	if err != nil {
		panic(err)
	}
	draft := "```python\nprint(1)\n```\nThat prints 1."
	fmt.Println(j.Check("```python\nprint(1)\n```", nil).Status)
	fmt.Println(j.Check("No code here.", nil).Status)
	fmt.Println(j.Check(draft, nil).Status)
	fixed, diff, ok := j.Fix(draft, nil)
	fmt.Println(ok, j.Check(fixed, nil).Status, diff)
	// Output:
	// pass
	// not_applicable
	// violation
	// true pass [+5 "" +6 "Assumption: example inputs are valid."]
}

// A fix repairs the answer in place: no retry, no model call. The host gives the move's
// variables; the firing carries outcome fixed and the diff.
func ExampleMove_SetVar() {
	ctx := context.Background()
	store, err := streamrules.NewMemoryStore([]streamrules.Rule{{
		Name: "telegram_reply_tail", Scope: streamrules.ScopeText, Condition: `↩ #\d+\s*$`, Negate: true,
		Fix:  &streamrules.Fix{AppendIfMissing: "\n\n↩ #{{message_id}}"},
		Text: "Every Telegram reply ends with the tail ↩ #id.",
	}}, seeds.Environments()...)

	if err != nil {
		panic(err)
	}
	eng, err := streamrules.New(ctx, store, &streamrules.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	defer eng.Close()
	ctx, move := eng.BeginMove(ctx, "chat-42")
	move.SetVar("message_id", "4711")
	v := move.CheckAnswer(ctx, "It is 12 GB.")
	fmt.Printf("discard=%v fixed=%q\n", v.Discard, v.Fixed)
	f := move.Firings()[0]
	fmt.Println(f.Rule, f.Outcome, f.Diff)
	if err := move.End(ctx, nil); err != nil {
		panic(err)
	}
	// Output:
	// discard=false fixed="It is 12 GB.\n\n↩ #4711"
	// telegram_reply_tail fixed [+2 "" +3 "↩ #4711"]
}
