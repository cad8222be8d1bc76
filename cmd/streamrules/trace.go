package main

import (
	"context"
	"fmt"
	"io"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// The standard OpenTelemetry variables replay --trace reads, as the demo does.
const (
	envTracesExporter = "OTEL_TRACES_EXPORTER"        // console (the default), otlp or none
	envOTLPEndpoint   = "OTEL_EXPORTER_OTLP_ENDPOINT" // set alone, it means otlp
	envServiceName    = "OTEL_SERVICE_NAME"           // default "streamrules-replay"
)

// traceExport is where replay --trace sends its spans.
type traceExport struct {
	tp      *sdktrace.TracerProvider
	console bool // the spans go to stderr, one JSON object per line
}

// openTracing returns the tracer provider replay --trace exports through, as the
// standard variables ask: OTEL_TRACES_EXPORTER=console (the default) writes each span as
// one line of JSON to w when it ends; otlp (or OTEL_EXPORTER_OTLP_ENDPOINT set without
// OTEL_TRACES_EXPORTER) sends them over OTLP/HTTP, which reads the other
// OTEL_EXPORTER_OTLP_* variables itself. Another value is a usage error. Shut the
// provider down to flush it.
func (e *proc) openTracing(ctx context.Context, w io.Writer) (*traceExport, error) {
	exporter := e.getenv(envTracesExporter)
	if exporter == "" {
		exporter = "console"
		if e.getenv(envOTLPEndpoint) != "" {
			exporter = "otlp"
		}
	}
	var opt sdktrace.TracerProviderOption
	switch exporter {
	case "console":
		exp, err := stdouttrace.New(stdouttrace.WithWriter(w))
		if err != nil {
			return nil, err
		}
		opt = sdktrace.WithSyncer(exp) // written as each move ends
	case "otlp":
		exp, err := otlptracehttp.New(ctx)
		if err != nil {
			return nil, usagef("%s: %v", envTracesExporter, err)
		}
		opt = sdktrace.WithBatcher(exp)
	default:
		return nil, usagef("--trace: %s=%q: want console or otlp", envTracesExporter, exporter)
	}
	name := e.getenv(envServiceName)
	if name == "" {
		name = "streamrules-replay"
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(attribute.String("service.name", name)))
	if err != nil {
		return nil, fmt.Errorf("--trace: %w", err)
	}
	return &traceExport{tp: sdktrace.NewTracerProvider(opt, sdktrace.WithResource(res)), console: exporter == "console"}, nil
}
