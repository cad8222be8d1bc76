package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/streamrules/streamrules/tracing/provider"
)

// openTracing returns a tracer provider as the standard OTel variables ask, or nil when
// they ask for none (provider.New). OTEL_TRACES_EXPORTER=console prints each span
// as indented JSON to w when it ends; otlp (or an OTEL_EXPORTER_OTLP_ENDPOINT without
// OTEL_TRACES_EXPORTER) sends them over OTLP/HTTP, which reads the other
// OTEL_EXPORTER_OTLP_* variables itself; none or empty: no tracing. OTEL_SERVICE_NAME
// names the service.
func openTracing(ctx context.Context, cfg Config, w io.Writer) (*sdktrace.TracerProvider, error) {
	tp, err := provider.New(ctx, provider.Config{
		Exporter:     cfg.TracesExporter,
		OTLPEndpoint: cfg.OTLPEndpoint,
		ServiceName:  cfg.ServiceName,
		Console:      w,
		PrettyPrint:  true,
	})
	var exErr *provider.ExporterError
	switch {
	case errors.Is(err, provider.ErrUnknownExporter):
		return nil, &configError{Var: "OTEL_TRACES_EXPORTER", Msg: fmt.Sprintf("%q: want console, otlp or none", cfg.TracesExporter)}
	case errors.As(err, &exErr) && exErr.Exporter == "otlp":
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_*: %w", exErr.Err)
	case errors.As(err, &exErr):
		return nil, exErr.Err
	}
	return tp, err
}
