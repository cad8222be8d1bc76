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
)

// TestReminderBudgetOnStores: a stock executor on LangChainGo's openai client, three
// 250-character rules on shell and a budget of 400, on PostgreSQL and on SQLite. The
// model reads one manifest rule; the stat rows and GET /v1/stats record every firing's
// delivery and the read.
func TestReminderBudgetOnStores(t *testing.T) {
	t.Parallel()
	for _, b := range []struct{ name, dsn string }{
		{"postgres", pgtest.DSN(t)},
		{"sqlite", "sqlite:" + filepath.Join(t.TempDir(), "budget.db")},
	} {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
			store, err := rulesdb.Open(ctx, b.dsn, &rulesdb.Config{Logger: quiet})
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
			srv := openaitest.New(t,
				scripted.Reply{ToolCalls: []llms.ToolCall{call("shell", "df -h /")}},
				scripted.Reply{ToolCalls: []llms.ToolCall{{Type: "function", FunctionCall: &llms.FunctionCall{Name: ruletools.ReadName, Arguments: `{"rule":"charlie"}`}}}},
				scripted.Reply{Text: "12G free."},
			)
			guard := middleware.New(eng, nil)
			ts := guard.Tools(&shellTool{}, ruletools.Reader(eng))
			exec := agents.NewExecutor(guard.Agent(agents.NewOpenAIFunctionsAgent(guard.Model(srv.LLM(t)), ts)))
			mctx, move := eng.BeginMove(ctx, "budget-chat")
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

			rows, err := store.Firings(ctx, "budget-chat")
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range rows {
				got = append(got, fmt.Sprintf("%s %s %v", f.Rule, f.Delivery, f.Read))
			}
			if want := []string{"alpha full false", "bravo manifest false", "charlie manifest true"}; !slices.Equal(got, want) {
				t.Fatalf("stat rows %v, want %v", got, want)
			}
			web := httptest.NewServer(eng.StatsHandler())
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
			got = nil
			for _, st := range stats.Rules {
				got = append(got, fmt.Sprintf("%s full=%d manifest=%d read=%d", st.Rule, st.Delivery["full"], st.Delivery["manifest"], st.ManifestRead))
			}
			if want := []string{"alpha full=1 manifest=0 read=0", "bravo full=0 manifest=1 read=0", "charlie full=0 manifest=1 read=1"}; !slices.Equal(got, want) {
				t.Fatalf("/v1/stats %v, want %v", got, want)
			}
		})
	}
}
