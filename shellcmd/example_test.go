package shellcmd_test

import (
	"fmt"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/seeds"
	"github.com/streamrules/streamrules/shellcmd"
)

func ExampleCommands() {
	cmds, err := shellcmd.Commands(`cd /srv && sudo bash -c '\rm -fr data' # rm -rf x` + "\necho \"rm -rf x\"")
	if err != nil {
		panic(err)
	}
	for _, c := range cmds {
		fmt.Printf("%q\n", c) // a word's own spaces are U+00A0: \s only separates words
	}
	// Output:
	// "cd /srv"
	// "rm -f -r data"
	// "echo rm\u00a0-rf\u00a0x"
}

// A `shell: true` rule judges each command the script would run.
func Example_rule() {
	j, err := streamrules.NewJudge(streamrules.Rule{
		Name: "no_forced_rm", Scope: "tool:shell", Mode: streamrules.ModeInterrupt, Field: "cmd", Shell: true,
		Condition: `^rm\s(?:.*\s)?-r\s(?:.*\s)?-f(?:\s|$)`, Text: "No forced recursive rm.",
	}, seeds.Environments()...)

	if err != nil {
		panic(err)
	}
	for _, cmd := range []string{`{"cmd":"\"rm\" -r --force=no -rf /srv"}`, `{"cmd":"echo 'rm -rf /srv'"}`, `{"cmd":"env -i sudo rm -rf /srv"}`} {
		fmt.Println(j.Check(cmd, nil).Status, cmd)
	}
	// Output:
	// violation {"cmd":"\"rm\" -r --force=no -rf /srv"}
	// pass {"cmd":"echo 'rm -rf /srv'"}
	// violation {"cmd":"env -i sudo rm -rf /srv"}
}
