package statshttp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/seeds"
	"github.com/streamrules/streamrules/statshttp"
)

// One reminder fired on a shell call; the summary lists it, and the text rule that never
// fired with its zeros.
func ExampleHandler() {
	ctx := context.Background()
	store, err := streamrules.NewMemoryStore([]streamrules.Rule{
		{Name: "local_shell_for_his_machine", Scope: "tool:shell", Text: "This shell is the user's own machine."},
		{Name: "no_apologies", Scope: "text", Condition: `(?i)\bsorry\b`, Text: "Do not apologise."},
	}, seeds.Environments()...)

	if err != nil {
		panic(err)
	}
	log := slog.New(slog.DiscardHandler)
	eng, err := streamrules.New(ctx, store, &streamrules.Config{Logger: log})
	if err != nil {
		panic(err)
	}
	defer eng.Close()
	mctx, move := eng.BeginMove(ctx, "chat-1")
	move.ToolReminders(mctx, "shell", `{"cmd":"df -h"}`)
	if err := move.End(mctx, nil); err != nil {
		panic(err)
	}

	mux := http.NewServeMux()
	mux.Handle("/v1/stats", statshttp.Handler(eng))
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/stats", nil))
	fmt.Println(rec.Code, rec.Header().Get("Content-Type"))
	var stats streamrules.Stats // the body is the summary as JSON
	if err := json.Unmarshal(rec.Body.Bytes(), &stats); err != nil {
		panic(err)
	}
	for _, r := range stats.Rules {
		fmt.Println(r.Rule, r.Fired, r.Outcomes)
	}
	// Output:
	// 200 application/json
	// local_shell_for_his_machine 1 map[complied:1 repeated:0]
	// no_apologies 0 map[corrected:0 fixed:0 kept:0 missed_again:0]
}
