package replay

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"maps"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/middleware"

	// Shell rules (Rule.Shell) are read as a shell reads them wherever this package runs.
	_ "github.com/streamrules/streamrules/shellcmd"
)

// Options tune a backtest. A nil *Options means all defaults.
type Options struct {
	// Environments are the environment names the rules' `when` may use and the moves'
	// environments name: seeds.Environments() for the shipped seeds, then the host's
	// own. Default none: a rule with a `when` is an error.
	Environments []string
	// MaxRetriesPerMove is the engine's retry ceiling, as in streamrules.Config. It decides
	// whether a text rule's would-fire counts as a discard (see Report). Default 0: 1.
	MaxRetriesPerMove int
	// AsStored replays the rules as they are: disabled rules are not loaded. Default false:
	// every rule given is replayed enabled, since a backtest asks "what if it were on".
	AsStored bool
	// Examples is how many example excerpts each rule keeps. Default 0: 3; negative: none.
	Examples int
	// OnMove, if set, is called for every move as it is handed to the engine, with the
	// running totals: for a progress bar. It runs on one goroutine, in input order;
	// keep it short.
	OnMove func(Progress)
	// Workers is how many goroutines replay moves, each owning a fixed set of chats.
	// Default 0: runtime.GOMAXPROCS(0). The report is the same for any number.
	Workers int
	// Logger receives the engine's warnings (an unknown environment name, once per name).
	// Default: none (slog.DiscardHandler); the fired lines would be one per firing.
	Logger *slog.Logger
	// Tracer, if set, gets a span per replayed move and one per tool call in it, as
	// middleware.Config.Tracer gets them live (trace.go): with package tracing, each
	// would-fire is a gen_ai.guardrail.result event on its move's span. It is called
	// from the Workers goroutines at once. Default nil: no spans.
	Tracer middleware.Tracer
}

// Progress is where a backtest stands.
type Progress struct {
	Moves int    // moves handed to the engine so far, over every source
	File  string // the source being read
	Line  int    // the line of the move just handed out
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

// Replayer replays moves through a real streamrules.Engine over the rules under test,
// with the chats' state (move counters, last firings) kept in memory.
// Run is the usual way in; a Replayer serves a caller that has moves rather than files.
// It is not safe for concurrent use (ReadFrom uses its own goroutines inside).
type Replayer struct {
	eng    *streamrules.Engine
	opts   Options
	names  []string       // the loaded rules' names, by name
	index  map[string]int // a rule's place in names (and in each shard's rules); shared, read only
	known  map[string]bool
	shards []*shard
	seq    int64  // moves handed out so far, over every source: each move's place in the input
	chats  *chats // this backtest's chats' state, handed to the store in each move's context
	owns   bool   // the engine is this Replayer's own (New), not a Compiled's
}

// shard is the part of a backtest one worker owns: a fixed set of chats (by a hash of
// the chat ID), so each chat's moves stay in order on one goroutine, and its own
// counters, merged by Report.
type shard struct {
	rules    []ruleStat // as Replayer.names
	moves    int
	lastMove map[string]int64 // chat → its last move number replayed
	unknown  map[string]bool  // names in transcripts the engine does not know
	err      *seqError        // the first error this shard met; it replays nothing after it
}

// seqError is an error and the place in the input of the move (or line) it came from.
type seqError struct {
	seq int64
	err error
}

// New loads rules into a fresh engine. Every rule is validated as the engine validates it;
// a bad one is an error naming it.
func New(ctx context.Context, rules []streamrules.Rule, opts *Options) (*Replayer, error) {
	c, err := Compile(ctx, rules, opts)
	if err != nil {
		return nil, err
	}
	rp := c.replayer(opts)
	rp.owns = true
	return rp, nil
}

// Compiled is rules loaded into an engine once, for many backtests: each Run pays only
// for its moves, not for compiling the rules (a console keeps one per rules version).
// Runs share nothing but the compiled rules: each has its own chats' state and counts.
// It is safe for concurrent use.
type Compiled struct {
	eng    *streamrules.Engine
	opts   Options // as compiled: Environments, MaxRetriesPerMove, AsStored, Logger
	known  map[string]bool
	loaded []streamrules.Rule
	names  []string       // the loaded rules' names, by name
	index  map[string]int // a name's place in names
	stats  []ruleStat     // each rule's counters at zero: a run's shards start from copies
}

// Compile validates rules and loads them into an engine, as New does. Of opts, it reads
// Environments, MaxRetriesPerMove, AsStored and Logger; the others are each Run's.
func Compile(ctx context.Context, rules []streamrules.Rule, opts *Options) (*Compiled, error) {
	o := Options{}
	if opts != nil {
		o = *opts
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
	eng, err := streamrules.New(ctx, &store{MemoryStore: mem}, &streamrules.Config{
		Environments:      o.Environments,
		MaxRetriesPerMove: o.MaxRetriesPerMove,
		Logger:            o.Logger,
	})
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	c := &Compiled{eng: eng, opts: o, known: map[string]bool{}, loaded: eng.Rules(), index: map[string]int{}}
	for _, name := range eng.Environments() {
		c.known[name] = true
	}
	for i, r := range c.loaded {
		c.names = append(c.names, r.Name)
		c.index[r.Name] = i
		c.stats = append(c.stats, ruleStat{rule: r, RuleReport: RuleReport{Rule: r.Name, Scope: r.Scope,
			Gate: r.Mode == streamrules.ModeInterrupt && r.Tool() != ""}})
	}
	return c, nil
}

// Run replays the transcripts, in order, against the compiled rules, as the package's
// Run does. Of opts, it reads Examples, OnMove, Workers and Tracer; nil: their defaults.
func (c *Compiled) Run(ctx context.Context, sources []Source, opts *Options) (*Report, error) {
	rp := c.replayer(opts)
	for _, src := range sources {
		if err := rp.ReadFrom(ctx, src); err != nil {
			return nil, err
		}
	}
	return rp.Report(), nil
}

// Close releases the engine. No Run may be under way.
func (c *Compiled) Close() { c.eng.Close() }

// replayer starts a backtest over c with the run's own options and state.
func (c *Compiled) replayer(opts *Options) *Replayer {
	o := c.opts
	if opts != nil {
		o.Examples, o.OnMove, o.Workers, o.Tracer = opts.Examples, opts.OnMove, opts.Workers, opts.Tracer
	}
	if o.Examples == 0 {
		o.Examples = 3
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	rp := &Replayer{eng: c.eng, opts: o, names: c.names, index: c.index, known: c.known, chats: &chats{m: map[string]streamrules.ChatState{}}}
	for range o.Workers {
		// One copy of the zeroed counters a shard: no map or allocation per rule (at
		// 10,000 rules, building them was most of a short backtest's time).
		sh := &shard{rules: slices.Clone(c.stats), lastMove: map[string]int64{}, unknown: map[string]bool{}}
		rp.shards = append(rp.shards, sh)
	}
	return rp
}

// Close releases the engine.
func (rp *Replayer) Close() {
	if rp.owns {
		rp.eng.Close()
	}
}

// shardOf returns the shard that owns chat.
func (rp *Replayer) shardOf(chat string) int {
	if len(rp.shards) == 1 {
		return 0
	}
	h := fnv.New32a()
	h.Write([]byte(chat))
	return int(h.Sum32() % uint32(len(rp.shards)))
}

// ReadFrom replays every move of one transcript, in order. Lines are decoded on a
// goroutine of their own, and the moves replayed on Options.Workers goroutines, each
// owning a fixed set of chats, so every chat's moves still reach the engine one by one,
// in order, for the repeat policies. The report is the same as one goroutine's; so is
// the error: the first one in input order.
func (rp *Replayer) ReadFrom(ctx context.Context, src Source) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batches := make(chan batch, 4)
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		defer close(batches)
		readBatches(ctx, NewReader(src.R, src.Name), batches)
	}()
	defer func() {
		cancel() // stops the reader if the replay stopped first
		<-readDone
	}()

	work := make([]chan []item, len(rp.shards))
	var failed atomic.Bool // some shard met an error: read no further
	var wg sync.WaitGroup
	for i, sh := range rp.shards {
		work[i] = make(chan []item, 4)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for items := range work[i] {
				for _, it := range items {
					if sh.err != nil || ctx.Err() != nil {
						break // drain: the dispatcher may still be sending
					}
					if err := rp.replayOn(ctx, sh, it.m, it.pos, it.seq); err != nil {
						sh.err = &seqError{it.seq, err}
						failed.Store(true)
					}
				}
			}
		}()
	}
	var readErr *seqError
	split := make([][]item, len(rp.shards))
dispatch:
	for b := range batches {
		for i, m := range b.moves {
			if failed.Load() || ctx.Err() != nil {
				break dispatch
			}
			s := rp.shardOf(m.Chat)
			split[s] = append(split[s], item{m: m, pos: Position{File: src.Name, Line: b.lines[i]}, seq: rp.seq})
			rp.seq++
			if rp.opts.OnMove != nil {
				rp.opts.OnMove(Progress{Moves: int(rp.seq), File: src.Name, Line: b.lines[i], Bytes: b.offsets[i]})
			}
		}
		for s, items := range split {
			if len(items) > 0 {
				work[s] <- items
				split[s] = nil
			}
		}
		if b.err != nil {
			readErr = &seqError{rp.seq, b.err}
			break
		}
	}
	for _, ch := range work {
		close(ch)
	}
	wg.Wait()
	// The first error in input order: every move before a shard's error was handed out
	// (in order), so every shard has met its own first error before it, if any.
	first := readErr
	for _, sh := range rp.shards {
		if sh.err != nil && (first == nil || sh.err.seq < first.seq) {
			first = sh.err
		}
		sh.err = nil
	}
	if first != nil {
		return first.err
	}
	return ctx.Err()
}

// item is one move handed to a shard.
type item struct {
	m   Move
	pos Position
	seq int64
}

// batch is up to batchSize decoded moves, and the error that ended the input, if any.
type batch struct {
	moves   []Move
	lines   []int
	offsets []int64
	err     error
}

// batchSize moves go to the replaying goroutines at once: channel sends per batch
// instead of per move.
const batchSize = 256

func readBatches(ctx context.Context, rd *Reader, out chan<- batch) {
	for {
		b := batch{moves: make([]Move, 0, batchSize), lines: make([]int, 0, batchSize), offsets: make([]int64, 0, batchSize)}
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
	seq := rp.seq
	rp.seq++
	return rp.replayOn(ctx, rp.shards[rp.shardOf(m.Chat)], m, pos, seq)
}

func (rp *Replayer) replayOn(ctx context.Context, sh *shard, m Move, pos Position, seq int64) error {
	if err := m.check(); err != nil {
		return &LineError{File: pos.File, Line: pos.Line, Err: err}
	}
	last := sh.lastMove[m.Chat]
	if m.Move != 0 && m.Move <= last {
		return &LineError{File: pos.File, Line: pos.Line,
			Err: fmt.Errorf("chat %q: move %d comes after move %d: a chat's moves must be in order", m.Chat, m.Move, last)}
	}
	for _, name := range m.Env {
		if !rp.known[name] {
			sh.unknown[name] = true // a typo here would silently put rules out of scope
		}
	}
	ctx, span := rp.startMove(ctx, m.Chat) // trace.go
	mctx, mv := rp.eng.BeginMove(context.WithValue(withNumber(ctx, m.Move), chatsKey{}, rp.chats), m.Chat, m.Env...)
	for name, value := range m.Vars {
		mv.SetVar(name, value)
	}
	if m.Input != nil {
		mv.SetInput(*m.Input)
	}
	for _, c := range m.Tools {
		// A gate (a tool rule in mode interrupt) would have stopped the call before it ran:
		// each matching call is a would-fire of its own, and a stopped call reminds nothing
		// and is not in the move's tool record.
		cctx, tool := rp.startTool(mctx, c) // trace.go
		if mv.GateCall(cctx, c.Name, c.Args) != nil {
			endTool(tool, middleware.ToolResult{Refused: true})
			continue
		}
		if !c.Succeeded() {
			// As the middleware records a failed output: marked on the call's own context.
			cctx = streamrules.WithToolCall(cctx)
			streamrules.MarkToolFailed(cctx)
		}
		rem := mv.ToolReminders(cctx, c.Name, c.Args)
		endTool(tool, middleware.ToolResult{Reminders: rem})
	}
	// The reasoning first, as the middleware judges it; a thinking discard spends the
	// move's retry, so the answer's misses after it are kept, as they would be live.
	mv.CheckThinking(mctx, m.Reasoning)
	mv.CheckAnswer(mctx, m.Answer)
	// Every transcript line is a move that ended with an answer: counted, as End(nil) counts it.
	err := mv.End(mctx, nil)
	endMove(span, mv, err)
	if err != nil {
		return fmt.Errorf("replay: %s:%d: %w", pos.File, pos.Line, err)
	}
	sh.lastMove[m.Chat] = mv.Number()
	sh.moves++
	for i := range sh.rules {
		rs := &sh.rules[i]
		switch applicability(rs, mv, &m) {
		case NotApplicable:
			rs.NotApplicable++
		case Applies:
			rs.InScope++
			if tool := rs.rule.Tool(); tool != "" {
				for _, c := range m.Tools {
					if c.Name == tool {
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
	gateSeen := map[string]int{}
	for _, f := range firings {
		i, ok := rp.index[f.Rule]
		if !ok {
			continue // cannot happen: the engine fires only the rules it loaded
		}
		rs := &sh.rules[i]
		rs.Fired++
		gate := f.Mode == streamrules.ModeInterrupt && f.Tool != ""
		if f.Mode == streamrules.ModeInterrupt && f.Retry || gate && rp.opts.MaxRetriesPerMove >= 0 {
			rs.Discards++ // a gate's would-fire with a retry left discards the response
		}
		if len(rs.Examples) >= rp.opts.Examples {
			continue // a shard's first examples are its earliest: enough for the merge
		}
		ex := Example{File: pos.File, Line: pos.Line, Chat: m.Chat, Move: mv.Number(), seq: seq}
		target := m.Answer
		if f.Mode == streamrules.ModeRemind || gate {
			call, ok := firedCall(calls, f.Rule, gateSeen[f.Rule])
			if !ok {
				continue
			}
			if gate {
				gateSeen[f.Rule]++ // the rule's next gate firing is the next refused call
				ex.Gate = true
			}
			ex.Tool = call.Tool
			target = streamrules.CompactArgs(call.Input)
		}
		rs.addExample(ex, target, f.Span)
	}
	return nil
}

// firedCall finds the skip+1-th tool call whose result carried rule's reminder (a gate's
// refusal is one).
func firedCall(calls []streamrules.ToolCall, rule string, skip int) (streamrules.ToolCall, bool) {
	for _, c := range calls {
		for _, r := range c.Reminders {
			if r.Rule == rule {
				if skip == 0 {
					return c, true
				}
				skip--
			}
		}
	}
	return streamrules.ToolCall{}, false
}

// Report returns the report so far: every loaded rule, by name, zero fires included.
// The shards' counts are added up, and each rule keeps its earliest examples.
func (rp *Replayer) Report() *Report {
	out := &Report{Rules: make([]RuleReport, 0, len(rp.names))}
	unknown := map[string]bool{}
	for _, sh := range rp.shards {
		out.Moves += sh.moves
		for name := range sh.unknown {
			unknown[name] = true
		}
	}
	out.UnknownEnv = slices.Sorted(maps.Keys(unknown))
	for i := range rp.names {
		r := rp.shards[0].rules[i].RuleReport
		r.Examples = nil
		for _, sh := range rp.shards {
			s := &sh.rules[i]
			if sh != rp.shards[0] {
				r.InScope += s.InScope
				r.Fired += s.Fired
				r.Discards += s.Discards
				r.Calls += s.Calls
				r.NotApplicable += s.NotApplicable
			}
			r.Examples = append(r.Examples, s.Examples...)
		}
		slices.SortFunc(r.Examples, func(a, b Example) int { return cmp.Compare(a.seq, b.seq) })
		if len(r.Examples) > max(rp.opts.Examples, 0) {
			r.Examples = r.Examples[:max(rp.opts.Examples, 0)]
		}
		if r.Examples == nil {
			r.Examples = []Example{}
		}
		// One rate per kind of chance: a text rule's are moves, a tool rule's calls (a gate
		// fires per call, a soft rule on one call of its move), so the column compares
		// like with like.
		r.RateOf = rateOfMoves
		if r.Scope != streamrules.ScopeText && r.Scope != streamrules.ScopeThinking {
			r.RateOf = rateOfCalls
		}
		switch {
		case r.RateOf == rateOfCalls && r.Calls > 0:
			r.Rate = float64(r.Fired) / float64(r.Calls)
		case r.RateOf == rateOfMoves && r.InScope > 0:
			r.Rate = float64(r.Fired) / float64(r.InScope)
		}
		out.Rules = append(out.Rules, r)
	}
	return out
}

// store is the engine's store in a backtest: the rules in a streamrules.MemoryStore, the
// chats' state in the backtest's own chats, which each move's context carries (so one
// compiled engine serves backtests at once). A transcript's move number, when it gives
// one, is the chat's next move number, so an after:N policy sees the gaps of a filtered
// transcript. (MemoryStore would keep every firing too: a backtest of a million moves
// needs only the state the repeat policies read.)
type store struct {
	*streamrules.MemoryStore
}

// chats is one backtest's chats' state, and the repeat-limited firings its moves
// claimed (streamrules.Claimer), per chat and rule.
type chats struct {
	mu     sync.Mutex
	m      map[string]streamrules.ChatState
	claims map[string]map[string]int64
}

// ClaimFiring implements streamrules.Claimer on the backtest's own claims, as
// streamrules.MemoryStore does on its own (which a Compiled's runs share, so it must not
// be the one asked).
func (s *store) ClaimFiring(ctx context.Context, chatID, rule string, move int64, policy streamrules.Repeat) (bool, error) {
	c := chatsOf(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	last := c.claims[chatID][rule]
	if !policy.Allows(last, move) || last >= move {
		return false, nil
	}
	if c.claims == nil {
		c.claims = map[string]map[string]int64{}
	}
	if c.claims[chatID] == nil {
		c.claims[chatID] = map[string]int64{}
	}
	c.claims[chatID][rule] = move
	return true, nil
}

type chatsKey struct{}

// chatsOf returns the backtest's chats a move's context carries; a context without them
// (none of this package's) gets an empty, throwaway state.
func chatsOf(ctx context.Context) *chats {
	if c, ok := ctx.Value(chatsKey{}).(*chats); ok {
		return c
	}
	return &chats{m: map[string]streamrules.ChatState{}}
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
	c := chatsOf(ctx)
	c.mu.Lock()
	// Not cloned (a clone a move was 5% of a backtest's allocations): SaveMove updates
	// this map in place, and only at the end of the move that read it; a chat's moves
	// never run at once (one shard owns each chat), and an ended move reads nothing.
	st := c.m[chatID]
	c.mu.Unlock()
	if n, ok := ctx.Value(numberKey{}).(int64); ok {
		st.Moves = n - 1 // BeginMove numbers the move Moves+1
	}
	return st, nil
}

// SaveMove implements streamrules.Store.
func (s *store) SaveMove(ctx context.Context, rec streamrules.MoveRecord) error {
	c := chatsOf(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.m[rec.ChatID]
	if rec.Answered {
		st.Moves = rec.Move
	}
	for _, f := range rec.Firings {
		if st.LastFired == nil {
			st.LastFired = map[string]int64{}
		}
		st.LastFired[f.Rule] = max(st.LastFired[f.Rule], f.Move)
	}
	c.m[rec.ChatID] = st
	return nil
}
