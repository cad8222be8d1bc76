package streamrules

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"
)

// defaultStoreTimeout is Config.StoreTimeout's default: long enough for a loaded database
// far away, short beside a model's answer.
const defaultStoreTimeout = 2 * time.Second

// maxEnvironments is how many environment names an engine knows, its store's and the
// host's: a rule's `when` is a bit set in one uint64.
const maxEnvironments = 64

// WithDefaults returns a copy of c with every zero field that has a default set to it
// (a nil c gives all defaults). Negative values are left for validate to refuse, or,
// where negative means off (MaxRetriesPerMove), kept. New calls it once; hosts may call
// it to see what an engine will run with.
func (c *Config) WithDefaults() *Config {
	if c == nil {
		c = &Config{}
	}
	d := *c
	d.Environments = slices.Clone(c.Environments)
	if d.MaxRetriesPerMove == 0 {
		d.MaxRetriesPerMove = 1
	}
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	if d.StoreTimeout == 0 {
		d.StoreTimeout = defaultStoreTimeout
	}
	return &d
}

// validate checks a Config that WithDefaults returned; each error names the field.
func (c *Config) validate() error {
	if c.ToolResultMaxChars < 0 {
		return fmt.Errorf("streamrules: ToolResultMaxChars %d is negative", c.ToolResultMaxChars)
	}
	if c.ReminderBudget < 0 {
		return fmt.Errorf("streamrules: ReminderBudget %d is negative", c.ReminderBudget)
	}
	if c.StoreTimeout < 0 {
		return fmt.Errorf("streamrules: StoreTimeout %s is negative", c.StoreTimeout)
	}
	for _, name := range c.Environments {
		if !ValidName(name) {
			return fmt.Errorf("streamrules: Environments: name %q must match [a-z][a-z0-9_]*", name)
		}
	}
	if n := len(c.Environments); n > maxEnvironments {
		return fmt.Errorf("streamrules: Environments: %d environments, at most %d", n, maxEnvironments)
	}
	return nil
}

// Config tunes an Engine. A nil *Config means all defaults. New fills the zero fields
// with their defaults (WithDefaults) and refuses a negative size, budget or timeout with
// an error naming the field.
type Config struct {
	// ToolResultMaxChars caps a tool's output in the prompt copy, in characters
	// (the rule's text is not counted). Default 0: no cap.
	ToolResultMaxChars int
	// MaxRetriesPerMove is how many answers a move may discard and replay.
	// Default 0 means 1; a negative value disables replays (a miss then only reminds).
	MaxRetriesPerMove int
	// Environments are environment names the engine knows beside its store's (see
	// EnvironmentLister: a rulesdb.Store seeded with seeds.MustDefault() lists the
	// seeds' four). Default none. At most 64 names in all, the store's included.
	Environments []string
	// EmptyOutputMarker is the text the host puts for an empty tool output; it is removed
	// when reminders go on top of it. Default "" : no marker.
	EmptyOutputMarker string
	// Logger receives warnings (bad rows, store errors) and the "stream rule fired" and
	// "stream rule would fire" lines.
	// Default slog.Default().
	Logger *slog.Logger
	// OnFire, if set, is called for every firing, after the log line. Default none.
	OnFire func(ctx context.Context, f Firing)
	// EarlyInterrupt makes every text rule early (as if Rule.Early were set on each): while
	// speech is held, the streamed answer is scanned and cut at the first certain miss.
	// Rules a prefix cannot decide (negate, `$`) still wait for the end. Default false:
	// only rules with Rule.Early.
	EarlyInterrupt bool

	// Shadow puts every rule in shadow, whatever its own Shadow field says: rules are
	// evaluated and would-fires recorded, but nothing is reminded, discarded or held.
	// A switch that can only downgrade: it never takes a rule out of shadow.
	// Hosts read it from STREAMRULES_SHADOW. Default false.
	Shadow bool
	// OnOutcome, OnCheck, OnReload and OnSave are hooks for telemetry (the metrics package
	// supplies them); see ReloadInfo, CheckInfo and SaveInfo. Default none.
	OnOutcome func(ctx context.Context, f Firing)
	OnCheck   func(c CheckInfo)
	OnReload  func(info ReloadInfo)
	OnSave    func(SaveInfo)
	// OnSpeech gets each held tour's speech once it ends (Move.SpeechDone): how much was
	// held, how much let go before the answer was complete, how long the client waited.
	OnSpeech func(SpeechInfo)
	// ReminderBudget bounds the rule text the reminders of one tour add to the prompt, in
	// characters: past it, reminders go in manifest form (see Delivery). Hosts read it from
	// STREAMRULES_REMINDER_BUDGET. Default 0: no budget, every reminder whole.
	ReminderBudget int
	// StoreTimeout bounds the store calls a move waits on: the chat-state read in BeginMove
	// (past it, the move goes on and rules with a repeat policy stay silent in it: fail
	// closed) and the write in End (past it, End returns; a store with a write queue, like
	// rulesdb, keeps the record and writes it later). Default 0 means 2s.
	StoreTimeout time.Duration
	// ShellReader reads the values of `shell: true` rules (see ShellReader). Default: the
	// reader the shellcmd package registers (RegisterShellReader); the middleware,
	// rulesdb, replay and the CLI import it. Without either, shell rules are skipped,
	// named in the load summary, never matched raw.
	ShellReader ShellReader
	// ReadYourWrites makes End wait for its own write (within StoreTimeout) on a store
	// that can queue moves (MoveQueuer, like rulesdb): a host that reads the database
	// itself right after End wants it. Default false: End hands the record to the store's
	// group commit and returns at once; the engine's own reads (LoadChat) see the record
	// anyway, and the store writes it within milliseconds, or at Close.
	ReadYourWrites bool
}
