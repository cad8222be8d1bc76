package provider

import (
	"context"
	"errors"
	"fmt"
	"io"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Config says where [New]'s spans go, in the terms of the standard OpenTelemetry
// variables; a host fills it from them with its own defaults.
type Config struct {
	// Exporter is OTEL_TRACES_EXPORTER: "console" writes each span as JSON to Console
	// when it ends; "otlp" sends the spans over OTLP/HTTP in batches; "none" traces
	// nothing. Empty means otlp when OTLPEndpoint is set, else none.
	Exporter string
	// OTLPEndpoint is OTEL_EXPORTER_OTLP_ENDPOINT. It only chooses otlp when Exporter is
	// empty: the otlp exporter reads the OTEL_EXPORTER_OTLP_* variables itself.
	OTLPEndpoint string
	// ServiceName is OTEL_SERVICE_NAME, set as the resource's service.name. Empty leaves
	// the SDK's default (OTEL_SERVICE_NAME, else unknown_service:<program>).
	ServiceName string
	// Console receives the console exporter's spans, one JSON object per line. Default
	// os.Stdout.
	Console io.Writer
	// PrettyPrint indents the console exporter's JSON, one span over several lines.
	PrettyPrint bool
}

// ErrUnknownExporter is New's error for an Exporter other than console, otlp,
// none or empty, wrapped with the value.
var ErrUnknownExporter = errors.New("unknown exporter: want console, otlp or none")

// ExporterError is New's error when the exporter it chose could not be made.
type ExporterError struct {
	Exporter string // "console" or "otlp"
	Err      error  // what the exporter's constructor said
}

func (e *ExporterError) Error() string {
	return "provider: " + e.Exporter + " exporter: " + e.Err.Error()
}

func (e *ExporterError) Unwrap() error { return e.Err }

// New returns an SDK tracer provider exporting as cfg says, for tracing.New; nil, and no
// error, when cfg asks for no tracing. The console exporter writes each span as it ends
// (a syncer); otlp batches. Shut the provider down to flush it. An unknown Exporter is
// an error wrapping [ErrUnknownExporter]; an exporter that cannot be made, an
// [*ExporterError].
func New(ctx context.Context, cfg Config) (*sdktrace.TracerProvider, error) {
	exporter := cfg.Exporter
	if exporter == "" && cfg.OTLPEndpoint != "" {
		exporter = "otlp"
	}
	var opt sdktrace.TracerProviderOption
	switch exporter {
	case "", "none":
		return nil, nil
	case "console":
		var opts []stdouttrace.Option
		if cfg.Console != nil {
			opts = append(opts, stdouttrace.WithWriter(cfg.Console))
		}
		if cfg.PrettyPrint {
			opts = append(opts, stdouttrace.WithPrettyPrint())
		}
		exp, err := stdouttrace.New(opts...)
		if err != nil {
			return nil, &ExporterError{Exporter: exporter, Err: err}
		}
		opt = sdktrace.WithSyncer(exp)
	case "otlp":
		exp, err := otlptracehttp.New(ctx)
		if err != nil {
			return nil, &ExporterError{Exporter: exporter, Err: err}
		}
		opt = sdktrace.WithBatcher(exp)
	default:
		return nil, fmt.Errorf("provider: %q: %w", exporter, ErrUnknownExporter)
	}
	res := resource.Default()
	if cfg.ServiceName != "" {
		var err error
		if res, err = resource.Merge(res, resource.NewSchemaless(attribute.String("service.name", cfg.ServiceName))); err != nil {
			return nil, fmt.Errorf("provider: %w", err)
		}
	}
	return sdktrace.NewTracerProvider(opt, sdktrace.WithResource(res)), nil
}
