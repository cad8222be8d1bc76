package ruletools_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/ruletools"
	"github.com/streamrules/streamrules/seeds"
)

func ExampleNew() {
	ctx := context.Background()
	store, _ := streamrules.NewMemoryStore(nil, seeds.Environments()...)
	eng, _ := streamrules.New(ctx, store, &streamrules.Config{Logger: quiet})
	defer eng.Close()
	ts := ruletools.New(store, eng)
	create := ts[1]

	// A client's chat: refused.
	clientCtx, _ := eng.BeginMove(ctx, "client-chat", seeds.EnvTelegram)
	out, _ := create.Call(clientCtx, `{"name": "x", "scope": "text", "text": "y"}`)
	fmt.Println(out)

	// The master's chat: a bad regex is output naming the field, then the fixed rule is created.
	masterCtx, _ := eng.BeginMove(ctx, "master-chat", seeds.EnvMaster)
	out, _ = create.Call(masterCtx, `{"name": "no_lorem", "scope": "text", "condition": "(?i)lorem(", "text": "Never send placeholder text."}`)
	fmt.Println(out)
	out, _ = create.Call(masterCtx, `{"name": "no_lorem", "scope": "text", "condition": "(?i)lorem ipsum", "text": "Never send placeholder text."}`)
	var res ruletools.Result
	json.Unmarshal([]byte(out), &res)
	fmt.Println(res.OK, res.Message, res.Rule.Mode, !res.Rule.Disabled, res.Rule.Loaded)
	// Output:
	// {"ok":false,"error":"refused: stream rules can be listed and changed only by the master, and this conversation is not with the master (the move's environment lacks \"master\"). Tell the user that rules cannot be changed from here."}
	// {"ok":false,"error":"invalid condition: not an RE2 regular expression: error parsing regexp: missing closing ): `(?i)lorem(`","field":"condition"}
	// true Rule "no_lorem" created. interrupt true true
}

func ExampleReader() {
	ctx := context.Background()
	store, err := streamrules.NewMemoryStore([]streamrules.Rule{
		{Name: "diff_not_rewrite", Scope: "tool:write_file", Text: "Edit an existing file with write_diff. Rewriting it whole loses the master's edits."},
		{Name: "no_secrets", Scope: "tool:write_file", Severity: "high", Text: "Never write a token or a password into a file. Use the vault."},
	}, seeds.Environments()...)

	if err != nil {
		panic(err)
	}
	eng, err := streamrules.New(ctx, store, &streamrules.Config{Logger: quiet, ReminderBudget: 80})
	if err != nil {
		panic(err)
	}
	defer eng.Close()
	ctx, move := eng.BeginMove(ctx, "chat-1")
	for _, r := range move.ToolReminders(ctx, "write_file", `{"path":"main.go"}`) {
		fmt.Println(r.Block())
	}
	read := ruletools.Reader(eng)
	out, err := read.Call(ctx, `{"rule": "diff_not_rewrite"}`)
	if err != nil {
		panic(err)
	}
	fmt.Println(out)
	out, err = read.Call(ctx, `{"rule": "no_secrets"}`)
	if err != nil {
		panic(err)
	}
	fmt.Println(out)
	// Output:
	// <system-reminder rule="no_secrets">Never write a token or a password into a file. Use the vault.</system-reminder>
	// <system-reminder rule="diff_not_rewrite" delivery="manifest">Edit an existing file with write_diff. (read it with stream_rule_read)</system-reminder>
	// {"ok":true,"rule":"diff_not_rewrite","text":"Edit an existing file with write_diff. Rewriting it whole loses the master's edits."}
	// {"ok":false,"error":"refused: rule \"no_secrets\" was not delivered in manifest form in this turn; stream_rule_read reads only the rules a manifest block named, and the others are in front of you whole","field":"rule"}
}
