// Package otlptest is a real HTTP server standing in for an OTLP/HTTP collector in
// tests: it keeps the body of each protobuf POST to /v1/traces and refuses anything else.
package otlptest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
)

// Server is the collector. Point OTEL_EXPORTER_OTLP_ENDPOINT at URL.
type Server struct {
	URL string

	mu   sync.Mutex
	body []byte
}

// NewServer starts a collector, closed when t ends.
func NewServer(t testing.TB) *Server {
	s := &Server{}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	b, err := io.ReadAll(r.Body)
	if r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" || err != nil {
		http.Error(w, "want a protobuf POST to /v1/traces", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.body = append(s.body, b...)
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-protobuf")
}

// Body is the bodies received so far, one after the other: protobuf, in which span,
// event and service names stand as plain bytes.
func (s *Server) Body() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.body)
}
