package streamrules

import (
	"context"
	"errors"
	"time"
)

// Sentinel errors a caller checks with errors.Is.
var (
	ErrNotFound = errors.New("stream rule not found")
	ErrExists   = errors.New("stream rule already exists")
)

// Store is where an engine's rules and chat state live. The engine calls LoadRules on
// (re)load, LoadChat once when a move begins and SaveMove once when it ends:
// tool calls and answers never wait on the store.
type Store interface {
	// LoadRules returns the rules. Disabled rules may be returned too (the engine counts
	// them in its load summary and skips them), and so may rows that went bad: the engine
	// validates every rule, skips the bad ones and logs a warning.
	LoadRules(ctx context.Context) ([]Rule, error)
	// LoadChat returns a chat's state; a chat never seen has the zero state. It returns
	// when ctx is done: the engine bounds it with Config.StoreTimeout.
	LoadChat(ctx context.Context, chatID string) (ChatState, error)
	// SaveMove records a finished move in one round trip: the move counter grows by one
	// if the move answered, each fired rule's last-fired move is set, the firings are appended.
	// It returns when ctx is done (the engine bounds it with Config.StoreTimeout); a store
	// that keeps a record it could not write yet, to write it later, returns nil.
	SaveMove(ctx context.Context, rec MoveRecord) error
}

// ChatState is what the repeat policy needs to know about a chat.
type ChatState struct {
	Moves     int64            // final answers so far
	LastFired map[string]int64 // rule name -> the move number it last fired in (1-based)
}

// MoveRecord is one finished move, as SaveMove writes it.
type MoveRecord struct {
	ChatID   string
	Move     int64 // the move's number: ChatState.Moves+1 at its start
	Answered bool  // the move ended with a final answer: the counter grows
	Firings  []Firing
}

// Firing is one rule firing: a row of the stats.
type Firing struct {
	Rule   string `json:"rule" db:"rule"`
	ChatID string `json:"chat_id" db:"chat_id"`
	Move   int64  `json:"move" db:"move"`
	Mode   Mode   `json:"mode" db:"mode"`
	Retry  bool   `json:"retry" db:"retry"` // a text rule's answer was discarded and the tour replayed
	Tool   string `json:"tool,omitempty" db:"tool"`
	// Outcome is what came of the firing; empty until the move decides it.
	Outcome Outcome   `json:"outcome,omitempty" db:"outcome"`
	At      time.Time `json:"at" db:"fired_at"`
}

// Outcome is what came of a firing, decided by the end of its move.
type Outcome string

// The outcomes of a firing.
const (
	OutcomeCorrected   Outcome = "corrected"    // a discarded answer's replay passes the rule
	OutcomeMissedAgain Outcome = "missed_again" // the replay violates the same rule again (kept)
	OutcomeKept        Outcome = "kept"         // the retry ceiling was spent: the answer is kept, the reminder rides on
	OutcomeFixed       Outcome = "fixed"        // a deterministic fix repaired the answer in place
	OutcomeComplied    Outcome = "complied"     // a tool rule: no later call of the move matches it again
	OutcomeRepeated    Outcome = "repeated"     // a tool rule: a later call of the move matches it again
	OutcomeShadow      Outcome = "shadow"       // the rule is in shadow: it would have fired, nothing was done
)

// RuleEditor is a store the master can edit rules in. Create and Update validate with Validate,
// bump UpdatedAt, and return *ValidationError, ErrExists or ErrNotFound.
type RuleEditor interface {
	ListRules(ctx context.Context) ([]Rule, error) // every rule, disabled included, by name
	GetRule(ctx context.Context, name string) (Rule, error)
	CreateRule(ctx context.Context, r Rule) (Rule, error)
	UpdateRule(ctx context.Context, name string, r Rule) (Rule, error)
	DeleteRule(ctx context.Context, name string) error
}

// FiringCounter is a store that can count firings per rule name for the stats.
type FiringCounter interface {
	CountFirings(ctx context.Context) (map[string]int64, error)
}

// ChangeNotifier is a store that tells when its rules changed (another process's edit, say),
// so every engine sharing it reloads. Subscribe returns a func that stops the calls.
type ChangeNotifier interface {
	Subscribe(onChange func()) (cancel func())
}
