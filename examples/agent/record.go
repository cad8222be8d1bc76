package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/tmc/langchaingo/llms"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/replay"
)

// sessionLog appends each move of the session to a transcript file in the replay
// package's JSON Lines format, so the session can be backtested:
//
//	go run ./cmd/streamrules replay --rules seeds/seeds.json streamrules-demo.jsonl
//
// It appends, as the database keeps the chat across runs: the file and the database go
// together (delete both to start over).
type sessionLog struct {
	path string
	f    *os.File
	w    *replay.Writer
}

// openSessionLog opens path for appending; "off" means no transcript (nil, nil).
func openSessionLog(path string) (*sessionLog, error) {
	if path == "off" {
		return nil, nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("STREAMRULES_TRANSCRIPT: %w", err)
	}
	return &sessionLog{path: path, f: f, w: replay.NewWriter(f)}, nil
}

// record writes one move. The answer is the one the text rules judged first: where a
// rule discarded an answer, the discarded one, since that is what the model said
// unguarded and what a rule under test must see; a replay of the file then gives the
// counts this session produced.
func (s *sessionLog) record(m replay.Move) error {
	if s == nil {
		return nil
	}
	if err := s.w.Write(m); err != nil {
		return fmt.Errorf("STREAMRULES_TRANSCRIPT: %w", err)
	}
	return nil
}

func (s *sessionLog) Close() error {
	if s == nil {
		return nil
	}
	return s.f.Close()
}

// judgedAnswer is the answer the text rules saw first in a move: the model's first
// answer of the move, as the tap below the guard received it (before a discard replaced
// it, or a fix repaired it), or the output when the tap saw none. toolsBefore is how many
// tool calls the move had made before it (-1: all of them).
func judgedAnswer(model *tap, before int, output string) (answer string, toolsBefore int) {
	if s, n, ok := model.firstAnswer(before); ok {
		return s, n
	}
	return output, -1
}

// unrunCalls are the tool calls the model declared after the first n prompts that never
// ran: a gate stopped them (the response was discarded, so no later prompt carries them).
// They are part of what the rules judged, so the transcript keeps them, and a replay of
// it counts the gate's would-fire as the session fired it.
func unrunCalls(model *tap, n int) []toolCall {
	model.mu.Lock()
	defer model.mu.Unlock()
	sent := map[string]bool{}
	for _, msgs := range model.calls[n:] {
		for _, m := range msgs {
			for _, part := range m.Parts {
				if tc, ok := part.(llms.ToolCall); ok {
					sent[tc.ID] = true
				}
			}
		}
	}
	var out []toolCall
	for _, decl := range model.declared[n:] {
		for _, tc := range decl {
			if !sent[tc.ID] && tc.FunctionCall != nil {
				out = append(out, toolCall{Tool: tc.FunctionCall.Name, Input: tc.FunctionCall.Arguments})
			}
		}
	}
	return out
}

// moveRecord is one played move as a transcript line: its input, and the tool calls made
// before the judged answer with whether each returned normally (the move's tool record),
// so a backtest judges the answer on what the move had done when it was given. Calls
// made after it (a replay's) are left out: a line's calls all come before its answer.
func moveRecord(chat string, number int64, env []string, input *string, calls []toolCall, record []streamrules.ToolRun,
	answer string, toolsBefore int, vars map[string]string) replay.Move {
	m := replay.Move{Chat: chat, Move: number, Env: env, Input: input, Answer: answer, Vars: vars}
	if toolsBefore >= 0 && toolsBefore < len(calls) {
		calls = calls[:toolsBefore]
	}
	for i, c := range calls {
		tc := replay.ToolCall{Name: c.Tool, Args: c.Input}
		if i < len(record) && record[i].Tool == c.Tool && !record[i].OK {
			tc.OK = new(bool)
		}
		m.Tools = append(m.Tools, tc)
	}
	return m
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
	rp, err := replay.New(ctx, policed, &replay.Options{Examples: 1, Workers: 1}) // one move: one shard
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
