package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/streamrules/streamrules/internal/otlptest"
)

// span is a span as OTEL_TRACES_EXPORTER=console writes it (stdouttrace), as much as the
// tests read.
type span struct {
	Name        string
	SpanContext struct{ SpanID string }
	Parent      struct{ SpanID string }
	Attributes  []keyValue
	Events      []struct {
		Name       string
		Attributes []keyValue
	}
	Resource []keyValue
}

type keyValue struct {
	Key   string
	Value struct{ Value any }
}

func attrOf(kvs []keyValue, key string) string {
	for _, kv := range kvs {
		if kv.Key == key {
			return fmt.Sprint(kv.Value.Value) // numbers decode as float64: 2 prints "2"
		}
	}
	return ""
}

// consoleSpans reads the spans off stderr, one JSON object per line, and returns them
// and what else stderr said.
func consoleSpans(t *testing.T, stderr string) (spans []span, rest string) {
	t.Helper()
	for _, line := range strings.SplitAfter(stderr, "\n") {
		if !strings.HasPrefix(line, "{") {
			rest += line
			continue
		}
		var s span
		if err := json.Unmarshal([]byte(line), &s); err != nil {
			t.Fatalf("a span line that is not JSON: %v\n%s", err, line)
		}
		spans = append(spans, s)
	}
	return spans, rest
}

// TestReplayTrace runs the built command with --trace on the replay transcript: a move
// span per line, one gen_ai.guardrail.result event per would-fire (the ones
// replayTranscript's comment counts by hand), a tool span per call under its move, the
// report on stdout as without --trace, and only the summary beside the spans on stderr.
func TestReplayTrace(t *testing.T) {
	t.Parallel()
	rules := writeTemp(t, "rules.yaml", replayRules)
	tr := writeTemp(t, "week.jsonl", replayTranscript)
	r := exe(t, map[string]string{"OTEL_SERVICE_NAME": "backtest-7"}, "replay", "--rules", rules, "--json", "--trace", tr)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	spans, rest := consoleSpans(t, r.stderr)
	checkReplay(t, result{r.code, r.stdout, rest})

	// chat/move → the rules of its events, in order.
	fired := map[string][]string{}
	moves := map[string]string{} // span id → chat/move
	for _, s := range spans {
		if got := attrOf(s.Resource, "service.name"); got != "backtest-7" {
			t.Errorf("%s: service.name %q", s.Name, got)
		}
		if s.Name != "streamrules.move" {
			continue
		}
		key := attrOf(s.Attributes, "gen_ai.conversation.id") + "/" + attrOf(s.Attributes, "streamrules.move.number")
		moves[s.SpanContext.SpanID] = key
		fired[key] = nil
		for _, e := range s.Events {
			if e.Name != "gen_ai.guardrail.result" {
				t.Errorf("%s: event %q", key, e.Name)
			}
			fired[key] = append(fired[key], attrOf(e.Attributes, "gen_ai.guardrail.policy.rule.id"))
		}
	}
	want := map[string][]string{"a/1": {"no_lorem"}, "a/2": {"reply_tail"}, "a/3": {"shell_here"}, "a/4": {"no_lorem"}, "b/1": {"shell_here"}}
	for key, rules := range want {
		if got, ok := fired[key]; !ok || !slices.Equal(got, rules) {
			t.Errorf("move %s: events %v (a span: %v), want %v", key, got, ok, rules)
		}
	}
	if len(fired) != len(want) {
		t.Errorf("%d move spans, want %d: %v", len(fired), len(want), fired)
	}
	// Four shell calls: a/3, a/4, b/1 twice; b/1's first carried the reminder.
	var calls []string
	for _, s := range spans {
		if s.Name == "execute_tool shell" {
			calls = append(calls, moves[s.Parent.SpanID]+":"+attrOf(s.Attributes, "streamrules.reminders"))
		}
	}
	slices.Sort(calls)
	if got := strings.Join(calls, " "); got != "a/3:1 a/4:0 b/1:0 b/1:1" {
		t.Errorf("tool spans (move:reminders) %s", got)
	}
}

// TestReplayTraceExporter: an exporter replay --trace does not have is a usage error,
// before any work; without --trace the OTel variables are not read.
func TestReplayTraceExporter(t *testing.T) {
	t.Parallel()
	rules := writeTemp(t, "rules.yaml", replayRules)
	tr := writeTemp(t, "week.jsonl", replayTranscript)
	env := map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}
	r := cli(t, env, "", "replay", "--rules", rules, "--trace", tr)
	if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, `OTEL_TRACES_EXPORTER="zipkin": want console or otlp`) {
		t.Errorf("zipkin: %+v", r)
	}
	r = must(t, cli(t, env, "", "replay", "--rules", rules, "--json", tr))
	checkReplay(t, r)
}

// TestReplayTraceOTLP: with OTEL_EXPORTER_OTLP_ENDPOINT alone, the built command sends
// the spans over OTLP/HTTP to it before it exits: five move spans and an event per
// would-fire reach a real HTTP server (read in the protobuf, where names are plain bytes).
func TestReplayTraceOTLP(t *testing.T) {
	t.Parallel()
	srv := otlptest.NewServer(t)
	rules := writeTemp(t, "rules.yaml", replayRules)
	tr := writeTemp(t, "week.jsonl", replayTranscript)
	r := exe(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": srv.URL}, "replay", "--rules", rules, "--json", "--trace", tr)
	checkReplay(t, must(t, r))
	body := srv.Body()
	for name, n := range map[string]int{"streamrules.move": 5, "gen_ai.guardrail.result": 5, "execute_tool shell": 4, "streamrules-replay": 1} {
		if got := bytes.Count(body, []byte(name)); got < n {
			t.Errorf("%q %d times in what the OTLP server got, want at least %d", name, got, n)
		}
	}
}
