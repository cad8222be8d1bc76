package streamrules

import (
	"context"
	"slices"
	"testing"
)

func TestMoveEnvironments(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, &Config{Environments: []string{"voice"}})
	_, m := f.eng.BeginMove(context.Background(), "c", "voice", envTelegram, "bogus", envTelegram)
	if got, want := m.Environments(), []string{envTelegram, "voice"}; !slices.Equal(got, want) {
		t.Fatalf("Environments() = %v, want %v", got, want)
	}
	for name, want := range map[string]bool{envTelegram: true, "voice": true, envMaster: false, "bogus": false} {
		if got := m.Has(name); got != want {
			t.Errorf("Has(%q) = %v, want %v", name, got, want)
		}
	}
	if m.ChatID() != "c" || m.Number() != 1 || m.Engine() != f.eng {
		t.Fatalf("move accessors: chat %q number %d", m.ChatID(), m.Number())
	}
	if got, want := f.eng.Environments(), append(slices.Clone(testEnvs), "voice"); !slices.Equal(got, want) {
		t.Fatalf("Engine.Environments() = %v, want %v", got, want)
	}
}

func TestMoveFrom(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	if MoveFrom(context.Background()) != nil {
		t.Fatal("MoveFrom outside a move is not nil")
	}
	ctx, m := f.eng.BeginMove(context.Background(), "c")
	if MoveFrom(ctx) != m {
		t.Fatal("MoveFrom does not return the move the context carries")
	}
}

func TestUnknownEnvironmentWarnedOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	for i := 0; i < 3; i++ {
		ctx, m := f.eng.BeginMove(context.Background(), "c", "slack", envTelegram)
		if !m.Has(envTelegram) || m.Has("slack") {
			t.Fatalf("environments %v", m.Environments())
		}
		_ = m.End(ctx, nil)
	}
	if lines := f.log.Lines("unknown environment", "env=slack"); len(lines) != 1 {
		t.Errorf("%d warnings for three moves, want 1", len(lines))
	}
}
