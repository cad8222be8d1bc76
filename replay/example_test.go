package replay_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/replay"
	"github.com/streamrules/streamrules/seeds"
)

// Would a Telegram tail rule have fired last week, and on what? Two chats, four moves.
func ExampleRun() {
	rules := []streamrules.Rule{{
		Name: "telegram_reply_tail", Scope: "text", Condition: `↩ #\d+\s*$`, Negate: true,
		When: []string{seeds.EnvTelegram}, Text: "A Telegram reply ends with the tail ↩ #id.",
	}, {
		Name: "local_shell_for_his_machine", Scope: "tool:shell", Repeat: "once",
		When: []string{seeds.EnvClientOps}, Text: "This shell runs on the agent's machine, not the master's.",
	}}
	week := `{"chat":"tg-7","move":12,"env":["telegram","client_ops"],"tools":[{"name":"shell","args":"{\"cmd\": \"df -h\"}"}],"answer":"12G free. ↩ #12"}
{"chat":"tg-7","move":13,"env":["telegram","client_ops"],"tools":[{"name":"shell","args":"{\"cmd\": \"uptime\"}"}],"answer":"Up 3 days."}
{"chat":"web-1","move":1,"answer":"Hello!"}
{"chat":"tg-9","move":1,"env":["telegram"],"answer":"Hi. ↩ #1"}
`
	rep, err := replay.Run(context.Background(), rules, []replay.Source{{Name: "week.jsonl", R: strings.NewReader(week)}}, &replay.Options{Environments: seeds.Environments()})
	if err != nil {
		panic(err)
	}
	if err := rep.WriteText(os.Stdout); err != nil {
		panic(err)
	}

	// A bad line names its file and line.
	_, err = replay.Run(context.Background(), rules, []replay.Source{{Name: "typo.jsonl", R: strings.NewReader(`{"chat":"c","anwser":"hi"}`)}}, &replay.Options{Environments: seeds.Environments()})
	var le *replay.LineError
	fmt.Println(errors.As(err, &le), err)
	// Output:
	// rule                         scope       in scope  calls  fired  rate
	// local_shell_for_his_machine  tool:shell  2         2      1      50.0% of calls
	// telegram_reply_tail          text        3         -      1      33.3% of moves
	// 4 moves replayed
	//
	// local_shell_for_his_machine:
	//   week.jsonl:1 (chat tg-7, move 12) shell: ⟦{"cmd":"df -h"}⟧
	//
	// telegram_reply_tail:
	//   week.jsonl:2 (chat tg-7, move 13): Up 3 days.
	// true typo.jsonl:1: unknown field "anwser"
}
