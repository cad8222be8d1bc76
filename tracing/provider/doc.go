// Package provider makes the OpenTelemetry SDK tracer provider a program hands to
// tracing.New from the standard OpenTelemetry variables: `streamrules replay --trace` and
// the demo (examples/agent) both use it.
//
//	tp, err := provider.New(ctx, provider.Config{
//		Exporter:     os.Getenv("OTEL_TRACES_EXPORTER"),        // console, otlp or none
//		OTLPEndpoint: os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT"), // alone, it means otlp
//		ServiceName:  os.Getenv("OTEL_SERVICE_NAME"),
//		Console:      os.Stderr,
//	})
//	if err != nil {
//		return err
//	}
//	if tp != nil { // nil: no tracing asked for
//		defer tp.Shutdown(context.WithoutCancel(ctx)) // flushes the batches
//		guardCfg.Tracer = tracing.New(tp, nil)
//	}
//
// # Exporters
//
// console writes each span as a JSON object to [Config].Console as the span ends (one
// per line, or indented with PrettyPrint); otlp sends the spans in batches over
// OTLP/HTTP, and the exporter reads OTEL_EXPORTER_OTLP_ENDPOINT, _HEADERS, _TIMEOUT and
// the rest itself; none, or nothing set, traces nothing. The service name goes on
// every span's resource as service.name.
//
// Each program keeps its own defaults and error forms: the CLI treats an empty exporter
// as console and an unknown one as a usage error (exit 2), the demo treats empty as
// none and reports a bad variable by name. So New leaves the defaults to the caller and
// returns an error wrapping [ErrUnknownExporter] for a value it does not know, and an
// [*ExporterError] when the exporter it chose cannot be made, for errors.Is and
// errors.As.
//
// # Why a package of its own
//
// The OTLP exporter brings gRPC and protobuf with it. Package tracing needs only the
// OpenTelemetry API, so a host that sets up its own SDK imports tracing alone.
package provider
