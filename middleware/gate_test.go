package middleware_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/streamrules/streamrules/internal/streamrulestest"

	"github.com/tmc/langchaingo/llms"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/openaitest"
	"github.com/streamrules/streamrules/internal/scripted"
)

const noRMText = "Never remove files recursively and by force."

// gateRule is a shell gate on the shell tool: a forced recursive rm never runs.
func gateRule() streamrules.Rule {
	return streamrules.Rule{Name: "no_forced_rm", Scope: "tool:shell", Mode: streamrules.ModeInterrupt, Shell: true,
		Condition: `^rm\s(?:.*\s)?(?:-r\s(?:.*\s)?-f|-f\s(?:.*\s)?-r)(?:\s|$)`, Text: noRMText}
}

// outcomes collects the firings of ended moves (Config.OnOutcome).
type outcomes struct {
	mu sync.Mutex
	fs []streamrules.Firing
}

func (o *outcomes) hook(_ context.Context, f streamrules.Firing) {
	o.mu.Lock()
	o.fs = append(o.fs, f)
	o.mu.Unlock()
}

func (o *outcomes) list() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []string
	for _, f := range o.fs {
		out = append(out, f.Rule+"/"+f.Tool+"/"+string(f.Outcome))
	}
	return out
}

// declare is a response that declares a shell call with cmd, in the agent's shape.
func declare(kind agentKind, cmd string) scripted.Reply {
	if kind == kindFunctions {
		return scripted.Reply{ToolCalls: []llms.ToolCall{toolCall("shell", `{"__arg1":"`+cmd+`"}`)}}
	}
	return scripted.Reply{Text: "Thought: tidy up\nAction: shell\nAction Input: " + cmd, Chunk: 6}
}

func finalReply(kind agentKind, text string) scripted.Reply {
	if kind == kindFunctions {
		return scripted.Reply{Text: text, Chunk: 5}
	}
	return scripted.Reply{Text: "Thought: done\nFinal Answer: " + text, Chunk: 5}
}

// gateModel is the scripted model or the openai client against the local server, and the
// prompts each call was sent.
type gateModel struct {
	llm     llms.Model
	prompts func() []string
}

func newGateModel(t *testing.T, provider string, replies ...scripted.Reply) gateModel {
	t.Helper()
	if provider == "scripted" {
		m := scripted.New(replies...)
		return gateModel{llm: m, prompts: func() []string {
			var out []string
			for _, c := range m.Calls() {
				out = append(out, fmt.Sprint(c.Messages)) // tool results too, not only text parts
			}
			return out
		}}
	}
	srv := openaitest.New(t, replies...)
	return gateModel{llm: srv.LLM(t), prompts: func() []string {
		var out []string
		for _, req := range srv.Requests() {
			out = append(out, requestText(t, req))
		}
		return out
	}}
}

// TestGateDiscardsDeclaredCall: a response that declares a call the gate matches is
// discarded whole before the agent sees it; the call never reaches the tool, the client
// sees nothing of it, the replay carries the interrupt, and the firing is corrected.
func TestGateDiscardsDeclaredCall(t *testing.T) {
	t.Parallel()
	for _, provider := range []string{"scripted", "openai"} {
		for _, kind := range []agentKind{kindFunctions, kindMRKL} {
			t.Run(provider+"/"+string(kind), func(t *testing.T) {
				t.Parallel()
				var seen outcomes
				r := newRig(t, &streamrules.Config{OnOutcome: seen.hook}, gateRule())
				m := newGateModel(t, provider, declare(kind, "sudo rm -fr /srv/data"), declare(kind, "ls /srv/data"), finalReply(kind, "Listed."))
				shell := &echoTool{name: "shell"}
				exec, _ := r.executor(kind, m.llm, shell)
				out, _, err := r.run(context.Background(), exec, "gate-"+provider+string(kind), "clean up")
				if err != nil {
					t.Fatal(err)
				}
				if out != "Listed." {
					t.Errorf("output %q", out)
				}
				if in := shell.inputs(); len(in) != 1 || in[0] != "ls /srv/data" {
					t.Errorf("the tool ran %q; the discarded rm must never reach it", in)
				}
				prompts := m.prompts()
				if len(prompts) != 3 {
					t.Fatalf("%d model calls, want 3", len(prompts))
				}
				if !strings.Contains(prompts[1], `<system-interrupt reason="rule_violation" rule="no_forced_rm">`+noRMText) {
					t.Errorf("the replay lacks the interrupt:\n%s", prompts[1])
				}
				view := r.rec.all() + strings.Join(r.rec.streamed(), "")
				assertClean(t, view, "rm -fr", "rm -rf")
				if !strings.Contains(view, "ls /srv/data") {
					t.Errorf("the replay's call is not in the client's view:\n%s", view)
				}
				if got := strings.Join(seen.list(), ","); got != "no_forced_rm/shell/corrected" {
					t.Errorf("firings %s, want no_forced_rm/shell/corrected", got)
				}
			})
		}
	}
}

// TestGateRefusesAfterCeiling: the replay declares the call again; with no retry left the
// response goes on, and the tool wrapper refuses the call: it never runs, and its result
// in the prompt copy says it was refused and why.
func TestGateRefusesAfterCeiling(t *testing.T) {
	t.Parallel()
	for _, provider := range []string{"scripted", "openai"} {
		for _, kind := range []agentKind{kindFunctions, kindMRKL} {
			t.Run(provider+"/"+string(kind), func(t *testing.T) {
				t.Parallel()
				var seen outcomes
				r := newRig(t, &streamrules.Config{OnOutcome: seen.hook}, gateRule())
				m := newGateModel(t, provider, declare(kind, "rm -rf /srv/data"), declare(kind, `bash -c 'rm -r -f /srv/data'`), finalReply(kind, "I could not."))
				shell := &echoTool{name: "shell"}
				exec, _ := r.executor(kind, m.llm, shell)
				out, steps, err := r.run(context.Background(), exec, "ceiling-"+provider+string(kind), "clean up")
				if err != nil {
					t.Fatal(err)
				}
				if out != "I could not." {
					t.Errorf("output %q", out)
				}
				if in := shell.inputs(); len(in) != 0 {
					t.Errorf("the tool ran %q", in)
				}
				if len(steps) != 1 || steps[0].Observation != "" {
					t.Errorf("steps %+v: the refused call's clean output is empty", steps)
				}
				prompts := m.prompts()
				if len(prompts) != 3 {
					t.Fatalf("%d model calls, want 3", len(prompts))
				}
				refusal := `<system-reminder rule="no_forced_rm">` + streamrulestest.RefusalLead + noRMText + "</system-reminder>"
				if !strings.Contains(prompts[2], refusal) {
					t.Errorf("the prompt after the refusal lacks %q:\n%s", refusal, prompts[2])
				}
				assertClean(t, r.rec.all())
				if strings.Contains(r.rec.all(), "tool start") {
					t.Errorf("a refused call sent a tool event:\n%s", r.rec.all())
				}
				if got := strings.Join(seen.list(), ","); got != "no_forced_rm/shell/refused" {
					t.Errorf("firings %s, want one, refused", got)
				}
			})
		}
	}
}

// TestGateWithoutReplays: with replays off, the first matching call is refused at the
// tool and counted as a refusal of its own; shadow lets it run and counts a would-fire.
func TestGateWithoutReplays(t *testing.T) {
	t.Parallel()
	for _, shadow := range []bool{false, true} {
		var seen outcomes
		r := newRig(t, &streamrules.Config{OnOutcome: seen.hook, MaxRetriesPerMove: -1, Shadow: shadow}, gateRule())
		m := scripted.New(declare(kindFunctions, "rm -rf x"), finalReply(kindFunctions, "ok"))
		shell := &echoTool{name: "shell"}
		exec, _ := r.executor(kindFunctions, m, shell)
		if _, _, err := r.run(context.Background(), exec, "noretry", "go"); err != nil {
			t.Fatal(err)
		}
		want, ran := "no_forced_rm/shell/refused", 0
		if shadow {
			want, ran = "no_forced_rm/shell/shadow", 1
		}
		if got := strings.Join(seen.list(), ","); got != want || len(shell.inputs()) != ran {
			t.Errorf("shadow=%v: firings %s (want %s), tool ran %d times (want %d)", shadow, got, want, len(shell.inputs()), ran)
		}
	}
}

// TestGateAndTextMissOneReplay: a response that misses a text rule and declares a gated
// call is replayed once, with both blocks in one interrupt.
func TestGateAndTextMissOneReplay(t *testing.T) {
	t.Parallel()
	r := newRig(t, nil, gateRule(), textRule("no_sorry", `(?i)sorry`, "Do not apologise."))
	m := scripted.New(
		scripted.Reply{Text: "Sorry, cleaning.", ToolCalls: []llms.ToolCall{toolCall("shell", `{"__arg1":"rm -rf /"}`)}},
		finalReply(kindFunctions, "Done."))
	shell := &echoTool{name: "shell"}
	exec, _ := r.executor(kindFunctions, m, shell)
	if _, _, err := r.run(context.Background(), exec, "both", "go"); err != nil {
		t.Fatal(err)
	}
	calls := m.Calls()
	if len(calls) != 2 {
		t.Fatalf("%d model calls, want 2 (one replay)", len(calls))
	}
	last := calls[1].Messages[len(calls[1].Messages)-1]
	text := last.Parts[0].(llms.TextContent).Text
	if strings.Count(text, "<system-interrupt") != 2 || !strings.Contains(text, `rule="no_sorry"`) || !strings.Contains(text, `rule="no_forced_rm"`) {
		t.Errorf("interrupt %q: want both blocks", text)
	}
	if len(shell.inputs()) != 0 {
		t.Errorf("the tool ran %q", shell.inputs())
	}
}
