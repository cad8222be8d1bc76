package streamrules

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"testing"

	"github.com/streamrules/streamrules/internal/testlog"
)

type logBuffer = testlog.Buffer

func newLogger() (*slog.Logger, *logBuffer) { return testlog.New() }

// recordingStore wraps a MemoryStore, counts its calls and can fail them.
type recordingStore struct {
	*MemoryStore
	mu          sync.Mutex
	saves       []MoveRecord
	loadChats   int
	saveErr     error
	loadChatErr error
	loadErr     error
}

func (s *recordingStore) SaveMove(ctx context.Context, rec MoveRecord) error {
	s.mu.Lock()
	s.saves = append(s.saves, rec)
	err := s.saveErr
	s.mu.Unlock()
	if err != nil {
		return err
	}
	return s.MemoryStore.SaveMove(ctx, rec)
}

func (s *recordingStore) LoadChat(ctx context.Context, chatID string) (ChatState, error) {
	s.mu.Lock()
	s.loadChats++
	err := s.loadChatErr
	s.mu.Unlock()
	if err != nil {
		return ChatState{}, err
	}
	return s.MemoryStore.LoadChat(ctx, chatID)
}

func (s *recordingStore) LoadRules(ctx context.Context) ([]Rule, error) {
	s.mu.Lock()
	err := s.loadErr
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return s.MemoryStore.LoadRules(ctx)
}

func (s *recordingStore) Saves() []MoveRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]MoveRecord(nil), s.saves...)
}

type fixture struct {
	eng   *Engine
	store *MemoryStore
	log   *logBuffer
}

// newFixture builds an engine on a memory store holding rules. cfg may be nil; its Logger is
// replaced by a buffer the test can read.
func newFixture(t *testing.T, rules []Rule, cfg *Config) fixture {
	t.Helper()
	envs := slices.Clone(testEnvs)
	if cfg != nil {
		envs = append(envs, cfg.Environments...)
	}
	st, err := NewMemoryStore(rules, envs...)
	if err != nil {
		t.Fatalf("NewMemoryStore: %v", err)
	}
	return newFixtureOn(t, st, st, cfg)
}

func newFixtureOn(t *testing.T, store Store, mem *MemoryStore, cfg *Config) fixture {
	t.Helper()
	var c Config
	if cfg != nil {
		c = *cfg
	}
	logger, buf := newLogger()
	c.Logger = logger
	eng, err := New(context.Background(), store, &c)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(eng.Close)
	return fixture{eng: eng, store: mem, log: buf}
}

func softRule(name, tool, cond string) Rule {
	return Rule{Name: name, Scope: ScopeToolPrefix + tool, Condition: cond, Text: "Text of " + name + "."}
}

func textRule(name, cond string) Rule {
	return Rule{Name: name, Scope: ScopeText, Condition: cond, Text: "Text of " + name + "."}
}

func with(r Rule, edit func(r *Rule)) Rule {
	edit(&r)
	return r
}

func reminderNames(rs []Reminder) []string {
	out := []string{}
	for _, r := range rs {
		out = append(out, r.Rule)
	}
	return out
}

// plainStore is a store with only Store's own methods: the optional ones of the store it
// wraps (change notifications, the firing counter) are hidden. An engine on it loads
// once, cold, and counts firings without the store's help.
type plainStore struct{ Store }

// The seeds' environment names (package seeds defines them; the root's own tests cannot
// import it), and testEnvs, the list of them the stores of these tests know.
const (
	envTelegram  = "telegram"
	envClientOps = "client_ops"
	envMaster    = "master"
	envPicture   = "picture"
)

var testEnvs = []string{envTelegram, envClientOps, envMaster, envPicture}
