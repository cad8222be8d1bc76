package streamrules

import (
	"context"
	"fmt"
	"slices"
	"strings"
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

// namedStore is a store listing names as its environments, whatever it holds.
type namedStore struct {
	Store
	names []string
}

func (s namedStore) Environments() []string { return s.names }

// TestEngineTakesTheStoresEnvironments: the engine knows its store's names, then
// Config.Environments, each once, and no builtin of its own: a store that lists none
// leaves it Config.Environments only.
func TestEngineTakesTheStoresEnvironments(t *testing.T) {
	t.Parallel()
	mem, err := NewMemoryStore(nil, envTelegram, envMaster)
	if err != nil {
		t.Fatal(err)
	}
	f := newFixtureOn(t, mem, mem, &Config{Environments: []string{"voice", envTelegram}})
	if got, want := f.eng.Environments(), []string{envTelegram, envMaster, "voice"}; !slices.Equal(got, want) {
		t.Fatalf("Engine.Environments() = %v, want %v", got, want)
	}
	_, m := f.eng.BeginMove(context.Background(), "c", envTelegram, "voice", envPicture)
	if got, want := m.Environments(), []string{envTelegram, "voice"}; !slices.Equal(got, want) {
		t.Fatalf("move environments %v, want %v (picture is known to neither)", got, want)
	}

	plain := newFixtureOn(t, plainStore{mem}, mem, &Config{Environments: []string{"voice"}})
	if got, want := plain.eng.Environments(), []string{"voice"}; !slices.Equal(got, want) {
		t.Fatalf("on a store listing none: Engine.Environments() = %v, want %v", got, want)
	}
	bare := newFixtureOn(t, plainStore{mem}, mem, nil)
	if got := bare.eng.Environments(); len(got) != 0 {
		t.Fatalf("no store names, no host names: Engine.Environments() = %v, want none", got)
	}
}

// TestRuleOnAnEnvironmentTheEngineDoesNotKnow: a rule whose `when` names a name the
// store lists loads; on the same rows behind a store that lists no names, the engine
// skips it as invalid at load, naming the field, and still loads the rest.
func TestRuleOnAnEnvironmentTheEngineDoesNotKnow(t *testing.T) {
	t.Parallel()
	tg := with(textRule("tg_only", "bad"), func(r *Rule) { r.When = []string{envTelegram} })
	mem, err := NewMemoryStore([]Rule{tg, textRule("everywhere", "worse")}, envTelegram)
	if err != nil {
		t.Fatal(err)
	}
	listed := newFixtureOn(t, mem, mem, nil)
	if sk := listed.eng.Skipped(); len(sk) != 0 {
		t.Fatalf("store lists telegram: skipped %+v", sk)
	}
	f := newFixtureOn(t, plainStore{mem}, mem, nil)
	sk := f.eng.Skipped()
	if len(sk) != 1 || sk[0].Name != "tg_only" || !strings.Contains(sk[0].Reason, `unknown environment "telegram"`) {
		t.Fatalf("skipped %+v, want tg_only for its unknown environment", sk)
	}
	if err := f.eng.Validate(&tg); err == nil {
		t.Fatal("Engine.Validate accepts a when the engine does not know")
	}
	if _, err := NewJudge(tg); err == nil {
		t.Fatal("NewJudge with no environments accepts a when")
	}
	if _, err := NewJudge(tg, envTelegram); err != nil {
		t.Fatalf("NewJudge with telegram known: %v", err)
	}
}

// TestStoreEnvironmentsChecked: a name the store lists is held to the rules of a name,
// and counts toward the 64 an engine knows.
func TestStoreEnvironmentsChecked(t *testing.T) {
	t.Parallel()
	mem, err := NewMemoryStore(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(context.Background(), namedStore{mem, []string{"Voice"}}, &Config{Logger: discardLogger()}); err == nil || !strings.Contains(err.Error(), `"Voice"`) {
		t.Fatalf("store listing a bad name: err %v", err)
	}
	many := make([]string, maxEnvironments)
	for i := range many {
		many[i] = fmt.Sprintf("env%d", i)
	}
	eng, err := New(context.Background(), namedStore{mem, many}, &Config{Logger: discardLogger()})
	if err != nil {
		t.Fatalf("64 names from the store: %v", err)
	}
	eng.Close()
	if _, err := New(context.Background(), namedStore{mem, many}, &Config{Logger: discardLogger(), Environments: []string{"one_more"}}); err == nil {
		t.Fatal("64 store names and one host name: no error")
	}
}
