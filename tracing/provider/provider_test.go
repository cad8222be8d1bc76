package provider_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streamrules/streamrules/internal/otlptest"
	"github.com/streamrules/streamrules/tracing/provider"
)

// TestNewNone: none, and nothing set, give no provider and no error, even with
// OTLPEndpoint set beside none; an exporter New does not know, no provider and an error
// wrapping ErrUnknownExporter that quotes the value.
func TestNewNone(t *testing.T) {
	t.Parallel()
	cases := map[provider.Config]error{
		{}:                 nil,
		{Exporter: "none"}: nil,
		{Exporter: "none", OTLPEndpoint: "http://localhost:4318"}: nil,
		{Exporter: "zipkin"}: provider.ErrUnknownExporter,
		{Exporter: "Console", OTLPEndpoint: "http://localhost:4318"}: provider.ErrUnknownExporter,
	}
	for cfg, want := range cases {
		tp, err := provider.New(context.Background(), cfg)
		if tp != nil || !errors.Is(err, want) || err != nil && !strings.Contains(err.Error(), `"`+cfg.Exporter+`"`) {
			t.Errorf("%+v: provider %v, error %v; want none and %v", cfg, tp, err, want)
		}
	}
}

// TestNewConsole: each span is a JSON object on Console as it ends, before Shutdown, with
// the service name on its resource; one line each, or indented with PrettyPrint.
func TestNewConsole(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, pretty := range []bool{false, true} {
		var out bytes.Buffer
		tp, err := provider.New(ctx, provider.Config{Exporter: "console", ServiceName: "bot", Console: &out, PrettyPrint: pretty})
		if err != nil {
			t.Fatal(err)
		}
		tr := tp.Tracer("test")
		for _, name := range []string{"first", "second"} {
			_, sp := tr.Start(ctx, name)
			sp.End()
		}
		written := out.String() // before Shutdown: a syncer writes as each span ends
		if err := tp.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
		if lines := strings.Count(written, "\n"); pretty && lines <= 2 || !pretty && lines != 2 {
			t.Errorf("pretty %v: %d lines for two spans:\n%s", pretty, lines, written)
		}
		dec := json.NewDecoder(strings.NewReader(written))
		var names []string
		for dec.More() {
			var span struct {
				Name     string
				Resource []struct {
					Key   string
					Value struct{ Value any }
				}
			}
			if err := dec.Decode(&span); err != nil {
				t.Fatalf("pretty %v: not JSON: %v\n%s", pretty, err, written)
			}
			names = append(names, span.Name)
			service := ""
			for _, kv := range span.Resource {
				if kv.Key == "service.name" {
					service, _ = kv.Value.Value.(string)
				}
			}
			if service != "bot" {
				t.Errorf("pretty %v: span %q of service %q", pretty, span.Name, service)
			}
		}
		if got := strings.Join(names, " "); got != "first second" {
			t.Errorf("pretty %v: spans %q", pretty, got)
		}
	}
}

// TestNewOTLP: OTEL_EXPORTER_OTLP_ENDPOINT alone chooses otlp, and the exporter reads
// the variable itself: Shutdown flushes the batch to a real HTTP server as protobuf,
// where the span's and the service's names are plain bytes.
func TestNewOTLP(t *testing.T) {
	srv := otlptest.NewServer(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL) // no t.Parallel: it sets the variable
	ctx := context.Background()
	tp, err := provider.New(ctx, provider.Config{OTLPEndpoint: srv.URL, ServiceName: "otlp-bot"})
	if err != nil || tp == nil {
		t.Fatalf("provider %v, error %v", tp, err)
	}
	_, sp := tp.Tracer("test").Start(ctx, "streamrules.move")
	sp.End()
	if err := tp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	body := srv.Body()
	for _, name := range []string{"streamrules.move", "otlp-bot"} {
		if !bytes.Contains(body, []byte(name)) {
			t.Errorf("%q not in what the OTLP server got (%d bytes)", name, len(body))
		}
	}
}

// TestNewOTLPError: an otlp exporter that cannot be made (insecure, yet given a CA
// certificate) is an *ExporterError naming otlp, wrapping the exporter's own error.
func TestNewOTLPError(t *testing.T) {
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	defer srv.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("OTEL_EXPORTER_OTLP_CERTIFICATE", ca) // no t.Parallel: it sets variables
	t.Setenv("OTEL_EXPORTER_OTLP_INSECURE", "true")
	tp, err := provider.New(context.Background(), provider.Config{Exporter: "otlp"})
	var exErr *provider.ExporterError
	if tp != nil || !errors.As(err, &exErr) || exErr.Exporter != "otlp" || exErr.Err == nil || errors.Unwrap(err) != exErr.Err {
		t.Fatalf("provider %v, error %v", tp, err)
	}
	if want := "provider: otlp exporter: " + exErr.Err.Error(); err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
}
