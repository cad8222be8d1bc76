package streamrules

import (
	"context"
	"errors"
	"slices"
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
	m.settleOutcomesLocked() // every firing leaves with its outcome (firing.go)
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
		m.eng.hooks.onSave(SaveInfo{Duration: time.Since(start), Err: err})
	}
	if err != nil {
		m.eng.log.Error("stream rules: move not saved", "chat", m.chatID, "move", m.number, "err", err)
		return errors.Join(runErr, err)
	}
	return runErr
}

// Rule returns the rule named name as the move sees it (the rule set in force when the
// move began), for telemetry that describes a firing (its severity, its text).
func (m *Move) Rule(name string) (Rule, bool) {
	c := m.set.ruleByName(name)
	if c == nil {
		return Rule{}, false
	}
	r := c.Rule
	r.When = slices.Clone(c.When)
	return r, true
}
