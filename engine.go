package streamrules

import (
	"context"
	"fmt"
	"log/slog"
	"math/bits"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Engine holds the compiled rule set and answers, for any agent loop, the two questions:
// what reminders does this tool call get, and is this answer accepted.
// One engine serves many chats at once; all per-move state travels in the context.
type Engine struct {
	store          Store
	log            *slog.Logger
	onFire         func(context.Context, Firing)
	hooks          hooks // OnOutcome, OnCheck, OnReload, OnSave
	shadow         bool  // Config.Shadow: every rule in shadow
	maxRetries     int
	earlyAll       bool          // Config.EarlyInterrupt
	shellReader    ShellReader   // Config.ShellReader; nil: the registered one (shell.go)
	storeTimeout   time.Duration // bounds LoadChat in BeginMove and SaveMove in End
	readYourWrites bool          // End waits for its write even on a MoveQueuer
	splice         spliceOptions
	budget         int      // Config.ReminderBudget: characters of rule text per tour; 0: none
	environments   []string // the store's, then the host's (knownEnvironments), index = bit
	rules          atomic.Pointer[ruleSet]
	reloadMu       sync.Mutex
	loaded         []Rule          // the rows the current set was compiled from; guarded by reloadMu
	analyses       analysisCache   // the analyses the last reload made or validated, by text; guarded by reloadMu
	overlaid       bool            // the last compile left a matcher with an overlay; guarded by reloadMu
	merge          merger          // rebuilds overlaid matchers in the background (merge.go)
	unknownEnv     sync.Map        // environment names already warned about
	warned         map[string]bool // bad rows already logged (id, name, updated_at): once each, not every reload
	cancelWatch    func()
	closeOnce      sync.Once
}

// New builds an engine on store and loads its rules. A store error on this first load is
// returned; bad rules are skipped with a warning.
func New(ctx context.Context, store Store, cfg *Config) (*Engine, error) {
	if isNil(store) {
		// A nil *rulesdb.Store inside the interface is what a host passes when Open failed
		// and the error went unchecked: say so here rather than panic on the first move.
		return nil, fmt.Errorf("streamrules: nil store (%T)", store)
	}
	cfg = cfg.WithDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	environments, err := knownEnvironments(store, cfg.Environments)
	if err != nil {
		return nil, err
	}
	e := &Engine{
		store:  store,
		log:    cfg.Logger,
		onFire: cfg.OnFire,
		hooks:  hooksOf(cfg),
		shadow: cfg.Shadow,
		splice: spliceOptions{MaxChars: cfg.ToolResultMaxChars, EmptyOutputMarker: cfg.EmptyOutputMarker},

		maxRetries:     max(cfg.MaxRetriesPerMove, 0), // negative: no replays
		earlyAll:       cfg.EarlyInterrupt,
		shellReader:    cfg.ShellReader,
		storeTimeout:   cfg.StoreTimeout,
		readYourWrites: cfg.ReadYourWrites,
		budget:         cfg.ReminderBudget,
		environments:   environments,
		merge:          newMerger(),
	}
	// Follow changes before the first load, so an edit made while it runs is not missed.
	// A notification that comes before the first load is done waits for it on reloadMu
	// and reloads again; one that finds no rule set yet loads the first one itself.
	if n, ok := store.(ChangeNotifier); ok {
		e.cancelWatch = n.Subscribe(func() {
			if err := e.Reload(context.Background()); err != nil {
				e.log.Warn("stream rules reload failed; keeping the rules loaded before", "err", err)
			}
		})
	}
	if err := e.Reload(ctx); err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

// Close stops following the store's change notifications and waits for a merge in the
// background to stop. Safe to call twice.
func (e *Engine) Close() {
	e.closeOnce.Do(func() {
		if e.cancelWatch != nil {
			e.cancelWatch()
		}
		e.merge.close()
	})
}

// Environments returns the environment names this engine knows (for Validate): its
// store's (EnvironmentLister), then Config.Environments, each once.
func (e *Engine) Environments() []string { return slices.Clone(e.environments) }

// Validate normalizes and validates a rule against this engine's environments.
func (e *Engine) Validate(r *Rule) error {
	r.Normalize()
	return Validate(r, e.environments)
}

// Reload reads the rules from the store and swaps in the new compiled set.
// Moves already begun keep the set they started with.
func (e *Engine) Reload(ctx context.Context) (err error) {
	e.reloadMu.Lock()
	defer e.reloadMu.Unlock()
	changed := false
	if e.hooks.onReload != nil {
		defer e.reloaded(time.Now(), &changed, &err)
	}
	rules, err := e.store.LoadRules(ctx)
	if err != nil {
		return fmt.Errorf("streamrules: load rules: %w", err)
	}
	// Notifications and the store's backstop ticks reload often; most find nothing new.
	// Compiling 10,000 rules takes seconds, comparing them microseconds.
	if slices.EqualFunc(rules, e.loaded, sameRule) && e.rules.Load() != nil {
		return nil
	}
	// An edit keeps each group's automaton and adds the rules it lacks to a small one
	// (matcher.go); a merge in the background makes them one again.
	set := e.compile(rules, e.rules.Load())
	e.rules.Store(set)
	e.loaded = cloneRules(rules)
	changed = true
	e.logSummary(set)
	e.merge.reloaded(e, e.overlaid)
	return nil
}

// sameRule reports whether two rows as the store returned them are the same in every field.
// Times are compared by Equal (a reread time differs in its monotonic reading and location,
// not its instant), `when` by its elements (nil and empty are the same), the trees by
// reflect.DeepEqual, the rest by ==. Reloads compare every row; boxing two whole rows for
// reflect.DeepEqual cost a third of a reload that found nothing new at 10,000 rules.
// TestSameRuleSeesEveryField fails when a field is added to Rule and not here.
func sameRule(a, b Rule) bool {
	return a.ID == b.ID && a.Name == b.Name && a.Scope == b.Scope && a.Condition == b.Condition &&
		a.Negate == b.Negate && slices.Equal(a.When, b.When) && a.Text == b.Text && a.Mode == b.Mode &&
		a.Repeat == b.Repeat && a.Disabled == b.Disabled && a.Shadow == b.Shadow && a.Early == b.Early &&
		a.Field == b.Field && a.Shell == b.Shell && a.Severity == b.Severity && a.Explanation == b.Explanation &&
		a.Delivery == b.Delivery && a.Hint == b.Hint && // delivery.go
		a.CreatedAt.Equal(b.CreatedAt) && a.UpdatedAt.Equal(b.UpdatedAt) &&
		(a.Predicate == b.Predicate || reflect.DeepEqual(a.Predicate, b.Predicate)) &&
		(a.AppliesWhen == b.AppliesWhen || reflect.DeepEqual(a.AppliesWhen, b.AppliesWhen)) &&
		(a.Fix == b.Fix || reflect.DeepEqual(a.Fix, b.Fix)) &&
		(a.Tests == b.Tests || reflect.DeepEqual(a.Tests, b.Tests)) // ruletests.go
}

func cloneRules(rules []Rule) []Rule {
	out := slices.Clone(rules)
	for i := range out {
		out[i].When = slices.Clone(out[i].When)
	}
	return out
}

// Rules returns the rules loaded now (enabled and valid), by name.
func (e *Engine) Rules() []Rule {
	set := e.rules.Load()
	out := make([]Rule, len(set.all))
	for i, c := range set.all {
		out[i] = c.Rule
		out[i].When = slices.Clone(c.When)
	}
	return out
}

// Logger returns the logger the engine writes to (Config.Logger, or its default), so a
// handler mounted beside it (statshttp) logs where the engine does.
func (e *Engine) Logger() *slog.Logger { return e.log }

// envMask maps environment names to bits; unknown names map to no bit.
func (e *Engine) envMask(names []string) uint64 {
	var m uint64
	for _, n := range names {
		if i := slices.Index(e.environments, n); i >= 0 {
			m |= 1 << uint(i)
		}
	}
	return m
}

func (e *Engine) envNames(mask uint64) []string {
	var out []string
	for mask != 0 {
		i := bits.TrailingZeros64(mask)
		out = append(out, e.environments[i])
		mask &^= 1 << uint(i)
	}
	return out
}
