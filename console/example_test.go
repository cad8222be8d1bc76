package console_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/console"
	"github.com/streamrules/streamrules/rulesdb"
)

// A console over a SQLite store: the rules page lists the rule with its mode, and a
// write without a login is refused.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "console-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	log := slog.New(slog.DiscardHandler)
	store, err := rulesdb.Open(ctx, "sqlite:"+filepath.Join(dir, "rules.db"), &rulesdb.Config{Logger: log})
	if err != nil {
		panic(err)
	}
	defer store.Close()
	if _, err := store.CreateRule(ctx, streamrules.Rule{Name: "no_rm_rf", Scope: "tool:shell", Mode: streamrules.ModeInterrupt,
		Condition: `rm -rf`, Text: "Never rm -rf."}); err != nil {
		panic(err)
	}
	eng, err := streamrules.New(ctx, store, &streamrules.Config{Logger: log})
	if err != nil {
		panic(err)
	}
	defer eng.Close()
	h, err := console.New(store, eng, &console.Config{Password: "s3cret", Logger: log})
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.Handle(console.Prefix, h)

	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/console/rules", nil))
	fmt.Println(rec.Code, strings.Contains(rec.Body.String(), `<span class="mode m-gate">gate</span>`))

	rec = httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/console/rules/no_rm_rf/state", strings.NewReader("action=disable")))
	fmt.Println(rec.Code)
	// Output:
	// 200 true
	// 403
}
