package rulesdb_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/rulesdb"
	"github.com/streamrules/streamrules/seeds"
	"github.com/streamrules/streamrules/statshttp"
)

// Open a SQLite file (the default store when STREAMRULES_DSN is unset), seed it once,
// run a move and read the stats as GET /v1/stats serves them.
func ExampleOpen() {
	dir, _ := os.MkdirTemp("", "rulesdb-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))

	set, err := seeds.Default()
	if err != nil {
		panic(err)
	}
	store, err := rulesdb.Open(ctx, "sqlite:"+filepath.Join(dir, "rules.db"), &rulesdb.Config{Seed: &set, Logger: logger})
	if err != nil {
		panic(err)
	}
	defer store.Close()

	eng, err := streamrules.New(ctx, store, &streamrules.Config{Logger: logger})
	if err != nil {
		panic(err)
	}
	defer eng.Close()

	mctx, move := eng.BeginMove(ctx, "chat-42", streamrules.EnvTelegram)
	verdict := move.CheckAnswer(mctx, "Done, the report is saved.") // no ↩ #id tail
	fmt.Println("discard:", verdict.Discard, verdict.Rules)
	verdict = move.CheckAnswer(mctx, "Done, the report is saved.\n↩ #42") // the replay
	fmt.Println("discard:", verdict.Discard)
	if err := move.End(mctx, nil); err != nil {
		panic(err)
	}

	rec := httptest.NewRecorder()
	statshttp.Handler(eng).ServeHTTP(rec, httptest.NewRequest("GET", "/v1/stats", nil))
	var stats streamrules.Stats
	if err := json.Unmarshal(rec.Body.Bytes(), &stats); err != nil {
		panic(err)
	}
	fmt.Println(rec.Header().Get("Content-Type"), len(stats.Rules), "rules")
	for _, r := range stats.Rules {
		if r.Fired > 0 {
			fmt.Println(r.Rule, "fired", r.Fired, r.Outcomes, "last fired:", !r.LastFiredAt.IsZero())
		}
	}
	// Output:
	// discard: true [telegram_reply_tail]
	// discard: false
	// application/json 10 rules
	// telegram_reply_tail fired 1 map[corrected:1 fixed:0 kept:0 missed_again:0] last fired: true
}

// A calibration wave: version 2 of the seed set rewrites the seeded rules nobody edited,
// keeps the master's edits, and does not bring back what he deleted.
func ExampleStore_Seed() {
	dir, _ := os.MkdirTemp("", "rulesdb-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	store, err := rulesdb.Open(ctx, "sqlite:"+filepath.Join(dir, "rules.db"), &rulesdb.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		panic(err)
	}
	defer store.Close()

	v1, _ := seeds.Default()
	rep, _ := store.Seed(ctx, v1)
	fmt.Println("v1 added:", len(rep.Added))
	rep, _ = store.Seed(ctx, v1)
	fmt.Println("v1 again applied:", rep.Applied)

	// The master edits one rule and deletes another.
	r, _ := store.GetRule(ctx, "telegram_markdown_image")
	r.Text = "Markdown images do not render in Telegram: send the photo."
	store.UpdateRule(ctx, r.Name, r)
	store.DeleteRule(ctx, "telegram_react_not_emoji")

	v2 := seeds.Set{Version: v1.Version + 1}
	for _, r := range v1.Rules {
		if r.Name == "look_before_refusing" {
			r.Repeat = "after:5"
		}
		v2.Rules = append(v2.Rules, r)
	}
	rep, _ = store.Seed(ctx, v2)
	fmt.Println("v2 updated:", rep.Updated)
	fmt.Println("v2 kept:", rep.Kept)
	fmt.Println("v2 deleted:", rep.Deleted)
	// Output:
	// v1 added: 10
	// v1 again applied: false
	// v2 updated: [write_diff_over_write_file local_shell_for_his_machine telegram_reply_tail look_before_refusing look_before_refusing_thinking destructive_shell unbacked_tool_claim verify_before_done]
	// v2 kept: [telegram_markdown_image]
	// v2 deleted: [telegram_react_not_emoji]
}
