package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/middleware"
	"github.com/streamrules/streamrules/replay"
	"github.com/streamrules/streamrules/seeds"
)

// sessionLog is the guard's transcript recorder (middleware.Config.Transcript): the library
// records each answered move as the rules saw it, and sessionLog appends it to the
// transcript file in the replay package's JSON Lines format, so the session can be
// backtested:
//
//	go run ./cmd/streamrules replay --rules seeds/seeds.json streamrules-demo.jsonl
//
// It appends, as the database keeps the chat across runs: the file and the database go
// together (delete both to start over). It also keeps the last move's record for the
// session's notes (silentRules), with or without a file.
type sessionLog struct {
	path string
	f    *os.File         // nil: no transcript file (STREAMRULES_TRANSCRIPT=off)
	file *replay.Recorder // writes to f

	mu   sync.Mutex
	last *middleware.MoveRecord
}

// openSessionLog opens path for appending; "off" means no transcript file.
func openSessionLog(path string) (*sessionLog, error) {
	l := &sessionLog{path: path}
	if path == "off" {
		return l, nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("STREAMRULES_TRANSCRIPT: %w", err)
	}
	l.f, l.file = f, replay.NewRecorder(f)
	return l, nil
}

// RecordMove keeps m and appends it to the file.
func (l *sessionLog) RecordMove(ctx context.Context, m middleware.MoveRecord) error {
	l.mu.Lock()
	l.last = &m
	l.mu.Unlock()
	if l.file == nil {
		return nil
	}
	if err := l.file.RecordMove(ctx, m); err != nil {
		return fmt.Errorf("STREAMRULES_TRANSCRIPT: %w", err)
	}
	return nil
}

// take returns the record of the move that ended last, and forgets it; ok is false when
// the move was not recorded (it failed).
func (l *sessionLog) take() (m middleware.MoveRecord, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last == nil {
		return m, false
	}
	m, l.last = *l.last, nil
	return m, true
}

// Close closes the file.
func (l *sessionLog) Close() error {
	if l == nil || l.f == nil {
		return nil
	}
	return l.f.Close()
}

// ranCalls is the move as a transcript line with only the calls that ran: the calls a
// tool rule could have reminded.
func ranCalls(m middleware.MoveRecord) replay.Move {
	mv := replay.FromRecord(m)
	mv.Tools = slices.DeleteFunc(mv.Tools, func(c replay.ToolCall) bool { return c.Refused })
	return mv
}

// silentRules explains the soft rules that matched a tool call of the move but did not
// fire because of their repeat policy: one note each. It asks the engine rather than
// matching by hand: the move is replayed through a fresh engine over the same rules
// without their repeat policies, and what fires there but did not fire here was held
// back by a policy.
func silentRules(ctx context.Context, rules []streamrules.Rule, m replay.Move, fired []streamrules.Firing, lastFired map[string]int64) ([]string, error) {
	var policed []streamrules.Rule
	for _, r := range rules {
		if r.Tool() != "" && r.Repeat != "" {
			r.Repeat = ""
			policed = append(policed, r)
		}
	}
	if len(policed) == 0 || len(m.Tools) == 0 {
		return nil, nil
	}
	rp, err := replay.New(ctx, policed, &replay.Options{Environments: seeds.Environments(), Examples: 1, Workers: 1}) // one move: one shard
	if err != nil {
		return nil, err
	}
	defer rp.Close()
	m.Move, m.Answer = 0, ""
	if err := rp.Replay(ctx, m, replay.Position{File: "move"}); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, f := range fired {
		seen[f.Rule] = true
	}
	repeat := map[string]string{}
	for _, r := range rules {
		repeat[r.Name] = r.Repeat
	}
	var out []string
	for _, r := range rp.Report().Rules {
		if r.Fired == 0 || seen[r.Rule] || len(r.Examples) == 0 {
			continue
		}
		last := lastFired[r.Rule]
		why := "so it stays silent in this chat for good"
		if rep, _ := streamrules.ParseRepeat(repeat[r.Rule]); rep.Kind == streamrules.RepeatAfter {
			why = fmt.Sprintf("so it stays silent until move %d", last+rep.Moves)
		}
		out = append(out, fmt.Sprintf("silent: %s matched this %s call; repeat %q: it fired in move %d, %s",
			r.Rule, r.Examples[0].Tool, repeat[r.Rule], last, why))
	}
	return out, nil
}

// openError says which variable to fix when the store does not open. For the default
// SQLite file, rulesdb's error ("unable to open database file") does not say why; the
// OS does, so the file is opened the same way to ask it.
func openError(cfg Config, err error) error {
	if cfg.DSN != "" {
		return fmt.Errorf("STREAMRULES_DSN: cannot open the rule store: %w", err)
	}
	if cause := probeFile(cfg.SQLitePath); cause != nil {
		return fmt.Errorf("STREAMRULES_SQLITE_PATH: cannot open the SQLite file: %w", cause)
	}
	return fmt.Errorf("STREAMRULES_SQLITE_PATH: cannot open the rule store: %w", err)
}

// probeFile opens path for writing, creating it if need be (and removing it again),
// and returns the OS's error.
func probeFile(path string) error {
	_, statErr := os.Stat(path)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	f.Close()
	if errors.Is(statErr, os.ErrNotExist) {
		_ = os.Remove(path)
	}
	return nil
}
