package replay_test

import (
	"encoding/json"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/replay"
	"github.com/streamrules/streamrules/tracing"
)

// TestTracer: with Options.Tracer (package tracing, the SDK, an in-memory recorder) and
// several workers, each replayed move is one move span with one guardrail event per
// would-fire, its tool calls are spans under it (the gate's refused, the reminders
// counted), and the report is the one an untraced run gives.
func TestTracer(t *testing.T) {
	t.Parallel()
	rules := append(testRules(), streamrules.Rule{Name: "no_df", Scope: "tool:shell", Mode: streamrules.ModeInterrupt,
		Condition: `df`, Text: "No df."})
	rec := tracetest.NewSpanRecorder()
	traced := run(t, rules, transcript, &replay.Options{Workers: 3,
		Tracer: tracing.New(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)), nil)})
	plain := run(t, rules, transcript, &replay.Options{Workers: 3})
	if a, b := jsonOf(t, traced), jsonOf(t, plain); a != b {
		t.Errorf("the traced report differs:\n%s\nuntraced:\n%s", a, b)
	}

	events := map[string]int{} // rule → events
	moves := map[string]bool{} // span id of each move span
	var tools, refused, reminders int
	spans := rec.Ended()
	for _, s := range spans {
		if s.Name() == tracing.MoveSpanName {
			moves[s.SpanContext().SpanID().String()] = true
			for _, e := range s.Events() {
				if e.Name != tracing.EventName {
					t.Errorf("event %q", e.Name)
				}
				for _, kv := range e.Attributes {
					if kv.Key == "gen_ai.guardrail.policy.rule.id" {
						events[kv.Value.AsString()]++
					}
				}
			}
		}
	}
	for _, s := range spans {
		if s.Name() != "execute_tool shell" && s.Name() != "execute_tool write_file" {
			continue
		}
		tools++
		if !moves[s.Parent().SpanID().String()] {
			t.Errorf("%s is not under a move span", s.Name())
		}
		for _, kv := range s.Attributes() {
			switch kv.Key {
			case "streamrules.refused":
				refused++
			case "streamrules.reminders":
				reminders += int(kv.Value.AsInt64())
			}
		}
	}
	if len(moves) != traced.Moves || tools != 6 {
		t.Errorf("%d move spans and %d tool spans; want %d and 6", len(moves), tools, traced.Moves)
	}
	soft := 0
	for _, r := range traced.Rules {
		if events[r.Rule] != r.Fired {
			t.Errorf("%s: %d events, %d would-fires", r.Rule, events[r.Rule], r.Fired)
		}
		if r.Scope != "text" && !r.Gate {
			soft += r.Fired
		}
		if r.Rule == "no_df" && (r.Fired != 1 || refused != 1) {
			t.Errorf("the gate fired %d times, %d tool spans refused; want 1 and 1", r.Fired, refused)
		}
	}
	if soft == 0 || reminders != soft {
		t.Errorf("%d reminders on the tool spans, %d soft would-fires", reminders, soft)
	}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
