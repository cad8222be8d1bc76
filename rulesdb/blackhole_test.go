package rulesdb_test

import (
	"context"
	"database/sql"
	"errors"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/streamrules/streamrules/internal/pgtest"
	"github.com/streamrules/streamrules/rulesdb"
)

// Black-hole tests: a server that accepts connections and never answers, at Open and under
// a running engine.

// blackHole accepts TCP connections and never answers, like a hung host.
func blackHole(t *testing.T) (addr string, accepted <-chan struct{}) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan struct{}, 16)
	var mu sync.Mutex
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	}()
	t.Cleanup(func() {
		l.Close()
		<-done
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	return l.Addr().String(), ch
}

// TestFaultBlackHoleOpen: Open returns when its context ends, and by itself within the
// default connect_timeout, with a hint.
func TestFaultBlackHoleOpen(t *testing.T) {
	t.Parallel()
	addr, accepted := blackHole(t)
	t.Run("cancel", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			<-accepted // the server took the connection: now it will never answer
			cancel()
		}()
		defer cancel()
		_, err := rulesdb.Open(ctx, "postgres://u@"+addr+"/db?sslmode=disable", &rulesdb.Config{Logger: quietLogger()})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Open = %v, want context.Canceled", err)
		}
		if !strings.Contains(err.Error(), "PostgreSQL host "+addr+" database db") {
			t.Fatalf("Open = %v, want the store named", err)
		}
	})
	t.Run("connect_timeout", func(t *testing.T) {
		_, err := rulesdb.Open(context.Background(), "postgres://u@"+addr+"/db?sslmode=disable&connect_timeout=1", &rulesdb.Config{Logger: quietLogger()})
		if err == nil || !strings.Contains(err.Error(), "raise connect_timeout") {
			t.Fatalf("Open = %v, want a timeout with a hint", err)
		}
	})
}

func TestOpenErrorHints(t *testing.T) {
	t.Parallel()
	// Nothing listens on a port just closed.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	_, err = rulesdb.Open(context.Background(), "postgres://u@"+addr+"/db?sslmode=disable", &rulesdb.Config{Logger: quietLogger()})
	if err == nil || !strings.Contains(err.Error(), "is PostgreSQL running") {
		t.Fatalf("Open = %v, want the connection-refused hint", err)
	}
	// The throw-away cluster speaks no TLS.
	dsn := strings.Replace(pgtest.DSN(t), "sslmode=disable", "sslmode=require", 1)
	_, err = rulesdb.Open(context.Background(), dsn, &rulesdb.Config{Logger: quietLogger()})
	if err == nil || !strings.Contains(err.Error(), "sslmode=disable") {
		t.Fatalf("Open = %v, want the sslmode hint", err)
	}
}

// holeDialer dials the real server, and can turn every connection into a black hole:
// writes vanish, reads wait until the hole ends (then fail, as a reset would) or the
// connection is closed. New connections during the hole are holes too.
type holeDialer struct {
	mu   sync.Mutex
	hole bool
	heal chan struct{}
}

func (d *holeDialer) Dial(network, addr string) (net.Conn, error) {
	return d.DialContext(context.Background(), network, addr)
}

func (d *holeDialer) DialTimeout(network, addr string, timeout time.Duration) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return d.DialContext(ctx, network, addr)
}

func (d *holeDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &holeConn{Conn: c, d: d, closed: make(chan struct{})}, nil
}

func (d *holeDialer) set(hole bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if hole {
		d.hole, d.heal = true, make(chan struct{})
	} else if d.hole {
		d.hole = false
		close(d.heal)
	}
}

func (d *holeDialer) state() (bool, chan struct{}) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.hole, d.heal
}

type holeConn struct {
	net.Conn
	d      *holeDialer
	once   sync.Once
	closed chan struct{}
	lost   atomic.Bool // a write vanished: the conversation is broken for good, as after a reset
}

// errReset is what a read on a connection the partition broke returns: a *net.OpError, as
// a real reset is, so that lib/pq marks the connection bad and the pool does not reuse it.
var errReset = &net.OpError{Op: "read", Net: "tcp", Err: errors.New("connection reset after the partition")}

func (c *holeConn) Read(b []byte) (int, error) {
	hole, heal := c.d.state()
	if !hole {
		if c.lost.Load() {
			return 0, errReset
		}
		return c.Conn.Read(b)
	}
	select {
	case <-heal:
		return 0, errReset
	case <-c.closed:
		return 0, net.ErrClosed
	}
}

func (c *holeConn) Write(b []byte) (int, error) {
	if hole, _ := c.d.state(); hole {
		c.lost.Store(true)
		return len(b), nil
	}
	return c.Conn.Write(b)
}

func (c *holeConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return c.Conn.Close()
}

// TestFaultBlackHoleEngine: with the database black-holed under a running engine, no move
// waits longer than StoreTimeout in BeginMove or in End; after the hole, every move is
// written.
func TestFaultBlackHoleEngine(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	d := &holeDialer{}
	cfg := &rulesdb.Config{Logger: quietLogger(), WriteTimeout: 500 * time.Millisecond, FlushTimeout: 30 * time.Second}
	rulesdb.SetDialer(cfg, d)
	s, eng, tl, stop := faultEngine(t, dsn, cfg)
	defer stop()
	if err := tl.play(eng, "seen"); err != nil {
		t.Fatal(err)
	}

	d.set(true)
	var waits []time.Duration
	step := func(chat string) {
		t.Helper()
		begin := time.Now()
		ctx, m := eng.BeginMove(context.Background(), chat)
		waits = append(waits, time.Since(begin))
		m.ToolReminders(ctx, "shell", "{}")
		if v := m.CheckAnswer(ctx, "a bad answer"); v.Discard {
			m.CheckAnswer(ctx, "a good answer")
		}
		begin = time.Now()
		if err := m.End(ctx, nil); err != nil {
			t.Fatalf("End in the hole = %v, want nil (queued)", err)
		}
		waits = append(waits, time.Since(begin))
		tl.mu.Lock()
		tl.answered[chat]++
		tl.mu.Unlock()
	}
	for _, chat := range []string{"seen", "new", "seen", "new"} {
		step(chat)
	}
	slowest := slices.Max(waits)
	// Not a benchmark: a hang would be minutes. The margin absorbs a loaded machine.
	if slowest > faultBound+2*time.Second {
		t.Fatalf("a store call held the move %s, bound %s", slowest, faultBound)
	}
	d.set(false)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s.Stats().DroppedMoves != 0 || s.Stats().QueuedMoves != 0 {
		t.Fatalf("dropped %d, left %d", s.Stats().DroppedMoves, s.Stats().QueuedMoves)
	}
	// "new" began in the hole, unknown to this process: its repeat rules stayed silent
	// (fail closed), so its once_shell fires in no move here.
	tl.mu.Lock()
	if tl.fired["new"]["once_shell"] != 0 {
		t.Errorf("once_shell fired in a chat whose state was unknown")
	}
	tl.mu.Unlock()
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var moves int
	if err := db.QueryRow(`SELECT moves FROM stream_chat WHERE chat_id = 'seen'`).Scan(&moves); err != nil || moves != 3 {
		t.Fatalf("seen: %d moves stored (%v), want 3", moves, err)
	}
	if err := db.QueryRow(`SELECT moves FROM stream_chat WHERE chat_id = 'new'`).Scan(&moves); err != nil || moves != 2 {
		t.Fatalf("new: %d moves stored (%v), want 2", moves, err)
	}
	var firings int
	if err := db.QueryRow(`SELECT COUNT(*) FROM stream_rule_stat WHERE chat_id = 'seen'`).Scan(&firings); err != nil || firings != 3+3+1 {
		// seen: every_shell and no_bad in each of 3 moves, once_shell in the first.
		t.Fatalf("seen: %d firings stored (%v), want 7", firings, err)
	}
	// Each chat's firings, per rule, once each: none lost, none written twice.
	checkStored(t, db, tl)
	t.Logf("black hole: slowest store wait %s in a move (StoreTimeout %s)", slowest.Round(time.Millisecond), faultBound)
}
