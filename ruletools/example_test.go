package ruletools_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/ruletools"
)

func ExampleNew() {
	ctx := context.Background()
	store, _ := streamrules.NewMemoryStore(nil)
	eng, _ := streamrules.New(ctx, store, &streamrules.Config{Logger: quiet})
	defer eng.Close()
	ts := ruletools.New(store, eng)
	create := ts[1]

	// A client's chat: refused.
	clientCtx, _ := eng.BeginMove(ctx, "client-chat", streamrules.EnvTelegram)
	out, _ := create.Call(clientCtx, `{"name": "x", "scope": "text", "text": "y"}`)
	fmt.Println(out)

	// The master's chat: a bad regex is output naming the field, then the fixed rule is created.
	masterCtx, _ := eng.BeginMove(ctx, "master-chat", streamrules.EnvMaster)
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
