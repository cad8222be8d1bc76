package rulesdb_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/rulesdb"
	"github.com/streamrules/streamrules/seeds"
)

// TestStoreEnvironments: a store seeded with the shipped set lists the seeds' four names,
// then Config.Environments, and an engine on it knows them with no line of its own; a
// store given no names refuses the seeds (their `when` names environments it does not
// know) and writes nothing.
func TestStoreEnvironments(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s, err := rulesdb.Open(ctx, dsn, &rulesdb.Config{Seed: seeds.MustDefault(), Environments: []string{"voice", seeds.EnvTelegram}, Logger: quietLogger()})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		want := append(seeds.Environments(), "voice")
		if got := s.Environments(); !slices.Equal(got, want) {
			t.Fatalf("Store.Environments() = %v, want %v", got, want)
		}
		eng, err := streamrules.New(ctx, s, &streamrules.Config{Logger: quietLogger()})
		if err != nil {
			t.Fatal(err)
		}
		defer eng.Close()
		if got := eng.Environments(); !slices.Equal(got, want) {
			t.Fatalf("Engine.Environments() = %v, want %v", got, want)
		}
		if sk := eng.Skipped(); len(sk) != 0 {
			t.Fatalf("seeded rules skipped: %+v", sk)
		}
		_, m := eng.BeginMove(ctx, "c", seeds.EnvTelegram, "voice")
		if !m.Has(seeds.EnvTelegram) || !m.Has("voice") {
			t.Fatalf("move environments %v", m.Environments())
		}
		voice := streamrules.Rule{Name: "voice_short", Scope: streamrules.ScopeText, Condition: "x", When: []string{"voice"}, Text: "Keep it short."}
		if _, err := s.CreateRule(ctx, voice); err != nil {
			t.Fatalf("CreateRule on a host name: %v", err)
		}
	})
}

func TestStoreWithoutEnvironmentsRefusesTheSeeds(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s, err := rulesdb.Open(ctx, dsn, &rulesdb.Config{Logger: quietLogger()})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if got := s.Environments(); len(got) != 0 {
			t.Fatalf("Store.Environments() = %v, want none", got)
		}
		if _, err := s.Seed(ctx, *seeds.MustDefault()); err == nil || !strings.Contains(err.Error(), "unknown environment") {
			t.Fatalf("Seed on a store that knows no environments: %v", err)
		}
		rules, err := s.ListRules(ctx)
		if err != nil || len(rules) != 0 {
			t.Fatalf("after the refused seed: %d rules, %v", len(rules), err)
		}
	})
}
