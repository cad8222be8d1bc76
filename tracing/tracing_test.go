package tracing_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/tmc/langchaingo/agents"
	lcb "github.com/tmc/langchaingo/callbacks"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/enginetest"
	"github.com/streamrules/streamrules/internal/openaitest"
	"github.com/streamrules/streamrules/internal/scripted"
	"github.com/streamrules/streamrules/middleware"
	"github.com/streamrules/streamrules/seeds"
	"github.com/streamrules/streamrules/tracing"
)

// shellTool is a real tool: it answers with a fixed function of its input.
type shellTool struct{}

func (shellTool) Name() string        { return "shell" }
func (shellTool) Description() string { return "runs a shell command" }
func (shellTool) Call(_ context.Context, input string) (string, error) {
	return "ran " + input + " (tool-output-marker)", nil
}

// spanSeer is the client's handler: it notes the span each event came under.
type spanSeer struct {
	lcb.SimpleHandler
	mu    sync.Mutex
	chain []trace.SpanContext
	tool  []trace.SpanContext
}

func (s *spanSeer) HandleChainStart(ctx context.Context, _ map[string]any) {
	s.mu.Lock()
	s.chain = append(s.chain, trace.SpanContextFromContext(ctx))
	s.mu.Unlock()
}

func (s *spanSeer) HandleToolStart(ctx context.Context, _ string) {
	s.mu.Lock()
	s.tool = append(s.tool, trace.SpanContextFromContext(ctx))
	s.mu.Unlock()
}

// The rules of the full move: a reminder, an early cut, a discard at the end, a fix, a
// would-fire in shadow.
func fullRules() []streamrules.Rule {
	return []streamrules.Rule{
		{Name: "careful_rm", Scope: "tool:shell", Condition: `rm -rf`, Text: "Mind what you delete.", Severity: "high"},
		{Name: "no_sorry", Scope: "text", Condition: `(?i)\bsorry\b`, Text: "Do not apologise.", Early: true, Severity: "low"},
		{Name: "no_secret", Scope: "text", Condition: `SECRET`, Text: "Never show the secret.", Severity: "high"},
		{Name: "signed", Scope: "text", Condition: `— bot\s*$`, Negate: true, Text: "Sign your answers.",
			Fix: &streamrules.Fix{AppendIfMissing: "\n— bot"}},
		{Name: "no_maybe", Scope: "text", Condition: `(?i)\bmaybe\b`, Text: "Be definite.", Shadow: true},
	}
}

// fullScript: a tool call; an apology, cut early; a secret, discarded at the end; an
// unsigned, hesitant answer, repaired by the fix and noted by the shadow rule.
func fullScript() *scripted.Model {
	return scripted.New(
		scripted.Reply{ToolCalls: []llms.ToolCall{{Type: "function", FunctionCall: &llms.FunctionCall{
			Name: "shell", Arguments: `{"__arg1":"rm -rf /tmp/cache"}`}}}},
		scripted.Reply{Text: "Sorry, I deleted the wrong folder. " + strings.Repeat("It had many files in it. ", 8), Chunk: 6},
		scripted.Reply{Text: "The SECRET-ANSWER-MARKER is here.", Chunk: 6},
		scripted.Reply{Text: "Done, maybe: the cache is gone.", Chunk: 6},
	)
}

type rig struct {
	rec   *tracetest.SpanRecorder
	tp    *sdktrace.TracerProvider
	guard *middleware.Guard
	seer  *spanSeer
	exec  *agents.Executor
	model *scripted.Model
}

// quietEngine is an engine on rules that logs nothing, closed when the test ends.
func quietEngine(t testing.TB, rules ...streamrules.Rule) *streamrules.Engine {
	t.Helper()
	return enginetest.WithRules(t, nil, rules...)
}

func newRig(t testing.TB, opts *tracing.Options, rules []streamrules.Rule, model llms.Model) *rig {
	t.Helper()
	eng := enginetest.WithRules(t, &streamrules.Config{MaxRetriesPerMove: 2}, rules...)
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	seer := &spanSeer{}
	guard, err := middleware.New(eng, &middleware.Config{Callbacks: seer, Tracer: tracing.New(tp, opts)})
	if err != nil {
		t.Fatal(err)
	}
	a := agents.NewOpenAIFunctionsAgent(guard.Model(model), guard.Tools(shellTool{}))
	r := &rig{rec: rec, tp: tp, guard: guard, seer: seer, exec: guard.Executor(a, agents.WithMaxIterations(5))}
	r.model, _ = model.(*scripted.Model)
	return r
}

// tree renders the recorded spans as an indented tree, children in start order, each
// span with its attributes and its events' attributes, sorted by key.
func tree(spans []sdktrace.ReadOnlySpan) string {
	children := map[trace.SpanID][]sdktrace.ReadOnlySpan{}
	ids := map[trace.SpanID]bool{}
	for _, s := range spans {
		ids[s.SpanContext().SpanID()] = true
	}
	var roots []sdktrace.ReadOnlySpan
	for _, s := range spans {
		if p := s.Parent(); p.IsValid() && ids[p.SpanID()] {
			children[p.SpanID()] = append(children[p.SpanID()], s)
		} else {
			roots = append(roots, s)
		}
	}
	var b strings.Builder
	var walk func(s sdktrace.ReadOnlySpan, depth int)
	walk = func(s sdktrace.ReadOnlySpan, depth int) {
		in := strings.Repeat("  ", depth)
		fmt.Fprintf(&b, "%s%s [%s]%s\n", in, s.Name(), s.SpanKind(), attrs(s.Attributes()))
		for _, e := range s.Events() {
			fmt.Fprintf(&b, "%s  * %s%s\n", in, e.Name, attrs(e.Attributes))
		}
		kids := children[s.SpanContext().SpanID()]
		slices.SortStableFunc(kids, func(a, b sdktrace.ReadOnlySpan) int { return a.StartTime().Compare(b.StartTime()) })
		for _, k := range kids {
			walk(k, depth+1)
		}
	}
	for _, r := range roots {
		walk(r, 0)
	}
	return b.String()
}

func attrs(kvs []attribute.KeyValue) string {
	kvs = slices.Clone(kvs)
	slices.SortFunc(kvs, func(a, b attribute.KeyValue) int { return strings.Compare(string(a.Key), string(b.Key)) })
	var b strings.Builder
	for _, kv := range kvs {
		fmt.Fprintf(&b, " %s=%s", kv.Key, kv.Value.String())
	}
	return b.String()
}

const wantFullTree = `host [internal]
  streamrules.move [internal] gen_ai.conversation.id=chat-7 streamrules.environments=[] streamrules.firings=6 streamrules.move.number=1 streamrules.move.outcome=answered
    * gen_ai.guardrail.result gen_ai.guardrail.policy.rule.id=careful_rm streamrules.mode=remind streamrules.outcome=complied streamrules.severity=high streamrules.tool=shell
    * gen_ai.guardrail.result gen_ai.guardrail.policy.rule.id=no_sorry streamrules.cut_at_bytes=66 streamrules.early=true streamrules.mode=interrupt streamrules.outcome=corrected streamrules.retry=true streamrules.severity=low
    * gen_ai.guardrail.result gen_ai.guardrail.policy.rule.id=signed streamrules.mode=interrupt streamrules.outcome=missed_again streamrules.retry=true
    * gen_ai.guardrail.result gen_ai.guardrail.policy.rule.id=no_secret streamrules.mode=interrupt streamrules.outcome=corrected streamrules.retry=true streamrules.severity=high
    * gen_ai.guardrail.result gen_ai.guardrail.policy.rule.id=signed streamrules.fix.diff_lines=1 streamrules.mode=interrupt streamrules.outcome=fixed
    * gen_ai.guardrail.result gen_ai.guardrail.policy.rule.id=no_maybe streamrules.mode=interrupt streamrules.outcome=shadow streamrules.shadow=true
    chat gpt-test [client] gen_ai.operation.name=chat gen_ai.request.model=gpt-test gen_ai.response.finish_reasons=["tool_calls"] streamrules.judged=true streamrules.speech=held
    execute_tool shell [internal] gen_ai.operation.name=execute_tool gen_ai.tool.call.id=call_1 gen_ai.tool.name=shell streamrules.reminder.rules=["careful_rm"] streamrules.reminders=1
    chat gpt-test [client] gen_ai.operation.name=chat gen_ai.request.model=gpt-test streamrules.cut_at_bytes=66 streamrules.cut_early=true streamrules.discarded=true streamrules.judged=true streamrules.rules=["no_sorry"] streamrules.speech=held
    chat gpt-test [client] gen_ai.operation.name=chat gen_ai.request.model=gpt-test gen_ai.response.finish_reasons=["stop"] streamrules.discarded=true streamrules.judged=true streamrules.replay=true streamrules.rules=["no_secret","signed"] streamrules.speech=held
    chat gpt-test [client] gen_ai.operation.name=chat gen_ai.request.model=gpt-test gen_ai.response.finish_reasons=["stop"] streamrules.fixed=true streamrules.judged=true streamrules.released_early_bytes=24 streamrules.replay=true streamrules.rules=["signed"] streamrules.speech=held
`

// TestFullMove: one move through a stock executor with a reminder, an early cut, a
// discarded-and-replayed answer, a fix and a would-fire gives exactly the expected tree
// under the host's span, one event per firing with its final outcome, and no content.
func TestFullMove(t *testing.T) {
	t.Parallel()
	r := newRig(t, &tracing.Options{Model: "gpt-test"}, fullRules(), fullScript())
	ctx, host := r.tp.Tracer("host").Start(context.Background(), "host")
	out, err := r.guard.Run(ctx, r.exec, "chat-7", "Clear the cache (USER-INPUT-MARKER)")
	host.End()
	if err != nil {
		t.Fatal(err)
	}
	if out != "Done, maybe: the cache is gone.\n— bot" {
		t.Fatalf("answer %q", out)
	}
	spans := r.rec.Ended()
	if got := tree(spans); got != wantFullTree {
		t.Errorf("span tree:\n%s\nwant:\n%s", got, wantFullTree)
	}
	for _, marker := range []string{"USER-INPUT-MARKER", "tool-output-marker", "SECRET-ANSWER-MARKER", "rm -rf", "cache is gone", "Mind what"} {
		if dump := dumpAll(spans); strings.Contains(dump, marker) {
			t.Errorf("content %q recorded without opting in", marker)
		}
	}
	// The executor's callbacks run under the move span, the tool's under its own span.
	move := find(t, spans, "streamrules.move")
	tool := find(t, spans, "execute_tool shell")
	r.seer.mu.Lock()
	defer r.seer.mu.Unlock()
	if len(r.seer.chain) == 0 || r.seer.chain[0].SpanID() != move.SpanContext().SpanID() {
		t.Errorf("the executor's chain start ran under %v, want the move span %v", r.seer.chain, move.SpanContext().SpanID())
	}
	if len(r.seer.tool) != 1 || r.seer.tool[0].SpanID() != tool.SpanContext().SpanID() {
		t.Errorf("the tool's start event ran under %v, want the tool span", r.seer.tool)
	}
}

// TestContentOptIn: with RecordContent, the prompts, answers, arguments and results are
// on the spans; with RecordRuleText, each event carries its rule's text.
func TestContentOptIn(t *testing.T) {
	t.Parallel()
	r := newRig(t, &tracing.Options{RecordContent: true, RecordRuleText: true}, fullRules(), fullScript())
	if _, err := r.guard.Run(context.Background(), r.exec, "chat-8", "Clear the cache (USER-INPUT-MARKER)"); err != nil {
		t.Fatal(err)
	}
	spans := r.rec.Ended()
	dump := dumpAll(spans)
	for _, marker := range []string{"USER-INPUT-MARKER", "tool-output-marker", "SECRET-ANSWER-MARKER", "rm -rf", "cache is gone", "Mind what you delete."} {
		if !strings.Contains(dump, marker) {
			t.Errorf("content %q not recorded with RecordContent", marker)
		}
	}
	chat := find(t, spans, "chat")
	if v := attr(chat.Attributes(), "gen_ai.input.messages"); !strings.HasPrefix(v, `[{"role":"system"`) {
		t.Errorf("gen_ai.input.messages %q", v)
	}
}

// TestOpenAIClient: the real openai client names its provider and its usage.
func TestOpenAIClient(t *testing.T) {
	t.Parallel()
	srv := openaitest.New(t, scripted.Reply{Text: "All good."})
	r := newRig(t, nil, fullRules()[:3], srv.LLM(t))
	if _, err := r.guard.Run(context.Background(), r.exec, "chat-9", "status?"); err != nil {
		t.Fatal(err)
	}
	chat := find(t, r.rec.Ended(), "chat")
	got := attrs(chat.Attributes())
	for _, want := range []string{"gen_ai.provider.name=openai", "gen_ai.usage.input_tokens=", "gen_ai.usage.output_tokens=", "gen_ai.response.finish_reasons=[\"stop\"]"} {
		if !strings.Contains(got, want) {
			t.Errorf("chat span %s lacks %s", got, want)
		}
	}
}

// TestFailedMove: a provider error marks the chat span and the move failed.
func TestFailedMove(t *testing.T) {
	t.Parallel()
	r := newRig(t, nil, fullRules(), scripted.New(scripted.Reply{Err: context.DeadlineExceeded}))
	if _, err := r.guard.Run(context.Background(), r.exec, "chat-10", "hi"); err == nil {
		t.Fatal("no error")
	}
	spans := r.rec.Ended()
	move, chat := find(t, spans, "streamrules.move"), find(t, spans, "chat")
	for _, s := range []sdktrace.ReadOnlySpan{move, chat} {
		if s.Status().Code.String() != "Error" || attr(s.Attributes(), "error.type") != "timeout" {
			t.Errorf("%s: status %v, attributes %s", s.Name(), s.Status(), attrs(s.Attributes()))
		}
	}
	if attr(move.Attributes(), "streamrules.move.outcome") != "failed" {
		t.Errorf("move outcome %q", attr(move.Attributes(), "streamrules.move.outcome"))
	}
}

// TestNoTracer: without a tracer no span is made, even under a host's span.
func TestNoTracer(t *testing.T) {
	t.Parallel()
	eng := quietEngine(t, fullRules()...)
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	guard, err := middleware.New(eng, nil)
	if err != nil {
		t.Fatal(err)
	}
	a := agents.NewOpenAIFunctionsAgent(guard.Model(scripted.New(scripted.Reply{Text: "ok — bot"})), guard.Tools(shellTool{}))
	ctx, host := tp.Tracer("host").Start(context.Background(), "host")
	if _, err := guard.Run(ctx, guard.Executor(a), "c", "hi"); err != nil {
		t.Fatal(err)
	}
	host.End()
	if n := len(rec.Ended()); n != 1 {
		t.Errorf("%d spans, want the host's only:\n%s", n, tree(rec.Ended()))
	}
}

func find(t *testing.T, spans []sdktrace.ReadOnlySpan, prefix string) sdktrace.ReadOnlySpan {
	t.Helper()
	for _, s := range spans {
		if strings.HasPrefix(s.Name(), prefix) {
			return s
		}
	}
	t.Fatalf("no span %q in:\n%s", prefix, tree(spans))
	return nil
}

func attr(kvs []attribute.KeyValue, key string) string {
	for _, kv := range kvs {
		if string(kv.Key) == key {
			return kv.Value.String()
		}
	}
	return ""
}

func dumpAll(spans []sdktrace.ReadOnlySpan) string {
	var b strings.Builder
	for _, s := range spans {
		b.WriteString(s.Name() + attrs(s.Attributes()) + s.Status().Description)
		for _, e := range s.Events() {
			b.WriteString(e.Name + attrs(e.Attributes))
		}
	}
	return b.String()
}

var _ tools.Tool = shellTool{}

// TestBeginEndMove: a host running the executor itself gets the same move span through
// Guard.BeginMove and Guard.EndMove.
func TestBeginEndMove(t *testing.T) {
	t.Parallel()
	r := newRig(t, &tracing.Options{Model: "m"}, fullRules()[2:3], scripted.New(
		scripted.Reply{Text: "The SECRET is out."}, scripted.Reply{Text: "Nothing to see."}))
	ctx, move := r.guard.BeginMove(context.Background(), "chat-11", seeds.EnvTelegram)
	_, err := chains.Run(ctx, r.exec, "tell me")
	if err = r.guard.EndMove(ctx, move, err); err != nil {
		t.Fatal(err)
	}
	want := `streamrules.move [internal] gen_ai.conversation.id=chat-11 streamrules.environments=["telegram"] streamrules.firings=1 streamrules.move.number=1 streamrules.move.outcome=answered
  * gen_ai.guardrail.result gen_ai.guardrail.policy.rule.id=no_secret streamrules.mode=interrupt streamrules.outcome=corrected streamrules.retry=true streamrules.severity=high
  chat m [client] gen_ai.operation.name=chat gen_ai.request.model=m gen_ai.response.finish_reasons=["stop"] streamrules.discarded=true streamrules.judged=true streamrules.rules=["no_secret"] streamrules.speech=held
  chat m [client] gen_ai.operation.name=chat gen_ai.request.model=m gen_ai.response.finish_reasons=["stop"] streamrules.judged=true streamrules.replay=true streamrules.speech=whole
`
	if got := tree(r.rec.Ended()); got != want {
		t.Errorf("span tree:\n%s\nwant:\n%s", got, want)
	}
}
