package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/streamrules/streamrules"
)

// The reminder budget's telemetry: the firing counter's delivery label, and a counter of
// manifest deliveries the model read (streamrules.Firing.Read), so a dashboard shows
// whether manifest rules get read.

func newReadCounter(noRuleLabel bool) *prometheus.CounterVec {
	labels := []string{"rule"}
	if noRuleLabel {
		labels = nil
	}
	return prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: ns, Subsystem: "engine", Name: "manifest_reads_total",
		Help: "Reminders delivered in manifest form that the model read with stream_rule_read in the same move, counted when the move ends.",
	}, labels)
}

// deliveryLabel is a firing's delivery label: full, manifest or none (a would-fire, a fix).
func deliveryLabel(f streamrules.Firing) string {
	if f.Delivery == "" {
		return "none"
	}
	return string(f.Delivery)
}

func (c *Collector) read(f streamrules.Firing) {
	if !f.Read {
		return
	}
	if c.cfg.NoRuleLabel {
		c.reads.WithLabelValues().Inc()
		return
	}
	c.reads.WithLabelValues(f.Rule).Inc()
}
