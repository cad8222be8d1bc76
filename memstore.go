package streamrules

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"
)

// MemoryStore keeps rules, chat state and firings in memory: for tests, demos and hosts
// that configure rules in code. It implements Store, RuleEditor, FiringCounter,
// StatsCounter and ChangeNotifier. The zero value is not usable; use NewMemoryStore.
type MemoryStore struct {
	mu        sync.Mutex
	known     []string
	rules     map[string]Rule
	names     []string // the keys of rules, sorted; nil: to be sorted again
	nextID    int64
	chats     map[string]ChatState
	firings   []Firing
	listeners map[int]func()
	nextSub   int
	now       func() time.Time
}

// NewMemoryStore returns a store holding rules, validated against environments: the names
// a rule's `when` may use, which the store lists to an engine (EnvironmentLister). A bad
// rule is an error. For the shipped seeds: NewMemoryStore(set.Rules, set.Environments...).
func NewMemoryStore(rules []Rule, environments ...string) (*MemoryStore, error) {
	s := &MemoryStore{
		known:     slices.Clone(environments),
		rules:     map[string]Rule{},
		chats:     map[string]ChatState{},
		listeners: map[int]func(){},
		now:       func() time.Time { return time.Now().UTC() },
	}
	for _, r := range rules {
		if _, err := s.CreateRule(context.Background(), r); err != nil {
			return nil, inRule(r.Name, err)
		}
	}
	return s, nil
}

// Environments implements EnvironmentLister: the names given to NewMemoryStore.
func (s *MemoryStore) Environments() []string { return slices.Clone(s.known) }

// LoadRules implements Store: every rule, disabled ones included (the engine counts
// and skips them), by name.
func (s *MemoryStore) LoadRules(context.Context) ([]Rule, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sorted(), nil
}

// PutRaw stores a rule as is, without validation, as a hand edit of a database row would:
// for tests of how the engine treats bad rows.
func (s *MemoryStore) PutRaw(r Rule) {
	r.When = slices.Clone(r.When)
	s.mu.Lock()
	s.nextID++
	r.ID = s.nextID
	s.rules[r.Name] = r
	s.names = nil
	s.mu.Unlock()
	s.notify()
}

// sorted returns the rules by name. The names are sorted once per change of the names,
// not the rows every time: moving 10,000 rows about cost more than the rest of a reload
// that finds nothing new. Caller holds s.mu.
func (s *MemoryStore) sorted() []Rule {
	if s.names == nil {
		s.names = slices.Sorted(maps.Keys(s.rules))
	}
	out := make([]Rule, len(s.names))
	for i, n := range s.names {
		out[i] = s.rules[n]
		out[i].When = slices.Clone(out[i].When)
	}
	return out
}

// LoadChat implements Store.
func (s *MemoryStore) LoadChat(_ context.Context, chatID string) (ChatState, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.chats[chatID]
	st.LastFired = maps.Clone(st.LastFired)
	return st, nil
}

// SaveMove implements Store.
func (s *MemoryStore) SaveMove(_ context.Context, rec MoveRecord) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.chats[rec.ChatID]
	if rec.Answered {
		st.Moves++
	}
	for _, f := range rec.Firings {
		if st.LastFired == nil {
			st.LastFired = map[string]int64{}
		}
		st.LastFired[f.Rule] = max(st.LastFired[f.Rule], f.Move)
	}
	s.chats[rec.ChatID] = st
	s.firings = append(s.firings, rec.Firings...)
	return nil
}

// CountFirings implements FiringCounter: live firings per rule (would-fires not counted).
func (s *MemoryStore) CountFirings(context.Context) (map[string]int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int64{}
	for _, f := range s.firings {
		if f.Outcome != OutcomeShadow {
			out[f.Rule]++
		}
	}
	return out, nil
}

// RuleCounters implements StatsCounter, counting the firings it holds.
func (s *MemoryStore) RuleCounters(context.Context) (map[string]RuleCounter, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]RuleCounter{}
	for _, f := range s.firings {
		c, ok := out[f.Rule]
		if !ok {
			c.ByOutcome = map[Outcome]int64{}
		}
		c.ByOutcome[f.Outcome]++
		countDelivery(&c, f) // delivery.go
		if f.At.After(c.LastFiredAt) {
			c.LastFiredAt = f.At
		}
		out[f.Rule] = c
	}
	return out, nil
}

// AllFirings returns every firing recorded, oldest first.
func (s *MemoryStore) AllFirings() []Firing {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.firings)
}

// ListRules implements RuleEditor.
func (s *MemoryStore) ListRules(context.Context) ([]Rule, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sorted(), nil
}

// GetRule implements RuleEditor.
func (s *MemoryStore) GetRule(_ context.Context, name string) (Rule, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.rules[name]
	if !ok {
		return Rule{}, inRule(name, ErrNotFound)
	}
	r.When = slices.Clone(r.When)
	return r, nil
}

// CreateRule implements RuleEditor.
func (s *MemoryStore) CreateRule(_ context.Context, r Rule) (Rule, error) {
	r.Normalize()
	if err := Validate(&r, s.known); err != nil {
		return Rule{}, err
	}
	s.mu.Lock()
	if _, ok := s.rules[r.Name]; ok {
		s.mu.Unlock()
		return Rule{}, inRule(r.Name, ErrNameTaken)
	}
	s.nextID++
	r.ID = s.nextID
	r.CreatedAt = s.now()
	r.UpdatedAt = r.CreatedAt
	s.rules[r.Name] = r
	s.names = nil
	s.mu.Unlock()
	s.notify()
	r.When = slices.Clone(r.When) // the caller's copy must not alias the stored rule
	return r, nil
}

// UpdateRule implements RuleEditor: the rule named name is replaced by r (which may rename it).
func (s *MemoryStore) UpdateRule(_ context.Context, name string, r Rule) (Rule, error) {
	r.Normalize()
	if err := Validate(&r, s.known); err != nil {
		return Rule{}, err
	}
	s.mu.Lock()
	old, ok := s.rules[name]
	if !ok {
		s.mu.Unlock()
		return Rule{}, inRule(name, ErrNotFound)
	}
	if _, taken := s.rules[r.Name]; taken && r.Name != name {
		s.mu.Unlock()
		return Rule{}, inRule(r.Name, ErrNameTaken)
	}
	delete(s.rules, name)
	r.ID, r.CreatedAt = old.ID, old.CreatedAt
	r.UpdatedAt = s.now()
	if !r.UpdatedAt.After(old.UpdatedAt) {
		r.UpdatedAt = old.UpdatedAt.Add(time.Microsecond)
	}
	s.rules[r.Name] = r
	if r.Name != name {
		s.names = nil
	}
	s.mu.Unlock()
	s.notify()
	r.When = slices.Clone(r.When) // the caller's copy must not alias the stored rule
	return r, nil
}

// DeleteRule implements RuleEditor. Firings of the rule stay.
func (s *MemoryStore) DeleteRule(_ context.Context, name string) error {
	s.mu.Lock()
	_, ok := s.rules[name]
	delete(s.rules, name)
	s.names = nil
	s.mu.Unlock()
	if !ok {
		return inRule(name, ErrNotFound)
	}
	s.notify()
	return nil
}

// Subscribe implements ChangeNotifier: onChange runs synchronously after every edit.
func (s *MemoryStore) Subscribe(onChange func()) func() {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.nextSub
	s.nextSub++
	s.listeners[id] = onChange
	return func() {
		s.mu.Lock()
		delete(s.listeners, id)
		s.mu.Unlock()
	}
}

func (s *MemoryStore) notify() {
	s.mu.Lock()
	fns := slices.Collect(maps.Values(s.listeners))
	s.mu.Unlock()
	for _, fn := range fns {
		fn()
	}
}
