package integration_test

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
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
)

// eachStore runs fn on a fresh SQLite file and a fresh PostgreSQL database.
func eachStore(t *testing.T, fn func(t *testing.T, dsn string)) {
	t.Helper()
	for _, b := range []struct {
		name string
		dsn  func(t *testing.T) string
	}{
		{"sqlite", func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "rules.db") }},
		{"postgres", func(t *testing.T) string { return pgtest.DSN(t) }},
	} {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			fn(t, b.dsn(t))
		})
	}
}

// rollout is one agent process on its own rules: a stock OpenAI functions agent and
// executor on LangChainGo's openai client, against the scripted server.
type rollout struct {
	store *rulesdb.Store
	eng   *streamrules.Engine
	srv   *openaitest.Server
	exec  *agents.Executor
	shell *shellTool
}

func newRollout(t *testing.T, dsn string, cfg *streamrules.Config, rules []streamrules.Rule, replies ...scripted.Reply) *rollout {
	t.Helper()
	ctx := context.Background()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	store, err := rulesdb.Open(ctx, dsn, &rulesdb.Config{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	for _, r := range rules {
		if _, err := store.CreateRule(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if cfg == nil {
		cfg = &streamrules.Config{}
	}
	if cfg.Logger == nil {
		cfg.Logger = quiet
	}
	eng, err := streamrules.New(ctx, store, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(eng.Close)
	r := &rollout{store: store, eng: eng, srv: openaitest.New(t, replies...), shell: &shellTool{}}
	guard, err := middleware.New(eng, nil)
	if err != nil {
		t.Fatal(err)
	}
	agent := guard.Agent(agents.NewOpenAIFunctionsAgent(guard.Model(r.srv.LLM(t)), guard.Tools(r.shell)))
	r.exec = agents.NewExecutor(agent)
	return r
}

// move plays one user message; it returns the output and each chunk the client got.
func (r *rollout) move(t *testing.T, chat, input string) (string, []string) {
	t.Helper()
	var (
		mu     sync.Mutex
		chunks []string
	)
	ctx, move := r.eng.BeginMove(context.Background(), chat)
	out, err := chains.Run(ctx, r.exec, input, chains.WithStreamingFunc(func(_ context.Context, b []byte) error {
		if len(b) > 0 {
			mu.Lock()
			chunks = append(chunks, string(b))
			mu.Unlock()
		}
		return nil
	}))
	if err = move.End(ctx, err); err != nil {
		t.Fatal(err)
	}
	return out, chunks
}

func (r *rollout) outcomes(t *testing.T) []string {
	t.Helper()
	fs, err := r.store.Firings(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, f := range fs {
		out = append(out, f.Rule+":"+string(f.Outcome))
	}
	return out
}

var (
	noSorry = streamrules.Rule{Name: "no_sorry", Scope: "text", Condition: `(?i)\bsorry\b`, Text: "Do not apologise: say what you did."}
	noTodo  = streamrules.Rule{Name: "no_todo", Scope: "text", Condition: `TODO`, Text: "Finish the work: no TODO in an answer."}
	noRm    = streamrules.Rule{Name: "no_rm", Scope: "tool:shell", Condition: `rm `, Text: "Move files to the trash instead of rm."}
)

// TestShadowStreamsAndCounts: a shadowed text rule neither discards nor holds speech (the
// client gets the chunks one by one) and records exactly one would-fire per miss.
func TestShadowStreamsAndCounts(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, dsn string) {
		watched := noSorry
		watched.Shadow = true
		sorry := "Sorry, the disk is full."
		r := newRollout(t, dsn, nil, []streamrules.Rule{watched},
			scripted.Reply{Text: sorry, Chunk: 4},
			scripted.Reply{Text: "All good here.", Chunk: 4},
			scripted.Reply{Text: "Sorry again.", Chunk: 4},
		)
		out, chunks := r.move(t, "c", "disk?")
		if out != sorry {
			t.Fatalf("output %q, want the answer unchanged", out)
		}
		if strings.Join(chunks, "") != sorry || len(chunks) != (len(sorry)+3)/4 {
			t.Fatalf("client got %q, want %q streamed in 4-byte chunks one by one", chunks, sorry)
		}
		r.move(t, "c", "and now?")
		r.move(t, "c", "and now?")
		if n := len(r.srv.Requests()); n != 3 {
			t.Fatalf("%d model calls, want 3: nothing replayed", n)
		}
		if got := r.outcomes(t); !slices.Equal(got, []string{"no_sorry:shadow", "no_sorry:shadow"}) {
			t.Fatalf("firings %v, want one would-fire per miss", got)
		}
		st, err := r.eng.Stats(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if s := st.Rules[0]; s.Fired != 0 || s.Shadow != 2 {
			t.Fatalf("stats %+v", s)
		}
	})
}

// TestShadowEngineWide: Config.Shadow puts a live rule in shadow, and the same run streams.
func TestShadowEngineWide(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, dsn string) {
		sorry := "Sorry, the disk is full."
		r := newRollout(t, dsn, &streamrules.Config{Shadow: true}, []streamrules.Rule{noSorry}, scripted.Reply{Text: sorry, Chunk: 4})
		out, chunks := r.move(t, "c", "disk?")
		if out != sorry || len(chunks) != (len(sorry)+3)/4 {
			t.Fatalf("output %q, chunks %q", out, chunks)
		}
		if got := r.outcomes(t); !slices.Equal(got, []string{"no_sorry:shadow"}) {
			t.Fatalf("firings %v", got)
		}
	})
}

// TestOutcomesFromAgentRuns: each outcome comes out of a real agent run.
func TestOutcomesFromAgentRuns(t *testing.T) {
	t.Parallel()
	shell := func(cmd string) scripted.Reply { return scripted.Reply{ToolCalls: []llms.ToolCall{call("shell", cmd)}} }
	tests := []struct {
		name    string
		rules   []streamrules.Rule
		replies []scripted.Reply
		out     string
		want    []string
	}{
		{"corrected", []streamrules.Rule{noSorry}, []scripted.Reply{
			{Text: "Sorry, it failed."}, {Text: "It failed: the disk is full."},
		}, "It failed: the disk is full.", []string{"no_sorry:corrected"}},
		{"missed_again", []streamrules.Rule{noSorry}, []scripted.Reply{
			{Text: "Sorry, it failed."}, {Text: "So sorry, it failed."},
		}, "So sorry, it failed.", []string{"no_sorry:missed_again"}},
		{"kept after the ceiling", []streamrules.Rule{noSorry, noTodo}, []scripted.Reply{
			{Text: "Sorry, it failed."}, {Text: "It failed. TODO: retry."},
		}, "It failed. TODO: retry.", []string{"no_sorry:corrected", "no_todo:kept"}},
		{"complied", []streamrules.Rule{noRm}, []scripted.Reply{
			shell("rm -rf /tmp/x"), shell("mv /tmp/x ~/.trash"), {Text: "Done."},
		}, "Done.", []string{"no_rm:complied"}},
		{"repeated", []streamrules.Rule{noRm}, []scripted.Reply{
			shell("rm -rf /tmp/x"), shell("rm -rf /tmp/y"), {Text: "Done."},
		}, "Done.", []string{"no_rm:repeated"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			eachStore(t, func(t *testing.T, dsn string) {
				r := newRollout(t, dsn, nil, tt.rules, tt.replies...)
				if out, _ := r.move(t, "c", "clean up"); out != tt.out {
					t.Fatalf("output %q, want %q", out, tt.out)
				}
				if got := r.outcomes(t); !slices.Equal(got, tt.want) {
					t.Fatalf("outcomes %v, want %v", got, tt.want)
				}
				// The stats read the counters, which agree with the rows.
				st, err := r.eng.Stats(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, s := range st.Rules {
					for o, n := range s.Outcomes {
						for range n {
							got = append(got, s.Rule+":"+string(o))
						}
					}
				}
				slices.Sort(got)
				if want := slices.Sorted(slices.Values(tt.want)); !slices.Equal(got, want) {
					t.Fatalf("stats outcomes %v, want %v", got, want)
				}
			})
		})
	}
}
