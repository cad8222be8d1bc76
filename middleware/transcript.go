package middleware

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/tmc/langchaingo/llms"

	"github.com/streamrules/streamrules"
)

// Recorder receives every move a Guard ran to its end, as the rules saw it
// (Config.Transcript). replay.NewRecorder writes each as one line of a backtest
// transcript; a host may keep them elsewhere. RecordMove is called after the move
// ended, on the move's goroutine, once per answered move (a failed move is not counted
// by the engine, so it is not recorded); moves of different chats call it at once.
type Recorder interface {
	RecordMove(ctx context.Context, m MoveRecord) error
}

// MoveRecord is one move as the rules saw it: enough for a backtest to judge it again
// and get what the rules decided live (package replay reads it as a replay.Move).
type MoveRecord struct {
	Chat  string
	Move  int64             // the move's number in its chat, 1-based
	Env   []string          // the environments the move began in
	Input *string           // the move's input (what input_contains_regex read); nil: none
	Vars  map[string]string // the move's variables (WithVars, Move.SetVar); nil: none
	// Tools are the calls the rules judged, in this order: first every call a gate stopped
	// (declared by a discarded response, or refused in place after the ceiling: Refused,
	// it never ran), then the calls that ran before Answer was given, each with whether
	// it returned normally. The calls a replay made after Answer are left out: a
	// transcript's calls all come before its answer.
	Tools []ToolRecord
	// Answer is what the model said first in the move: the first answer the text rules
	// judged, before a discard replaced it or a fix repaired it. It is what a backtest
	// judges: a rule under test must see what the model says unguarded. "" when the
	// move's only answer said nothing (tool calls alone).
	Answer string
	// Reasoning is the model's reasoning in the move's first response that had some, up
	// to the one of Answer: what the thinking rules judged first ("" when the model gave
	// none). A cut one is as far as it streamed.
	Reasoning string
	// Discarded are the answers a rule discarded, in order (the first is Answer when the
	// rules discarded it; a response that declared only calls adds none).
	Discarded []string
	// Accepted is the answer the client got: the last one the rules accepted, repaired
	// where a fix repaired it.
	Accepted string
}

// ToolRecord is one tool call of a MoveRecord.
type ToolRecord struct {
	Name    string
	Args    string // the input the tool got (or would have got)
	OK      bool   // it returned normally: no Go error, not marked failed (streamrules.MarkToolFailed)
	Refused bool   // a gate stopped it: it never ran
}

type recKey struct{}

// moveRec collects one move's record while it runs. Tools of one move may run at once
// (a host's own loop), hence the lock.
type moveRec struct {
	mu        sync.Mutex
	env       []string
	ran       []ToolRecord
	refused   []ToolRecord
	answered  bool
	answer    string
	before    int // len(ran) when answer was given
	discarded []string
	accepted  string
	reasoning string // see MoveRecord.Reasoning
}

// withRecord gives a move begun in env its record, when the guard records.
func (g *Guard) withRecord(ctx context.Context, env []string) context.Context {
	if g.rec == nil {
		return ctx
	}
	return context.WithValue(ctx, recKey{}, &moveRec{env: slices.Clone(env)})
}

func recordOf(ctx context.Context) *moveRec {
	r, _ := ctx.Value(recKey{}).(*moveRec)
	return r
}

// response notes a judged response: its answer target (before any fix), whether the
// rules discarded it, and, when they did, the calls it declared (they never run).
func (r *moveRec) response(target string, discarded bool, declared []streamrules.DeclaredCall) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.answered && strings.TrimSpace(target) != "" {
		r.answered, r.answer, r.before = true, target, len(r.ran)
	}
	if discarded {
		if target != "" {
			r.discarded = append(r.discarded, target)
		}
		for _, c := range declared {
			r.refused = append(r.refused, ToolRecord{Name: c.Tool, Args: c.Input, Refused: true})
		}
	}
}

// accept notes the answer the client gets (after a fix).
func (r *moveRec) accept(resp *llms.ContentResponse, format AnswerFormat) {
	if r == nil {
		return
	}
	if t := AnswerTarget(format, resp); t != "" {
		r.mu.Lock()
		r.accepted = t
		r.mu.Unlock()
	}
}

// tool notes a call the tool wrapper handled.
func (r *moveRec) tool(tr ToolRecord) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if tr.Refused {
		r.refused = append(r.refused, tr)
		return
	}
	r.ran = append(r.ran, tr)
}

// record hands the ended move to the guard's recorder; nothing when the move failed.
// output is the chain's answer, for a move whose answers the model wrapper never judged
// (a chain that answers without a guarded model).
func (g *Guard) record(ctx context.Context, move *streamrules.Move, output string, runErr error) error {
	r := recordOf(ctx)
	if r == nil || g.rec == nil || runErr != nil || move == nil {
		return nil
	}
	r.mu.Lock()
	m := MoveRecord{Chat: move.ChatID(), Move: move.Number(), Env: r.env, Vars: move.Vars(),
		Answer: r.answer, Reasoning: r.reasoning, Discarded: slices.Clone(r.discarded), Accepted: r.accepted}
	if !r.answered {
		m.Answer = output
	}
	if m.Accepted == "" {
		m.Accepted = output
	}
	ran := r.ran
	if r.answered {
		ran = ran[:r.before]
	}
	m.Tools = append(slices.Clone(r.refused), ran...)
	r.mu.Unlock()
	if in, ok := move.Input(); ok {
		m.Input = &in
	}
	return g.rec.RecordMove(ctx, m)
}
