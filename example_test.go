package streamrules_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/seeds"
)

// quiet keeps the examples' output to what they print.
var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func ExampleEngine() {
	ctx := context.Background()
	store, err := streamrules.NewMemoryStore([]streamrules.Rule{{
		Name:  "local_shell_for_his_machine",
		Scope: "tool:shell",
		When:  []string{seeds.EnvClientOps},
		Text:  "This shell runs on the agent's machine, not the master's.",
	}, {
		Name:      "telegram_reply_tail",
		Scope:     "text",
		Condition: `↩ #\d+\s*$`,
		Negate:    true,
		When:      []string{seeds.EnvTelegram},
		Text:      "A Telegram reply ends with the tail ↩ #id.",
	}}, seeds.Environments()...)

	if err != nil {
		panic(err)
	}
	eng, err := streamrules.New(ctx, store, &streamrules.Config{ToolResultMaxChars: 20000, Logger: quiet})
	if err != nil {
		panic(err)
	}
	defer eng.Close()

	// One move of chat 42, in Telegram, with a client's machine at hand.
	ctx, move := eng.BeginMove(ctx, "chat-42", seeds.EnvTelegram, seeds.EnvClientOps)

	// Soft half: the shell call's result gets a reminder in the prompt copy.
	reminders := move.ToolReminders(ctx, "shell", `{"cmd": "uname -a"}`)
	fmt.Println(eng.Splice("Linux box 6.1.0", reminders))

	// Hard half: an answer without the tail is discarded and replayed once.
	verdict := move.CheckAnswer(ctx, "Done, the box runs Linux.")
	fmt.Println("discard:", verdict.Discard, verdict.Rules)
	verdict = move.CheckAnswer(ctx, "Done, the box runs Linux. ↩ #17")
	fmt.Println("discard:", verdict.Discard)

	// One write to the store: the move is counted, the firings kept.
	if err := move.End(ctx, nil); err != nil {
		panic(err)
	}
	stats, err := eng.Stats(ctx)
	if err != nil {
		panic(err)
	}
	for _, r := range stats.Rules {
		fmt.Println(r.Rule, "fired", r.Fired, r.Outcomes)
	}
	// Output:
	// <system-reminder rule="local_shell_for_his_machine">This shell runs on the agent's machine, not the master's.</system-reminder>
	// Linux box 6.1.0
	// discard: true [telegram_reply_tail]
	// discard: false
	// local_shell_for_his_machine fired 1 map[complied:1 repeated:0]
	// telegram_reply_tail fired 1 map[corrected:1 fixed:0 kept:0 missed_again:0]
}

func ExampleMove_CheckAnswer() {
	ctx := context.Background()
	store, _ := streamrules.NewMemoryStore([]streamrules.Rule{{
		Name:      "telegram_markdown_image",
		Scope:     "text",
		Condition: `!\[[^\]]*\]\([^)]*\)`,
		When:      []string{seeds.EnvTelegram},
		Text:      "Telegram does not render markdown: send the picture with telegram_send_photo.",
	}, {
		Name:      "telegram_reply_tail",
		Scope:     "text",
		Condition: `↩ #\d+\s*$`,
		Negate:    true,
		When:      []string{seeds.EnvTelegram},
		Text:      "End a Telegram reply with ↩ #id.",
	}}, seeds.Environments()...)

	eng, _ := streamrules.New(ctx, store, &streamrules.Config{Logger: quiet})
	defer eng.Close()
	ctx, move := eng.BeginMove(ctx, "chat-7", seeds.EnvTelegram)

	fmt.Println("hold speech:", move.Armed())
	v := move.CheckAnswer(ctx, "Here it is: ![cat](https://example.com/cat.png)")
	fmt.Println("discard:", v.Discard)
	fmt.Println(v.Interrupt)
	fmt.Println("hold speech:", move.Armed())
	_ = move.End(ctx, nil)
	// Output:
	// hold speech: true
	// discard: true
	// <system-interrupt reason="rule_violation" rule="telegram_markdown_image">Telegram does not render markdown: send the picture with telegram_send_photo.
	// That reply was discarded and NOBODY saw it. Write the reply again, following the rule.</system-interrupt>
	// <system-interrupt reason="rule_violation" rule="telegram_reply_tail">End a Telegram reply with ↩ #id.
	// That reply was discarded and NOBODY saw it. Write the reply again, following the rule.</system-interrupt>
	// hold speech: false
}

func ExampleMove_ToolReminders() {
	ctx := context.Background()
	store, _ := streamrules.NewMemoryStore([]streamrules.Rule{{
		Name:      "write_diff_over_write_file",
		Scope:     "tool:write_file",
		Condition: `"overwrite":true`,
		Text:      "Editing an existing file goes through write_diff.",
	}}, seeds.Environments()...)

	eng, _ := streamrules.New(ctx, store, &streamrules.Config{Logger: quiet, EmptyOutputMarker: "(no output)"})
	defer eng.Close()
	ctx, move := eng.BeginMove(ctx, "chat-1")

	// The arguments are matched as compact JSON, whatever their spacing.
	reminders := move.ToolReminders(ctx, "write_file", `{"path": "main.go", "overwrite": true}`)
	// The prompt copy of the result: the service's empty-output marker goes, the block stays.
	fmt.Printf("%q\n", eng.Splice("(no output)", reminders))
	// What the client and the database see: the clean output.
	fmt.Printf("%q\n", streamrules.StripBlocks(eng.Splice("wrote 12 bytes", reminders)))
	// The rule spoke once; it is silent for the rest of the move.
	fmt.Println(len(move.ToolReminders(ctx, "write_file", `{"path":"b.go","overwrite":true}`)))

	err := move.End(ctx, errors.New("the agent gave up"))
	fmt.Println(err)
	// Output:
	// "<system-reminder rule=\"write_diff_over_write_file\">Editing an existing file goes through write_diff.</system-reminder>\n"
	// "wrote 12 bytes"
	// 0
	// the agent gave up
}

// A rule in shadow is evaluated as if live, but only its would-fire is recorded: the
// answer stays, nothing is held, and the stats count it apart from the firings.
func ExampleRule_shadow() {
	ctx := context.Background()
	store, err := streamrules.NewMemoryStore([]streamrules.Rule{{
		Name: "no_apologies", Scope: streamrules.ScopeText, Condition: `(?i)\bsorry\b`,
		Text: "Do not apologise: say what you did.", Shadow: true,
	}}, seeds.Environments()...)

	if err != nil {
		panic(err)
	}
	eng, err := streamrules.New(ctx, store, &streamrules.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	defer eng.Close()

	ctx, move := eng.BeginMove(ctx, "chat-1")
	fmt.Println("speech held:", move.Armed())
	verdict := move.CheckAnswer(ctx, "Sorry, the disk is full.")
	fmt.Println("discard:", verdict.Discard)
	if err := move.End(ctx, nil); err != nil {
		panic(err)
	}
	stats, err := eng.Stats(ctx)
	if err != nil {
		panic(err)
	}
	r := stats.Rules[0]
	fmt.Println(r.Rule, "fired", r.Fired, "would-fire", r.Shadow)
	// Output:
	// speech held: false
	// discard: false
	// no_apologies fired 0 would-fire 1
}
