package console

import (
	"context"
	"sync"
	"time"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/replay"
	"github.com/streamrules/streamrules/rulesdb"
)

// What the pages read, cached so a page with 10,000 rules and millions of stat rows stays
// cheap (docs/performance.md):
//
//   - the rules, kept until the store's rules version (Store.RulesVersion, one row that
//     every change to stream_rules bumps) moves: a page costs that one read;
//   - the per-rule counters, at most Config.StatsMaxAge old: they move with every firing;
//   - the overview's past days, per UTC day, refreshed every pastDaysMaxAge (a move that
//     ran over midnight may still add to yesterday); today is read each time, through
//     the fired_at index.
type cache struct {
	store *rulesdb.Store
	cfg   *Config

	mu       sync.Mutex
	version  int64
	rules    []streamrules.Rule // by name, as ListRules returns them
	haveRule bool

	compiled     *compiled // the backtest's engine, for compiled.version
	haveCompiled bool      // false after dropRules: compile again

	tests        testsData // every rule's tests, run for testsVersion
	testsVersion int64
	haveTests    bool

	counters   map[string]streamrules.RuleCounter
	countersAt time.Time

	pastSince time.Time // the first day of the window the past days were read for
	pastUntil time.Time // today, when they were read: the rows are [pastSince, pastUntil)
	pastAt    time.Time
	past      []rulesdb.DayCount
}

// pastDaysMaxAge is how long the overview's finished days are kept before a new read.
const pastDaysMaxAge = 10 * time.Minute

// listRules returns every rule, by name. The slice is shared: callers must not change it.
func (c *cache) listRules(ctx context.Context) ([]streamrules.Rule, error) {
	v, err := c.store.RulesVersion(ctx)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.haveRule && v == c.version {
		rules := c.rules
		c.mu.Unlock()
		return rules, nil
	}
	c.mu.Unlock()
	// Read outside the lock: two pages that miss together both read, neither waits.
	rules, err := c.store.ListRules(ctx)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.version, c.rules, c.haveRule = v, rules, true
	c.mu.Unlock()
	return rules, nil
}

// dropRules forgets the rules: a write through the console is seen on the next page
// even where the version row moves later (it moves in the same statement, but this costs
// nothing).
func (c *cache) dropRules() {
	c.mu.Lock()
	c.haveRule, c.haveCompiled, c.haveTests = false, false, false
	c.mu.Unlock()
}

// ruleCounters returns the counters, at most Config.StatsMaxAge old. Shared: read only.
func (c *cache) ruleCounters(ctx context.Context) (map[string]streamrules.RuleCounter, error) {
	now := c.cfg.now()
	c.mu.Lock()
	if c.counters != nil && now.Sub(c.countersAt) < c.cfg.StatsMaxAge {
		m := c.counters
		c.mu.Unlock()
		return m, nil
	}
	c.mu.Unlock()
	m, err := c.store.RuleCounters(ctx)
	if err != nil {
		return nil, err
	}
	if c.cfg.StatsMaxAge > 0 {
		c.mu.Lock()
		c.counters, c.countersAt = m, now
		c.mu.Unlock()
	}
	return m, nil
}

// firingsByDay returns the rows of [since, ∞) per rule and day: the days before today
// from the cache, today's from the store.
func (c *cache) firingsByDay(ctx context.Context, since, today time.Time) ([]rulesdb.DayCount, error) {
	now := c.cfg.now()
	c.mu.Lock()
	past := c.past
	fresh := c.pastAt.After(time.Time{}) && c.pastSince.Equal(since) && c.pastUntil.Equal(today) && now.Sub(c.pastAt) < pastDaysMaxAge
	c.mu.Unlock()
	if !fresh {
		rows, err := c.store.FiringsByDay(ctx, since)
		if err != nil {
			return nil, err
		}
		past = rows[:0:0]
		for _, d := range rows {
			if d.Day.Before(today) {
				past = append(past, d)
			}
		}
		c.mu.Lock()
		c.past, c.pastSince, c.pastUntil, c.pastAt = past, since, today, now
		c.mu.Unlock()
		// What was read holds today too: no second read.
		return rows, nil
	}
	todays, err := c.store.FiringsByDay(ctx, today)
	if err != nil {
		return nil, err
	}
	return append(past[:len(past):len(past)], todays...), nil
}

// compiled is the backtest's engine for one rules version: every rule compiled once
// (replay.Compile), so an upload pays only for replaying its moves. It is replaced when
// the version moves, and closed once the backtests running on it are done.
type compiled struct {
	c       *replay.Compiled
	version int64
	refs    int  // backtests running on it
	stale   bool // replaced: closed when refs reaches 0
}

// backtestEngine returns the compiled rules of the store's current version, compiling
// them on a miss; release it when the backtest is done.
func (c *cache) backtestEngine(ctx context.Context, opts *replay.Options) (*compiled, error) {
	v, err := c.store.RulesVersion(ctx)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if cur := c.compiled; cur != nil && cur.version == v && c.haveCompiled {
		cur.refs++
		c.mu.Unlock()
		return cur, nil
	}
	c.mu.Unlock()
	rules, err := c.listRules(ctx)
	if err != nil {
		return nil, err
	}
	rc, err := replay.Compile(ctx, rules, opts)
	if err != nil {
		return nil, compileError{err}
	}
	e := &compiled{c: rc, version: v, refs: 1}
	c.mu.Lock()
	if old := c.compiled; old != nil {
		old.stale = true
		if old.refs == 0 {
			old.c.Close()
		}
	}
	c.compiled, c.haveCompiled = e, true
	c.mu.Unlock()
	return e, nil
}

// release ends a backtest on e.
func (c *cache) release(e *compiled) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e.refs--
	if e.stale && e.refs == 0 {
		e.c.Close()
	}
}

// compileError is a backtest whose rules the engine refused: the page says why.
type compileError struct{ error }

func (e compileError) Unwrap() error { return e.error }
