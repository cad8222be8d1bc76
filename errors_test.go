package streamrules

import (
	"errors"
	"strings"
	"testing"
)

// Every error leaving the package says "streamrules:" once, at the start.
func TestErrorPrefix(t *testing.T) {
	t.Parallel()
	_, repeatErr := ParseRepeat("twice")
	st, err := NewMemoryStore([]Rule{{Name: "a", Scope: ScopeText, Text: "t"}}, testEnvs...)
	if err != nil {
		t.Fatal(err)
	}
	_, missing := st.GetRule(t.Context(), "nope")
	_, badStore := NewMemoryStore([]Rule{{Name: "Bad", Scope: ScopeText, Text: "t"}}, testEnvs...)
	_, taken := st.CreateRule(t.Context(), Rule{Name: "a", Scope: ScopeText, Text: "t"})
	tests := []struct {
		name string
		err  error
		is   error
	}{
		{"ErrNotFound", ErrNotFound, ErrNotFound},
		{"ErrExists", ErrExists, ErrExists},
		{"ErrBadRepeat", ErrBadRepeat, ErrBadRepeat},
		{"ErrNotManifest", ErrNotManifest, ErrNotManifest},
		{"ErrMoveEnded", ErrMoveEnded, ErrMoveEnded},
		{"ParseRepeat", repeatErr, ErrBadRepeat},
		{"ErrNameTaken", ErrNameTaken, ErrExists},
		{"MemoryStore.GetRule", missing, ErrNotFound},
		{"MemoryStore.CreateRule", taken, ErrNameTaken},
		{"NewMemoryStore", badStore, nil},
		{"inRule", inRule("x", ErrNotManifest), ErrNotManifest},
	}
	for _, tt := range tests {
		if tt.err == nil {
			t.Errorf("%s: no error", tt.name)
			continue
		}
		msg := tt.err.Error()
		if !strings.HasPrefix(msg, "streamrules: ") || strings.Count(msg, "streamrules:") != 1 {
			t.Errorf("%s: %q does not say streamrules: once, at the start", tt.name, msg)
		}
		if tt.is != nil && !errors.Is(tt.err, tt.is) {
			t.Errorf("%s: %v is not %v", tt.name, tt.err, tt.is)
		}
	}
	var ve *ValidationError
	if !errors.As(badStore, &ve) || ve.Field != "name" {
		t.Errorf("NewMemoryStore's error %v is not a *ValidationError on name", badStore)
	}
	// A taken name is a taken name, an existing rule and a bad name field at once, and
	// the message names the rule.
	if !errors.Is(taken, ErrExists) || !errors.As(taken, &ve) || ve.Field != "name" || !strings.Contains(taken.Error(), `rule "a"`) {
		t.Errorf("CreateRule of a taken name: %v", taken)
	}
}
