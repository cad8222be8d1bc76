package metrics

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/streamrules/streamrules"
)

// Config tunes a Collector. A nil *Config means all defaults.
type Config struct {
	// StoreStats, if set, is called at scrape time for the store's counters, kept in
	// memory (no query): round trips and the write queue. For a *rulesdb.Store:
	//
	//	StoreStats: func() metrics.StoreStats { return metrics.StoreStats(store.Stats()) }
	//
	// Default nil: no store metrics but SaveMove's time and errors.
	StoreStats func() StoreStats
	// NoRuleLabel drops the rule label from the firing counter, for hosts with thousands
	// of rules. Default false: one series per rule, mode and outcome.
	NoRuleLabel bool
}

// StoreStats is what a store with a write queue has counted since it opened, field for
// field as rulesdb.Stats has it, so that one converts to the other. The collector exports
// RoundTrips, QueuedMoves, DroppedMoves, RejectedMoves and MoveWriteFailures.
type StoreStats struct {
	RoundTrips        int64 // statements sent
	WriteStatements   int64 // of those, the write path's
	QueuedMoves       int   // records waiting to be written now
	WrittenMoves      int64 // records written
	DroppedMoves      int64 // records dropped (the queue was full)
	RejectedMoves     int64 // records the database refused for good (lost)
	MoveWriteFailures int64 // writes that failed, kept for a retry
	Batches           int64 // batches written
}

// Collector is a prometheus.Collector over one engine: register it with the host's
// registry, and give the engine its hooks with Instrument. It is safe for concurrent use.
type Collector struct {
	cfg Config

	firings   *prometheus.CounterVec
	reads     *prometheus.CounterVec // manifest deliveries read with stream_rule_read (delivery.go)
	discarded prometheus.Counter
	checks    *prometheus.HistogramVec
	reloads   *prometheus.CounterVec
	reloadDur prometheus.Histogram
	saves     *prometheus.HistogramVec
	saveFails prometheus.Counter   // SaveMove errors the engine saw: write failures without a queue
	visible   prometheus.Histogram // held speech: provider's first chunk to client's first
	held      prometheus.Counter
	early     prometheus.Counter

	mu     sync.Mutex
	counts streamrules.LoadSummary
	names  []string // rules in force, by name, as of the last change (unused with NoRuleLabel): a rule gone from it loses its series

	rulesLoaded, rulesDisabled, rulesSkipped *prometheus.Desc
	roundTrips, queued, dropped, failures    *prometheus.Desc
	rejected                                 *prometheus.Desc
}

var _ prometheus.Collector = (*Collector)(nil)

const ns = "streamrules"

// Bucket bounds. A check is a prefilter pass and a few regexps: microseconds. A reload
// compiles the rule set: milliseconds to seconds. SaveMove is one round trip.
var (
	checkBuckets  = prometheus.ExponentialBuckets(1e-6, 4, 10)   // 1µs … 262ms
	reloadBuckets = prometheus.ExponentialBuckets(1e-4, 4, 10)   // 100µs … 26s
	saveBuckets   = prometheus.ExponentialBuckets(1e-4, 2.5, 12) // 100µs … 2.4s
	// The wait for the first visible chunk: microseconds when speech streams, the whole
	// answer's generation (seconds) when it is held.
	visibleBuckets = prometheus.ExponentialBuckets(1e-5, 4, 12) // 10µs … 42s
)

// NewCollector returns a collector; cfg may be nil.
func NewCollector(cfg *Config) *Collector {
	c := &Collector{}
	if cfg != nil {
		c.cfg = *cfg
	}
	firingLabels := []string{"rule", "mode", "outcome", "delivery"}
	if c.cfg.NoRuleLabel {
		firingLabels = firingLabels[1:]
	}
	c.firings = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: ns, Subsystem: "engine", Name: "firings_total",
		Help: "Rule firings by rule, mode, outcome and delivery, counted when their move ends; outcome shadow is a would-fire, none a discard whose replay never came; delivery full, manifest (over the reminder budget) or none (nothing reached the model).",
	}, firingLabels)
	c.reads = newReadCounter(c.cfg.NoRuleLabel) // delivery.go
	c.discarded = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: ns, Subsystem: "engine", Name: "answers_discarded_total",
		Help: "Answers (responses) a text rule or a gate discarded and whose tour was replayed.",
	})
	c.checks = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: ns, Subsystem: "engine", Name: "check_duration_seconds",
		Help:    "Time to check a tool call (mode remind) or an answer (mode interrupt) against the rules.",
		Buckets: checkBuckets,
	}, []string{"mode"})
	c.reloads = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: ns, Subsystem: "engine", Name: "reloads_total",
		Help: "Rule set reloads by result (ok, error).",
	}, []string{"result"})
	c.reloadDur = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: ns, Subsystem: "engine", Name: "reload_duration_seconds",
		Help:    "Time to reload the rule set: read the store, and compile when the rows changed.",
		Buckets: reloadBuckets,
	})
	c.saves = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: ns, Subsystem: "store", Name: "save_move_seconds",
		Help:    "Time to write a finished move to the store, by result (ok, error).",
		Buckets: saveBuckets,
	}, []string{"result"})
	c.saveFails = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: ns, Subsystem: "store", Name: "write_failures_total",
		Help: "Writes of finished moves that failed.",
	})
	c.visible = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: ns, Subsystem: "speech", Name: "first_visible_seconds",
		Help:    "Time from the provider's first chunk to the client's first chunk, in tours whose speech was held and shown.",
		Buckets: visibleBuckets,
	})
	c.held = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: ns, Subsystem: "speech", Name: "held_bytes_total",
		Help: "Bytes of answers streamed while text rules were armed (held speech).",
	})
	c.early = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: ns, Subsystem: "speech", Name: "released_early_bytes_total",
		Help: "Bytes of held speech sent to the client before the answer was complete.",
	})
	for _, mode := range []streamrules.Mode{streamrules.ModeRemind, streamrules.ModeInterrupt} {
		c.checks.WithLabelValues(string(mode)) // zero series: a dashboard sees the metric before the first check
	}
	for _, result := range []string{"ok", "error"} {
		c.reloads.WithLabelValues(result)
		c.saves.WithLabelValues(result)
	}
	d := func(sub, name, help string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName(ns, sub, name), help, nil, nil)
	}
	c.rulesLoaded = d("engine", "rules_loaded", "Rules in force: enabled and valid.")
	c.rulesDisabled = d("engine", "rules_disabled", "Rules kept in the store but disabled, as of the last reload.")
	c.rulesSkipped = d("engine", "rules_skipped", "Rows in the store skipped as bad or duplicate (see the log).")
	c.roundTrips = d("store", "round_trips_total", "Statements the store sent to the database since it opened.")
	c.queued = d("store", "queued_records", "Finished moves waiting in the write queue.")
	c.dropped = d("store", "dropped_records_total", "Finished moves the write queue dropped.")
	c.failures = d("store", "write_failures_total", "Writes of finished moves that failed.")
	c.rejected = d("store", "rejected_records_total", "Finished moves the database refused for good: not retried, lost.")
	return c
}

// Instrument sets cfg's telemetry hooks (OnFire is left alone; OnOutcome, OnCheck, OnReload,
// OnSave and OnSpeech), calling any hook cfg already had after the collector's, and returns cfg.
// A nil cfg gets a new Config. Give the result to streamrules.New.
func (c *Collector) Instrument(cfg *streamrules.Config) *streamrules.Config {
	if cfg == nil {
		cfg = &streamrules.Config{}
	}
	onOutcome, onCheck, onReload, onSave, onSpeech := cfg.OnOutcome, cfg.OnCheck, cfg.OnReload, cfg.OnSave, cfg.OnSpeech
	cfg.OnSpeech = func(s streamrules.SpeechInfo) {
		c.speech(s)
		if onSpeech != nil {
			onSpeech(s)
		}
	}
	cfg.OnOutcome = func(ctx context.Context, f streamrules.Firing) {
		c.outcome(f)
		if onOutcome != nil {
			onOutcome(ctx, f)
		}
	}
	cfg.OnCheck = func(ci streamrules.CheckInfo) {
		c.check(ci)
		if onCheck != nil {
			onCheck(ci)
		}
	}
	cfg.OnReload = func(info streamrules.ReloadInfo) {
		c.reload(info)
		if onReload != nil {
			onReload(info)
		}
	}
	cfg.OnSave = func(info streamrules.SaveInfo) {
		c.save(info.Duration, info.Err)
		if onSave != nil {
			onSave(info)
		}
	}
	return cfg
}

func (c *Collector) outcome(f streamrules.Firing) {
	outcome := string(f.Outcome)
	if outcome == "" {
		outcome = "none"
	}
	delivery := deliveryLabel(f) // delivery.go
	c.read(f)
	if c.cfg.NoRuleLabel {
		c.firings.WithLabelValues(string(f.Mode), outcome, delivery).Inc()
		return
	}
	c.firings.WithLabelValues(f.Rule, string(f.Mode), outcome, delivery).Inc()
}

func (c *Collector) check(ci streamrules.CheckInfo) {
	if !ci.Gate { // a gate's discard was checked as an answer already: count it, time nothing
		c.checks.WithLabelValues(string(ci.Mode)).Observe(ci.Duration.Seconds())
	}
	if ci.Discard {
		c.discarded.Inc()
	}
}

func (c *Collector) reload(info streamrules.ReloadInfo) {
	result := "ok"
	if info.Err != nil {
		result = "error"
	}
	c.reloads.WithLabelValues(result).Inc()
	c.reloadDur.Observe(info.Duration.Seconds())
	if info.Err != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.counts = info.Rules
	if c.cfg.NoRuleLabel || !info.Changed {
		return // no rule label, or the same names as before
	}
	// A deleted rule's series go now, so the label set stays bounded by the rule set.
	for _, name := range c.names {
		if _, found := slices.BinarySearch(info.Names, name); !found {
			c.firings.DeletePartialMatch(prometheus.Labels{"rule": name})
			c.reads.DeletePartialMatch(prometheus.Labels{"rule": name})
		}
	}
	c.names = slices.Clone(info.Names)
}

func (c *Collector) save(d time.Duration, err error) {
	result := "ok"
	if err != nil {
		result = "error"
		if c.cfg.StoreStats == nil { // a write queue counts its own failures
			c.saveFails.Inc()
		}
	}
	c.saves.WithLabelValues(result).Observe(d.Seconds())
}

func (c *Collector) speech(s streamrules.SpeechInfo) {
	c.held.Add(float64(s.HeldBytes))
	c.early.Add(float64(s.ReleasedEarlyBytes))
	if s.Visible {
		c.visible.Observe(s.FirstVisible.Seconds())
	}
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	c.firings.Describe(ch)
	c.reads.Describe(ch)
	c.discarded.Describe(ch)
	c.checks.Describe(ch)
	c.reloads.Describe(ch)
	c.reloadDur.Describe(ch)
	c.saves.Describe(ch)
	c.visible.Describe(ch)
	c.held.Describe(ch)
	c.early.Describe(ch)
	for _, d := range []*prometheus.Desc{c.rulesLoaded, c.rulesDisabled, c.rulesSkipped} {
		ch <- d
	}
	if c.cfg.StoreStats != nil {
		ch <- c.roundTrips
		ch <- c.queued
		ch <- c.dropped
		ch <- c.rejected
		ch <- c.failures
	} else {
		c.saveFails.Describe(ch)
	}
}

// Collect implements prometheus.Collector. What the store already counts is mirrored as
// const metrics, read now (as client_golang's DBStatsCollector reads sql.DB.Stats).
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	c.firings.Collect(ch)
	c.reads.Collect(ch)
	c.discarded.Collect(ch)
	c.checks.Collect(ch)
	c.reloads.Collect(ch)
	c.reloadDur.Collect(ch)
	c.saves.Collect(ch)
	c.visible.Collect(ch)
	c.held.Collect(ch)
	c.early.Collect(ch)
	c.mu.Lock()
	counts := c.counts
	c.mu.Unlock()
	// The stores return disabled rows, marked, and the engine counts them at each reload:
	// the gauge needs no query.
	ch <- prometheus.MustNewConstMetric(c.rulesDisabled, prometheus.GaugeValue, float64(counts.Disabled))
	ch <- prometheus.MustNewConstMetric(c.rulesLoaded, prometheus.GaugeValue, float64(counts.Loaded))
	ch <- prometheus.MustNewConstMetric(c.rulesSkipped, prometheus.GaugeValue, float64(counts.Skipped))
	if c.cfg.StoreStats != nil {
		st := c.cfg.StoreStats()
		ch <- prometheus.MustNewConstMetric(c.roundTrips, prometheus.CounterValue, float64(st.RoundTrips))
		ch <- prometheus.MustNewConstMetric(c.queued, prometheus.GaugeValue, float64(st.QueuedMoves))
		ch <- prometheus.MustNewConstMetric(c.dropped, prometheus.CounterValue, float64(st.DroppedMoves))
		ch <- prometheus.MustNewConstMetric(c.rejected, prometheus.CounterValue, float64(st.RejectedMoves))
		ch <- prometheus.MustNewConstMetric(c.failures, prometheus.CounterValue, float64(st.MoveWriteFailures))
	} else {
		c.saveFails.Collect(ch)
	}
}
