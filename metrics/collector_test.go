package metrics_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/enginetest"
	"github.com/streamrules/streamrules/metrics"
	"github.com/streamrules/streamrules/rulesdb"
)

func rules() []streamrules.Rule {
	return []streamrules.Rule{
		{Name: "no_rm", Scope: "tool:shell", Condition: "rm", Text: "Do not remove."},
		{Name: "tail", Scope: "text", Condition: "#\\d+$", Negate: true, Text: "End with #id."},
		{Name: "watched", Scope: "text", Condition: "sorry", Text: "No apologies.", Shadow: true},
		{Name: "off", Scope: "text", Condition: "x", Text: "x", Disabled: true},
	}
}

func memStore(t *testing.T) *streamrules.MemoryStore {
	t.Helper()
	return enginetest.Store(t, rules()...)
}

// queueStats stands in for a store with a write queue.
func queueStats() metrics.StoreStats {
	return metrics.StoreStats{QueuedMoves: 3, DroppedMoves: 2, RejectedMoves: 4, MoveWriteFailures: 1, RoundTrips: 42}
}

func newEngine(t *testing.T, store streamrules.Store, col *metrics.Collector) *streamrules.Engine {
	t.Helper()
	return enginetest.New(t, store, col.Instrument(&streamrules.Config{}))
}

// play runs three moves: a reminder complied with and a discard corrected; a would-fire
// and a reminder repeated; a discard whose move fails before its replay.
func play(t *testing.T, eng *streamrules.Engine) {
	t.Helper()
	ctx := context.Background()
	mctx, m := eng.BeginMove(ctx, "c1")
	m.ToolReminders(mctx, "shell", `{"cmd":"rm a"}`)
	m.CheckAnswer(mctx, "done")
	m.CheckAnswer(mctx, "done #1")
	_ = m.End(mctx, nil)

	mctx, m = eng.BeginMove(ctx, "c2")
	m.ToolReminders(mctx, "shell", `{"cmd":"rm a"}`)
	m.ToolReminders(mctx, "shell", `{"cmd":"rm b"}`)
	m.CheckAnswer(mctx, "sorry #2")
	_ = m.End(mctx, nil)

	mctx, m = eng.BeginMove(ctx, "c3")
	m.CheckAnswer(mctx, "no tail")
	_ = m.End(mctx, errors.New("provider down"))
}

func TestCollector(t *testing.T) {
	t.Parallel()
	mem := memStore(t)
	col := metrics.NewCollector(&metrics.Config{StoreStats: queueStats})
	eng := newEngine(t, mem, col)
	play(t, eng)

	want := `
# HELP streamrules_engine_firings_total Rule firings by rule, mode, outcome and delivery, counted when their move ends; outcome shadow is a would-fire, none a discard whose replay never came; delivery full, manifest (over the reminder budget) or none (nothing reached the model).
# TYPE streamrules_engine_firings_total counter
streamrules_engine_firings_total{delivery="full",mode="interrupt",outcome="corrected",rule="tail"} 1
streamrules_engine_firings_total{delivery="full",mode="interrupt",outcome="none",rule="tail"} 1
streamrules_engine_firings_total{delivery="full",mode="remind",outcome="complied",rule="no_rm"} 1
streamrules_engine_firings_total{delivery="full",mode="remind",outcome="repeated",rule="no_rm"} 1
streamrules_engine_firings_total{delivery="none",mode="interrupt",outcome="shadow",rule="watched"} 1
# HELP streamrules_engine_answers_discarded_total Answers (responses) a text rule or a gate discarded and whose tour was replayed.
# TYPE streamrules_engine_answers_discarded_total counter
streamrules_engine_answers_discarded_total 2
# HELP streamrules_engine_rules_loaded Rules in force: enabled and valid.
# TYPE streamrules_engine_rules_loaded gauge
streamrules_engine_rules_loaded 3
# HELP streamrules_engine_rules_disabled Rules kept in the store but disabled, as of the last reload.
# TYPE streamrules_engine_rules_disabled gauge
streamrules_engine_rules_disabled 1
# HELP streamrules_engine_rules_skipped Rows in the store skipped as bad or duplicate (see the log).
# TYPE streamrules_engine_rules_skipped gauge
streamrules_engine_rules_skipped 0
# HELP streamrules_engine_reloads_total Rule set reloads by result (ok, error).
# TYPE streamrules_engine_reloads_total counter
streamrules_engine_reloads_total{result="error"} 0
streamrules_engine_reloads_total{result="ok"} 1
# HELP streamrules_store_round_trips_total Statements the store sent to the database since it opened.
# TYPE streamrules_store_round_trips_total counter
streamrules_store_round_trips_total 42
# HELP streamrules_store_queued_records Finished moves waiting in the write queue.
# TYPE streamrules_store_queued_records gauge
streamrules_store_queued_records 3
# HELP streamrules_store_dropped_records_total Finished moves the write queue dropped.
# TYPE streamrules_store_dropped_records_total counter
streamrules_store_dropped_records_total 2
# HELP streamrules_store_rejected_records_total Finished moves the database refused for good: not retried, lost.
# TYPE streamrules_store_rejected_records_total counter
streamrules_store_rejected_records_total 4
# HELP streamrules_store_write_failures_total Writes of finished moves that failed.
# TYPE streamrules_store_write_failures_total counter
streamrules_store_write_failures_total 1
`
	names := []string{
		"streamrules_engine_firings_total", "streamrules_engine_answers_discarded_total",
		"streamrules_engine_rules_loaded", "streamrules_engine_rules_disabled", "streamrules_engine_rules_skipped",
		"streamrules_engine_reloads_total", "streamrules_store_round_trips_total", "streamrules_store_queued_records",
		"streamrules_store_dropped_records_total", "streamrules_store_rejected_records_total",
		"streamrules_store_write_failures_total",
	}
	if err := testutil.CollectAndCompare(col, strings.NewReader(want), names...); err != nil {
		t.Fatal(err)
	}
	// Histograms: one observation per check and per saved move.
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(col)
	counts := sampleCounts(t, reg)
	for key, n := range map[string]uint64{
		"streamrules_engine_check_duration_seconds/remind":    3,
		"streamrules_engine_check_duration_seconds/interrupt": 4,
		"streamrules_store_save_move_seconds/ok":              3,
		"streamrules_engine_reload_duration_seconds/":         1,
	} {
		if counts[key] != n {
			t.Errorf("%s: %d observations, want %d (all: %v)", key, counts[key], n, counts)
		}
	}
	if problems, err := testutil.CollectAndLint(col); err != nil || len(problems) != 0 {
		t.Fatalf("lint: %v %+v", err, problems)
	}
}

// sampleCounts maps "name/first label value" to each histogram's sample count.
func sampleCounts(t *testing.T, g prometheus.Gatherer) map[string]uint64 {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]uint64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			if h := m.GetHistogram(); h != nil {
				label := ""
				if len(m.GetLabel()) > 0 {
					label = m.GetLabel()[0].GetValue()
				}
				out[mf.GetName()+"/"+label] = h.GetSampleCount()
			}
		}
	}
	return out
}

// TestCollectorWithoutQueue: a store without a write queue gets its SaveMove errors
// counted as write failures, and a deleted rule's series go at the next reload.
func TestCollectorWithoutQueue(t *testing.T) {
	t.Parallel()
	mem := memStore(t)
	failing := &failingStore{MemoryStore: mem}
	col := metrics.NewCollector(nil)
	eng := newEngine(t, failing, col)
	failing.fail.Store(true)
	play(t, eng)
	failures := `
# HELP streamrules_store_write_failures_total Writes of finished moves that failed.
# TYPE streamrules_store_write_failures_total counter
streamrules_store_write_failures_total 3
`
	if err := testutil.CollectAndCompare(col, strings.NewReader(failures), "streamrules_store_write_failures_total"); err != nil {
		t.Fatal(err)
	}
	if err := mem.DeleteRule(context.Background(), "no_rm"); err != nil {
		t.Fatal(err)
	}
	if err := eng.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := `
# HELP streamrules_engine_firings_total Rule firings by rule, mode, outcome and delivery, counted when their move ends; outcome shadow is a would-fire, none a discard whose replay never came; delivery full, manifest (over the reminder budget) or none (nothing reached the model).
# TYPE streamrules_engine_firings_total counter
streamrules_engine_firings_total{delivery="full",mode="interrupt",outcome="corrected",rule="tail"} 1
streamrules_engine_firings_total{delivery="full",mode="interrupt",outcome="none",rule="tail"} 1
streamrules_engine_firings_total{delivery="none",mode="interrupt",outcome="shadow",rule="watched"} 1
`
	if err := testutil.CollectAndCompare(col, strings.NewReader(want), "streamrules_engine_firings_total"); err != nil {
		t.Fatal(err)
	}
	if problems, err := testutil.CollectAndLint(col); err != nil || len(problems) != 0 {
		t.Fatalf("lint: %v %+v", err, problems)
	}
}

type failingStore struct {
	*streamrules.MemoryStore
	fail atomic.Bool
}

func (s *failingStore) SaveMove(ctx context.Context, rec streamrules.MoveRecord) error {
	if s.fail.Load() {
		return errors.New("disk full")
	}
	return s.MemoryStore.SaveMove(ctx, rec)
}

func TestNoRuleLabel(t *testing.T) {
	t.Parallel()
	mem := memStore(t)
	col := metrics.NewCollector(&metrics.Config{NoRuleLabel: true})
	eng := newEngine(t, mem, col)
	play(t, eng)
	want := `
# HELP streamrules_engine_firings_total Rule firings by rule, mode, outcome and delivery, counted when their move ends; outcome shadow is a would-fire, none a discard whose replay never came; delivery full, manifest (over the reminder budget) or none (nothing reached the model).
# TYPE streamrules_engine_firings_total counter
streamrules_engine_firings_total{delivery="full",mode="interrupt",outcome="corrected"} 1
streamrules_engine_firings_total{delivery="full",mode="interrupt",outcome="none"} 1
streamrules_engine_firings_total{delivery="full",mode="remind",outcome="complied"} 1
streamrules_engine_firings_total{delivery="full",mode="remind",outcome="repeated"} 1
streamrules_engine_firings_total{delivery="none",mode="interrupt",outcome="shadow"} 1
`
	if err := testutil.CollectAndCompare(col, strings.NewReader(want), "streamrules_engine_firings_total"); err != nil {
		t.Fatal(err)
	}
	// Without a Store the rule gauges still come from the engine's reload, disabled rows
	// included, and follow a rule disabled since.
	rulesWant := func(loaded, disabled int) string {
		return fmt.Sprintf(`
# HELP streamrules_engine_rules_loaded Rules in force: enabled and valid.
# TYPE streamrules_engine_rules_loaded gauge
streamrules_engine_rules_loaded %d
# HELP streamrules_engine_rules_disabled Rules kept in the store but disabled, as of the last reload.
# TYPE streamrules_engine_rules_disabled gauge
streamrules_engine_rules_disabled %d
`, loaded, disabled)
	}
	gauges := []string{"streamrules_engine_rules_loaded", "streamrules_engine_rules_disabled"}
	if err := testutil.CollectAndCompare(col, strings.NewReader(rulesWant(3, 1)), gauges...); err != nil {
		t.Fatal(err)
	}
	r, err := mem.GetRule(context.Background(), "watched")
	if err != nil {
		t.Fatal(err)
	}
	r.Disabled = true
	if _, err := mem.UpdateRule(context.Background(), "watched", r); err != nil {
		t.Fatal(err)
	}
	if err := eng.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := testutil.CollectAndCompare(col, strings.NewReader(rulesWant(2, 2)), gauges...); err != nil {
		t.Fatal(err)
	}
}

// TestRulesdbStore: the store the project ships has the write queue and the round-trip
// counter the collector looks for, so their series are exported from it (a fake with the
// interface's methods would pass even if the two drifted apart).
func TestRulesdbStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "rules.db")
	store, err := rulesdb.Open(ctx, "sqlite:"+path, &rulesdb.Config{Logger: slog.New(slog.DiscardHandler), ReloadInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	col := metrics.NewCollector(&metrics.Config{StoreStats: func() metrics.StoreStats { return metrics.StoreStats(store.Stats()) }})
	queueSeries := []string{"streamrules_store_queued_records", "streamrules_store_dropped_records_total",
		"streamrules_store_rejected_records_total", "streamrules_store_write_failures_total"}
	want := func(rejected int) string {
		return fmt.Sprintf(`
# HELP streamrules_store_queued_records Finished moves waiting in the write queue.
# TYPE streamrules_store_queued_records gauge
streamrules_store_queued_records 0
# HELP streamrules_store_dropped_records_total Finished moves the write queue dropped.
# TYPE streamrules_store_dropped_records_total counter
streamrules_store_dropped_records_total 0
# HELP streamrules_store_rejected_records_total Finished moves the database refused for good: not retried, lost.
# TYPE streamrules_store_rejected_records_total counter
streamrules_store_rejected_records_total %d
# HELP streamrules_store_write_failures_total Writes of finished moves that failed.
# TYPE streamrules_store_write_failures_total counter
streamrules_store_write_failures_total 0
`, rejected)
	}
	if err := testutil.CollectAndCompare(col, strings.NewReader(want(0)), queueSeries...); err != nil {
		t.Fatal(err)
	}
	if n := testutil.CollectAndCount(col, "streamrules_store_round_trips_total"); n != 1 {
		t.Fatalf("round trips: %d series, want 1", n)
	}
	// The database refuses every move for good (a trigger, as a constraint would): the
	// record is lost, and the series says so; it is not a write failure kept for a retry.
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `CREATE TRIGGER refuse_moves BEFORE INSERT ON stream_chat
		BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`); err != nil {
		t.Fatal(err)
	}
	if err := store.SaveMove(ctx, streamrules.MoveRecord{ChatID: "c1", Move: 1, Answered: true}); err == nil {
		t.Fatal("SaveMove: the database refused the record, but no error")
	}
	if err := testutil.CollectAndCompare(col, strings.NewReader(want(1)), queueSeries...); err != nil {
		t.Fatal(err)
	}
}
