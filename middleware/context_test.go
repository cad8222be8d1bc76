package middleware_test

import (
	"context"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/llms"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/scripted"
	"github.com/streamrules/streamrules/seeds"
)

// Context rules from outside: a stock functions agent and executor, wired with the stock
// BeginMove + chains.Call (rig.run), so the agent wrapper must take the move's input from
// the chain's input by itself.

// urgentRule is the constitution's first exercise: a safety question's answer must
// contain "If this is urgent"; the fix appends it.
func urgentRule() streamrules.Rule {
	return streamrules.Rule{
		Name: "urgent_line_on_safety", Scope: streamrules.ScopeText,
		AppliesWhen: &streamrules.Predicate{InputContainsRegex: `(?i)\bsafe(?:ty)?\b`},
		Predicate:   &streamrules.Predicate{NotContainsRegex: "If this is urgent"},
		Fix:         &streamrules.Fix{AppendIfMissing: "\n\nIf this is urgent, call your local emergency number now."},
		Text:        "When the user asks about safety, end with a line that starts \"If this is urgent\".",
	}
}

// seedRules returns the named rules of the default seed set.
func seedRules(t *testing.T, names ...string) []streamrules.Rule {
	t.Helper()
	set, err := seeds.Default()
	if err != nil {
		t.Fatal(err)
	}
	var out []streamrules.Rule
	for _, n := range names {
		r, ok := set.Rule(n)
		if !ok {
			t.Fatalf("no seed rule %q", n)
		}
		out = append(out, r)
	}
	return out
}

// allSeedRules returns every rule of the default seed set.
func allSeedRules(t *testing.T) []streamrules.Rule {
	t.Helper()
	set, err := seeds.Default()
	if err != nil {
		t.Fatal(err)
	}
	return seedRules(t, set.Names()...)
}

func TestContextSafetyQuestion(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, input, answer, want string
		fired                     int
	}{
		{"a safety question gets the urgent line", "Is it safe to use a gas stove indoors?", "Only with the window open.",
			"Only with the window open.\n\nIf this is urgent, call your local emergency number now.", 1},
		{"a weather question is untouched", "What is the weather in Oslo?", "Cold and clear.", "Cold and clear.", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, nil, urgentRule())
			model := scripted.New(scripted.Reply{Text: tt.answer, Chunk: 4})
			exec, mem := r.executor(kindFunctions, model)
			out, _, err := r.run(context.Background(), exec, "chat-"+tt.name, tt.input)
			if err != nil {
				t.Fatal(err)
			}
			if out != tt.want {
				t.Errorf("answer %q, want %q", out, tt.want)
			}
			if n := len(model.Calls()); n != 1 {
				t.Errorf("%d model calls, want 1", n)
			}
			if got := strings.Join(r.rec.streamed(), ""); got != tt.want {
				t.Errorf("the client got %q, want %q", got, tt.want)
			}
			if !strings.Contains(memoryText(t, mem), tt.want) {
				t.Errorf("memory lacks the answer as sent:\n%s", memoryText(t, mem))
			}
			if got := strings.Count(r.logs.String(), "rule=urgent_line_on_safety"); got != tt.fired {
				t.Errorf("fired %d times, want %d:\n%s", got, tt.fired, r.logs.String())
			}
		})
	}
}

// speechTool is generate_speech; fail makes it mark its output failed, the documented way.
func speechTool(fail bool) *funcCallTool {
	return &funcCallTool{name: "generate_speech", call: func(ctx context.Context, input string) (string, error) {
		if fail {
			if !streamrules.MarkToolFailed(ctx) {
				panic("MarkToolFailed outside a guarded call")
			}
			return "error: the voice service is down", nil
		}
		return "saved hello.mp3", nil
	}}
}

func TestContextUnbackedToolClaim(t *testing.T) {
	t.Parallel()
	claim := "Audio saved: hello.mp3"
	honest := "I could not make the audio: the speech tool did not run."
	speak := scripted.Reply{ToolCalls: []llms.ToolCall{toolCall("generate_speech", `{"text":"hello"}`)}}
	tests := []struct {
		name    string
		replies []scripted.Reply
		tool    *funcCallTool
		want    string
	}{
		{"no generate_speech call: repaired", []scripted.Reply{{Text: claim, Chunk: 5}}, speechTool(false), honest},
		{"after a successful call: kept", []scripted.Reply{speak, {Text: claim, Chunk: 5}}, speechTool(false), claim},
		{"after a call marked failed: repaired", []scripted.Reply{speak, {Text: claim, Chunk: 5}}, speechTool(true), honest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, nil, seedRules(t, "unbacked_tool_claim")...)
			model := scripted.New(tt.replies...)
			exec, _ := r.executor(kindFunctions, model, tt.tool)
			var firings []streamrules.Firing
			ctx, move := r.eng.BeginMove(context.Background(), "c")
			out, err := exec.Call(ctx, map[string]any{"input": "Say hello as audio."})
			firings = move.Firings()
			if err = move.End(ctx, err); err != nil {
				t.Fatal(err)
			}
			if got := out["output"]; got != tt.want {
				t.Errorf("answer %q, want %q", got, tt.want)
			}
			if n := len(model.Calls()); n != len(tt.replies) {
				t.Errorf("%d model calls, want %d: a repair costs none", n, len(tt.replies))
			}
			if tt.want == claim {
				if len(firings) != 0 {
					t.Errorf("a backed claim fired: %+v", firings)
				}
				return
			}
			if len(firings) != 1 || firings[0].Outcome != streamrules.OutcomeFixed {
				t.Fatalf("firings %+v, want one fixed", firings)
			}
			if sp := firings[0].Span; sp == nil || claim[sp.Start:sp.End] != "Audio saved:" {
				t.Errorf("span %+v, want the claim's words", sp)
			}
		})
	}
}

func TestContextVerifyBeforeDone(t *testing.T) {
	t.Parallel()
	write := scripted.Reply{ToolCalls: []llms.ToolCall{toolCall("write_file", `{"path":"a.go","content":"package a"}`)}}
	test := scripted.Reply{ToolCalls: []llms.ToolCall{toolCall("run_tests", `{}`)}}
	done := scripted.Reply{Text: "Done.", Chunk: 2}

	t.Run("done after an unchecked edit is replayed; the replay that runs the tests passes", func(t *testing.T) {
		t.Parallel()
		r := newRig(t, nil, seedRules(t, "verify_before_done")...)
		writeFile, runTests := &echoTool{name: "write_file"}, &echoTool{name: "run_tests"}
		model := scripted.New(write, done, test, done)
		exec, _ := r.executor(kindFunctions, model, writeFile, runTests)
		ctx, move := r.eng.BeginMove(context.Background(), "c")
		out, err := exec.Call(ctx, map[string]any{"input": "Add package a."})
		firings := move.Firings()
		record, whole := move.ToolRecord()
		if err = move.End(ctx, err); err != nil {
			t.Fatal(err)
		}
		if out["output"] != "Done." || len(runTests.inputs()) != 1 {
			t.Fatalf("answer %q, run_tests ran %d times", out["output"], len(runTests.inputs()))
		}
		calls := model.Calls()
		if len(calls) != 4 {
			t.Fatalf("%d model calls, want 4 (write, done discarded, tests, done)", len(calls))
		}
		if got := messageText(calls[2].Messages[len(calls[2].Messages)-1]); !strings.Contains(got, `<system-interrupt reason="rule_violation" rule="verify_before_done">`) {
			t.Errorf("the replay lacks the interrupt: %q", got)
		}
		if len(firings) != 1 || !firings[0].Retry || firings[0].Outcome != streamrules.OutcomeCorrected {
			t.Errorf("firings %+v, want one discard, corrected", firings)
		}
		if f := firings[0]; f.Span == nil || "Done."[f.Span.Start:f.Span.End] != "Done" {
			t.Errorf("span %+v, want the word Done", f.Span)
		}
		want := []streamrules.ToolRun{{Tool: "write_file", OK: true}, {Tool: "run_tests", OK: true}}
		if !whole || len(record) != 2 || record[0] != want[0] || record[1] != want[1] {
			t.Errorf("tool record %+v (whole %v), want %+v", record, whole, want)
		}
		if strings.Contains(strings.Join(r.rec.streamed(), ""), "<system") {
			t.Errorf("the client saw an engine block: %q", r.rec.streamed())
		}
	})

	t.Run("write_file, run_tests, done passes first time", func(t *testing.T) {
		t.Parallel()
		r := newRig(t, nil, seedRules(t, "verify_before_done")...)
		model := scripted.New(write, test, done)
		exec, _ := r.executor(kindFunctions, model, &echoTool{name: "write_file"}, &echoTool{name: "run_tests"})
		out, _, err := r.run(context.Background(), exec, "c", "Add package a.")
		if err != nil {
			t.Fatal(err)
		}
		if out != "Done." || len(model.Calls()) != 3 {
			t.Errorf("answer %q after %d model calls, want Done. after 3", out, len(model.Calls()))
		}
		if strings.Contains(r.logs.String(), "rule=verify_before_done") { // the load summary names it too
			t.Errorf("the rule fired:\n%s", r.logs.String())
		}
	})
}

// funcCallTool is a real tool whose Call is a func of the context and the input.
type funcCallTool struct {
	name string
	call func(ctx context.Context, input string) (string, error)
}

func (t *funcCallTool) Name() string        { return t.name }
func (t *funcCallTool) Description() string { return "runs " + t.name }
func (t *funcCallTool) Call(ctx context.Context, input string) (string, error) {
	return t.call(ctx, input)
}
