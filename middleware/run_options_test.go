package middleware_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/llms"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/scripted"
	"github.com/streamrules/streamrules/middleware"
	"github.com/streamrules/streamrules/seeds"
)

// clientOpsGate stops a forced recursive rm while a client is connected, as the seeded
// destructive_shell does.
func clientOpsGate() streamrules.Rule {
	return streamrules.Rule{Name: "no_rm", Scope: "tool:shell", Mode: streamrules.ModeInterrupt, Shell: true, Field: "cmd",
		Condition: `^rm\s(?:.*\s)?(?:-r\s(?:.*\s)?-f|-f\s(?:.*\s)?-r)(?:\s|$)`, When: []string{seeds.EnvClientOps}, Text: "No forced recursive rm."}
}

// fixedTailRule is the seeded tail rule: a Telegram reply ends with ↩ #{{message_id}}, or
// the fix appends it.
func fixedTailRule() streamrules.Rule {
	return streamrules.Rule{Name: "reply_tail", Scope: "text", Condition: `↩ #\d+\s*$`, Negate: true,
		When: []string{seeds.EnvTelegram}, Text: "End with the tail.",
		Fix: &streamrules.Fix{AppendIfMissing: "\n\n↩ #{{message_id}}"}}
}

// A typo in an environment name fails the move through Run and Call, naming the name and
// the known ones, before the chain runs: the model is never called, the tool never runs,
// nothing is counted. (Before, the typo was logged once and the gate did not apply: the
// rm ran.) Config.LenientEnvironments brings back the old way, logged.
func TestRunUnknownEnvironment(t *testing.T) {
	t.Parallel()
	r := newRig(t, nil, clientOpsGate())
	rm := []llms.ToolCall{toolCall("shell", `{"cmd":"rm -rf /srv/data"}`)}
	model := scripted.New(scripted.Reply{ToolCalls: rm}, scripted.Reply{Text: "done"})
	shell := &echoTool{name: "shell"}
	exec := r.guard.Executor(agents.NewOpenAIFunctionsAgent(r.guard.Model(model), r.guard.Tools(shell)))

	_, err := r.guard.Run(context.Background(), exec, "chat-typo", "wipe it", middleware.WithEnvironments("client-ops"))
	if !errors.Is(err, streamrules.ErrUnknownEnvironment) {
		t.Fatalf("Run with client-ops: %v, want ErrUnknownEnvironment", err)
	}
	var ee *streamrules.EnvironmentError
	if !errors.As(err, &ee) || !slices.Equal(ee.Unknown, []string{"client-ops"}) || !slices.Contains(ee.Known, "client_ops") {
		t.Errorf("error %v does not carry the names: %+v", err, ee)
	}
	for _, want := range []string{`chat "chat-typo"`, `unknown environment "client-ops"`, "known: telegram, client_ops"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	_, err = r.guard.Call(context.Background(), exec, "chat-typo", map[string]any{"input": "wipe it"},
		middleware.WithEnvironments(seeds.EnvTelegram, "telegarm", "client-ops"))
	if err == nil || !strings.Contains(err.Error(), `unknown environments "telegarm", "client-ops"`) {
		t.Errorf("Call with two typos: %v", err)
	}
	if n := len(model.Calls()); n != 0 || len(shell.inputs()) != 0 {
		t.Fatalf("the chain ran: %d model calls, tool inputs %q", n, shell.inputs())
	}
	if st, err := r.store.LoadChat(context.Background(), "chat-typo"); err != nil || st.Moves != 0 {
		t.Errorf("a move was counted: %+v %v", st, err)
	}
	// The manual path: BeginMoveChecked refuses the same way and gives no move.
	ctx, move, err := r.guard.BeginMoveChecked(context.Background(), "chat-typo", "client-ops")
	if !errors.Is(err, streamrules.ErrUnknownEnvironment) || move != nil || streamrules.MoveFrom(ctx) != nil {
		t.Errorf("BeginMoveChecked: move %v, err %v", move, err)
	}

	// Lenient: the move runs with the name ignored (so the gate is out of scope), logged.
	lenient := newGuard(t, r.eng, &middleware.Config{LenientEnvironments: true})
	exec = lenient.Executor(agents.NewOpenAIFunctionsAgent(lenient.Model(model), lenient.Tools(shell)))
	if _, err := lenient.Run(context.Background(), exec, "chat-lenient", "wipe it", middleware.WithEnvironments("client-ops")); err != nil {
		t.Fatal(err)
	}
	if got := shell.inputs(); len(got) != 1 || !strings.Contains(r.logs.String(), `unknown environment ignored" env=client-ops`) {
		t.Errorf("lenient: tool inputs %q; log:\n%s", got, r.logs.String())
	}
}

// With the right name the same move is gated: the response declaring rm is discarded
// and the tool never runs.
func TestRunKnownEnvironmentGates(t *testing.T) {
	t.Parallel()
	r := newRig(t, nil, clientOpsGate())
	model := scripted.New(scripted.Reply{ToolCalls: []llms.ToolCall{toolCall("shell", `{"cmd":"rm -rf /srv/data"}`)}}, scripted.Reply{Text: "I will not."})
	shell := &echoTool{name: "shell"}
	exec := r.guard.Executor(agents.NewOpenAIFunctionsAgent(r.guard.Model(model), r.guard.Tools(shell)))
	out, err := r.guard.Run(context.Background(), exec, "chat-ok", "wipe it", middleware.WithEnvironments(seeds.EnvClientOps))
	if err != nil || out != "I will not." || len(shell.inputs()) != 0 {
		t.Fatalf("out %q, err %v, tool inputs %q", out, err, shell.inputs())
	}
}

// WithVars gives the move its variables before the chain runs: the tail fix repairs the
// answer in place through Run, with one model call and no warning. Without them the fix
// cannot apply and the tour is replayed (a second model call), as the README snippet did.
func TestRunWithVarsTailFix(t *testing.T) {
	t.Parallel()
	for _, withVars := range []bool{true, false} {
		r := newRig(t, nil, fixedTailRule())
		model := scripted.New(scripted.Reply{Text: "12G free."}, scripted.Reply{Text: "12G free.\n\n↩ #42"})
		exec := r.guard.Executor(agents.NewOpenAIFunctionsAgent(r.guard.Model(model), nil))
		opts := []middleware.RunOption{middleware.WithEnvironments(seeds.EnvTelegram)}
		if withVars {
			opts = append(opts, middleware.WithVars(map[string]string{"message_id": "42"}))
		}
		out, err := r.guard.Run(context.Background(), exec, "chat-tail", "disk?", opts...)
		if err != nil {
			t.Fatal(err)
		}
		calls, warned := len(model.Calls()), strings.Contains(r.logs.String(), "fix not applied")
		if withVars && (out != "12G free.\n\n↩ #42" || calls != 1 || warned || strings.Join(r.rec.streamed(), "") != out) {
			t.Errorf("with vars: out %q, %d model calls, warned %v, streamed %q", out, calls, warned, r.rec.streamed())
		}
		if !withVars && (calls != 2 || !warned) {
			t.Errorf("without vars: %d model calls, warned %v (want the replay and the warning)", calls, warned)
		}
		if withVars {
			if fs := r.store.AllFirings(); len(fs) != 1 || fs[0].Outcome != streamrules.OutcomeFixed {
				t.Errorf("firings %+v, want the tail fixed", fs)
			}
		}
	}
}

// WithInput is what the context atoms read when the chain's input carries a header for
// the model; WithStreamingFunc takes the client's stream for the move.
func TestRunWithInputAndStream(t *testing.T) {
	t.Parallel()
	audio := streamrules.Rule{Name: "audio_claim", Scope: "text", Condition: `(?i)audio saved`, Text: "No such audio.",
		AppliesWhen: &streamrules.Predicate{InputContainsRegex: `(?i)\baudio\b`}}
	for _, tt := range []struct {
		input string
		calls int
	}{{"send me the audio", 2}, {"send me the text", 1}} {
		r := newRig(t, nil, audio)
		model := scripted.New(scripted.Reply{Text: "Audio saved: a.mp3"}, scripted.Reply{Text: "I cannot make audio."})
		exec := r.guard.Executor(agents.NewOpenAIFunctionsAgent(r.guard.Model(model), nil))
		var mu sync.Mutex
		var own strings.Builder
		out, err := r.guard.Run(context.Background(), exec, "chat-in", "[#7 from Dana, audio channel] "+tt.input,
			middleware.WithInput(tt.input),
			middleware.WithStreamingFunc(func(_ context.Context, chunk []byte) error {
				mu.Lock()
				defer mu.Unlock()
				own.Write(chunk)
				return nil
			}))
		if err != nil {
			t.Fatal(err)
		}
		if n := len(model.Calls()); n != tt.calls {
			t.Errorf("input %q: %d model calls, want %d (the rule reads WithInput, not the header)", tt.input, n, tt.calls)
		}
		if own.String() != out || len(r.rec.streamed()) != 0 {
			t.Errorf("input %q: own stream %q, answer %q, handler stream %q", tt.input, own.String(), out, r.rec.streamed())
		}
		if tt.calls == 2 && strings.Contains(own.String(), "Audio saved") {
			t.Errorf("input %q: the discarded claim reached the stream: %q", tt.input, own.String())
		}
	}
}

// recordings is a Recorder that keeps what it gets.
type recordings struct {
	mu    sync.Mutex
	moves []middleware.MoveRecord
}

func (r *recordings) RecordMove(_ context.Context, m middleware.MoveRecord) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.moves = append(r.moves, m)
	return nil
}

// The transcript record of a move holds what the model said first, each discarded answer
// and each call a gate stopped, the accepted answer, and the move's input, environments,
// variables and tool record; through Run and through BeginMove/EndMove alike. A failed
// move is not recorded.
func TestTranscriptRecord(t *testing.T) {
	t.Parallel()
	r := newRig(t, &streamrules.Config{MaxRetriesPerMove: 2}, clientOpsGate(), fixedTailRule(), textRule("no_shout", `!!`, "Calm.", seeds.EnvTelegram))
	rec := &recordings{}
	guard := newGuard(t, r.eng, &middleware.Config{Transcript: rec})
	model := scripted.New(
		scripted.Reply{ToolCalls: []llms.ToolCall{toolCall("shell", `{"cmd":"df -h"}`)}},
		scripted.Reply{ToolCalls: []llms.ToolCall{toolCall("shell", `{"cmd":"rm -rf /srv"}`)}}, // gated: discarded
		scripted.Reply{Text: "Disk is fine!!"},                                                 // discarded: no_shout
		scripted.Reply{Text: "Disk is fine."},                                                  // accepted, tail appended
		scripted.Reply{Text: "Second move."},                                                   // the manual path
		scripted.Reply{Err: errors.New("provider down")},                                       // a failed move
	)
	shell := &echoTool{name: "shell"}
	exec := guard.Executor(agents.NewOpenAIFunctionsAgent(guard.Model(model), guard.Tools(shell)))
	env := []string{seeds.EnvTelegram, seeds.EnvClientOps}
	out, err := guard.Run(context.Background(), exec, "chat-rec", "How is the disk?",
		middleware.WithEnvironments(env...), middleware.WithVars(map[string]string{"message_id": "9"}))
	if err != nil || out != "Disk is fine.\n\n↩ #9" {
		t.Fatalf("out %q, err %v", out, err)
	}
	ctx, move := guard.BeginMove(context.Background(), "chat-rec", seeds.EnvTelegram)
	move.SetVar("message_id", "10")
	_, err = exec.Call(ctx, map[string]any{"input": "and now?"})
	if err := guard.EndMove(ctx, move, err); err != nil {
		t.Fatal(err)
	}
	if _, err := guard.Run(context.Background(), exec, "chat-rec", "again?"); err == nil {
		t.Fatal("the provider's error did not fail the move")
	}
	if len(rec.moves) != 2 {
		t.Fatalf("%d moves recorded, want 2 (a failed move is not): %+v", len(rec.moves), rec.moves)
	}
	first := rec.moves[0]
	if first.Chat != "chat-rec" || first.Move != 1 || !slices.Equal(first.Env, env) || first.Input == nil || *first.Input != "How is the disk?" ||
		first.Vars["message_id"] != "9" {
		t.Errorf("move 1 header: %+v", first)
	}
	if first.Answer != "Disk is fine!!" || !slices.Equal(first.Discarded, []string{"Disk is fine!!"}) || first.Accepted != "Disk is fine.\n\n↩ #9" {
		t.Errorf("move 1 answers: first %q, discarded %q, accepted %q", first.Answer, first.Discarded, first.Accepted)
	}
	wantTools := []middleware.ToolRecord{
		{Name: "shell", Args: `{"cmd":"rm -rf /srv"}`, Refused: true}, // stopped: first, it never ran
		{Name: "shell", Args: `{"cmd":"df -h"}`, OK: true},
	}
	if !slices.Equal(first.Tools, wantTools) {
		t.Errorf("move 1 tools\n got %+v\nwant %+v", first.Tools, wantTools)
	}
	second := rec.moves[1]
	if second.Move != 2 || second.Answer != "Second move." || second.Accepted != "Second move.\n\n↩ #10" || second.Vars["message_id"] != "10" ||
		second.Input == nil || *second.Input != "and now?" || len(second.Tools) != 0 {
		t.Errorf("move 2 (BeginMove/EndMove): %+v", second)
	}
}
