// Package tracing traces a guard's moves with OpenTelemetry, in the GenAI semantic
// conventions.
//
// Give [New] to middleware.Config.Tracer. Each move is a span "streamrules.move"
// (gen_ai.conversation.id is the chat id), parent of a client span "chat {model}" per
// model call (held, streamed, discarded, cut early, a replay, fixed) and a span
// "execute_tool {name}" per tool call (the reminders spliced into its result). Each
// firing of the move is a "gen_ai.guardrail.result" event on the move span, added when the
// move ends so it carries the firing's final outcome, stamped with the firing's time;
// its rule is gen_ai.guardrail.policy.rule.id. Attributes of our own are prefixed
// "streamrules.".
//
// Content — prompts, answers, tool arguments and results — is recorded only with
// [Options].RecordContent, as the conventions ask; rule texts only with RecordRuleText.
//
// The move span's context is the one the executor, the agent, the model and the tools
// run under, so a host's span around guard.Run is the move span's parent and the
// executor's own callbacks see the move span. Without a tracer the guard makes no span
// and allocates nothing more per move. The root package and the middleware import no
// OpenTelemetry: the middleware calls its middleware.Tracer interface, which this
// package implements. package replay takes the same interface (replay.Options.Tracer),
// so a backtest can emit the same move spans and events: `streamrules replay --trace`.
//
// # A provider from the standard variables
//
// Package tracing takes any trace.TracerProvider and imports only the OpenTelemetry API.
// Package tracing/provider makes an SDK provider from the standard variables
// (OTEL_TRACES_EXPORTER console, otlp or none; OTEL_EXPORTER_OTLP_ENDPOINT alone meaning
// otlp; OTEL_SERVICE_NAME), with each program's defaults left to it: `streamrules replay
// --trace` and the demo both use it. It lives apart because its OTLP exporter brings
// gRPC and protobuf, which a host with its own SDK setup need not link.
//
//	tp, err := provider.New(ctx, provider.Config{Exporter: os.Getenv("OTEL_TRACES_EXPORTER"), …})
//	if err != nil { … }
//	if tp != nil { // nil: none asked for
//		defer tp.Shutdown(context.WithoutCancel(ctx))
//		guardCfg.Tracer = tracing.New(tp, nil)
//	}
//
// # Cost
//
// A span's start (its name, its start attributes and the option carrying them) is made
// once per kind of call and per tool, and each span's buffers are pooled: a traced move
// costs the SDK's own work for its spans plus some 7 µs and 3 allocations of this
// package (BenchmarkSpansPerMove: traced against sdk_floor, the same spans made straight
// on the SDK; docs/performance.md has the figures). The SDK's part dominates: with
// every span sampled into an in-memory recorder, ~25–30 µs for a move of eight spans,
// next to model calls of milliseconds. A [Tracer] is safe for concurrent use.
package tracing
