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

// openTracing returns a tracer provider as the standard OTel variables ask, or nil when
// they ask for none. OTEL_TRACES_EXPORTER=console prints each span as JSON to w when it
// ends; otlp (or an OTEL_EXPORTER_OTLP_ENDPOINT without OTEL_TRACES_EXPORTER) sends them
// over OTLP/HTTP, which reads the other OTEL_EXPORTER_OTLP_* variables itself; none or
// empty: no tracing. OTEL_SERVICE_NAME names the service.
func openTracing(ctx context.Context, cfg Config, w io.Writer) (*sdktrace.TracerProvider, error) {
	exporter := cfg.TracesExporter
	if exporter == "" && cfg.OTLPEndpoint != "" {
		exporter = "otlp"
	}
	var opt sdktrace.TracerProviderOption
	switch exporter {
	case "", "none":
		return nil, nil
	case "console":
		exp, err := stdouttrace.New(stdouttrace.WithWriter(w), stdouttrace.WithPrettyPrint())
		if err != nil {
			return nil, err
		}
		opt = sdktrace.WithSyncer(exp) // printed as each span ends, between the moves' lines
	case "otlp":
		exp, err := otlptracehttp.New(ctx)
		if err != nil {
			return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_*: %w", err)
		}
		opt = sdktrace.WithBatcher(exp)
	default:
		return nil, &configError{Var: "OTEL_TRACES_EXPORTER", Msg: fmt.Sprintf("%q: want console, otlp or none", exporter)}
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(attribute.String("service.name", cfg.ServiceName)))
	if err != nil {
		return nil, err
	}
	return sdktrace.NewTracerProvider(opt, sdktrace.WithResource(res)), nil
}
