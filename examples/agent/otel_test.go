package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"

	"go.opentelemetry.io/otel/attribute"
)

// TestOpenTracing: console prints each span as JSON with the service name; none and
// empty trace nothing; an unknown exporter is a configuration error naming the variable.
func TestOpenTracing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, exporter := range []string{"", "none"} {
		tp, err := openTracing(ctx, Config{TracesExporter: exporter}, nil)
		if err != nil || tp != nil {
			t.Errorf("OTEL_TRACES_EXPORTER=%q: provider %v, error %v; want none", exporter, tp, err)
		}
	}
	var ce *configError
	if _, err := openTracing(ctx, Config{TracesExporter: "zipkin"}, nil); !errors.As(err, &ce) || ce.Var != "OTEL_TRACES_EXPORTER" {
		t.Errorf("unknown exporter: %v", err)
	}
	var out bytes.Buffer
	tp, err := openTracing(ctx, Config{TracesExporter: "console", ServiceName: "bot"}, &out)
	if err != nil {
		t.Fatal(err)
	}
	_, sp := tp.Tracer("t").Start(ctx, "streamrules.move")
	sp.SetAttributes(attribute.String("gen_ai.conversation.id", "c"))
	sp.End()
	if err := tp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	var span struct {
		Name     string
		Resource []struct {
			Key   string
			Value struct{ Value any }
		}
	}
	if err := json.Unmarshal(out.Bytes(), &span); err != nil {
		t.Fatalf("console output is not one JSON span: %v\n%s", err, out.String())
	}
	service := ""
	for _, kv := range span.Resource {
		if kv.Key == "service.name" {
			service, _ = kv.Value.Value.(string)
		}
	}
	if span.Name != "streamrules.move" || service != "bot" {
		t.Errorf("span %q of service %q:\n%s", span.Name, service, out.String())
	}
}
