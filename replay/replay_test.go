package replay_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/replay"
	"github.com/streamrules/streamrules/seeds"
)

// testRules are four rules with every kind of state a backtest must carry over moves:
// a negate rule, a `once` rule, an `after:2` rule and a rule with no `when`.
func testRules() []streamrules.Rule {
	return []streamrules.Rule{{
		Name: "tail", Scope: "text", Condition: `↩ #\d+\s*$`, Negate: true,
		When: []string{"telegram"}, Text: "End a Telegram reply with ↩ #id.",
	}, {
		Name: "img", Scope: "text", Condition: `!\[[^\]]*\]\([^)]*\)`, Repeat: "once",
		When: []string{"telegram"}, Text: "No markdown images in Telegram.",
	}, {
		Name: "shell", Scope: "tool:shell", Repeat: "after:2",
		When: []string{"client_ops"}, Text: "This shell is the agent's machine.",
	}, {
		Name: "anywrite", Scope: "tool:write_file", Condition: `"path"`,
		Text: "Use write_diff.", Disabled: true, // replayed as if enabled: the backtest asks "what if it were on"
	}}
}

const transcript = `{"chat":"tg-1","move":1,"env":["telegram"],"answer":"hello"}
{"chat":"tg-1","move":2,"env":["telegram","client_ops"],"tools":[{"name":"shell","args":"{\"cmd\":\"ls\"}"},{"name":"shell","args":"{\"cmd\":\"df\"}"}],"answer":"![a](b) ↩ #2"}

{"chat":"q-1","tools":[{"name":"write_file","args":{"path": "a"}}],"answer":"done"}
{"chat":"tg-1","move":3,"env":["telegram","client_ops"],"tools":[{"name":"shell","args":"{}"}],"answer":"![c](d)"}
{"chat":"tg-1","move":4,"env":["client_ops"],"tools":[{"name":"shell","args":"{}"}],"answer":"ok"}
{"chat":"q-1","tools":[{"name":"write_file","args":"{\"path\": \"b\"}"}],"answer":""}
`

func run(t *testing.T, rules []streamrules.Rule, text string, opts *replay.Options) *replay.Report {
	t.Helper()
	if opts == nil {
		opts = &replay.Options{}
	}
	if opts.Environments == nil {
		opts.Environments = seeds.Environments()
	}
	rep, err := replay.Run(context.Background(), rules, []replay.Source{{Name: "week.jsonl", R: strings.NewReader(text)}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestRunCounts(t *testing.T) {
	t.Parallel()
	var progress []replay.Progress
	rep := run(t, testRules(), transcript, &replay.Options{OnMove: func(p replay.Progress) { progress = append(progress, p) }})
	if rep.Moves != 6 {
		t.Errorf("moves = %d, want 6", rep.Moves)
	}
	// Hand-computed, move by move:
	//   tail:     in scope in tg-1 moves 1-3; fires on 1 ("hello") and 3 (no tail).
	//   img:      in scope in 1-3; fires on 2; silent on 3 (once per chat).
	//   shell:    in scope in 2-4 (4 calls); fires on 2 (once in the move), silent on 3
	//             (3-2 < 2), fires on 4 (4-2 >= 2).
	//   anywrite: no `when`: in scope in all 6; fires on both write_file calls.
	want := map[string]replay.RuleReport{
		"anywrite": {Scope: "tool:write_file", InScope: 6, Fired: 2, Calls: 2},
		"img":      {Scope: "text", InScope: 3, Fired: 1, Discards: 1},
		"shell":    {Scope: "tool:shell", InScope: 3, Fired: 2, Calls: 4},
		"tail":     {Scope: "text", InScope: 3, Fired: 2, Discards: 2},
	}
	var names []string
	for _, r := range rep.Rules {
		names = append(names, r.Rule)
		w := want[r.Rule]
		if r.Scope != w.Scope || r.InScope != w.InScope || r.Fired != w.Fired || r.Calls != w.Calls || r.Discards != w.Discards {
			t.Errorf("%s: got in_scope %d fired %d calls %d discards %d scope %q, want %+v", r.Rule, r.InScope, r.Fired, r.Calls, r.Discards, r.Scope, w)
		}
		// A text rule's rate is per move in scope, a tool rule's per call of its tool.
		wantRate, wantOf := float64(w.Fired)/float64(w.InScope), "moves"
		if w.Calls > 0 {
			wantRate, wantOf = float64(w.Fired)/float64(w.Calls), "calls"
		}
		if r.Rate != wantRate || r.RateOf != wantOf {
			t.Errorf("%s: rate %v of %s, want %v of %s", r.Rule, r.Rate, r.RateOf, wantRate, wantOf)
		}
		if len(r.Examples) != r.Fired {
			t.Errorf("%s: %d examples for %d firings", r.Rule, len(r.Examples), r.Fired)
		}
	}
	if strings.Join(names, ",") != "anywrite,img,shell,tail" {
		t.Errorf("rules %v, want every rule by name", names)
	}
	if len(progress) != 6 || progress[5].Moves != 6 || progress[5].Line != 7 || progress[5].Bytes != int64(len(transcript)) {
		t.Errorf("progress %+v", progress)
	}
}

func TestRunExamples(t *testing.T) {
	t.Parallel()
	rep := run(t, testRules(), transcript, nil)
	got := map[string][]replay.Example{}
	for _, r := range rep.Rules {
		got[r.Rule] = r.Examples
	}
	want := map[string][]replay.Example{
		"anywrite": {
			{File: "week.jsonl", Line: 4, Chat: "q-1", Move: 1, Tool: "write_file", Excerpt: `{⟦"path"⟧:"a"}`, Match: `"path"`},
			{File: "week.jsonl", Line: 7, Chat: "q-1", Move: 2, Tool: "write_file", Excerpt: `{⟦"path"⟧:"b"}`, Match: `"path"`},
		},
		"img":   {{File: "week.jsonl", Line: 2, Chat: "tg-1", Move: 2, Excerpt: "⟦![a](b)⟧ ↩ #2", Match: "![a](b)"}},
		"shell": {{File: "week.jsonl", Line: 2, Chat: "tg-1", Move: 2, Tool: "shell", Excerpt: `⟦{"cmd":"ls"}⟧`, Match: `{"cmd":"ls"}`}, {File: "week.jsonl", Line: 6, Chat: "tg-1", Move: 4, Tool: "shell", Excerpt: `⟦{}⟧`, Match: `{}`}},
		"tail":  {{File: "week.jsonl", Line: 1, Chat: "tg-1", Move: 1, Excerpt: "hello"}, {File: "week.jsonl", Line: 5, Chat: "tg-1", Move: 3, Excerpt: "![c](d)"}},
	}
	for name, w := range want {
		g, _ := json.Marshal(got[name])
		wj, _ := json.Marshal(w)
		if string(g) != string(wj) {
			t.Errorf("%s examples:\n got %s\nwant %s", name, g, wj)
		}
	}
}

// TestRunExamplesCap: Options.Examples caps each rule's examples, keeping the earliest in
// input order whichever shard met them.
func TestRunExamplesCap(t *testing.T) {
	t.Parallel()
	for _, workers := range []int{1, 3} {
		rep := run(t, testRules(), transcript, &replay.Options{Examples: 1, Workers: workers})
		first := map[string]int{"anywrite": 4, "img": 2, "shell": 2, "tail": 1}
		for _, r := range rep.Rules {
			if len(r.Examples) > 1 {
				t.Errorf("%d workers: %s keeps %d examples, want at most 1", workers, r.Rule, len(r.Examples))
			}
			if line, ok := first[r.Rule]; ok && (len(r.Examples) != 1 || r.Examples[0].Line != line) {
				t.Errorf("%d workers: %s examples %+v, want the one at line %d", workers, r.Rule, r.Examples, line)
			}
		}
	}
}

func TestRunExcerptCut(t *testing.T) {
	t.Parallel()
	rules := []streamrules.Rule{{Name: "word", Scope: "text", Condition: `needle`, Text: "x"}}
	answer := strings.Repeat("a", 100) + "needle" + strings.Repeat("é", 100)
	line, _ := json.Marshal(replay.Move{Chat: "c", Answer: answer})
	rep := run(t, rules, string(line), nil)
	ex := rep.Rules[0].Examples[0]
	want := "…" + strings.Repeat("a", 40) + "⟦needle⟧" + strings.Repeat("é", 40) + "…"
	if ex.Excerpt != want {
		t.Errorf("excerpt %q, want %q", ex.Excerpt, want)
	}
}

// A filtered transcript keeps its gaps: after:2 lets the rule fire again at move 3 after
// move 1, not at move 2; without numbers the lines are consecutive moves.
func TestRunMoveNumbers(t *testing.T) {
	t.Parallel()
	rules := []streamrules.Rule{{Name: "shell", Scope: "tool:shell", Repeat: "after:2", Text: "x"}}
	tests := []struct {
		name  string
		lines string
		fired int
	}{
		{"gap", `{"chat":"c","move":1,"tools":[{"name":"shell","args":""}]}
{"chat":"c","move":3,"tools":[{"name":"shell","args":""}]}`, 2},
		{"consecutive", `{"chat":"c","move":1,"tools":[{"name":"shell","args":""}]}
{"chat":"c","move":2,"tools":[{"name":"shell","args":""}]}`, 1},
		{"unnumbered", `{"chat":"c","tools":[{"name":"shell","args":""}]}
{"chat":"c","tools":[{"name":"shell","args":""}]}
{"chat":"c","tools":[{"name":"shell","args":""}]}`, 2},
		{"numbered then not", `{"chat":"c","move":7,"tools":[{"name":"shell","args":""}]}
{"chat":"c","tools":[{"name":"shell","args":""}]}
{"chat":"c","tools":[{"name":"shell","args":""}]}`, 2},
		{"other chats do not count", `{"chat":"c","tools":[{"name":"shell","args":""}]}
{"chat":"d","tools":[{"name":"shell","args":""}]}
{"chat":"c","tools":[{"name":"shell","args":""}]}`, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := run(t, rules, tt.lines, nil).Rules[0].Fired; got != tt.fired {
				t.Errorf("fired %d, want %d", got, tt.fired)
			}
		})
	}
}

func TestRunNoReplays(t *testing.T) {
	t.Parallel()
	rep := run(t, testRules(), transcript, &replay.Options{MaxRetriesPerMove: -1, AsStored: true, Examples: -1})
	for _, r := range rep.Rules {
		if r.Rule == "anywrite" {
			t.Errorf("a disabled rule was replayed with AsStored: %+v", r)
		}
		if r.Discards != 0 || len(r.Examples) != 0 {
			t.Errorf("%s: discards %d, examples %d; want none", r.Rule, r.Discards, len(r.Examples))
		}
		if r.Rule == "tail" && r.Fired != 2 {
			t.Errorf("tail fired %d, want 2 (kept, not discarded)", r.Fired)
		}
	}
}

func TestRunErrors(t *testing.T) {
	t.Parallel()
	ok := `{"chat":"c","answer":"x"}` + "\n"
	tests := []struct {
		name, text, want string
	}{
		{"unknown field", ok + `{"chat":"c","anwser":"x"}`, `week.jsonl:2: unknown field "anwser"`},
		{"no chat", ok + ok + `{"answer":"x"}`, `week.jsonl:3: "chat" is missing or empty: every move belongs to a chat`},
		{"not JSON", `{"chat":"c",`, `week.jsonl:1: not JSON: the object is cut short`},
		{"syntax", `{"chat" "c"}`, `week.jsonl:1: not JSON: invalid character '"' after object key (at byte 9)`},
		{"wrong type", `{"chat":"c","move":"7"}`, `week.jsonl:1: "move" must be a whole number, not a JSON string`},
		{"trailing data", `{"chat":"c"} {"chat":"d"}`, `week.jsonl:1: data after the JSON object`},
		{"two objects", `{"chat":"c"}{"chat":"d"}`, `week.jsonl:1: data after the JSON object`},
		{"tool without name", `{"chat":"c","tools":[{"args":"{}"}]}`, `week.jsonl:1: tools[0]: tool call without "name"`},
		{"tool unknown field", `{"chat":"c","tools":[{"name":"shell","input":"{}"}]}`, `week.jsonl:1: unknown field "input"`},
		{"negative move", `{"chat":"c","move":-1}`, `week.jsonl:1: "move" is -1: a move number is 1 or more (or absent)`},
		{"out of order", `{"chat":"c","move":9}` + "\n" + `{"chat":"d","move":1}` + "\n" + `{"chat":"c","move":4}`,
			`week.jsonl:3: chat "c": move 4 comes after move 9: a chat's moves must be in order`},
		{"same move twice", ok + `{"chat":"c","move":1}`, `week.jsonl:2: chat "c": move 1 comes after move 1: a chat's moves must be in order`},
		{"array", `[]`, `week.jsonl:1: a move is a JSON object, not a JSON array`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := replay.Run(context.Background(), testRules(), []replay.Source{{Name: "week.jsonl", R: strings.NewReader(tt.text)}}, &replay.Options{Environments: seeds.Environments()})
			var le *replay.LineError
			if !errors.As(err, &le) {
				t.Fatalf("error %v (%T), want a *LineError", err, err)
			}
			if err.Error() != tt.want {
				t.Errorf("error\n got %s\nwant %s", err, tt.want)
			}
		})
	}
}

func TestRunBadRule(t *testing.T) {
	t.Parallel()
	rules := testRules()
	rules[1].Condition = "(unclosed"
	_, err := replay.Run(context.Background(), rules, nil, &replay.Options{Environments: seeds.Environments()})
	var ve *streamrules.ValidationError
	if !errors.As(err, &ve) || ve.Field != "condition" || !strings.Contains(err.Error(), `rule "img"`) {
		t.Errorf("error %v, want a validation error naming rule img and its condition", err)
	}
}

func TestRunCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := replay.Run(ctx, testRules(), []replay.Source{{Name: "a", R: strings.NewReader(transcript)}}, &replay.Options{Environments: seeds.Environments()})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
}

// The report's JSON is the --json contract: {"rules":[{"rule","in_scope","fired","rate","rate_of","examples"}],"moves":N}.
func TestReportJSON(t *testing.T) {
	t.Parallel()
	rep := run(t, testRules()[:1], `{"chat":"c","env":["telegram"],"answer":"hi"}`, nil)
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"rules":[{"rule":"tail","scope":"text","in_scope":1,"fired":1,"rate":1,"rate_of":"moves","discards":1,"examples":[{"file":"week.jsonl","line":1,"chat":"c","move":1,"excerpt":"hi","match":""}]}],"moves":1}`
	if string(b) != want {
		t.Errorf("json\n got %s\nwant %s", b, want)
	}
}

func TestReportText(t *testing.T) {
	t.Parallel()
	rep := run(t, testRules(), transcript+`{"chat":"z","env":["telegram"],"answer":"a\tb\nc"}`, nil)
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	want := `rule      scope            in scope  calls  fired  rate
anywrite  tool:write_file  7         2      2      100.0% of calls
img       text             4         -      1      25.0% of moves
shell     tool:shell       3         4      2      50.0% of calls
tail      text             4         -      3      75.0% of moves
7 moves replayed

anywrite:
  week.jsonl:4 (chat q-1, move 1) write_file: {⟦"path"⟧:"a"}
  week.jsonl:7 (chat q-1, move 2) write_file: {⟦"path"⟧:"b"}

img:
  week.jsonl:2 (chat tg-1, move 2): ⟦![a](b)⟧ ↩ #2

shell:
  week.jsonl:2 (chat tg-1, move 2) shell: ⟦{"cmd":"ls"}⟧
  week.jsonl:6 (chat tg-1, move 4) shell: ⟦{}⟧

tail:
  week.jsonl:1 (chat tg-1, move 1): hello
  week.jsonl:5 (chat tg-1, move 3): ![c](d)
  week.jsonl:8 (chat z, move 1): a→b⏎c
`
	if b.String() != want {
		t.Errorf("text\n got:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestParseMoveTypeErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ line, want string }{
		{`{"chat":1}`, `"chat" must be a string, not a JSON number`},
		{`{"chat":"c","env":"telegram"}`, `"env" must be an array, not a JSON string`},
		{`{"chat":"c","env":[1]}`, `"env" must be a string, not a JSON number`},
		{`{"chat":"c","tools":[{"name":7}]}`, `"tools.name" must be a string, not a JSON number`},
		{`{"chat":"c","tools":{}}`, `"tools" must be an array, not a JSON object`},
		{`{"chat":"c","tools":[{"name":"x","args":"\u"}]}`, `not JSON: invalid character '"' in \u hexadecimal character escape (at byte 44)`},
		{`{"chat":"c","env":[""]}`, `env[0] is empty`},
		{`{"chat":"c","tools":[{"name":""}]}`, `tools[0]: "name" is empty`},
	}
	for _, tt := range tests {
		if _, err := replay.ParseMove([]byte(tt.line)); err == nil || err.Error() != tt.want {
			t.Errorf("ParseMove(%s) = %v, want %s", tt.line, err, tt.want)
		}
	}
}

func TestRunUnknownEnv(t *testing.T) {
	t.Parallel()
	rep := run(t, testRules(), `{"chat":"c","env":["telgram","telegram"],"answer":"hi"}
{"chat":"c","env":["zzz"],"answer":"hi"}`, nil)
	if strings.Join(rep.UnknownEnv, ",") != "telgram,zzz" {
		t.Errorf("unknown env %v", rep.UnknownEnv)
	}
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil || !strings.Contains(b.String(), "unknown environments, ignored: telgram, zzz\n") {
		t.Errorf("text %q (%v)", b.String(), err)
	}
	// A host's own names are known.
	rep = run(t, nil, `{"chat":"c","env":["web"],"answer":"hi"}`, &replay.Options{Environments: []string{"web"}})
	if len(rep.UnknownEnv) != 0 {
		t.Errorf("unknown env %v", rep.UnknownEnv)
	}
}

// A run that stops early (a bad move, a cancelled context) stops its reading goroutine
// too, however much input is left.
func TestRunStopsReader(t *testing.T) {
	defer goleak.VerifyNone(t)
	long := strings.Repeat(`{"chat":"c","answer":"hi"}`+"\n", 5000)
	_, err := replay.Run(context.Background(), testRules(), []replay.Source{{Name: "a", R: strings.NewReader(`{"chat":"c","move":5}` + "\n" + `{"chat":"c","move":2}` + "\n" + long)}}, &replay.Options{Environments: seeds.Environments()})
	if err == nil || !strings.HasPrefix(err.Error(), "a:2: ") {
		t.Fatalf("error %v, want one at a:2", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	moves := 0
	_, err = replay.Run(ctx, testRules(), []replay.Source{{Name: "b", R: strings.NewReader(long)}}, &replay.Options{Environments: seeds.Environments(), OnMove: func(p replay.Progress) {
		if moves++; moves == 10 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) || moves != 10 {
		t.Fatalf("error %v after %d moves, want context.Canceled after 10", err, moves)
	}
}

// The report, and the error, are the same whatever the number of workers: each chat's
// moves stay in order on one worker, counts add up, examples are the earliest in input
// order, and the error is the first in input order.
func TestWorkersSameReport(t *testing.T) {
	t.Parallel()
	data := string(benchTranscript(1500))
	rules := benchRules(40)
	lines := strings.SplitAfter(data, "\n")
	// A move out of order in the middle, and a bad line after it (on other chats).
	var m1 replay.Move
	if err := json.Unmarshal([]byte(lines[800]), &m1); err != nil {
		t.Fatal(err)
	}
	m1.Move = 1
	bad, _ := json.Marshal(m1)
	withErrors := strings.Join(lines[:1000], "") + string(bad) + "\n" + strings.Join(lines[1000:1200], "") + "{oops\n" + strings.Join(lines[1200:], "")
	for _, tt := range []struct{ name, text string }{{"clean", data}, {"errors", withErrors}} {
		var want string
		for _, workers := range []int{1, 2, 3, 8} {
			rep, err := replay.Run(context.Background(), rules, []replay.Source{{Name: "t", R: strings.NewReader(tt.text)}}, &replay.Options{Environments: seeds.Environments(), Workers: workers})
			b, _ := json.Marshal(rep)
			got := fmt.Sprintf("%s %v", b, err)
			if workers == 1 {
				want = got
				if tt.name == "errors" && (err == nil || !strings.HasPrefix(err.Error(), "t:1001: ") || !strings.HasSuffix(err.Error(), "a chat's moves must be in order")) {
					t.Errorf("error %v, want the move out of order at t:1001", err)
				}
				continue
			}
			if got != want {
				t.Errorf("%s: %d workers:\n%.300s\nwant (1 worker):\n%.300s", tt.name, workers, got, want)
			}
		}
	}
}
