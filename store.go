package streamrules

import (
	"context"
	"errors"
)

// Sentinel errors a caller checks with errors.Is.
var (
	ErrNotFound = errors.New("streamrules: rule not found")
	ErrExists   = errors.New("streamrules: rule already exists")

	// ErrNameTaken is what a RuleEditor returns (wrapped, naming the rule) when a create
	// or a rename would give a rule a name another rule has. It is a *ValidationError on
	// field "name" that wraps ErrExists, so errors.Is(err, ErrExists), errors.Is(err,
	// ErrNameTaken) and errors.As(err, **ValidationError) all hold: a rules editor marks
	// the name field ("pick another name") the way it marks any invalid field, and every
	// store, MemoryStore and rulesdb alike, says it the same way.
	ErrNameTaken error = &ValidationError{Field: "name", Reason: "already exists: another rule has that name", err: ErrExists}

	// ErrUnknownEnvironment is what Engine.CheckEnvironments and BeginMoveChecked return
	// (as an *EnvironmentError) for a name the engine does not know: a typo, or a name
	// not registered in Config.Environments. A move begun with it would put every rule
	// whose `when` has the intended name out of scope: a gate would let its call run.
	ErrUnknownEnvironment = errors.New("streamrules: unknown environment")
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

// MoveQueuer is a store that can take a finished move without writing it first: it
// writes it later, with the moves of other chats in one statement (group commit), in
// order per chat, and its LoadChat answers with the records not written yet. End uses
// QueueMove instead of SaveMove unless Config.ReadYourWrites is set. QueueMove never
// waits on the database; an error means the record is lost (the store is closed).
type MoveQueuer interface {
	QueueMove(rec MoveRecord) error
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

// EnvironmentLister is a store that names the environments its rules' `when` may use:
// the engine knows these, then Config.Environments, and no others (read once, in New: a
// name a store adds later is not known to an engine already built). A store that is no
// EnvironmentLister gives the engine only Config.Environments, and a rule whose `when`
// names an environment the engine does not know is skipped at load as invalid, with a
// warning. MemoryStore lists the names given to NewMemoryStore; rulesdb.Store lists its
// seed set's and its Config.Environments.
type EnvironmentLister interface {
	Environments() []string
}

// ChangeNotifier is a store that tells when its rules changed (another process's edit, say),
// so every engine sharing it reloads. Subscribe returns a func that stops the calls.
type ChangeNotifier interface {
	Subscribe(onChange func()) (cancel func())
}
