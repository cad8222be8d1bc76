package replay

import (
	"context"
	"io"
	"sync"

	"github.com/streamrules/streamrules/middleware"
)

// Recorder writes the moves a guard runs as a transcript: give it to the guard, and each
// answered move becomes one line, as the rules saw it (middleware.MoveRecord), which
// this package replays to the counts the moves produced.
//
//	f, err := os.OpenFile("moves.jsonl", os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
//	…
//	guard, err := middleware.New(eng, &middleware.Config{Transcript: replay.NewRecorder(f)})
//
// It is safe for concurrent use: moves of many chats write whole lines, one at a time.
type Recorder struct {
	mu sync.Mutex
	w  *Writer
}

var _ middleware.Recorder = (*Recorder)(nil)

// NewRecorder writes to w. Each line is one Write of w; closing w is the caller's.
func NewRecorder(w io.Writer) *Recorder { return &Recorder{w: NewWriter(w)} }

// RecordMove writes m as one transcript line (FromRecord).
func (r *Recorder) RecordMove(_ context.Context, m middleware.MoveRecord) error {
	mv := FromRecord(m)
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.w.Write(mv)
}

// FromRecord is a move the guard recorded as a transcript line: Answer is what the model
// said first, Accepted is set where the client got another answer, and each call keeps
// whether it failed or a gate refused it.
func FromRecord(m middleware.MoveRecord) Move {
	mv := Move{Chat: m.Chat, Move: m.Move, Env: m.Env, Input: m.Input, Answer: m.Answer, Reasoning: m.Reasoning, Discarded: m.Discarded, Vars: m.Vars}
	if m.Accepted != m.Answer {
		acc := m.Accepted
		mv.Accepted = &acc
	}
	for _, c := range m.Tools {
		tc := ToolCall{Name: c.Name, Args: c.Args, Refused: c.Refused}
		if !c.OK && !c.Refused {
			tc.OK = new(bool)
		}
		mv.Tools = append(mv.Tools, tc)
	}
	return mv
}
