package replay_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/replay"
	"github.com/streamrules/streamrules/seeds"
)

// Two calls of one agent move, as a proxy logs them: the first answers with a tool call,
// the second, whose request repeats the chat so far with the tool's result, answers.
func ExampleFromOpenAI() {
	log := `{"chat":"tg-7","env":["telegram"],"request":{"model":"gpt-4o","messages":[{"role":"system","content":"You are a bot."},{"role":"user","content":"Free disk?"}]},"response":{"choices":[{"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"shell","arguments":"{\"cmd\":\"df -h\"}"}}]}}]}}
{"chat":"tg-7","env":["telegram"],"request":{"model":"gpt-4o","messages":[{"role":"system","content":"You are a bot."},{"role":"user","content":"Free disk?"},{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"shell","arguments":"{\"cmd\":\"df -h\"}"}}]},{"role":"tool","tool_call_id":"call_1","content":"12G"}]},"response":{"choices":[{"message":{"role":"assistant","content":"12G free. ↩ #1"}}]}}
`
	n, err := replay.FromOpenAI(strings.NewReader(log), os.Stdout, &replay.OpenAIOptions{Name: "proxy.jsonl"})
	if err != nil {
		panic(err)
	}
	fmt.Println("moves written:", n)
	// Output:
	// {"chat":"tg-7","env":["telegram"],"input":"Free disk?","tools":[{"name":"shell","args":"{\"cmd\":\"df -h\"}"}],"answer":"12G free. ↩ #1"}
	// moves written: 1
}

func convert(t *testing.T, log string, opts *replay.OpenAIOptions) (string, int) {
	t.Helper()
	var out bytes.Buffer
	n, err := replay.FromOpenAI(strings.NewReader(log), &out, opts)
	if err != nil {
		t.Fatal(err)
	}
	return out.String(), n
}

func TestFromOpenAI(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, log string
		opts      *replay.OpenAIOptions
		want      string
	}{{
		name: "bare request bodies, user and metadata, parts, legacy function_call",
		log: `{"model":"m","user":"u-1","metadata":{"env":"telegram, client_ops"},"messages":[{"role":"developer","content":"be brief"},{"role":"user","content":[{"type":"text","text":"hi"}]},{"role":"assistant","content":[{"type":"text","text":"Hel"},{"type":"text","text":"lo"}]},{"role":"user","content":"run ls"},{"role":"assistant","content":null,"function_call":{"name":"shell","arguments":"{\"cmd\":\"ls\"}"}},{"role":"function","name":"shell","content":"a b"}]}
{"model":"m","user":"u-1","metadata":{"chat_id":"c-9"},"messages":[{"role":"user","content":"x"},{"role":"assistant","content":"y"}]}`,
		want: `{"chat":"u-1","env":["telegram","client_ops"],"input":"hi","answer":"Hello"}
{"chat":"c-9","input":"x","answer":"y"}
`,
	}, {
		name: "a chat over several calls gives each move once, repeated words included",
		log: `{"chat":"c","request":{"messages":[{"role":"user","content":"hi"}]},"response":{"choices":[{"message":{"role":"assistant","content":"Hello"}}]}}
{"chat":"c","request":{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"Hello"},{"role":"user","content":"hi"}]},"response":{"choices":[{"message":{"role":"assistant","content":"Hello"}}]}}
{"chat":"c","request":{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"Hello"},{"role":"user","content":"hi"},{"role":"assistant","content":"Hello"},{"role":"user","content":"bye"}]}}`,
		want: `{"chat":"c","input":"hi","answer":"Hello"}
{"chat":"c","input":"hi","answer":"Hello"}
`,
	}, {
		name: "a memory window cuts the history: new moves still come, old ones not again",
		log: `{"chat":"c","request":{"messages":[{"role":"user","content":"1"},{"role":"assistant","content":"a"},{"role":"user","content":"2"}]},"response":{"choices":[{"message":{"role":"assistant","content":"b"}}]}}
{"chat":"c","request":{"messages":[{"role":"user","content":"2"},{"role":"assistant","content":"b"},{"role":"user","content":"3"}]},"response":{"choices":[{"message":{"role":"assistant","content":"c"}}]}}`,
		want: `{"chat":"c","input":"1","answer":"a"}
{"chat":"c","input":"2","answer":"b"}
{"chat":"c","input":"3","answer":"c"}
`,
	}, {
		name: "no chat named: the options' chat and env",
		log:  `{"messages":[{"role":"user","content":"q"},{"role":"assistant","content":"a"}]}`,
		opts: &replay.OpenAIOptions{Chat: "default", Env: []string{"trusted"}},
		want: `{"chat":"default","env":["trusted"],"input":"q","answer":"a"}
`,
	}, {
		name: "no chat anywhere: named after its opening messages",
		log: `{"messages":[{"role":"system","content":"s"},{"role":"user","content":"q"},{"role":"assistant","content":"a"}]}
{"messages":[{"role":"system","content":"s"},{"role":"user","content":"other"},{"role":"assistant","content":"a"}]}
{"messages":[{"role":"system","content":"s"},{"role":"user","content":"q"},{"role":"assistant","content":"a"},{"role":"user","content":"q2"},{"role":"assistant","content":"a2"}]}`,
		want: `{"chat":"openai-c6a05f16e41a","input":"q","answer":"a"}
{"chat":"openai-cada8d4a5e15","input":"other","answer":"a"}
{"chat":"openai-c6a05f16e41a","input":"q2","answer":"a2"}
`,
	}, {
		name: "a tool message with ok false marks its call failed, by tool_call_id",
		log:  `{"chat":"c","messages":[{"role":"user","content":"build"},{"role":"assistant","content":null,"tool_calls":[{"id":"a","function":{"name":"write_file","arguments":"{}"}},{"id":"b","function":{"name":"run_tests","arguments":"{}"}}]},{"role":"tool","tool_call_id":"b","content":"FAIL","ok":false},{"role":"tool","tool_call_id":"a","content":"ok"},{"role":"assistant","content":"Done."}]}`,
		want: `{"chat":"c","input":"build","tools":[{"name":"write_file","args":"{}"},{"name":"run_tests","args":"{}","ok":false}],"answer":"Done."}
`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, n := convert(t, tt.log, tt.opts)
			if got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
			if n != strings.Count(tt.want, "\n") {
				t.Errorf("n = %d", n)
			}
		})
	}
}

func TestFromOpenAIErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ log, want string }{
		{`{"model":"m"}`, `log.jsonl:1: neither "request.messages" nor "messages": not a chat-completions record`},
		{"\n" + `{"messages":[{"role":"user","content":5}]}`, `log.jsonl:2: messages[0]: "content" is neither a string nor an array of parts`},
		{`{"messages":[`, `log.jsonl:1: not JSON: unexpected end of JSON input (at byte 13)`},
		{`{"messages":[{"role":"user","content":"q"},{"role":"assistant","tool_calls":[{"function":{"arguments":"{}"}}]},{"role":"assistant","content":"a"}]}`,
			`log.jsonl:1: a tool call without a function name (move 1, call 1)`},
	}
	for _, tt := range tests {
		_, err := replay.FromOpenAI(strings.NewReader(tt.log), &bytes.Buffer{}, &replay.OpenAIOptions{Name: "log.jsonl"})
		var le *replay.LineError
		if !errors.As(err, &le) || err.Error() != tt.want {
			t.Errorf("FromOpenAI(%s) = %v, want %s", tt.log, err, tt.want)
		}
	}
}

// What the converter writes, a backtest reads: the two paths meet.
func TestFromOpenAIReplays(t *testing.T) {
	t.Parallel()
	log := `{"chat":"c","env":["telegram"],"request":{"messages":[{"role":"user","content":"img?"}]},"response":{"choices":[{"message":{"role":"assistant","content":"![x](y)"}}]}}`
	transcript, _ := convert(t, log, nil)
	rules := []streamrules.Rule{{Name: "img", Scope: "text", Condition: `!\[`, When: []string{"telegram"}, Text: "No images."}}
	rep, err := replay.Run(context.Background(), rules, []replay.Source{{Name: "t", R: strings.NewReader(transcript)}}, &replay.Options{Environments: seeds.Environments()})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Moves != 1 || rep.Rules[0].Fired != 1 {
		t.Errorf("report %+v", rep)
	}
}

// The shipped sample log converts to the shipped transcript.
func TestFromOpenAISample(t *testing.T) {
	t.Parallel()
	in, err := os.ReadFile("testdata/openai.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	got, n := convert(t, string(in), &replay.OpenAIOptions{Name: "openai.jsonl"})
	want, err := os.ReadFile("testdata/openai.transcript.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) || n != 3 {
		t.Errorf("%d moves:\n%s\nwant\n%s", n, got, want)
	}
}
