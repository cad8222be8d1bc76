package seeds_test

import (
	"errors"
	"fmt"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/seeds"
)

func ExampleDefault() {
	set, err := seeds.Default()
	if err != nil {
		panic(err)
	}
	fmt.Println("version", set.Version)
	for _, r := range set.Rules {
		fmt.Printf("%-28s %-16s %-9s when=%v repeat=%q\n", r.Name, r.Scope, r.Mode, r.When, r.Repeat)
	}
	// Output:
	// version 6
	// write_diff_over_write_file   tool:write_file  remind    when=[] repeat="after:5"
	// local_shell_for_his_machine  tool:shell       remind    when=[client_ops] repeat="once"
	// telegram_markdown_image      text             interrupt when=[telegram] repeat=""
	// telegram_reply_tail          text             interrupt when=[telegram] repeat=""
	// look_before_refusing         text             interrupt when=[picture] repeat="after:3"
	// look_before_refusing_thinking thinking         interrupt when=[picture] repeat="after:3"
	// telegram_react_not_emoji     text             interrupt when=[telegram] repeat=""
	// destructive_shell            tool:shell       interrupt when=[client_ops] repeat=""
	// unbacked_tool_claim          text             interrupt when=[] repeat=""
	// verify_before_done           text             interrupt when=[] repeat=""
}

func ExampleParse() {
	set, err := seeds.Parse([]byte(`{
		"version": 2,
		"rules": [{
			"name": "no_lorem",
			"scope": "text",
			"condition": "(?i)lorem ipsum",
			"when": ["client_ops"],
			"text": "Never send placeholder text to a client."
		}]
	}`))
	if err != nil {
		panic(err)
	}
	r := set.Rules[0]
	fmt.Println(set.Version, r.Name, r.Mode, !r.Disabled)

	_, err = seeds.Parse([]byte(`{"version": 1, "rules": [{"name": "bad", "scope": "text", "condition": "(", "text": "x"}]}`))
	var ve *streamrules.ValidationError
	fmt.Println(errors.As(err, &ve), ve.Field)
	// Output:
	// 2 no_lorem interrupt true
	// true condition
}
