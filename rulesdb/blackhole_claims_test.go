package rulesdb_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/pgtest"
	"github.com/streamrules/streamrules/rulesdb"
)

// TestFaultBlackHoleClaims: eight `once` rules on one tool and StoreTimeout 500 ms, the
// database black-holed. A tool call whose eight claims find the hole waits one
// StoreTimeout for all of them, not eight in series (it used to take 4 s); once the
// store knows the database is down, later calls send no claim and do not wait, whether
// the hole was found by a claim or by the chat read of BeginMove; and when the hole
// closes the claims are made again and the rules fire.
func TestFaultBlackHoleClaims(t *testing.T) {
	t.Parallel()
	const bound = 500 * time.Millisecond
	dsn := pgtest.DSN(t)
	d := &holeDialer{}
	answers := make(chan struct{}, 1)
	log := slog.New(&signalHandler{Handler: slog.DiscardHandler, msg: "the database answers again", ch: answers})
	cfg := &rulesdb.Config{Logger: log, WriteTimeout: bound, FlushTimeout: 30 * time.Second, ReloadInterval: -1}
	rulesdb.SetDialer(cfg, d)
	s := open(t, dsn, cfg)
	var rules []streamrules.Rule
	for i := range 8 {
		rules = append(rules, streamrules.Rule{Name: fmt.Sprintf("once_%d", i), Scope: "tool:shell", Repeat: "once", Text: "Once per chat."})
	}
	createRules(t, s, rules)
	eng, err := streamrules.New(context.Background(), s, &streamrules.Config{Logger: quietLogger(), StoreTimeout: bound})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	var claimsSent atomic.Int64
	rulesdb.SetTrace(s, func(q string, _ []any) {
		if strings.Contains(q, "INSERT INTO stream_chat_rule") && !strings.Contains(q, "stream_rule_stat") {
			claimsSent.Add(1)
		}
	})
	defer rulesdb.SetTrace(s, nil)

	// Every chat is known to the store before the hole: a move each, no rule fired.
	chats := []string{"found-by-claim", "after-claim", "found-by-read", "healed"}
	for _, chat := range chats {
		ctx, m := eng.BeginMove(context.Background(), chat)
		if err := m.End(ctx, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	// call makes one shell call in a move begun before and returns its reminders, how
	// long it took and how many claims it sent.
	call := func(ctx context.Context, m *streamrules.Move) ([]streamrules.Reminder, time.Duration, int64) {
		before := claimsSent.Load()
		begin := time.Now()
		got := m.ToolReminders(ctx, "shell", "{}")
		return got, time.Since(begin), claimsSent.Load() - before
	}
	end := func(ctx context.Context, m *streamrules.Move) {
		t.Helper()
		if err := m.End(ctx, nil); err != nil {
			t.Fatalf("End in the hole = %v, want nil (queued)", err)
		}
	}
	// Not a benchmark: eight claims in series took 8 bounds; the margin absorbs a loaded
	// machine.
	const oneWait = 2*bound + 500*time.Millisecond

	// The hole opens after BeginMove read the chat: the call's claims find it, together.
	ctx, m := eng.BeginMove(context.Background(), "found-by-claim")
	d.set(true)
	got, took, sent := call(ctx, m)
	first := took
	if len(got) != 0 || sent != 8 || took > oneWait {
		t.Fatalf("first call in the hole: %d reminders, %d claims sent, took %s; want 0, 8, one StoreTimeout (%s)", len(got), sent, took, bound)
	}
	end(ctx, m)
	// Known down now: the next move's call claims nothing and does not wait.
	ctx, m = eng.BeginMove(context.Background(), "after-claim")
	got, took, sent = call(ctx, m)
	later := took
	if len(got) != 0 || sent != 0 || took > bound/2 {
		t.Fatalf("call after the hole was found: %d reminders, %d claims sent, took %s; want 0, 0, no wait", len(got), sent, took)
	}
	end(ctx, m)

	heal := func() {
		t.Helper()
		select {
		case <-answers:
		default:
		}
		d.set(false)
		waitSignal(t, answers, "the store sees the database answer again")
	}
	heal()

	// The repro's order: the hole is found by BeginMove's read of a known chat (answered
	// from memory), and the call after it waits for nothing.
	d.set(true)
	ctx, m = eng.BeginMove(context.Background(), "found-by-read")
	got, took, sent = call(ctx, m)
	afterRead := took
	if len(got) != 0 || sent != 0 || took > bound/2 {
		t.Fatalf("call after BeginMove found the hole: %d reminders, %d claims sent, took %s; want 0, 0, no wait", len(got), sent, took)
	}
	end(ctx, m)
	heal()

	// Healed: the claims are made again, and every rule fires once.
	ctx, m = eng.BeginMove(context.Background(), "healed")
	got, _, sent = call(ctx, m)
	if len(got) != 8 || sent != 8 {
		t.Fatalf("after the hole: %d reminders, %d claims sent; want 8 and 8", len(got), sent)
	}
	if err := m.End(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	var claimed []string
	if err := s.DB().Select(&claimed, `SELECT chat_id FROM stream_chat_rule ORDER BY chat_id, rule`); err != nil {
		t.Fatal(err)
	}
	if len(claimed) != 8 || claimed[0] != "healed" || claimed[7] != "healed" {
		t.Fatalf("claims held by %v; want the 8 of chat healed only (fail closed in the hole)", claimed)
	}
	t.Logf("black hole, 8 once rules, StoreTimeout %s: the call that found it took %s, the next %s, the one after BeginMove found it %s",
		bound, first.Round(time.Millisecond), later.Round(time.Microsecond), afterRead.Round(time.Microsecond))
}

// signalHandler signals ch (without blocking) on every record whose message contains msg.
type signalHandler struct {
	slog.Handler
	msg string
	ch  chan struct{}
}

func (h *signalHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *signalHandler) Handle(ctx context.Context, r slog.Record) error {
	if strings.Contains(r.Message, h.msg) {
		select {
		case h.ch <- struct{}{}:
		default:
		}
	}
	return h.Handler.Handle(ctx, r)
}

func (h *signalHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &signalHandler{Handler: h.Handler.WithAttrs(attrs), msg: h.msg, ch: h.ch}
}

func (h *signalHandler) WithGroup(name string) slog.Handler {
	return &signalHandler{Handler: h.Handler.WithGroup(name), msg: h.msg, ch: h.ch}
}
