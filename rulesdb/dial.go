package rulesdb

import (
	"context"
	"net"
	"sync"
	"time"

	"github.com/lib/pq"
)

// conns dials PostgreSQL for the pool and the listener and keeps every connection it
// made, so the store can cut them all. lib/pq does not watch a context while it connects
// (the TLS and startup exchange read with no deadline but connect_timeout), nor while a
// query waits on a server that stopped answering: it sends a cancel request and keeps
// reading. Cutting the socket is what makes such a read return. Open cuts them when its
// context ends, so Ctrl-C works against a black-holed server; Close cuts what is left, so
// no goroutine stays stuck in a read after it.
type conns struct {
	base pq.Dialer

	mu   sync.Mutex
	live map[*trackedConn]struct{}
	cut  error // set: dials fail with it (Open gave up)
}

func newConns(base pq.Dialer) *conns {
	if base == nil {
		base = netDialer{}
	}
	return &conns{base: base, live: map[*trackedConn]struct{}{}}
}

// netDialer is lib/pq's default dialer, with a context.
type netDialer struct{}

func (netDialer) Dial(network, addr string) (net.Conn, error) {
	return (&net.Dialer{KeepAlive: 5 * time.Minute}).Dial(network, addr)
}

func (netDialer) DialTimeout(network, addr string, timeout time.Duration) (net.Conn, error) {
	return (&net.Dialer{Timeout: timeout, KeepAlive: 5 * time.Minute}).Dial(network, addr)
}

func (netDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	return (&net.Dialer{KeepAlive: 5 * time.Minute}).DialContext(ctx, network, addr)
}

func (c *conns) Dial(network, addr string) (net.Conn, error) {
	return c.DialContext(context.Background(), network, addr)
}

func (c *conns) DialTimeout(network, addr string, timeout time.Duration) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return c.DialContext(ctx, network, addr)
}

func (c *conns) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	c.mu.Lock()
	err := c.cut
	c.mu.Unlock()
	if err != nil {
		return nil, err
	}
	var (
		conn net.Conn
	)
	switch d := c.base.(type) {
	case pq.DialerContext:
		conn, err = d.DialContext(ctx, network, addr)
	default:
		if deadline, ok := ctx.Deadline(); ok {
			conn, err = d.DialTimeout(network, addr, time.Until(deadline))
		} else {
			conn, err = d.Dial(network, addr)
		}
	}
	if err != nil {
		return nil, err
	}
	t := &trackedConn{Conn: conn, owner: c}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cut != nil {
		conn.Close()
		return nil, c.cut
	}
	c.live[t] = struct{}{}
	return t, nil
}

// cutAll closes every connection and makes new dials fail with err (nil: dials go on).
func (c *conns) cutAll(err error) {
	c.mu.Lock()
	c.cut = err
	live := c.live
	c.live = map[*trackedConn]struct{}{}
	c.mu.Unlock()
	for t := range live {
		t.Conn.Close()
	}
}

type trackedConn struct {
	net.Conn
	owner *conns
	once  sync.Once
}

func (t *trackedConn) Close() error {
	t.once.Do(func() {
		t.owner.mu.Lock()
		delete(t.owner.live, t)
		t.owner.mu.Unlock()
	})
	return t.Conn.Close()
}

// bounded runs fn and returns its result, or ctx's error as soon as ctx is done, whichever
// comes first. On PostgreSQL a query on a connection to a server that stopped answering
// ignores its context (see conns): fn is left to finish in the background, on a
// connection lib/pq has marked bad, and ends when the connection does (at the latest, when
// Close cuts it). The write queue's seq makes a write that lands late harmless. SQLite
// is local and honours its context: fn runs in place.
func bounded[T any](s *Store, ctx context.Context, fn func() (T, error)) (T, error) {
	if s.dialect != dialectPostgres || ctx.Done() == nil {
		return fn()
	}
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := fn()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

// dropIdle closes the pool's idle connections after a failure that may have broken them
// (a restart, a partition): otherwise each retry would take one more dead connection from
// the pool and fail on it, and the queue would drain only after as many failed retries
// as the pool has connections. The next statement dials afresh.
func (s *Store) dropIdle(err error) {
	if s.dialect != dialectPostgres || pq.As(err) != nil {
		return // the server answered: its connections are fine
	}
	s.db.SetMaxIdleConns(0)
	s.db.SetMaxIdleConns(s.maxIdle)
}
