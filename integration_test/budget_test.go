package integration_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/openaitest"
	"github.com/streamrules/streamrules/internal/pgtest"
	"github.com/streamrules/streamrules/internal/scripted"
	"github.com/streamrules/streamrules/middleware"
	"github.com/streamrules/streamrules/rulesdb"
	"github.com/streamrules/streamrules/ruletools"
	"github.com/streamrules/streamrules/statshttp"
)

// TestReminderBudgetOnStores: a stock executor on LangChainGo's openai client, three
// 250-character rules on shell and a budget of 400, on PostgreSQL and on SQLite. The
// model reads one manifest rule; the stat rows and GET /v1/stats record every firing's
// delivery and the read. End does not wait for the write (no ReadYourWrites): "single"
// has its one record written alone by the queue, "batched" holds two chats' moves in the
// queue (BatchDelay an hour) until Close writes them in one batch (group commit), and a
// reopened store answers.
func TestReminderBudgetOnStores(t *testing.T) {
	t.Parallel()
	for _, b := range []struct{ name, dsn string }{
		{"postgres", pgtest.DSN(t)},
		{"sqlite", "sqlite:" + filepath.Join(t.TempDir(), "budget.db")},
		{"postgres/batched", pgtest.DSN(t)},
		{"sqlite/batched", "sqlite:" + filepath.Join(t.TempDir(), "budget-batched.db")},
	} {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			batched := strings.HasSuffix(b.name, "/batched")
			chats := []string{"budget-chat"}
			cfg := &rulesdb.Config{Logger: quiet}
			if batched {
				chats = append(chats, "budget-chat-2")
				cfg.BatchDelay = time.Hour
			}
			ctx := context.Background()
			store, err := rulesdb.Open(ctx, b.dsn, cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = store.Close() })
			for _, name := range []string{"alpha", "bravo", "charlie"} {
				head := "Rule " + name + " applies to shell. "
				if _, err := store.CreateRule(ctx, streamrules.Rule{Name: name, Scope: "tool:shell", Text: head + strings.Repeat("z", 250-len(head))}); err != nil {
					t.Fatal(err)
				}
			}
			eng, err := streamrules.New(ctx, store, &streamrules.Config{Logger: quiet, ReminderBudget: 400})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(eng.Close)
			for _, chat := range chats {
				budgetMove(t, eng, chat)
			}
			if batched {
				if n := store.Stats().QueuedMoves; n != 2 {
					t.Fatalf("%d moves queued before Close, want 2", n)
				}
				eng.Close()
				if err := store.Close(); err != nil {
					t.Fatal(err)
				}
				if store.Stats().Batches != 1 || store.Stats().WrittenMoves != 2 {
					t.Fatalf("%d batches, %d moves written; want one batch of 2", store.Stats().Batches, store.Stats().WrittenMoves)
				}
				if store, err = rulesdb.Open(ctx, b.dsn, &rulesdb.Config{Logger: quiet}); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = store.Close() })
				if eng, err = streamrules.New(ctx, store, &streamrules.Config{Logger: quiet}); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(eng.Close)
			}

			for _, chat := range chats {
				rows, err := store.Firings(ctx, chat)
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, f := range rows {
					got = append(got, fmt.Sprintf("%s %s %v", f.Rule, f.Delivery, f.Read))
				}
				slices.Sort(got) // a batch inserts in its own order
				if want := []string{"alpha full false", "bravo manifest false", "charlie manifest true"}; !slices.Equal(got, want) {
					t.Fatalf("%s: stat rows %v, want %v", chat, got, want)
				}
			}
			web := httptest.NewServer(statshttp.Handler(eng))
			defer web.Close()
			resp, err := http.Get(web.URL + "/v1/stats")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var stats streamrules.Stats
			if err := json.NewDecoder(resp.Body).Decode(&stats); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, st := range stats.Rules {
				got = append(got, fmt.Sprintf("%s full=%d manifest=%d read=%d", st.Rule, st.Delivery["full"], st.Delivery["manifest"], st.ManifestRead))
			}
			n := len(chats)
			want := []string{fmt.Sprintf("alpha full=%d manifest=0 read=0", n), fmt.Sprintf("bravo full=0 manifest=%d read=0", n),
				fmt.Sprintf("charlie full=0 manifest=%d read=%d", n, n)}
			if !slices.Equal(got, want) {
				t.Fatalf("/v1/stats %v, want %v", got, want)
			}
		})
	}
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// budgetMove runs one move of chat through a stock executor: a shell call whose result
// carries alpha in full and bravo and charlie in manifest form, a stream_rule_read of
// charlie, and the answer.
func budgetMove(t *testing.T, eng *streamrules.Engine, chat string) {
	t.Helper()
	ctx := context.Background()
	srv := openaitest.New(t,
		scripted.Reply{ToolCalls: []llms.ToolCall{call("shell", "df -h /")}},
		scripted.Reply{ToolCalls: []llms.ToolCall{{Type: "function", FunctionCall: &llms.FunctionCall{Name: ruletools.ReadName, Arguments: `{"rule":"charlie"}`}}}},
		scripted.Reply{Text: "12G free."},
	)
	guard, err := middleware.New(eng, nil)
	if err != nil {
		t.Fatal(err)
	}
	ts := guard.Tools(&shellTool{}, ruletools.Reader(eng))
	exec := agents.NewExecutor(guard.Agent(agents.NewOpenAIFunctionsAgent(guard.Model(srv.LLM(t)), ts)))
	mctx, move := eng.BeginMove(ctx, chat)
	out, err := chains.Run(mctx, exec, "how much disk is free?")
	if err = move.End(mctx, err); err != nil || out != "12G free." {
		t.Fatalf("run: %q, %v", out, err)
	}
	reqs := srv.Requests()
	var results []string
	for _, m := range reqs[2].Body.Messages {
		if m.Role == "tool" {
			results = append(results, m.Content.String())
		}
	}
	if len(results) != 2 || strings.Count(results[0], `delivery="manifest"`) != 2 ||
		!strings.HasPrefix(results[0], `<system-reminder rule="alpha">Rule alpha`) || !strings.Contains(results[1], `"text":"Rule charlie applies to shell. zz`) {
		t.Fatalf("tool results in the last request: %q", results)
	}
}
