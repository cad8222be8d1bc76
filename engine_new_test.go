package streamrules

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

func TestNewErrors(t *testing.T) {
	t.Parallel()
	st, err := NewMemoryStore(nil, testEnvs...)
	if err != nil {
		t.Fatal(err)
	}
	many := make([]string, maxEnvironments-len(testEnvs)+1) // one past the bound
	for i := range many {
		many[i] = fmt.Sprintf("env_%d", i)
	}
	tests := []struct {
		name  string
		store Store
		cfg   *Config
	}{
		{"nil store", nil, nil},
		{"negative cap", st, &Config{ToolResultMaxChars: -1}},
		{"bad environment name", st, &Config{Environments: []string{"Voice"}}},
		{"too many environments", st, &Config{Environments: many}},
		{"store fails the first load", &recordingStore{MemoryStore: st, loadErr: errors.New("down")}, nil},
	}
	for _, tt := range tests {
		if eng, err := New(context.Background(), tt.store, tt.cfg); err == nil {
			eng.Close()
			t.Errorf("%s: New succeeded", tt.name)
		}
	}
	// nil Config means defaults.
	eng, err := New(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	if eng.splice != (spliceOptions{}) || eng.maxRetries != 1 {
		t.Fatalf("defaults: %+v, retries %d", eng.splice, eng.maxRetries)
	}
}

func TestFailedNewDoesNotFollowTheStore(t *testing.T) {
	t.Parallel()
	mem, err := NewMemoryStore(nil, testEnvs...)
	if err != nil {
		t.Fatal(err)
	}
	st := &recordingStore{MemoryStore: mem, loadErr: errors.New("down")}
	if _, err := New(context.Background(), st, nil); err == nil {
		t.Fatal("New succeeded")
	}
	mem.mu.Lock()
	n := len(mem.listeners)
	mem.mu.Unlock()
	if n != 0 {
		t.Fatalf("a failed New left %d subscriptions on the store", n)
	}
}

func TestEngineValidate(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, &Config{Environments: []string{"voice"}})
	r := Rule{Name: " voice_rule ", Scope: "text", Text: "x", When: []string{"voice"}}
	if err := f.eng.Validate(&r); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	if r.Name != "voice_rule" || r.Mode != ModeInterrupt {
		t.Fatalf("not normalized: %+v", r)
	}
	r.When = []string{"video"}
	var ve *ValidationError
	if err := f.eng.Validate(&r); !errors.As(err, &ve) || ve.Field != "when" {
		t.Fatalf("Validate = %v, want a when error", err)
	}
}
