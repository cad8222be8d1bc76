package tracing_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/llms"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/cputime"
	"github.com/streamrules/streamrules/internal/scripted"
	"github.com/streamrules/streamrules/middleware"
	"github.com/streamrules/streamrules/tracing"
)

// BenchmarkMoveTraced plays one whole move (three tool calls, a streamed answer, 20 rules
// of which one reminds) through Guard.Run and a stock executor: "off" without a tracer,
// "on" with the SDK, every span sampled, into an in-memory recorder (a move span, four
// chat spans, three tool spans, one event). Read the difference on-off per move from
// the same run.
func BenchmarkMoveTraced(b *testing.B) {
	var rules []streamrules.Rule
	for i := range 20 {
		if i%2 == 0 {
			rules = append(rules, streamrules.Rule{Name: fmt.Sprintf("soft_%02d", i), Scope: "tool:shell", Condition: fmt.Sprintf(`\bdir%d\b`, i), Text: "mind it"})
		} else {
			rules = append(rules, streamrules.Rule{Name: fmt.Sprintf("text_%02d", i), Scope: "text", Condition: fmt.Sprintf(`banned_%d`, i), Text: "never"})
		}
	}
	model := &scripted.Bench{Calls: 3, Answer: strings.Repeat("All three listings are done. ", 20), Chunk: 16}
	run := func(b *testing.B, tracer middleware.Tracer) {
		eng := quietEngine(b, rules...) // tracing_test.go
		g, err := middleware.New(eng, &middleware.Config{Tracer: tracer})
		if err != nil {
			b.Fatal(err)
		}
		exec := g.Executor(agents.NewOpenAIFunctionsAgent(g.Model(model), g.Tools(shellTool{})))
		ctx := context.Background()
		b.ReportAllocs()
		b.ResetTimer()
		start := cputime.Process()
		for range b.N {
			if _, err := g.Run(ctx, exec, "bench-chat", "list three dirs"); err != nil {
				b.Fatal(err)
			}
		}
		cputime.Report(b, start)
	}
	b.Run("off", func(b *testing.B) { run(b, nil) })
	b.Run("on", func(b *testing.B) {
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tracetest.NewSpanRecorder()))
		run(b, tracing.New(tp, nil))
	})
	// The same spans, ended into a processor that keeps none.
	b.Run("on_not_kept", func(b *testing.B) {
		run(b, tracing.New(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(dropProcessor{})), nil))
	})
}

// BenchmarkSpansPerMove isolates what tracing adds to a move. Each sub-benchmark plays
// the engine's side of a move (begin, three tool calls of which one reminds, an answer
// checked, end: benchMove.play). "untraced" does only that; "traced" also makes, through
// the Tracer, the spans the guard makes for it (a move span, four chat spans, three tool
// spans, one event) with the SDK into an in-memory recorder. "sdk_floor" makes the same
// spans, with the same names, attributes and event (TestFloorMatchesTraced checks the
// trees are equal), at the same points of the move and under the same contexts, straight
// on the SDK from values made once before the loop: the least any instrumentation of
// this move can cost with this SDK. traced minus untraced is the
// cost of tracing per move; traced minus sdk_floor is this package's share of it.
// "sdk_bare" is the same eight spans and one event without a single attribute, for
// scale; "traced_not_kept" ends the traced spans into a processor that keeps none (the
// recorder's share is the heap it grows: every span of the run stays in memory);
// "traced_unsampled" samples every span out.
func BenchmarkSpansPerMove(b *testing.B) {
	bm := newBenchMove(b)
	ctx := context.Background()
	measure := func(b *testing.B, play func()) {
		b.ReportAllocs()
		start := cputime.Process()
		for range b.N {
			play()
		}
		cputime.Report(b, start)
	}
	traced := func(proc sdktrace.SpanProcessor) func(b *testing.B) {
		return func(b *testing.B) {
			tr := tracing.New(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(proc)), &tracing.Options{Model: "gpt-test"})
			measure(b, func() { bm.play(ctx, tr, nil) })
		}
	}
	b.Run("untraced", func(b *testing.B) { measure(b, func() { bm.play(ctx, nil, nil) }) })
	b.Run("traced", traced(tracetest.NewSpanRecorder()))
	b.Run("sdk_floor", func(b *testing.B) {
		f := newFloor(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tracetest.NewSpanRecorder())))
		measure(b, func() { bm.play(ctx, nil, f) })
	})
	b.Run("sdk_bare", func(b *testing.B) {
		tr := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tracetest.NewSpanRecorder())).Tracer("bare")
		measure(b, func() {
			mctx, ms := tr.Start(ctx, "move")
			for range 7 {
				_, s := tr.Start(mctx, "child")
				s.End()
			}
			ms.AddEvent("event")
			ms.End()
			bm.play(ctx, nil, nil)
		})
	})
	b.Run("traced_not_kept", traced(dropProcessor{}))
	// Tracing on, every span sampled out (sdktrace.NeverSample): the spans are not
	// recorded, so the ends skip their attributes and events.
	b.Run("traced_unsampled", func(b *testing.B) {
		tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample()), sdktrace.WithSpanProcessor(tracetest.NewSpanRecorder()))
		tr := tracing.New(tp, &tracing.Options{Model: "gpt-test"})
		measure(b, func() { bm.play(ctx, tr, nil) })
	})
}

// benchMove is the engine's side of the move BenchmarkSpansPerMove traces.
type benchMove struct {
	eng    *streamrules.Engine
	model  llms.Model
	resp   *llms.ContentResponse
	inputs []string
	ids    []string
}

func newBenchMove(tb testing.TB) *benchMove {
	return &benchMove{
		eng: quietEngine(tb,
			streamrules.Rule{Name: "careful_rm", Scope: "tool:shell", Condition: `rm -rf`, Text: "Mind what you delete.", Severity: "high"},
			streamrules.Rule{Name: "no_secret", Scope: "text", Condition: `SECRET`, Text: "Never show the secret."}),
		model: &scripted.Bench{},
		resp: &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: "All done.", StopReason: "stop",
			GenerationInfo: map[string]any{"PromptTokens": 120, "CompletionTokens": 9}}}},
		inputs: []string{`{"__arg1":"ls"}`, `{"__arg1":"rm -rf /tmp/x"}`, `{"__arg1":"df"}`},
		ids:    []string{"call_0", "call_1", "call_2"},
	}
}

// play runs one move of chat "bench-chat": four model calls (held, streamed, judged), a
// tool call after each of the first three. With t, the Tracer makes its spans; with f,
// the floor makes the same spans at the same points, straight on the SDK; with neither,
// no span.
func (bm *benchMove) play(ctx context.Context, t middleware.Tracer, f *floor) {
	var ms middleware.MoveSpan
	var fm trace.Span
	switch {
	case t != nil:
		ctx, ms = t.StartMove(ctx, "bench-chat")
	case f != nil:
		ctx, fm = f.tr.Start(ctx, tracing.MoveSpanName, f.moveStart...)
	}
	ctx, m := bm.eng.BeginMove(ctx, "bench-chat")
	for i := range 4 {
		var cs middleware.ModelSpan
		var fc trace.Span
		switch {
		case t != nil:
			_, cs = t.StartModelCall(ctx, middleware.ModelCall{Model: bm.model, Held: true, Streamed: true, Judged: true})
		case f != nil:
			_, fc = f.tr.Start(ctx, "chat gpt-test", f.chatStart...)
		}
		if i == 3 {
			m.CheckAnswer(ctx, "All done.")
		}
		if cs != nil {
			cs.End(middleware.ModelResult{Response: bm.resp})
		}
		if fc != nil {
			fc.SetAttributes(f.chatEnd...)
			fc.End()
		}
		if i < 3 {
			var ts middleware.ToolSpan
			var ft trace.Span
			tctx := ctx
			switch {
			case t != nil:
				tctx, ts = t.StartToolCall(ctx, middleware.ToolCall{Name: "shell", Input: bm.inputs[i], ID: bm.ids[i]})
			case f != nil:
				tctx, ft = f.tr.Start(ctx, "execute_tool shell", f.toolStart[i]...)
			}
			rem := m.ToolReminders(tctx, "shell", bm.inputs[i])
			if ts != nil {
				ts.End(middleware.ToolResult{Output: "ok", Reminders: rem})
			}
			if ft != nil {
				if len(rem) > 0 {
					ft.SetAttributes(f.toolEndR...)
				} else {
					ft.SetAttributes(f.toolEnd...)
				}
				ft.End()
			}
		}
	}
	err := m.End(ctx, nil)
	if ms != nil {
		ms.End(m, err)
	}
	if fm != nil {
		fm.SetAttributes(f.moveEnd...)
		fm.AddEvent(tracing.EventName, f.event...)
		fm.End()
	}
}

// floor is what benchMove.play needs to make the traced move's spans straight on the
// SDK: every option and attribute made once, each span started with its start
// attributes (the ones a sampler may read, as the GenAI conventions ask) and given its
// end attributes in one SetAttributes.
type floor struct {
	tr                trace.Tracer
	moveStart         []trace.SpanStartOption
	moveEnd           []attribute.KeyValue
	event             []trace.EventOption
	chatStart         []trace.SpanStartOption
	chatEnd           []attribute.KeyValue
	toolStart         [3][]trace.SpanStartOption
	toolEnd, toolEndR []attribute.KeyValue
}

func newFloor(tp trace.TracerProvider) *floor {
	internal, client := trace.WithSpanKind(trace.SpanKindInternal), trace.WithSpanKind(trace.SpanKindClient)
	f := &floor{
		tr:        tp.Tracer(tracing.ScopeName),
		moveStart: []trace.SpanStartOption{internal, trace.WithAttributes(attribute.String("gen_ai.conversation.id", "bench-chat"))},
		moveEnd: []attribute.KeyValue{attribute.Int64("streamrules.move.number", 1), attribute.StringSlice("streamrules.environments", nil),
			attribute.String("streamrules.move.outcome", "answered"), attribute.Int("streamrules.firings", 1)},
		event: []trace.EventOption{trace.WithTimestamp(time.Now()), trace.WithAttributes(
			attribute.String("gen_ai.guardrail.policy.rule.id", "careful_rm"), attribute.String("streamrules.mode", "remind"),
			attribute.String("streamrules.outcome", "complied"), attribute.String("streamrules.tool", "shell"),
			attribute.String("streamrules.severity", "high"))},
		chatStart: []trace.SpanStartOption{client, trace.WithAttributes(attribute.String("gen_ai.operation.name", "chat"),
			attribute.String("gen_ai.request.model", "gpt-test"), attribute.String("streamrules.speech", "held"),
			attribute.Bool("streamrules.judged", true))},
		chatEnd: []attribute.KeyValue{attribute.Int64("gen_ai.usage.input_tokens", 120), attribute.Int64("gen_ai.usage.output_tokens", 9),
			attribute.StringSlice("gen_ai.response.finish_reasons", []string{"stop"})},
		toolEnd:  []attribute.KeyValue{attribute.Int("streamrules.reminders", 0)},
		toolEndR: []attribute.KeyValue{attribute.Int("streamrules.reminders", 1), attribute.StringSlice("streamrules.reminder.rules", []string{"careful_rm"})},
	}
	for i := range f.toolStart {
		f.toolStart[i] = []trace.SpanStartOption{internal, trace.WithAttributes(attribute.String("gen_ai.operation.name", "execute_tool"),
			attribute.String("gen_ai.tool.name", "shell"), attribute.String("gen_ai.tool.call.id", fmt.Sprintf("call_%d", i)))}
	}
	return f
}

// TestFloorMatchesTraced: sdk_floor of BenchmarkSpansPerMove makes exactly the spans the
// traced move makes, so the two cost the same work of the SDK.
func TestFloorMatchesTraced(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	record := func(make func(tp trace.TracerProvider)) string {
		rec := tracetest.NewSpanRecorder()
		make(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))
		return tree(rec.Ended())
	}
	traced := record(func(tp trace.TracerProvider) {
		newBenchMove(t).play(ctx, tracing.New(tp, &tracing.Options{Model: "gpt-test"}), nil)
	})
	floor := record(func(tp trace.TracerProvider) { newBenchMove(t).play(ctx, nil, newFloor(tp)) })
	if traced != floor {
		t.Errorf("the floor's spans differ from the traced move's:\n%s\nfloor:\n%s", traced, floor)
	}
}

// dropProcessor ends spans into nothing.
type dropProcessor struct{}

func (dropProcessor) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (dropProcessor) OnEnd(sdktrace.ReadOnlySpan)                     {}
func (dropProcessor) Shutdown(context.Context) error                  { return nil }
func (dropProcessor) ForceFlush(context.Context) error                { return nil }
