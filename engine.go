package streamrules

import (
	"context"
	"fmt"
	"log/slog"
	"math/bits"
	"reflect"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

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
	// Environments are the host's own environment names, beside BuiltinEnvironments.
	// Default none. At most 64 names in all.
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
	// supplies them); see hooks.go. Default none.
	OnOutcome func(ctx context.Context, f Firing)
	OnCheck   func(c CheckInfo)
	OnReload  func(info ReloadInfo)
	OnSave    func(d time.Duration, err error)
	// OnSpeech gets each held tour's speech once it ends (Move.SpeechDone): how much was
	// held, how much let go before the answer was complete, how long the client waited.
	OnSpeech func(SpeechInfo)
	// ReminderBudget bounds the rule text the reminders of one tour add to the prompt, in
	// characters: past it, reminders go in manifest form (delivery.go). Hosts read it from
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
	splice         SpliceOptions
	budget         int      // Config.ReminderBudget: characters of rule text per tour; 0: none
	environments   []string // builtin + host, index = bit
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
	e := &Engine{
		store:  store,
		log:    cfg.Logger,
		onFire: cfg.OnFire,
		hooks:  hooksOf(cfg),
		shadow: cfg.Shadow,
		splice: SpliceOptions{MaxChars: cfg.ToolResultMaxChars, EmptyOutputMarker: cfg.EmptyOutputMarker},

		maxRetries:     max(cfg.MaxRetriesPerMove, 0), // negative: no replays
		earlyAll:       cfg.EarlyInterrupt,
		shellReader:    cfg.ShellReader,
		storeTimeout:   cfg.StoreTimeout,
		readYourWrites: cfg.ReadYourWrites,
		budget:         cfg.ReminderBudget,
		environments:   append(slices.Clone(BuiltinEnvironments), cfg.Environments...),
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
// background (merge.go) to stop. Safe to call twice.
func (e *Engine) Close() {
	e.closeOnce.Do(func() {
		if e.cancelWatch != nil {
			e.cancelWatch()
		}
		e.merge.close()
	})
}

// Environments returns the environment names this engine knows (for Validate).
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
		(a.Fix == b.Fix || reflect.DeepEqual(a.Fix, b.Fix))
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

// SpliceOptions returns how this engine lays tool results into the prompt copy.
func (e *Engine) SpliceOptions() SpliceOptions { return e.splice }

// compiledRule is a loaded rule ready for the hot path.
type compiledRule struct {
	Rule
	when   uint64 // bit mask over Engine.environments
	repeat Repeat
	index  int        // a text rule's position in ruleSet.text (Scanner.armed); unused for tool rules
	shadow bool       // Rule.Shadow or Config.Shadow: evaluated, never acts (shadow.go)
	early  *earlyPlan // a text rule judged on the streamed prefix; nil: only at the end
	// release is how the rule lets held speech go (release.go), made at its first use;
	// nil for tool rules.
	release *lazyRelease
	logic   // predicate trees, field path and fix (judge.go)

	deliveryPlan // what the reminder budget needs of it (delivery.go)
}

// toolRules are one tool's soft rules, by name, and one matcher over their regexes.
type toolRules struct {
	rules []*compiledRule
	match textMatcher
	gates bool // some rule is in mode interrupt: calls are judged before they run (gate.go)
}

// ruleSet is immutable once built; a reload swaps in a new one.
type ruleSet struct {
	all    []*compiledRule // by name
	byTool map[string]*toolRules
	text   []*compiledRule // by name
	match  textMatcher
	// textByPattern lists the plain, positive text rules by their pattern in match;
	// textOthers the other text rules (see missedOn).
	textByPattern [][]*compiledRule
	textOthers    []*compiledRule
	early         *earlySet     // the early text rules; nil: none
	disabled      int           // disabled rows the store returned
	skipped       []SkippedRule // enabled rows not loaded, in the order they were judged

	gates    []*compiledRule // the live tool rules in mode interrupt, by name (gate.go)
	anyGates bool            // some tool rule is in mode interrupt, live or in shadow
}

// compile builds the rule set of the stored rows. prev is the set in force (nil: none, a
// cold compile): its matchers' automatons are the base of the new ones.
func (e *Engine) compile(rules []Rule, prev *ruleSet) *ruleSet {
	set := &ruleSet{byTool: map[string]*toolRules{}}
	e.overlaid = false
	// Analyses are cached by condition text: an edit re-analyses what changed only.
	next := make(analysisCache, len(e.analyses))
	check, cost := e.analyses.check(next), e.analyses.cost(next)
	// Normalize before sorting: a hand-edited name " zed" sorts as "zed", so the rule set,
	// the reminders, the verdicts and the stats stay in rule-name order.
	sorted := make([]Rule, 0, len(rules))
	for _, r := range rules {
		if r.Disabled {
			set.disabled++
			continue
		}
		// The name is taken exactly as stored: a hand-typed " good_tool" or "Good_tool" is
		// not good_tool, and must never run in its place (nor be edited or deleted by its
		// name). Normalizing it first would let a padded row displace the real rule.
		if err := checkStoredName(r.Name); err != nil {
			set.skip(r, err)
			if e.firstWarning("bad", r) {
				e.log.Warn("stream rule skipped: bad rule in store", "rule", r.Name, "id", r.ID, "err", err)
			}
			continue
		}
		r.Normalize() // When becomes a new slice: the caller's rows are not touched
		sorted = append(sorted, r)
	}
	byName := func(i, j int) bool { return sorted[i].Name < sorted[j].Name }
	if !sort.SliceIsSorted(sorted, byName) { // stores return rows by name
		sort.SliceStable(sorted, byName)
	}
	// A row the set in force holds as it is now was valid, and what was derived from it
	// still holds: only what depends on the other rows (its place, the group's patterns)
	// is done again. Both lists are sorted by name.
	reused := make([]*compiledRule, len(sorted))
	if prev != nil {
		all := prev.all
		for i, r := range sorted {
			for len(all) > 0 && all[0].Name < r.Name {
				all = all[1:]
			}
			if len(all) > 0 && all[0].Name == r.Name && sameRule(all[0].Rule, r) {
				reused[i] = all[0]
			}
		}
	}
	var todo []string
	for i := range sorted {
		if reused[i] == nil {
			regexesOf(&sorted[i], func(p string) { todo = append(todo, p) })
		}
	}
	e.analyses.prefetch(next, todo)
	var plan []*compiledRule // early rules new or changed: their plan is to be made
	for i, r := range sorted {
		p := reused[i]
		if p == nil {
			err := validate(&r, e.environments, check, cost)
			if err == nil {
				// Validation checks the forms the group's matcher compiles; this asks the
				// matcher's own question of each, so a rule that passed one and fails the
				// other is skipped alone, never its whole group (issue 26).
				err = e.compiles(&r, next)
			}
			if err != nil {
				set.skip(r, err)
				if e.firstWarning("bad", r) {
					e.log.Warn("stream rule skipped: bad rule in store", "rule", r.Name, "id", r.ID, "err", err)
				}
				continue
			}
		}
		if r.Shell && e.shell() == nil {
			err := errNoShellReader()
			set.skip(r, err)
			if e.firstWarning("shell", r) {
				e.log.Warn("stream rule skipped: no shell reader", "rule", r.Name, "id", r.ID, "err", err)
			}
			continue
		}
		if n := len(set.all); n > 0 && set.all[n-1].Name == r.Name { // sorted: a duplicate follows its first
			set.skip(r, ErrNameTaken)
			if e.firstWarning("dup", r) {
				e.log.Warn("stream rule skipped: duplicate name in store", "rule", r.Name, "id", r.ID)
			}
			continue
		}
		c := &compiledRule{Rule: r}
		c.deliveryPlan = planDelivery(&c.Rule)
		if p != nil {
			c.repeat, c.when, c.shadow, c.early, c.fix = p.repeat, p.when, p.shadow, p.early, p.fix
			c.release = p.release
		} else {
			c.repeat, _ = ParseRepeat(r.Repeat)
			c.when = e.envMask(r.When)
			c.shadow = r.Shadow || e.shadow
		}
		set.all = append(set.all, c)
		if tool := r.Tool(); tool != "" {
			tr := set.byTool[tool]
			if tr == nil {
				tr = &toolRules{}
				set.byTool[tool] = tr
			}
			tr.rules = append(tr.rules, c)
			if r.Mode == ModeInterrupt {
				tr.gates, set.anyGates = true, true
				if !c.shadow {
					set.gates = append(set.gates, c)
				}
			}
		} else {
			c.index = len(set.text)
			set.text = append(set.text, c)
			if c.release == nil {
				c.release = &lazyRelease{}
			}
			if (r.Early || e.earlyAll) && !c.shadow && p == nil { // a shadowed rule never cuts
				plan = append(plan, c)
				if why := earlyNever(&r); why != "" && r.Early && e.firstWarning("early", r) {
					e.log.Warn("stream rule: early has no effect on this rule; it is judged at the end", "rule", r.Name, "why", why)
				}
			}
		}
	}
	// Each plan compiles its rule's regexp: on every core when there are many.
	if !inParallel(len(plan), func(i int) { plan[i].early = planEarly(&plan[i].Rule) }) {
		for _, c := range plan {
			c.early = planEarly(&c.Rule)
		}
	}
	var prevText textMatcher
	if prev != nil {
		prevText = prev.match
	}
	set.match = e.compileGroup(set.text, next, prevText, prev)
	set.indexText()
	var prevEarly *earlySet
	if prev != nil {
		prevEarly = prev.early
	}
	set.early = e.compileEarly(set.text, prevEarly)
	for tool, tr := range set.byTool {
		var prevTool textMatcher
		if prev != nil && prev.byTool[tool] != nil {
			prevTool = prev.byTool[tool].match
		}
		tr.match = e.compileGroup(tr.rules, next, prevTool, prev)
	}
	e.analyses = next
	return set
}

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

// firstWarning reports whether this bad row, in this version, has not been logged yet.
// Reloads come with every change notification and every backstop tick; one warning per
// row version keeps the log readable. Callers hold reloadMu (compile runs under it).
func (e *Engine) firstWarning(kind string, r Rule) bool {
	key := fmt.Sprintf("%s/%d/%s/%d", kind, r.ID, r.Name, r.UpdatedAt.UnixNano())
	if e.warned[key] {
		return false
	}
	if e.warned == nil {
		e.warned = map[string]bool{}
	}
	e.warned[key] = true
	return true
}
