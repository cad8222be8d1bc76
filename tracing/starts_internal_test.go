package tracing

import (
	"context"
	"fmt"
	"sync"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/streamrules/streamrules/middleware"
)

// TestStartCacheBound: tool names past maxStarts still get their own span names and
// attributes, built per call, and the cache stops growing at maxStarts; concurrent
// first uses of one kind agree on one start.
func TestStartCacheBound(t *testing.T) {
	t.Parallel()
	rec := tracetest.NewSpanRecorder()
	tr := New(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)), nil)
	const tools = maxStarts + 40
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range tools {
				name := fmt.Sprintf("tool_%d", (i+g*7)%tools)
				_, sp := tr.StartToolCall(context.Background(), middleware.ToolCall{Name: name, ID: "id"})
				sp.End(middleware.ToolResult{})
			}
		})
	}
	wg.Wait()
	if n := len(*tr.tools.m.Load()); n != maxStarts {
		t.Errorf("%d starts cached, want the bound %d", n, maxStarts)
	}
	seen := map[string]int{}
	for _, s := range rec.Ended() {
		want := "execute_tool " + attrValue(s, "gen_ai.tool.name")
		if s.Name() != want || attrValue(s, "gen_ai.tool.call.id") != "id" {
			t.Fatalf("span %q with attributes %v", s.Name(), s.Attributes())
		}
		seen[s.Name()]++
	}
	if len(seen) != tools {
		t.Errorf("%d span names, want %d", len(seen), tools)
	}
	cached := *tr.tools.m.Load()
	for name, st := range cached {
		if tr.toolStart(name) != st {
			t.Errorf("%s: a cached tool's start is built again", name)
		}
	}
	for i := range tools {
		name := fmt.Sprintf("tool_%d", i)
		if _, ok := cached[name]; ok {
			continue
		}
		if first, again := tr.toolStart(name), tr.toolStart(name); first == again {
			t.Errorf("%s: past the bound, a start is kept", name)
		}
	}
}

func attrValue(s sdktrace.ReadOnlySpan, key string) string {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value.AsString()
		}
	}
	return ""
}
