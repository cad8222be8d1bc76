package streamrules_test

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/seeds"
)

// A rule on what the move's tools did: "done" after an edit no test run checked. The Judge
// takes the move's facts; a move keeps them itself, from its tool calls.
func ExampleFacts() {
	p := streamrules.AllOf(
		streamrules.Contains(`(?i)\bdone\b`),
		streamrules.EditedUncheckedBy([]string{"write_file"}, []string{"run_tests"}),
	)
	rule := streamrules.Rule{Name: "verify_before_done", Scope: streamrules.ScopeText, Predicate: &p,
		Text: "Run the tests before you say it is done."}
	j, err := streamrules.NewJudge(rule, seeds.Environments()...)
	if err != nil {
		panic(err)
	}
	edited := &streamrules.Facts{HasTools: true, Tools: []streamrules.ToolRun{{Tool: "write_file", OK: true}}}
	checked := &streamrules.Facts{HasTools: true, Tools: []streamrules.ToolRun{{Tool: "write_file", OK: true}, {Tool: "run_tests", OK: true}}}
	res := j.Check("Done.", edited)
	fmt.Println(res.Status, res.Span)
	fmt.Println(j.Check("Done.", checked).Status)
	fmt.Println(j.Check("Done.", nil).Status) // no record given

	store, err := streamrules.NewMemoryStore([]streamrules.Rule{rule}, seeds.Environments()...)
	if err != nil {
		panic(err)
	}
	eng, err := streamrules.New(context.Background(), store, &streamrules.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	defer eng.Close()
	ctx, move := eng.BeginMove(streamrules.WithInput(context.Background(), "Add a test."), "chat-1")
	move.ToolReminders(ctx, "write_file", `{"path":"a_test.go"}`)
	call := streamrules.WithToolCall(ctx) // what the middleware gives each tool's Call
	streamrules.MarkToolFailed(call)      // the tool says: this output is a failure
	move.ToolReminders(call, "run_tests", `{}`)
	record, _ := move.ToolRecord()
	fmt.Println(record)
	fmt.Println(move.CheckAnswer(ctx, "Done.").Rules)
	if err := move.End(ctx, nil); err != nil {
		panic(err)
	}
	// Output:
	// violation &{0 4}
	// pass
	// not_applicable
	// [{write_file true} {run_tests false}]
	// [verify_before_done]
}
