package rulesdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Reload without LISTEN. In ReloadMode "poll" the store holds no listener connection:
// every ReloadInterval (1 s by default in this mode) it reads the single row
// of stream_rules_version, which the trigger on stream_rules bumps on every change
// (migration 0009), and tells its subscribers when it moved. One short statement per
// interval, no session state: it works through pgbouncer in transaction mode, and costs a
// coordinator one single-row read per replica per interval (docs/scale.md).
//
// The row can be deleted by hand (a cleanup script, a restore of some tables): the
// trigger's UPDATE then bumps nothing, and a poller that only read would never see an
// edit again. So a poll that finds no row puts it back and reloads once, a full compare
// that catches whatever changed while it was missing (see recreateVersion).

// Reload modes (Config.ReloadMode).
const (
	ReloadNotify = "notify" // PostgreSQL: LISTEN on ChangeChannel, plus the backstop (default)
	ReloadPoll   = "poll"   // read the version row every ReloadInterval
)

const (
	defaultPollInterval = time.Second
	versionQuery        = `SELECT version FROM stream_rules_version WHERE id = 1`
	recreateVersion     = `INSERT INTO stream_rules_version (id, version) VALUES (1, ?) ON CONFLICT (id) DO NOTHING`
)

// errNoVersion: the version row is missing.
var errNoVersion = errors.New("the stream_rules_version row is missing")

// RulesVersion returns the rules' version: it grows with every change to stream_rules.
func (s *Store) RulesVersion(ctx context.Context) (int64, error) {
	v, err := bounded(s, ctx, func() (int64, error) {
		var v int64
		err := s.get(ctx, s.db, &v, versionQuery)
		if errors.Is(err, sql.ErrNoRows) {
			err = errNoVersion
		}
		return v, err
	})
	if err != nil {
		return 0, fmt.Errorf("rulesdb: rules version: %w", err)
	}
	return v, nil
}

// poll is the store's goroutine in ReloadMode "poll".
func (s *Store) poll(interval time.Duration, seen int64) {
	defer s.wg.Done()
	t := time.NewTicker(interval)
	defer t.Stop()
	failing := false
	for {
		select {
		case <-s.done:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(s.life, min(interval, s.wq.writeTimeout))
		v, err := s.RulesVersion(ctx)
		if errors.Is(err, errNoVersion) {
			v, err = s.restoreVersion(ctx, seen)
			if err == nil {
				s.log.Warn("stream rules: the stream_rules_version row was missing; put back, rules reloaded", "db", s.target.about)
				seen = v - 1 // reload once: edits made while it was missing bumped nothing
			}
		}
		cancel()
		if err != nil {
			if !failing {
				s.log.Warn("stream rules: rules version not read; retrying every interval", "db", s.target.about, "err", s.target.scrub(err))
			}
			failing = true
			continue
		}
		if failing {
			// Edits may have come and gone meanwhile: reload once, whatever the version.
			failing, seen = false, v-1
		}
		if v != seen {
			seen = v
			s.notify()
		}
	}
}

// restoreVersion puts the version row back and returns the version it holds then. The
// value put back is above anything a counter of edits reaches (the time in microseconds),
// and above seen: another replica that polled the old row before it went is told of a
// change too, whatever it had seen. Another poller putting it back first wins (DO NOTHING).
func (s *Store) restoreVersion(ctx context.Context, seen int64) (int64, error) {
	_, err := bounded(s, ctx, func() (struct{}, error) {
		unlock := s.lockWrites()
		defer unlock()
		_, err := s.exec(ctx, s.db, s.db.Rebind(recreateVersion), max(s.now().UnixMicro(), seen+1))
		return struct{}{}, err
	})
	if err != nil {
		return 0, fmt.Errorf("rulesdb: rules version: put back: %w", err)
	}
	return s.RulesVersion(ctx)
}
