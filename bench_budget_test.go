package streamrules

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/streamrules/streamrules/internal/cputime"
)

// budgetBenchRules are n rules on shell that fire on every call, 200 characters each,
// with mixed severities.
func budgetBenchRules(n int) []Rule {
	rules := make([]Rule, n)
	for i := range rules {
		head := fmt.Sprintf("Rule %d on the shell. ", i)
		rules[i] = Rule{Name: fmt.Sprintf("shell_%02d", i), Scope: "tool:shell", Severity: severities[i%3],
			Text: head + strings.Repeat("x", 200-len(head))}
	}
	return rules
}

// BenchmarkReminderBudget is one tour's tool call on which 10 rules of 200 characters
// fire: without a budget (0), under a budget they all fit in (fits: the budget is summed
// and nothing else changes), and under one that sends half of them in manifest form
// (over: ordered by severity and name, five manifest blocks). The move's state is reset
// between calls, so every call fires all ten. The rows' differences are what the budget
// costs per tour; see README "Reminder budget" for the figures.
func BenchmarkReminderBudget(b *testing.B) {
	rules := budgetBenchRules(10)
	for _, c := range []struct {
		name   string
		budget int
	}{{"budget=0", 0}, {"budget=fits", 100000}, {"budget=over", 1000}} {
		b.Run(c.name, func(b *testing.B) {
			store, err := NewMemoryStore(rules, testEnvs...)
			if err != nil {
				b.Fatal(err)
			}
			eng, err := New(context.Background(), store, &Config{Logger: slog.New(slog.DiscardHandler), ReminderBudget: c.budget})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(eng.Close)
			ctx, m := eng.BeginMove(context.Background(), "bench")
			b.ReportAllocs()
			defer cputime.Report(b, cputime.Process())
			for b.Loop() {
				m.fired, m.firings, m.calls, m.ncalls, m.spent = nil, m.firings[:0], m.calls[:0], 0, 0
				if r := m.ToolReminders(ctx, "shell", `{"cmd":"ls"}`); len(r) != 10 {
					b.Fatalf("%d reminders", len(r))
				}
			}
		})
	}
}

// BenchmarkBudgetStep is the budget's own work on one call's 10 reminders (deliverLocked,
// under the move's lock), apart from the matching and recording around it: copy is the
// reset every row pays, fits the sum that finds they all fit, over the ordering by
// severity and name and the five manifest blocks.
func BenchmarkBudgetStep(b *testing.B) {
	rules := budgetBenchRules(10)
	for _, c := range []struct {
		name   string
		budget int // 0: the step is not run
	}{{"copy", 0}, {"fits", 100000}, {"over", 1000}} {
		b.Run(c.name, func(b *testing.B) {
			store, err := NewMemoryStore(rules, testEnvs...)
			if err != nil {
				b.Fatal(err)
			}
			eng, err := New(context.Background(), store, &Config{Logger: slog.New(slog.DiscardHandler), ReminderBudget: max(c.budget, 1)})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(eng.Close)
			_, m := eng.BeginMove(context.Background(), "bench")
			set := m.set
			due := set.byTool["shell"].rules
			tmpl := make([]Reminder, len(due))
			firings := make([]Firing, len(due))
			for i, r := range due {
				tmpl[i] = Reminder{Rule: r.Name, Text: r.Text}
			}
			out := make([]Reminder, len(tmpl))
			b.ReportAllocs()
			defer cputime.Report(b, cputime.Process())
			for b.Loop() {
				copy(out, tmpl)
				for i := range firings {
					firings[i] = Firing{Rule: due[i].Name, Mode: ModeRemind, Delivery: DeliveryFull}
				}
				m.spent = 0
				if c.budget > 0 {
					m.deliverLocked(out, due, firings)
				}
			}
		})
	}
}
