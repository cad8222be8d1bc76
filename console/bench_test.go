package console_test

import (
	"bytes"
	"context"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/console"
	"github.com/streamrules/streamrules/internal/pgtest"
	"github.com/streamrules/streamrules/rulesdb"
)

// The pages' server time over a big store: 10,000 rules and many stat rows
// (STREAMRULES_BENCH_STAT_ROWS, default 1,000,000) over the last 60 days, with their
// counters. The rows are written with SQL, as a year of SaveMove would leave them.
//
//	go test -run '^$' -bench BenchmarkPages -benchtime 20x ./console
func BenchmarkPages(b *testing.B) {
	rows := 1_000_000
	if s := os.Getenv("STREAMRULES_BENCH_STAT_ROWS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			b.Fatal(err)
		}
		rows = n
	}
	for _, be := range []struct {
		name string
		dsn  func(b *testing.B) string
	}{
		{"sqlite", func(b *testing.B) string { return "sqlite:" + filepath.Join(b.TempDir(), "rules.db") }},
		{"postgres", func(b *testing.B) string { return pgtest.DSN(b) }},
	} {
		b.Run(be.name, func(b *testing.B) {
			if be.name == "postgres" && os.Getenv("STREAMRULES_BENCH_POSTGRES") == "" {
				b.Skip("set STREAMRULES_BENCH_POSTGRES=1 to run the PostgreSQL pages benchmark")
			}
			benchPages(b, be.dsn(b), 10_000, rows)
		})
	}
}

func benchPages(b *testing.B, dsn string, nRules, nRows int) {
	ctx := context.Background()
	store, err := rulesdb.Open(ctx, dsn, &rulesdb.Config{Logger: quiet(), ReloadInterval: -1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { store.Close() })
	pg := strings.HasPrefix(dsn, "postgres")
	fill(b, store, pg, nRules, nRows)
	eng, err := streamrules.New(ctx, store, &streamrules.Config{Logger: quiet()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(eng.Close)
	h, err := console.New(store, eng, &console.Config{Password: testPassword})
	if err != nil {
		b.Fatal(err)
	}
	const tok = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	var transcript strings.Builder
	for i := range 100 {
		fmt.Fprintf(&transcript, `{"chat":"c%d","tools":[{"name":"shell","args":"{\"cmd\":\"ls %d\"}"}],"answer":"answer %d with word%04d"}`+"\n", i%10, i, i, i)
	}
	pages := []struct {
		name string
		req  func() *http.Request
	}{
		{"overview", get("/console/")},
		{"rules", get("/console/rules")},
		{"rules_filtered", get("/console/rules?scope=text&state=never_fired")},
		{"rule", get("/console/rules/rule_05000")},
		{"firings", get("/console/firings")},
		{"tests", get("/console/tests")},
		{"tests_failing", get("/console/tests?only=failed")},
		{"try", func() *http.Request {
			form := url.Values{"csrf": {tok}, "rule": {"rule_05000"}, "text": {"an answer with word5000 in it"}}
			r := httptest.NewRequest(http.MethodPost, "/console/try", strings.NewReader(form.Encode()))
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			r.AddCookie(&http.Cookie{Name: "streamrules_console_csrf", Value: tok})
			return r
		}},
		{"backtest_100_moves", func() *http.Request {
			var body bytes.Buffer
			mw := multipart.NewWriter(&body)
			_ = mw.WriteField("csrf", tok)
			fw, _ := mw.CreateFormFile("transcript", "t.jsonl")
			_, _ = fw.Write([]byte(transcript.String()))
			_ = mw.Close()
			r := httptest.NewRequest(http.MethodPost, "/console/backtest", &body)
			r.Header.Set("Content-Type", mw.FormDataContentType())
			r.AddCookie(&http.Cookie{Name: "streamrules_console_csrf", Value: tok})
			return r
		}},
	}
	// The same pages with the counters read for every page (Config.StatsMaxAge < 0).
	fresh, err := console.New(store, eng, &console.Config{Password: testPassword, StatsMaxAge: -1})
	if err != nil {
		b.Fatal(err)
	}
	for _, p := range pages[:4] {
		b.Run(p.name+"_counters_uncached", func(b *testing.B) {
			for b.Loop() {
				rec := httptest.NewRecorder()
				fresh.ServeHTTP(rec, p.req())
				if rec.Code != http.StatusOK {
					b.Fatalf("%d", rec.Code)
				}
			}
		})
	}
	for _, p := range pages {
		// The first request fills what the console caches (the overview's past days): its
		// time is reported apart, as cold_ms.
		start := time.Now()
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, p.req())
		if rec.Code != http.StatusOK {
			b.Fatalf("%s: %d\n%s", p.name, rec.Code, rec.Body.String())
		}
		cold := time.Since(start)
		b.Run(p.name, func(b *testing.B) {
			for b.Loop() {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, p.req())
				if rec.Code != http.StatusOK {
					b.Fatalf("%d", rec.Code)
				}
			}
			b.ReportMetric(float64(cold.Microseconds())/1000, "cold_ms")
		})
	}
}

func get(path string) func() *http.Request {
	return func() *http.Request { return httptest.NewRequest(http.MethodGet, path, nil) }
}

// fill writes nRules text rules (rule_00000 …, each on its own word) and nRows firings
// spread over them and over the last 60 days, oldest first as SaveMove appends them (so
// the rows of a day sit together, as they do in a real table), and their counters.
func fill(b *testing.B, s *rulesdb.Store, pg bool, nRules, nRows int) {
	b.Helper()
	ctx := context.Background()
	db := s.DB()
	now := time.Now().UTC()
	var stmts []string
	if pg {
		stmts = []string{
			fmt.Sprintf(`INSERT INTO stream_rules (name, scope, condition, text) SELECT 'rule_' || lpad(i::text, 5, '0'), 'text', 'word' || lpad(i::text, 4, '0'), 'Do not say word ' || i FROM generate_series(0, %d) i`, nRules-1),
			fmt.Sprintf(`INSERT INTO stream_rule_stat (rule, chat_id, move, mode, outcome, fired_at)
SELECT 'rule_' || lpad(((i * 7919) %% %d)::text, 5, '0'), 'chat-' || (i %% 5000), i, 'interrupt',
       (ARRAY['corrected','missed_again','kept','fixed'])[1 + i %% 4], $1::timestamptz - (((%d - i) * 5184000 / %d) * interval '1 second')
FROM generate_series(0::bigint, %d) i`, nRules/2, nRows-1, nRows, nRows-1),
		}
	} else {
		stmts = []string{
			fmt.Sprintf(`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < %d)
INSERT INTO stream_rules (name, scope, condition, text) SELECT printf('rule_%%05d', i), 'text', printf('word%%04d', i), 'Do not say word ' || i FROM n`, nRules-1),
			fmt.Sprintf(`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < %d)
INSERT INTO stream_rule_stat (rule, chat_id, move, mode, outcome, fired_at)
SELECT printf('rule_%%05d', (i * 7919) %% %d), 'chat-' || (i %% 5000), i, 'interrupt',
       CASE i %% 4 WHEN 0 THEN 'corrected' WHEN 1 THEN 'missed_again' WHEN 2 THEN 'kept' ELSE 'fixed' END,
       strftime('%%Y-%%m-%%d %%H:%%M:%%f+00:00', ?, '-' || ((%d - i) * 5184000 / %d) || ' seconds')
FROM n`, nRows-1, nRules/2, nRows-1, nRows),
		}
	}
	// Every rule has tests, two examples, one failing in ten rules: the Tests page runs
	// them all.
	stmts = append(stmts, `UPDATE stream_rules SET tests = '{"fires":["say ' || condition || ' now"],"passes":["' ||
  CASE WHEN id % 10 = 0 THEN condition ELSE 'nothing' END || ' here"]}'`)
	stmts = append(stmts, `INSERT INTO stream_rule_counter (rule, outcome, fired, last_fired_at) SELECT rule, outcome, COUNT(*), MAX(fired_at) FROM stream_rule_stat GROUP BY rule, outcome`)
	for i, q := range stmts {
		var args []any
		if i == 1 {
			if pg {
				args = []any{now}
			} else {
				args = []any{now.Format("2006-01-02 15:04:05")}
			}
		}
		if _, err := db.ExecContext(ctx, q, args...); err != nil {
			b.Fatalf("fill: %v\n%s", err, q)
		}
	}
	if !pg {
		if _, err := db.ExecContext(ctx, `ANALYZE`); err != nil {
			b.Fatal(err)
		}
	} else if _, err := db.ExecContext(ctx, `VACUUM ANALYZE stream_rule_stat`); err != nil {
		// VACUUM is what autovacuum does to a table that grew: it also summarizes the
		// fired_at BRIN index's new page ranges, which until then every range scan reads
		// whole (the overview's "today" read the table).
		b.Fatal(err)
	}
}
