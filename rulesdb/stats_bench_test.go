package rulesdb_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/pgtest"
	"github.com/streamrules/streamrules/rulesdb"
	"github.com/streamrules/streamrules/statshttp"
)

// BenchmarkSaveMove writes moves of three firings each on PostgreSQL, alternately with the
// counter upkeep of migration 0004 and with the statement from before it on the schema
// from before it (the baseline), so both see the same load on a shared machine. It reports each one's time
// per move and their ratio.
func BenchmarkSaveMove(b *testing.B) {
	firings := []streamrules.Firing{
		{Rule: "telegram_reply_tail", Mode: streamrules.ModeInterrupt, Retry: true, Outcome: streamrules.OutcomeCorrected},
		{Rule: "local_shell_for_his_machine", Mode: streamrules.ModeRemind, Tool: "shell", Outcome: streamrules.OutcomeComplied},
		{Rule: "write_diff_over_write_file", Mode: streamrules.ModeRemind, Tool: "write_file", Outcome: streamrules.OutcomeRepeated},
	}
	ctx := context.Background()
	open := func(uncounted bool) *rulesdb.Store {
		// One connection: one server process to read the CPU time of (backendCPU).
		cfg := rulesdb.Config{Logger: quietLogger(), MaxOpenConns: 1}
		if uncounted {
			rulesdb.SetMigrateTo(&cfg, 3)
		}
		s, err := rulesdb.Open(ctx, pgtest.DSN(b), &cfg)
		if err != nil {
			b.Fatal(err)
		}
		if uncounted {
			rulesdb.UseUncountedSaveMove(s)
		}
		return s
	}
	baseline, counters := open(true), open(false)
	defer baseline.Close()
	defer counters.Close()
	var took [2]time.Duration
	cpu := [2]func() time.Duration{backendCPU(b, baseline), backendCPU(b, counters)}
	cpu0 := [2]time.Duration{cpu[0](), cpu[1]()}
	b.ResetTimer()
	for i := range b.N {
		rec := streamrules.MoveRecord{ChatID: fmt.Sprintf("chat-%d", i%64), Move: int64(i/64 + 1), Answered: true, Firings: firings}
		for k := range 2 {
			j := (i + k) % 2 // alternate which goes first
			s := baseline
			if j == 1 {
				s = counters
			}
			start := time.Now()
			if err := s.SaveMove(ctx, rec); err != nil {
				b.Fatal(err)
			}
			took[j] += time.Since(start)
		}
	}
	b.StopTimer()
	// A write that fails is queued for the database's return, not returned: a baseline
	// whose statement fails would look fast. Every record must have reached its table.
	for name, s := range map[string]*rulesdb.Store{"baseline": baseline, "counters": counters} {
		if n, err := rulesdb.CountStatRows(ctx, s); err != nil || n != 3*b.N {
			b.Fatalf("%s: %d stat rows (%v), want %d: its statement failed", name, n, err, 3*b.N)
		}
	}
	used := [2]time.Duration{cpu[0]() - cpu0[0], cpu[1]() - cpu0[1]}
	b.ReportMetric(float64(took[0].Nanoseconds())/float64(b.N), "baseline-ns/move")
	b.ReportMetric(float64(took[1].Nanoseconds())/float64(b.N), "counters-ns/move")
	b.ReportMetric(float64(took[1])/float64(took[0]), "ratio")
	if used[0] > 0 {
		// Wall time on a loaded machine is mostly waiting; the server's CPU time is the work.
		b.ReportMetric(float64(used[0].Nanoseconds())/float64(b.N), "baseline-cpu-ns/move")
		b.ReportMetric(float64(used[1].Nanoseconds())/float64(b.N), "counters-cpu-ns/move")
		b.ReportMetric(float64(used[1])/float64(used[0]), "cpu-ratio")
	}
}

// backendCPU returns a func reading the CPU time the PostgreSQL server process behind s's
// one connection has used (Linux /proc/PID/schedstat, nanoseconds); a func returning 0
// where that cannot be read (another OS, a remote server).
func backendCPU(b *testing.B, s *rulesdb.Store) func() time.Duration {
	b.Helper()
	var pid int
	if err := s.DB().QueryRowContext(context.Background(), `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
		b.Fatal(err)
	}
	return func() time.Duration {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/schedstat", pid))
		if err != nil {
			return 0
		}
		var ns int64
		if _, err := fmt.Sscan(string(data), &ns); err != nil {
			return 0
		}
		return time.Duration(ns)
	}
}

// BenchmarkStats10M answers GET /v1/stats on PostgreSQL over 10,000,000 stat rows of 100
// rules: from the counters (the handler, JSON included), and by count(*) over the raw
// rows as before the counters (baseline). The rows are made with generate_series; -short skips it.
func BenchmarkStats10M(b *testing.B) {
	if testing.Short() {
		b.Skip("10,000,000 rows: not under -short")
	}
	ctx := context.Background()
	s, err := rulesdb.Open(ctx, pgtest.DSN(b), &rulesdb.Config{Logger: quietLogger()})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	const rules, rows = 100, 10_000_000
	for i := range rules {
		scope := "text"
		if i%2 == 1 {
			scope = "tool:shell"
		}
		if _, err := s.CreateRule(ctx, streamrules.Rule{Name: fmt.Sprintf("rule_%03d", i), Scope: scope, Condition: "x", Text: "t"}); err != nil {
			b.Fatal(err)
		}
	}
	start := time.Now()
	// Odd rules are tool rules (complied, repeated), even ones text rules (corrected,
	// missed_again, kept), one row in ten a would-fire.
	for _, q := range []string{
		fmt.Sprintf(`INSERT INTO stream_rule_stat (rule, chat_id, move, mode, retry, tool, fired_at, outcome)
SELECT 'rule_' || lpad((i %% %[1]d)::text, 3, '0'), 'chat-' || (i %% 100000), i / 100000 + 1,
       CASE WHEN i %% 2 = 1 THEN 'remind' ELSE 'interrupt' END, i %% 2 = 0, CASE WHEN i %% 2 = 1 THEN 'shell' ELSE '' END,
       now() - make_interval(secs => %[2]d - i),
       CASE WHEN i %% 10 = 9 THEN 'shadow' WHEN i %% 2 = 1 THEN (ARRAY['complied','repeated'])[i %% 3 %% 2 + 1]
            ELSE (ARRAY['corrected','missed_again','kept'])[i %% 3 + 1] END
FROM generate_series(1, %[2]d) AS i`, rules, rows),
		`INSERT INTO stream_rule_counter (rule, outcome, fired, last_fired_at)
SELECT rule, outcome, COUNT(*), MAX(fired_at) FROM stream_rule_stat GROUP BY rule, outcome`,
		`VACUUM ANALYZE stream_rule_stat`,
		`VACUUM ANALYZE stream_rule_counter`,
	} {
		if _, err := s.DB().ExecContext(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("%d rows made in %s", rows, time.Since(start).Round(time.Second))
	eng, err := streamrules.New(ctx, s, &streamrules.Config{Logger: quietLogger()})
	if err != nil {
		b.Fatal(err)
	}
	defer eng.Close()
	h := statshttp.Handler(eng)
	b.Run("counters", func(b *testing.B) {
		for range b.N {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("GET", "/v1/stats", nil))
			if rec.Code != 200 {
				b.Fatalf("status %d", rec.Code)
			}
		}
	})
	b.Run("baseline", func(b *testing.B) {
		for range b.N {
			var n int
			qrows, err := s.DB().QueryContext(ctx, `SELECT rule, COUNT(*) FROM stream_rule_stat GROUP BY rule`)
			if err != nil {
				b.Fatal(err)
			}
			for qrows.Next() {
				n++
			}
			qrows.Close()
			if n != rules {
				b.Fatalf("%d rules counted", n)
			}
		}
	})
}
