package tracing_test

import (
	"context"
	"strings"
	"testing"

	"github.com/streamrules/streamrules/internal/streamrulestest"

	"github.com/tmc/langchaingo/llms"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/scripted"
	"github.com/streamrules/streamrules/tracing"
)

// TestGateSpans: a gate (a tool rule in mode interrupt) discards the response that
// declared its call, and after the ceiling refuses the call again declared: the first
// chat span is discarded naming the gate, the refused call's execute_tool span says
// refused and carries no tool output, and the move span has one guardrail event per
// firing with outcomes corrected and refused.
func TestGateSpans(t *testing.T) {
	t.Parallel()
	gate := streamrules.Rule{Name: "no_forced_rm", Scope: "tool:shell", Mode: streamrules.ModeInterrupt,
		Condition: `rm -rf`, Text: "Never remove files by force.", Severity: "high"}
	rm := scripted.Reply{ToolCalls: []llms.ToolCall{{Type: "function", FunctionCall: &llms.FunctionCall{
		Name: "shell", Arguments: `{"__arg1":"rm -rf /srv"}`}}}}
	// MaxRetriesPerMove is 2 in the rig: two discards, then the third declaration is refused.
	model := scripted.New(rm, rm, rm, scripted.Reply{Text: "I did not delete it.", Chunk: 6})
	r := newRig(t, &tracing.Options{Model: "m"}, []streamrules.Rule{gate}, model)
	out, err := r.guard.Run(context.Background(), r.exec, "chat-gate", "wipe /srv")
	if err != nil {
		t.Fatal(err)
	}
	if out != "I did not delete it." {
		t.Fatalf("answer %q", out)
	}
	// The refused call never ran: the model's last request carries the refusal as its
	// result, and nothing the tool would have said.
	calls := r.model.Calls()
	if len(calls) != 4 {
		t.Fatalf("%d model calls, want 4", len(calls))
	}
	var results []string
	for _, m := range calls[3].Messages {
		for _, p := range m.Parts {
			if tr, ok := p.(llms.ToolCallResponse); ok {
				results = append(results, tr.Content)
			}
		}
	}
	if len(results) != 1 || strings.Contains(results[0], "tool-output-marker") || !strings.Contains(results[0], streamrulestest.RefusalLead) {
		t.Errorf("the last request's tool results %q: want the refusal alone", results)
	}
	spans := r.rec.Ended()
	var chats, discarded, refused, ran int
	for _, s := range spans {
		switch {
		case strings.HasPrefix(s.Name(), "chat"):
			chats++
			if attr(s.Attributes(), "streamrules.discarded") == "true" {
				discarded++
				if got := attr(s.Attributes(), "streamrules.rules"); got != `["no_forced_rm"]` {
					t.Errorf("a discarded chat span names %s", got)
				}
			}
		case s.Name() == "execute_tool shell":
			if attr(s.Attributes(), "streamrules.refused") == "true" {
				refused++
			} else {
				ran++
			}
		}
	}
	if chats != 4 || discarded != 2 || refused != 1 || ran != 0 {
		t.Errorf("%d chat spans (%d discarded), %d refused and %d run tool spans; want 4 (2), 1 and 0:\n%s",
			chats, discarded, refused, ran, tree(spans))
	}
	move := find(t, spans, "streamrules.move")
	var outcomes []string
	for _, e := range move.Events() {
		if e.Name == "gen_ai.guardrail.result" {
			outcomes = append(outcomes, attr(e.Attributes, "gen_ai.guardrail.policy.rule.id")+"/"+attr(e.Attributes, "streamrules.outcome"))
		}
	}
	// The first discard's replay declared the call again (missed_again); the second
	// discard's replay did too, after the ceiling: that firing's outcome is refused, and
	// the refusal records no second firing.
	if got := strings.Join(outcomes, ","); got != "no_forced_rm/missed_again,no_forced_rm/refused" {
		t.Errorf("guardrail events %s", got)
	}
}
