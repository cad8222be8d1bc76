package rulesdb

import (
	"context"
	"errors"
	"maps"
	"slices"
	"time"

	"github.com/lib/pq"
)

// Subscribe implements streamrules.ChangeNotifier. onChange is called
//
//   - synchronously, right after this store commits an edit (create, update, delete, a
//     seeding that changed rules): when an edit returns, subscribers have reloaded;
//   - on PostgreSQL, when a NOTIFY arrives on ChangeChannel: a trigger fires it for every
//     change to stream_rules, by any process, psql included; and after the listener
//     reconnects, since notifications may have been lost meanwhile;
//   - every Config.ReloadInterval, as a backstop (on SQLite this is how edits made by
//     other processes arrive).
//
// Calls may come from several goroutines at once. The returned func stops the calls.
func (s *Store) Subscribe(onChange func()) (cancel func()) {
	s.subMu.Lock()
	defer s.subMu.Unlock()
	id := s.nextSub
	s.nextSub++
	s.subs[id] = onChange
	return func() {
		s.subMu.Lock()
		delete(s.subs, id)
		s.subMu.Unlock()
	}
}

func (s *Store) notify() {
	s.subMu.Lock()
	ids := slices.Sorted(maps.Keys(s.subs))
	fns := make([]func(), len(ids))
	for i, id := range ids {
		fns[i] = s.subs[id]
	}
	s.subMu.Unlock()
	for _, fn := range fns {
		fn()
	}
}

// listenWait bounds how long Open waits for the listener's first LISTEN.
const listenWait = 10 * time.Second

// listen starts the PostgreSQL listener and waits until it listens (or ctx ends: then
// it keeps trying in the background, and the backstop covers the gap).
func (s *Store) listen(ctx context.Context, dialer pq.Dialer) error {
	event := func(ev pq.ListenerEventType, err error) {
		switch ev {
		case pq.ListenerEventDisconnected:
			s.log.Warn("stream rules: change listener disconnected; reconnecting", "db", s.target.about, "err", s.target.scrub(err))
		case pq.ListenerEventReconnected:
			s.log.Info("stream rules: change listener reconnected", "db", s.target.about)
		case pq.ListenerEventConnectionAttemptFailed:
			s.log.Warn("stream rules: change listener cannot connect", "db", s.target.about, "err", s.target.scrub(err))
		}
	}
	s.listener = pq.NewDialListener(dialer, s.target.driver, 100*time.Millisecond, 10*time.Second, event)
	done := make(chan error, 1)
	go func() { done <- s.listener.Listen(ChangeChannel) }()
	select {
	case err := <-done:
		if err != nil && !errors.Is(err, pq.ErrChannelAlreadyOpen) {
			_ = s.listener.Close()
			return s.target.connectErr("LISTEN "+ChangeChannel, err)
		}
	case <-ctx.Done():
		s.log.Warn("stream rules: change listener not ready yet; it keeps connecting in the background", "db", s.target.about, "err", ctx.Err())
	case <-time.After(listenWait):
		s.log.Warn("stream rules: change listener not ready yet; it keeps connecting in the background", "db", s.target.about, "waited", listenWait)
	}
	return nil
}

// watch calls the subscribers on every notification and every interval (<= 0: never).
func (s *Store) watch(interval time.Duration) {
	defer s.wg.Done()
	var tick <-chan time.Time
	if interval > 0 {
		t := time.NewTicker(interval)
		defer t.Stop()
		tick = t.C
	}
	var notes <-chan *pq.Notification
	if s.listener != nil {
		notes = s.listener.NotificationChannel()
	}
	for {
		select {
		case <-s.done:
			return
		case _, ok := <-notes:
			if !ok {
				notes = nil
				continue
			}
			// A burst of changes is one reload: drain what is already queued.
			for drained := false; !drained; {
				select {
				case _, ok := <-notes:
					if !ok {
						notes, drained = nil, true
					}
				default:
					drained = true
				}
			}
		case <-tick:
		}
		select {
		case <-s.done:
			return
		default:
		}
		s.notify()
	}
}

// awaitListener waits, at most max, for the listener's goroutine to end after its Close:
// pq closes the notification channel then. A listener sleeping between reconnects (the
// database was down) ends when the sleep does, up to the 10 s reconnect ceiling; Close
// waits for it, so that it leaves nothing running (moves that no longer wait for their
// writes let a test, or a host, close sooner after an outage).
func (s *Store) awaitListener(max time.Duration) {
	t := time.NewTimer(max)
	defer t.Stop()
	notes := s.listener.NotificationChannel()
	for {
		select {
		case _, ok := <-notes:
			if !ok {
				return
			}
		case <-t.C:
			return
		}
	}
}
