package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/streamrules/streamrules/tracing/provider"
)

// The standard OpenTelemetry variables replay --trace reads, as the demo does.
const (
	envTracesExporter = "OTEL_TRACES_EXPORTER"        // console (the default) or otlp
	envOTLPEndpoint   = "OTEL_EXPORTER_OTLP_ENDPOINT" // set alone, it means otlp
	envServiceName    = "OTEL_SERVICE_NAME"           // default "streamrules-replay"
)

// traceExport is where replay --trace sends its spans.
type traceExport struct {
	tp      *sdktrace.TracerProvider
	console bool // the spans go to stderr, one JSON object per line
}

// openTracing returns the tracer provider replay --trace exports through, as the
// standard variables ask (provider.New): OTEL_TRACES_EXPORTER=console (the
// default) writes each span as one line of JSON to w when it ends; otlp (or
// OTEL_EXPORTER_OTLP_ENDPOINT set without OTEL_TRACES_EXPORTER) sends them over
// OTLP/HTTP, which reads the other OTEL_EXPORTER_OTLP_* variables itself. Another value,
// none included, is a usage error. Shut the provider down to flush it.
func (e *proc) openTracing(ctx context.Context, w io.Writer) (*traceExport, error) {
	ex := provider.Config{
		Exporter:     e.getenv(envTracesExporter),
		OTLPEndpoint: e.getenv(envOTLPEndpoint),
		ServiceName:  e.getenv(envServiceName),
		Console:      w,
	}
	if ex.Exporter == "" && ex.OTLPEndpoint == "" {
		ex.Exporter = "console"
	}
	if ex.ServiceName == "" {
		ex.ServiceName = "streamrules-replay"
	}
	tp, err := provider.New(ctx, ex)
	var exErr *provider.ExporterError
	switch {
	case errors.Is(err, provider.ErrUnknownExporter) || err == nil && tp == nil:
		return nil, usagef("--trace: %s=%q: want console or otlp", envTracesExporter, ex.Exporter)
	case errors.As(err, &exErr) && exErr.Exporter == "otlp":
		return nil, usagef("%s: %v", envTracesExporter, exErr.Err)
	case errors.As(err, &exErr):
		return nil, exErr.Err
	case err != nil:
		return nil, fmt.Errorf("--trace: %w", err)
	}
	return &traceExport{tp: tp, console: ex.Exporter == "console"}, nil
}
