package tracing_test

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/tmc/langchaingo/agents"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/scripted"
	"github.com/streamrules/streamrules/middleware"
	"github.com/streamrules/streamrules/seeds"
	"github.com/streamrules/streamrules/tracing"
)

// A move whose first answer a rule discards: a move span, two chat spans, one event.
func ExampleNew() {
	ctx := context.Background()
	store, err := streamrules.NewMemoryStore([]streamrules.Rule{{
		Name: "no_apologies", Scope: "text", Condition: `(?i)\bsorry\b`, Text: "Do not apologise.",
	}}, seeds.Environments()...)

	if err != nil {
		panic(err)
	}
	eng, err := streamrules.New(ctx, store, &streamrules.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	defer eng.Close()

	rec := tracetest.NewSpanRecorder() // an exporter, in a real host
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	guard, err := middleware.New(eng, &middleware.Config{Tracer: tracing.New(tp, &tracing.Options{Model: "gpt-4o-mini"})})
	if err != nil {
		panic(err)
	}
	model := scripted.New(scripted.Reply{Text: "Sorry, it is late."}, scripted.Reply{Text: "It is late."})
	exec := guard.Executor(agents.NewOpenAIFunctionsAgent(guard.Model(model), nil))
	answer, err := guard.Run(ctx, exec, "chat-1", "What time is it?")
	if err != nil {
		panic(err)
	}
	fmt.Println("answer:", answer)
	for _, s := range rec.Ended() {
		fmt.Println(s.Name())
		for _, e := range s.Events() {
			fmt.Println("  event", e.Name, e.Attributes[0].Value.AsString(), e.Attributes[2].Value.AsString())
		}
	}
	// Output:
	// answer: It is late.
	// chat gpt-4o-mini
	// chat gpt-4o-mini
	// streamrules.move
	//   event gen_ai.guardrail.result no_apologies corrected
}
