package replay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"sync"

	"github.com/streamrules/streamrules"
)

// Options tune a backtest. A nil *Options means all defaults.
type Options struct {
	// Environments are the host's own environment names, beside the builtin ones, as in
	// streamrules.Config.Environments. Default none.
	Environments []string
	// MaxRetriesPerMove is the engine's retry ceiling, as in streamrules.Config. It decides
	// whether a text rule's would-fire counts as a discard (see Report). Default 0: 1.
	MaxRetriesPerMove int
	// AsStored replays the rules as they are: disabled rules are not loaded. Default false:
	// every rule given is replayed enabled, since a backtest asks "what if it were on".
	AsStored bool
	// Examples is how many example excerpts each rule keeps. Default 0: 3; negative: none.
	Examples int
	// OnMove, if set, is called after every move replayed, with the running totals: for a
	// progress bar. It runs on the replaying goroutine; keep it short.
	OnMove func(Progress)
	// Logger receives the engine's warnings (an unknown environment name, once per name).
	// Default: none (slog.DiscardHandler); the fired lines would be one per firing.
	Logger *slog.Logger
}

// Progress is where a backtest stands.
type Progress struct {
	Moves int    // moves replayed so far, over every source
	File  string // the source being read
	Line  int    // its line just replayed
	Bytes int64  // bytes of this source read so far
}

// Source is one transcript to replay.
type Source struct {
	Name string // how errors and examples name it: a file name
	R    io.Reader
}

// Run replays the transcripts, in order, against rules and reports on each rule.
// A bad rule, a bad line or a move out of order stops it with an error naming the rule,
// or the file and line (a *LineError); ctx cancels it between moves.
func Run(ctx context.Context, rules []streamrules.Rule, sources []Source, opts *Options) (*Report, error) {
	rp, err := New(ctx, rules, opts)
	if err != nil {
		return nil, err
	}
	defer rp.Close()
	for _, src := range sources {
		if err := rp.ReadFrom(ctx, src); err != nil {
			return nil, err
		}
	}
	return rp.Report(), nil
}

// Replayer replays moves one at a time through a real streamrules.Engine over the rules
// under test, with the chats' state (move counters, last firings) kept in memory.
// Run is the usual way in; a Replayer serves a caller that has moves rather than files.
// It is not safe for concurrent use.
type Replayer struct {
	eng      *streamrules.Engine
	store    *store
	opts     Options
	rules    []*ruleStat // by name, as the engine loaded them
	byName   map[string]*ruleStat
	moves    int
	lastMove map[string]int64 // chat → its last move number replayed
	known    map[string]bool  // the engine's environment names
	unknown  map[string]bool  // names in transcripts the engine does not know
}

// New loads rules into a fresh engine. Every rule is validated as the engine validates it;
// a bad one is an error naming it.
func New(ctx context.Context, rules []streamrules.Rule, opts *Options) (*Replayer, error) {
	o := Options{}
	if opts != nil {
		o = *opts
	}
	if o.Examples == 0 {
		o.Examples = 3
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	rules = slices.Clone(rules)
	for i := range rules {
		rules[i].When = slices.Clone(rules[i].When)
		if !o.AsStored {
			rules[i].Disabled, rules[i].Shadow = false, false
		}
	}
	mem, err := streamrules.NewMemoryStore(rules, o.Environments...)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	st := &store{MemoryStore: mem, chats: map[string]streamrules.ChatState{}}
	eng, err := streamrules.New(ctx, st, &streamrules.Config{
		Environments:      o.Environments,
		MaxRetriesPerMove: o.MaxRetriesPerMove,
		Logger:            o.Logger,
	})
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	rp := &Replayer{eng: eng, store: st, opts: o, byName: map[string]*ruleStat{}, lastMove: map[string]int64{},
		known: map[string]bool{}, unknown: map[string]bool{}}
	for _, name := range eng.Environments() {
		rp.known[name] = true
	}
	for _, r := range eng.Rules() {
		rs := &ruleStat{rule: r, RuleReport: RuleReport{Rule: r.Name, Scope: r.Scope, Examples: []Example{}}}
		rp.rules = append(rp.rules, rs)
		rp.byName[r.Name] = rs
	}
	return rp, nil
}

// Close releases the engine.
func (rp *Replayer) Close() { rp.eng.Close() }

// ReadFrom replays every move of one transcript, in order. Lines are decoded on a
// goroutine of their own while the engine replays the ones before: decoding is about a
// third of a backtest's work, and the moves must still reach the engine one by one, in
// order, for the repeat policies.
func (rp *Replayer) ReadFrom(ctx context.Context, src Source) error {
	ctx, cancel := context.WithCancel(ctx)
	batches := make(chan batch, 4)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(batches)
		readBatches(ctx, NewReader(src.R, src.Name), batches)
	}()
	defer func() {
		cancel() // stops the reader if the replay stopped first
		<-done
	}()
	for b := range batches {
		for i, m := range b.moves {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := rp.Replay(ctx, m, Position{File: src.Name, Line: b.lines[i]}); err != nil {
				return err
			}
			if rp.opts.OnMove != nil {
				rp.opts.OnMove(Progress{Moves: rp.moves, File: src.Name, Line: b.lines[i], Bytes: b.offsets[i]})
			}
		}
		if b.err != nil {
			return b.err
		}
	}
	return ctx.Err()
}

// batch is up to batchSize decoded moves, and the error that ended the input, if any.
type batch struct {
	moves   []Move
	lines   []int
	offsets []int64
	err     error
}

// batchSize moves go to the replaying goroutine at once: one channel send per batch
// instead of per move.
const batchSize = 256

func readBatches(ctx context.Context, rd *Reader, out chan<- batch) {
	for {
		var b batch
		for len(b.moves) < batchSize {
			m, err := rd.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.err = err
				break
			}
			b.moves = append(b.moves, m)
			b.lines = append(b.lines, rd.Line())
			b.offsets = append(b.offsets, rd.Offset())
		}
		if len(b.moves) == 0 && b.err == nil {
			return
		}
		select {
		case out <- b:
		case <-ctx.Done():
			return
		}
		if b.err != nil || len(b.moves) < batchSize {
			return
		}
	}
}

// Position is where a move came from, for errors and examples.
type Position struct {
	File string
	Line int
}

// Replay plays one move through the engine, as the middleware would have: BeginMove in
// the move's environments, ToolReminders for each tool call in order, CheckAnswer on the
// answer, End. A chat's moves must come in order; a move number lower than or equal to
// the chat's last one is a *LineError.
func (rp *Replayer) Replay(ctx context.Context, m Move, pos Position) error {
	if err := m.check(); err != nil {
		return &LineError{File: pos.File, Line: pos.Line, Err: err}
	}
	last := rp.lastMove[m.Chat]
	if m.Move != 0 && m.Move <= last {
		return &LineError{File: pos.File, Line: pos.Line,
			Err: fmt.Errorf("chat %q: move %d comes after move %d: a chat's moves must be in order", m.Chat, m.Move, last)}
	}
	for _, name := range m.Env {
		if !rp.known[name] {
			rp.unknown[name] = true // a typo here would silently put rules out of scope
		}
	}
	mctx, mv := rp.eng.BeginMove(withNumber(ctx, m.Move), m.Chat, m.Env...)
	for _, c := range m.Tools {
		mv.ToolReminders(mctx, c.Name, c.Args)
	}
	mv.CheckAnswer(mctx, m.Answer)
	// Every transcript line is a move that ended with an answer: counted, as End(nil) counts it.
	if err := mv.End(mctx, nil); err != nil {
		return fmt.Errorf("replay: %s:%d: %w", pos.File, pos.Line, err)
	}
	rp.lastMove[m.Chat] = mv.Number()
	rp.moves++
	for _, rs := range rp.rules {
		if applicability(&rs.rule, mv) == Applies {
			rs.InScope++
			if rs.rule.Tool() != "" {
				for _, c := range m.Tools {
					if c.Name == rs.rule.Tool() {
						rs.Calls++
					}
				}
			}
		}
	}
	firings := mv.Firings()
	if len(firings) == 0 {
		return nil
	}
	calls, _ := mv.ToolCalls()
	for _, f := range firings {
		rs := rp.byName[f.Rule]
		if rs == nil {
			continue // cannot happen: the engine fires only the rules it loaded
		}
		rs.Fired++
		if f.Mode == streamrules.ModeInterrupt && f.Retry {
			rs.Discards++
		}
		if len(rs.Examples) >= rp.opts.Examples {
			continue
		}
		ex := Example{File: pos.File, Line: pos.Line, Chat: m.Chat, Move: mv.Number()}
		target := m.Answer
		if f.Mode == streamrules.ModeRemind {
			call, ok := firedCall(calls, f.Rule)
			if !ok {
				continue
			}
			ex.Tool = call.Tool
			target = streamrules.CompactArgs(call.Input)
		}
		rs.addExample(ex, target)
	}
	return nil
}

// firedCall finds the tool call whose result carried rule's reminder.
func firedCall(calls []streamrules.ToolCall, rule string) (streamrules.ToolCall, bool) {
	for _, c := range calls {
		for _, r := range c.Reminders {
			if r.Rule == rule {
				return c, true
			}
		}
	}
	return streamrules.ToolCall{}, false
}

// Report returns the report so far: every loaded rule, by name, zero fires included.
func (rp *Replayer) Report() *Report {
	out := &Report{Moves: rp.moves, Rules: make([]RuleReport, 0, len(rp.rules))}
	out.UnknownEnv = slices.Sorted(maps.Keys(rp.unknown))
	for _, rs := range rp.rules {
		r := rs.RuleReport
		if r.InScope > 0 {
			r.Rate = float64(r.Fired) / float64(r.InScope)
		}
		r.Examples = slices.Clone(r.Examples)
		out.Rules = append(out.Rules, r)
	}
	return out
}

// store is the engine's store in a backtest: the rules in a streamrules.MemoryStore, the
// chats' state in a map. A transcript's move number, when it gives one, is the chat's
// next move number, so an after:N policy sees the gaps of a filtered transcript.
// (MemoryStore would keep every firing too: a backtest of a million moves needs only
// the state the repeat policies read.)
type store struct {
	*streamrules.MemoryStore
	mu    sync.Mutex
	chats map[string]streamrules.ChatState
}

type numberKey struct{}

// withNumber carries a transcript's move number to LoadChat, through BeginMove.
func withNumber(ctx context.Context, move int64) context.Context {
	if move == 0 {
		return ctx
	}
	return context.WithValue(ctx, numberKey{}, move)
}

// LoadChat implements streamrules.Store.
func (s *store) LoadChat(ctx context.Context, chatID string) (streamrules.ChatState, error) {
	s.mu.Lock()
	st := s.chats[chatID]
	st.LastFired = maps.Clone(st.LastFired)
	s.mu.Unlock()
	if n, ok := ctx.Value(numberKey{}).(int64); ok {
		st.Moves = n - 1 // BeginMove numbers the move Moves+1
	}
	return st, nil
}

// SaveMove implements streamrules.Store.
func (s *store) SaveMove(_ context.Context, rec streamrules.MoveRecord) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.chats[rec.ChatID]
	if rec.Answered {
		st.Moves = rec.Move
	}
	for _, f := range rec.Firings {
		if st.LastFired == nil {
			st.LastFired = map[string]int64{}
		}
		st.LastFired[f.Rule] = max(st.LastFired[f.Rule], f.Move)
	}
	s.chats[rec.ChatID] = st
	return nil
}
