package tracing_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/llms"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

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
}

// BenchmarkSpansPerMove isolates what tracing adds to a move: both sub-benchmarks play
// the engine's side of a move (begin, three tool calls of which one reminds, an answer
// checked, end); "traced" also makes the spans the guard makes for it through the
// Tracer (a move span, four chat spans, three tool spans, one event) with the SDK and
// an in-memory recorder. traced minus untraced is the cost of tracing per move.
func BenchmarkSpansPerMove(b *testing.B) {
	eng := quietEngine(b,
		streamrules.Rule{Name: "careful_rm", Scope: "tool:shell", Condition: `rm -rf`, Text: "Mind what you delete.", Severity: "high"},
		streamrules.Rule{Name: "no_secret", Scope: "text", Condition: `SECRET`, Text: "Never show the secret."})
	resp := &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: "All done.", StopReason: "stop",
		GenerationInfo: map[string]any{"PromptTokens": 120, "CompletionTokens": 9}}}}
	inputs := []string{`{"__arg1":"ls"}`, `{"__arg1":"rm -rf /tmp/x"}`, `{"__arg1":"df"}`}
	ctx := context.Background()
	move := func(t middleware.Tracer) {
		mctx := ctx
		var ms middleware.MoveSpan
		if t != nil {
			mctx, ms = t.StartMove(mctx, "bench-chat")
		}
		mctx, m := eng.BeginMove(mctx, "bench-chat")
		for i := range 4 {
			var cs middleware.ModelSpan
			if t != nil {
				_, cs = t.StartModelCall(mctx, middleware.ModelCall{Model: &scripted.Bench{}, Held: true, Streamed: true, Judged: true})
			}
			if i == 3 {
				m.CheckAnswer(mctx, "All done.")
			}
			if cs != nil {
				cs.End(middleware.ModelResult{Response: resp})
			}
			if i < 3 {
				var ts middleware.ToolSpan
				tctx := mctx
				if t != nil {
					tctx, ts = t.StartToolCall(mctx, middleware.ToolCall{Name: "shell", Input: inputs[i]})
				}
				rem := m.ToolReminders(tctx, "shell", inputs[i])
				if ts != nil {
					ts.End(middleware.ToolResult{Output: "ok", Reminders: rem})
				}
			}
		}
		err := m.End(mctx, nil)
		if ms != nil {
			ms.End(m, err)
		}
	}
	b.Run("untraced", func(b *testing.B) {
		b.ReportAllocs()
		start := cputime.Process()
		for range b.N {
			move(nil)
		}
		cputime.Report(b, start)
	})
	traced := func(proc sdktrace.SpanProcessor) func(b *testing.B) {
		return func(b *testing.B) {
			tr := tracing.New(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(proc)), &tracing.Options{Model: "gpt-test"})
			b.ReportAllocs()
			start := cputime.Process()
			for range b.N {
				move(tr)
			}
			cputime.Report(b, start)
		}
	}
	b.Run("traced", traced(tracetest.NewSpanRecorder()))
	// The SDK's own floor on this machine: the same eight spans and one event, bare
	// (no attributes), into the same recorder, beside the untraced move.
	b.Run("sdk_floor", func(b *testing.B) {
		tr := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tracetest.NewSpanRecorder())).Tracer("floor")
		b.ReportAllocs()
		start := cputime.Process()
		for range b.N {
			mctx, ms := tr.Start(ctx, "move")
			for range 7 {
				_, s := tr.Start(mctx, "child")
				s.End()
			}
			ms.AddEvent("event")
			ms.End()
			move(nil)
		}
		cputime.Report(b, start)
	})
	// The same spans, ended into a processor that keeps none: the recorder's share is
	// the heap it grows (every span of the run stays in memory).
	b.Run("traced_not_kept", traced(dropProcessor{}))
}

// dropProcessor ends spans into nothing.
type dropProcessor struct{}

func (dropProcessor) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (dropProcessor) OnEnd(sdktrace.ReadOnlySpan)                     {}
func (dropProcessor) Shutdown(context.Context) error                  { return nil }
func (dropProcessor) ForceFlush(context.Context) error                { return nil }
