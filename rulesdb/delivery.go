package rulesdb

import (
	"context"
	"slices"
	"strings"

	"github.com/streamrules/streamrules"
)

// The reminder budget (migration 0008): a rule's delivery and hint columns, a firing's
// delivery and whether its manifest was read, and per-rule delivery counters kept like
// the outcome counters (stats.go).

// deliveryColumns are the rule columns of migration 0008, in deliveryValues' order.
const deliveryColumns = `delivery, hint`

// deliveryValues returns a rule's deliveryColumns values for an insert or update.
func deliveryValues(r streamrules.Rule) []any { return []any{string(r.Delivery), r.Hint} }

// readDelivery fills the rule's deliveryColumns from a row.
func readDelivery(r *streamrules.Rule, delivery, hint any) {
	r.Delivery, r.Hint = streamrules.Delivery(asString(delivery)), asString(hint)
}

// deliveryRow is a move's live firings of one rule with one delivery.
type deliveryRow struct {
	rule, delivery string
	n, read        int64
}

// deliveriesOf aggregates a move's firings per (rule, delivery), in that order (the
// lock order, as countersOf's). Would-fires and firings without a delivery are left out.
func deliveriesOf(firings []streamrules.Firing) []deliveryRow {
	var out []deliveryRow
	for _, f := range firings {
		if f.Delivery == "" || f.Outcome == streamrules.OutcomeShadow {
			continue
		}
		i := slices.IndexFunc(out, func(d deliveryRow) bool { return d.rule == f.Rule && d.delivery == string(f.Delivery) })
		if i < 0 {
			out = append(out, deliveryRow{rule: f.Rule, delivery: string(f.Delivery)})
			i = len(out) - 1
		}
		out[i].n++
		if f.Read {
			out[i].read++
		}
	}
	slices.SortFunc(out, func(a, b deliveryRow) int {
		if c := strings.Compare(a.rule, b.rule); c != 0 {
			return c
		}
		return strings.Compare(a.delivery, b.delivery)
	})
	return out
}

// deliveryArrays is deliveriesOf as PostgreSQL's arrays.
func deliveryArrays(firings []streamrules.Firing) (rules, deliveries []string, n, read []int64) {
	for _, d := range deliveriesOf(firings) {
		rules, deliveries = append(rules, d.rule), append(deliveries, d.delivery)
		n, read = append(n, d.n), append(read, d.read)
	}
	return
}

// deliveryUpsert builds SQLite's delivery counter statement for a move's firings; "" when
// none has a delivery.
func deliveryUpsert(firings []streamrules.Firing) (string, []any) {
	rows := deliveriesOf(firings)
	if len(rows) == 0 {
		return "", nil
	}
	var b strings.Builder
	b.WriteString(`INSERT INTO stream_rule_delivery_counter (rule, delivery, fired, manifest_read) VALUES `)
	args := make([]any, 0, 4*len(rows))
	for i, d := range rows {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(?, ?, ?, ?)")
		args = append(args, d.rule, d.delivery, d.n, d.read)
	}
	b.WriteString(` ON CONFLICT (rule, delivery) DO UPDATE SET fired = stream_rule_delivery_counter.fired + excluded.fired,
manifest_read = stream_rule_delivery_counter.manifest_read + excluded.manifest_read`)
	return b.String(), args
}

// deliveryCounters is the query RuleCounters folds into each rule's counters.
const deliveryCounters = `SELECT rule, delivery, fired, manifest_read FROM stream_rule_delivery_counter`

// readDeliveryCounters adds the delivery counters to the rules' counters (RuleCounters).
func (s *Store) readDeliveryCounters(ctx context.Context, out map[string]streamrules.RuleCounter) error {
	rows, err := s.query(ctx, s.db, deliveryCounters)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			rule, delivery string
			n, read        int64
		)
		if err := rows.Scan(&rule, &delivery, &n, &read); err != nil {
			return err
		}
		c := out[rule]
		if c.ByOutcome == nil {
			c.ByOutcome = map[streamrules.Outcome]int64{}
		}
		if c.ByDelivery == nil {
			c.ByDelivery = map[streamrules.Delivery]int64{}
		}
		c.ByDelivery[streamrules.Delivery(delivery)] += n
		c.Read += read
		out[rule] = c
	}
	return rows.Err()
}
