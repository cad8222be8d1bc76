package rulesdb

import (
	"context"
	"fmt"
	"time"
)

// Reload without LISTEN (issue 22). In ReloadMode "poll" the store holds no listener
// connection: every ReloadInterval (1 s by default in this mode) it reads the single row
// of stream_rules_version, which the trigger on stream_rules bumps on every change
// (migration 0009), and tells its subscribers when it moved. One short statement per
// interval, no session state: it works through pgbouncer in transaction mode, and costs a
// coordinator one single-row read per replica per interval (docs/scale.md).

// Reload modes (Config.ReloadMode).
const (
	ReloadNotify = "notify" // PostgreSQL: LISTEN on ChangeChannel, plus the backstop (default)
	ReloadPoll   = "poll"   // read the version row every ReloadInterval
)

const (
	defaultPollInterval = time.Second
	versionQuery        = `SELECT version FROM stream_rules_version WHERE id = 1`
)

// RulesVersion returns the rules' version: it grows with every change to stream_rules.
func (s *Store) RulesVersion(ctx context.Context) (int64, error) {
	v, err := bounded(s, ctx, func() (int64, error) {
		var v int64
		err := s.get(ctx, s.db, &v, versionQuery)
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
		ctx, cancel := context.WithTimeout(s.life, min(interval, s.writeTimeout))
		v, err := s.RulesVersion(ctx)
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
