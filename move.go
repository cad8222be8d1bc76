package streamrules

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"
)

type moveKey struct{}

// Move is the state of one move of one chat: from the user's message to the final answer.
// It travels in the context given to the executor, the agent, the model and every tool.
// Its methods are safe for concurrent use.
type Move struct {
	eng    *Engine
	set    *ruleSet
	chatID string
	number int64 // this move's number in the chat, 1-based

	stateUnknown bool // the chat's state could not be read: repeat policies fail closed

	mu        sync.Mutex
	env       uint64           // the environment of the current tour: what arming, `when` and verdicts read
	nextEnv   uint64           // the environment as last set: becomes env when the next tour begins
	lastFired map[string]int64 // from the chat state; not changed during the move
	fired     map[string]bool  // rules fired in this move: silent until its end
	denied    map[string]bool  // repeat-limited rules whose claim was lost or failed (claim.go)
	retries   int              // answers discarded in this move
	pending   []Reminder       // text rules missed after the ceiling: ride the next tool result
	ncalls    int              // tool calls so far in this move
	calls     []ToolCall       // the calls that got reminders, in order
	firings   []Firing
	ended     bool
	vars      map[string]string // set by the host (SetVar), for the templates of fixes
	// claimed counts, per gate rule, discards whose replay declared a matching call again
	// after the ceiling: their firing's outcome is already "refused", so the refusal that
	// follows records no second firing (gate.go).
	claimed map[string]int
	// gateClaims holds the repeat-limited gates whose claim this move won: a gate fires on
	// every matching call of its move, and claims once (gate.go).
	gateClaims map[string]bool
	facts      Facts // the input and the tool record, what context atoms read (context.go)
	spent      int   // characters of rule text laid in full this tour (delivery.go); BeginTour resets it
}

// ToolCall is one recorded tool call and the reminders its result carries in the prompt copy.
type ToolCall struct {
	Index     int // 0-based position among all tool calls of the move
	Tool      string
	Input     string
	Reminders []Reminder
}

// Verdict is the engine's answer on a finished model answer.
type Verdict struct {
	// Discard: the answer must be thrown away unseen and the tour replayed with Interrupt.
	Discard bool
	// Interrupt is the human-role message for the replay: one block per violated rule.
	Interrupt string
	// Rules are the violated rules' names, by name (also when the answer is kept after the
	// ceiling, or repaired). Rules in shadow are never here: their would-fires are only recorded.
	Rules []string
	// Fixed, when not empty, is the answer repaired in place by the fixes of the rules it
	// missed: the caller sends, stores and remembers Fixed instead of the answer. The
	// repaired text passes every armed text rule, or (after the ceiling) is kept with the
	// misses it still has. Never set with Discard.
	Fixed string
	// Refused names the gates (tool rules in mode interrupt) that match a call the
	// response declares and that will refuse it when the agent makes it (Move.GateCall),
	// by name: the response goes on because its text was shown already, or after the
	// ceiling. A caller that streams the response leaves its tool-call chunks out. Never
	// set with Discard.
	Refused []string
}

// BeginMove starts a move of chat chatID in the given environments and returns a context
// carrying it. It reads the chat's state from the store once, waiting at most
// Config.StoreTimeout. A store error or timeout does not stop the move: it is logged, and
// rules with a repeat policy stay silent in it (fail closed).
// Unknown environment names are logged and ignored.
func (e *Engine) BeginMove(ctx context.Context, chatID string, env ...string) (context.Context, *Move) {
	m := &Move{eng: e, set: e.rules.Load(), chatID: chatID}
	m.env = e.envBits(chatID, env)
	m.nextEnv = m.env
	m.facts.HasTools = true // the record starts whole and empty (context.go)
	if in, ok := ctx.Value(inputKey{}).(string); ok {
		m.facts.Input, m.facts.HasInput = in, true
	}
	// Bounded: a sick database must not hold the user's message. Past the bound the move
	// goes on without the chat's state, as on any other store error.
	loadCtx, cancel := context.WithTimeout(ctx, e.storeTimeout)
	state, err := e.store.LoadChat(loadCtx, chatID)
	cancel()
	if err != nil {
		// Fail closed: without the chat's history a `once` or `after:N` rule could repeat,
		// so such rules stay silent in this move; rules without a repeat policy still work.
		e.log.Warn("stream rules: chat state not loaded; rules with a repeat policy are silent in this move", "chat", chatID, "err", err)
		m.stateUnknown = true
	}
	m.number = state.Moves + 1
	m.lastFired = state.LastFired
	return context.WithValue(ctx, moveKey{}, m), m
}

// MoveFrom returns the move ctx carries, or nil outside a move (the middleware then passes through).
func MoveFrom(ctx context.Context) *Move {
	m, _ := ctx.Value(moveKey{}).(*Move)
	return m
}

// Engine returns the engine the move belongs to.
func (m *Move) Engine() *Engine { return m.eng }

// ChatID returns the chat the move belongs to.
func (m *Move) ChatID() string { return m.chatID }

// Number returns the move's number in its chat (1-based).
func (m *Move) Number() int64 { return m.number }

// Has reports whether environment name holds in the current tour of this move.
func (m *Move) Has(name string) bool {
	i := slices.Index(m.eng.environments, name)
	m.mu.Lock()
	defer m.mu.Unlock()
	return i >= 0 && m.env&(1<<uint(i)) != 0
}

// Environments returns the environment names that hold in the current tour of this move.
func (m *Move) Environments() []string {
	m.mu.Lock()
	env := m.env
	m.mu.Unlock()
	return m.eng.envNames(env)
}

// armed reports whether r may fire now. Caller holds m.mu.
func (m *Move) armed(r *compiledRule) bool {
	return r.when&^m.env == 0 && !m.fired[r.Name] &&
		(r.repeat.Kind == RepeatEvery || !m.stateUnknown && !m.denied[r.Name] && r.repeat.Allows(m.lastFired[r.Name], m.number))
}

func (m *Move) retryLeft() bool { return m.retries < m.eng.maxRetries }

// ToolReminders records a tool call and returns the reminders its result gets in the prompt
// copy, in rule-name order: the tool's soft rules that fire on its arguments, and the
// reminders of text rules missed after the retry ceiling earlier in this move.
// The call joins the move's tool record after its rules are judged (they see the calls
// before it), failed if ctx is a call marked with MarkToolFailed.
// A tool with no rules and nothing pending costs a map lookup, a context lookup and an
// append to the record (which allocates only as it grows).
// After End the move is over: nothing fires, nothing is recorded, nil is returned.
func (m *Move) ToolReminders(ctx context.Context, tool, input string) []Reminder {
	defer m.eng.checked(ModeRemind, m.eng.checkStart(), nil)
	tr := m.set.byTool[tool]
	var buf [16]int
	var args callArgs
	var t target
	if tr != nil {
		// One prefilter pass over the arguments, outside the lock; only candidates run
		// their regexp.
		args.text = CompactArgs(input)
		t = targetOf(args.text, tr.match, buf[:0])
		t.facts = &m.facts // read under m.mu, before this call joins the record
	}
	ok := !toolFailed(ctx)
	m.mu.Lock()
	if m.ended {
		m.mu.Unlock()
		return nil
	}
	if tr == nil && len(m.pending) == 0 {
		m.ncalls++
		m.recordToolLocked(tool, ok)
		m.mu.Unlock()
		return nil
	}
	var out []Reminder
	var fired []Firing
	var dueBuf [16]*compiledRule
	due := dueBuf[:0] // the rules of out's reminders, for the budget (delivery.go)
	first := len(m.firings)
	if tr != nil {
		var hitBuf [16]*compiledRule
		hits := hitBuf[:0]
		for _, r := range tr.rules {
			if r.Mode == ModeInterrupt {
				continue // a gate: judged before the call runs (gate.go)
			}
			if !r.firesOnArgs(&t, &args) {
				continue
			}
			if !m.armed(r) {
				m.repeatedLocked(r) // fired earlier in this move: it was not complied with (outcome.go)
				continue
			}
			hits = append(hits, r)
		}
		// Repeat-limited rules fire only if their claim holds: another move of the chat may
		// have fired them (claim.go). All claimed at once, under one bound.
		for _, r := range m.claimAllLocked(hits) {
			if m.fired == nil {
				m.fired = map[string]bool{}
			}
			m.fired[r.Name] = true
			if r.shadow {
				// Would fire: the same books as a live firing (shadow.go), no reminder.
				fired = append(fired, m.record(Firing{Rule: r.Name, Mode: ModeRemind, Tool: tool, Outcome: OutcomeShadow}))
				continue
			}
			out = append(out, Reminder{Rule: r.Name, Text: r.Text})
			due = append(due, r)
			fired = append(fired, m.record(Firing{Rule: r.Name, Mode: ModeRemind, Tool: tool, Delivery: DeliveryFull, Span: r.spanOn(&t, args.text, tr.match)}))
		}
	}
	m.recordToolLocked(tool, ok) // after its rules: for them, "earlier" is before this call
	if len(m.pending) > 0 {
		out = append(out, m.pending...)
		m.pending = nil
	}
	ordered := false
	if m.eng.budget > 0 && len(out) > 0 {
		out, ordered = m.deliverLocked(out, due, m.firings[first:])
		copy(fired, m.firings[first:]) // the announced copies carry the delivery too
	}
	if !ordered {
		slices.SortStableFunc(out, func(a, b Reminder) int { return strings.Compare(a.Rule, b.Rule) })
	}
	if len(out) > 0 {
		m.calls = append(m.calls, ToolCall{Index: m.ncalls, Tool: tool, Input: input, Reminders: out})
	}
	m.ncalls++
	m.mu.Unlock()
	m.announce(ctx, fired)
	return out
}

// ToolCalls returns the tool calls of this move that got reminders, in order, and how many
// tool calls the move has made in all. Calls without reminders are only counted (see
// ToolCall.Index), so a tool with no rules costs nothing.
func (m *Move) ToolCalls() (calls []ToolCall, total int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.calls), m.ncalls
}

// TextArmed reports whether an answer could be discarded now: the move has a retry left
// and some text rule is armed (enabled, its `when` holds, its repeat policy allows it,
// not fired in this move). Only then must streamed speech be held.
func (m *Move) TextArmed() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ended {
		return false
	}
	if !m.retryLeft() {
		return m.anyFixArmedLocked() // a fix repairs without a retry (never a shadowed rule's)
	}
	// A shadowed rule never discards, so it never holds speech: a tour whose only armed
	// text rules are in shadow streams chunk by chunk.
	return m.anyTextArmedLocked(true)
}

// anyTextArmedLocked reports whether a text rule is armed; live: only rules not in shadow.
func (m *Move) anyTextArmedLocked(live bool) bool {
	for _, r := range m.set.text {
		if m.armed(r) && !(live && r.shadow) {
			return true
		}
	}
	return false
}

// CheckAnswer judges what an answer says (its text target; see the middleware for what
// that is per agent type). An empty or blank target (say, the "\n" some providers send
// beside tool calls) says nothing and is accepted unchecked.
// On a miss with a retry left, the verdict discards the answer; after the ceiling the
// answer is kept and each missed rule's reminder rides the next tool result of this move.
// Either way the missed rules are silent for the rest of the move. A rule in shadow that
// misses only records a would-fire (shadow.go). The answer is also the replay of an
// earlier discard of this move, which decides that firing's outcome (outcome.go). After
// End every answer is accepted unchecked.
func (m *Move) CheckAnswer(ctx context.Context, text string) (v Verdict) {
	if len(m.set.text) == 0 {
		return Verdict{}
	}
	defer m.eng.checked(ModeInterrupt, m.eng.checkStart(), &v)
	m.mu.Lock()
	if m.ended {
		m.mu.Unlock()
		return Verdict{}
	}
	awaiting := m.awaitingReplayLocked() // discards whose replay this answer is (outcome.go)
	if strings.TrimSpace(text) == "" {
		m.judgeReplayLocked(awaiting, nil, true) // says nothing, so it passes every rule
		m.mu.Unlock()
		return Verdict{}
	}
	if len(awaiting) == 0 && !m.anyTextArmedLocked(false) {
		m.mu.Unlock()
		return Verdict{} // nothing can fire: skip the matching altogether
	}
	var buf [32]int
	t := targetOf(text, m.set.match, buf[:0])
	t.facts = &m.facts // the record the tool rules saw, and every call since
	m.judgeReplayLocked(awaiting, &t, false)
	missed, shadowed := m.missedOn(&t)
	if len(missed) == 0 && len(shadowed) == 0 {
		m.mu.Unlock()
		return Verdict{}
	}
	repaired, fixed, missed, unset := m.fixLocked(text, missed)
	if unset != nil {
		defer m.warnUnset(ctx, unset) // runs at return, after m.mu is released
	}
	var fired []Firing
	// A repair that still misses a rule is thrown away with the answer while a retry is
	// left: its cured rules stay armed and repair the replay. Otherwise it is what is kept.
	if fixed != nil && (len(missed) == 0 || !m.retryLeft()) {
		fired = m.recordFixedLocked(text, repaired, fixed, &t)
		if len(missed) == 0 {
			fired = append(fired, m.wouldFireLocked(shadowed, &t, text)...)
			m.mu.Unlock()
			m.announce(ctx, fired)
			return Verdict{Fixed: repaired, Rules: ruleNames(fixed)}
		}
	}
	v = Verdict{Discard: len(missed) > 0 && m.retryLeft()}
	if v.Discard {
		m.retries++
	}
	blocks := make([]string, 0, len(missed)+len(fixed))
	if fired != nil { // repaired, and kept after the ceiling with the misses it still has
		v.Fixed = repaired
		v.Rules = ruleNames(fixed)
	}
	if m.fired == nil {
		m.fired = map[string]bool{}
	}
	if v.Discard {
		// The answer missed these rules too; their repair goes with it. They fired as any
		// miss of a discarded answer does (a retry firing, its outcome the replay's), but the
		// interrupt does not name them and they stay armed: their fix repairs the replay if
		// it misses them again. Replay and live stats count them alike: both judge here.
		for _, r := range fixed {
			v.Rules = append(v.Rules, r.Name)
			fired = append(fired, m.record(Firing{Rule: r.Name, Mode: ModeInterrupt, Retry: true}))
		}
	}
	for _, r := range missed {
		m.fired[r.Name] = true
		v.Rules = append(v.Rules, r.Name)
		f := Firing{Rule: r.Name, Mode: ModeInterrupt, Retry: v.Discard, Delivery: DeliveryFull, Span: r.spanOn(&t, text, m.set.match)} // never cut
		if v.Discard {
			blocks = append(blocks, InterruptBlock(r.Name, r.Text))
		} else {
			m.pending = append(m.pending, Reminder{Rule: r.Name, Text: r.Text})
			f.Outcome = OutcomeKept
		}
		fired = append(fired, m.record(f))
	}
	fired = append(fired, m.wouldFireLocked(shadowed, &t, text)...)
	m.mu.Unlock()
	m.announce(ctx, fired)
	v.Interrupt = strings.Join(blocks, "\n")
	slices.Sort(v.Rules)
	return v
}

// record stamps a firing and keeps it for End. Caller holds m.mu.
func (m *Move) record(f Firing) Firing {
	f.ChatID, f.Move, f.At = m.chatID, m.number, time.Now().UTC()
	m.firings = append(m.firings, f)
	return f
}

// announce tells the log and the hook about firings. It runs without m.mu held, so a
// hook may call back into the move (Firings, ToolCalls) and a slow log handler does not
// stall other tours of the move.
func (m *Move) announce(ctx context.Context, fired []Firing) {
	// The line is built only for a log that takes it: a fix's diff is quoted into it,
	// which costs as much as the repair itself on a long answer.
	logged := m.eng.log.Enabled(ctx, slog.LevelInfo)
	for _, f := range fired {
		if !logged {
			if m.eng.onFire != nil {
				m.eng.onFire(ctx, f)
			}
			continue
		}
		msg := "stream rule fired"
		attrs := []any{"rule", f.Rule, "chat", f.ChatID, "move", f.Move, "mode", string(f.Mode)}
		if f.Tool != "" {
			attrs = append(attrs, "tool", f.Tool)
		}
		if f.Mode == ModeInterrupt {
			msg = "stream rule fired on the answer"
			if f.Tool != "" {
				msg = "stream rule fired on a tool call" // a gate (gate.go)
			}
			attrs = append(attrs, "retry", f.Retry)
			if f.Early {
				attrs = append(attrs, "early", true, "cut_at_bytes", f.CutAtBytes)
			}
		}
		attrs = m.fixAttrs(f, attrs)
		if f.Delivery != "" { // last: the fields before it read as they always did
			attrs = append(attrs, "delivery", f.Delivery.attr())
		}
		if f.Outcome == OutcomeShadow {
			msg = msgWouldFire // the same fields (shadow.go)
		}
		m.eng.log.InfoContext(ctx, msg, attrs...)
		if m.eng.onFire != nil {
			m.eng.onFire(ctx, f)
		}
	}
}

// Firings returns the firings recorded so far in this move.
func (m *Move) Firings() []Firing {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.firings)
}

// ErrMoveEnded is returned by a second End of the same move.
var ErrMoveEnded = errors.New("streamrules: move already ended")

// End finishes the move: one write to the store with the move counter (grown by one when
// runErr is nil: the move ended with a final answer), the rules' last-fired moves and the
// firings. Pending reminders die with the move. It returns runErr joined with a store error,
// so `err = move.End(ctx, err)` keeps both. The write is not cancelled with ctx: a move
// that ran is counted even if its caller gave up. End waits at most Config.StoreTimeout
// for the store: a store with a write queue (rulesdb) keeps what it could not write.
func (m *Move) End(ctx context.Context, runErr error) error {
	m.mu.Lock()
	if m.ended {
		m.mu.Unlock()
		return errors.Join(runErr, ErrMoveEnded)
	}
	m.ended = true
	m.pending = nil
	m.settleOutcomesLocked() // every firing leaves with its outcome (outcome.go)
	rec := MoveRecord{ChatID: m.chatID, Move: m.number, Answered: runErr == nil, Firings: m.firings}
	m.mu.Unlock()
	if !rec.Answered && len(rec.Firings) == 0 {
		return runErr
	}
	defer m.outcomes(ctx, rec.Firings) // after the write: the hook sees what the store was given
	start := time.Now()
	var err error
	if q, ok := m.eng.store.(MoveQueuer); ok && !m.eng.readYourWrites {
		err = q.QueueMove(rec) // group commit: End does not wait for its write (store.go)
	} else {
		saveCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), m.eng.storeTimeout)
		err = m.eng.store.SaveMove(saveCtx, rec)
		cancel()
	}
	if m.eng.hooks.onSave != nil {
		m.eng.hooks.onSave(time.Since(start), err)
	}
	if err != nil {
		m.eng.log.Error("stream rules: move not saved", "chat", m.chatID, "move", m.number, "err", err)
		return errors.Join(runErr, err)
	}
	return runErr
}
