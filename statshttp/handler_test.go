package statshttp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/enginetest"
	"github.com/streamrules/streamrules/internal/testlog"
	"github.com/streamrules/streamrules/statshttp"
)

// newEngine starts an engine on store, quiet; it is closed when the test ends.
func newEngine(t *testing.T, store streamrules.Store) *streamrules.Engine {
	t.Helper()
	return enginetest.New(t, store, nil)
}

func newMemoryStore(t *testing.T, rules ...streamrules.Rule) *streamrules.MemoryStore {
	t.Helper()
	return enginetest.Store(t, rules...)
}

// plainStore is a store with only Store's own methods: it cannot count firings.
type plainStore struct{ streamrules.Store }

func TestStatsNeedsAFiringCounter(t *testing.T) {
	t.Parallel()
	log, buf := testlog.New()
	eng := enginetest.New(t, plainStore{newMemoryStore(t)}, &streamrules.Config{Logger: log}) // the handler logs on the engine's logger
	rec := httptest.NewRecorder()
	statshttp.Handler(eng).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/stats", nil))
	if rec.Code != http.StatusInternalServerError {
		t.Fatalf("status %d, want 500", rec.Code)
	}
	if lines := buf.Lines("streamrules: stats", "does not count firings"); len(lines) != 1 {
		t.Fatalf("want one error line naming the cause, log:\n%s", buf)
	}
}

func TestStatsHandler(t *testing.T) {
	t.Parallel()
	store := newMemoryStore(t,
		streamrules.Rule{Name: "local_shell_for_his_machine", Scope: streamrules.ScopeToolPrefix + "shell", Text: "Text."},
		streamrules.Rule{Name: "quiet", Scope: streamrules.ScopeText, Condition: "x", Text: "Text."})
	eng := newEngine(t, store)
	ctx, m := eng.BeginMove(context.Background(), "c")
	m.ToolReminders(ctx, "shell", "{}")
	if err := m.End(ctx, nil); err != nil {
		t.Fatal(err)
	}

	srv := httptest.NewServer(statshttp.Handler(eng))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/v1/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET status %d", resp.StatusCode)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type %q", ct)
	}
	var body map[string][]map[string]any // last_fired_at absent for a rule that never fired
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	at := store.AllFirings()[0].At.Format(time.RFC3339Nano)
	want := []map[string]any{
		{"rule": "local_shell_for_his_machine", "fired": 1.0, "shadow": 0.0, "last_fired_at": at,
			"outcomes": map[string]any{"complied": 1.0, "repeated": 0.0},
			"delivery": map[string]any{"full": 1.0, "manifest": 0.0}, "manifest_read": 0.0},
		{"rule": "quiet", "fired": 0.0, "shadow": 0.0,
			"outcomes": map[string]any{"corrected": 0.0, "missed_again": 0.0, "kept": 0.0, "fixed": 0.0},
			"delivery": map[string]any{"full": 0.0}, "manifest_read": 0.0},
	}
	if fmt.Sprint(body["rules"]) != fmt.Sprint(want) {
		t.Fatalf("body %v, want rules %v", body, want)
	}

	for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodDelete} {
		rec := httptest.NewRecorder()
		statshttp.Handler(eng).ServeHTTP(rec, httptest.NewRequest(method, "/v1/stats", nil))
		if rec.Code != http.StatusMethodNotAllowed {
			t.Errorf("%s: status %d, want 405", method, rec.Code)
		}
		if allow := rec.Header().Get("Allow"); !strings.Contains(allow, "GET") {
			t.Errorf("%s: Allow %q", method, allow)
		}
	}
	rec := httptest.NewRecorder()
	statshttp.Handler(eng).ServeHTTP(rec, httptest.NewRequest(http.MethodHead, "/v1/stats", nil))
	if rec.Code != http.StatusOK {
		t.Errorf("HEAD: status %d", rec.Code)
	}
}

func TestStatsEmptyIsAList(t *testing.T) {
	t.Parallel()
	eng := newEngine(t, newMemoryStore(t))
	rec := httptest.NewRecorder()
	statshttp.Handler(eng).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/stats", nil))
	if got := strings.TrimSpace(rec.Body.String()); got != `{"rules":[]}` {
		t.Fatalf("body %s, want an empty list, not null", got)
	}
}
