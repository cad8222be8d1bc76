// Package metrics exports an engine's telemetry to Prometheus: a collector the host
// registers with its own registry. It is the only package of the module that imports
// client_golang; the engine itself only calls plain hooks (streamrules.Config.OnOutcome,
// OnCheck, OnReload, OnSave), which the collector supplies.
//
//	col := metrics.NewCollector(&metrics.Config{
//		StoreStats: func() metrics.StoreStats { return metrics.StoreStats(store.Stats()) },
//	})
//	eng, err := streamrules.New(ctx, store, col.Instrument(&streamrules.Config{}))
//	…
//	reg := prometheus.NewRegistry()
//	reg.MustRegister(col)
//	http.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
//
// Nothing here registers itself or serves HTTP: that is the host's choice.
//
// # The metrics
//
//	streamrules_engine_firings_total{rule,mode,outcome,delivery}  counter: firings, counted when their move ends
//	streamrules_engine_manifest_reads_total{rule}         counter: manifest deliveries read with stream_rule_read
//	streamrules_engine_answers_discarded_total            counter: answers discarded and replayed (by a text rule or a gate)
//	streamrules_engine_check_duration_seconds{mode}       histogram: a tool call (remind) or an answer (interrupt) checked
//	streamrules_engine_rules_loaded                       gauge: rules in force
//	streamrules_engine_rules_disabled                     gauge: rules kept but disabled, as of the last reload
//	streamrules_engine_rules_skipped                      gauge: bad or duplicate rows skipped
//	streamrules_engine_reloads_total{result}              counter: reloads, ok or error
//	streamrules_engine_reload_duration_seconds            histogram: reload time
//	streamrules_store_save_move_seconds{result}           histogram: a finished move written, ok or error
//	streamrules_store_write_failures_total                counter: failed writes of finished moves
//	streamrules_store_round_trips_total                   counter: statements sent (with StoreStats)
//	streamrules_store_queued_records                      gauge: moves waiting in the write queue (with StoreStats)
//	streamrules_store_dropped_records_total               counter: moves the write queue dropped (with StoreStats)
//	streamrules_store_rejected_records_total              counter: moves the database refused for good, lost (with StoreStats)
//	streamrules_speech_first_visible_seconds              histogram: provider's first chunk to the client's first, per held tour that showed something
//	streamrules_speech_held_bytes_total                   counter: bytes streamed while text rules were armed (held speech)
//	streamrules_speech_released_early_bytes_total         counter: bytes of held speech sent before the answer was complete
//
// outcome is one of corrected, missed_again, kept, fixed, complied, repeated, refused (a
// gate refused a matching call), refused_unreadable (a shell gate refused a call it could
// not read as a shell would), shadow (a would-fire of a rule in shadow) and none (a
// discard whose move failed before its replay). The would-fire rate of a shadowed rule is
//
//	rate(streamrules_engine_firings_total{rule="x",outcome="shadow"}[1h])
//
// and its efficacy, once enforced, corrected / (corrected + missed_again).
//
// delivery is full, manifest (a reminder over the engine's ReminderBudget, sent as a
// short block the model may read with stream_rule_read) or none (a would-fire, a fix:
// nothing reached the model). Whether manifest rules get read is
//
//	sum by (rule) (rate(streamrules_engine_manifest_reads_total[1d]))
//	  / sum by (rule) (rate(streamrules_engine_firings_total{delivery="manifest"}[1d]))
//
// # Labels stay bounded
//
// Label values come from closed sets (mode, outcome, delivery, result), and rule from the rule set:
// names are validated and at most 64 bytes, and a rule deleted from the store loses its
// series at the next reload. A chat id, a tool input or an error text is never a label.
// A host with thousands of rules sets Config.NoRuleLabel.
//
// Counters are this process's: they start at zero when it starts, and Prometheus sums
// replicas. The persisted totals, across restarts and replicas, are GET /v1/stats.
package metrics
