package rulesdb_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/rulesdb"
	"github.com/streamrules/streamrules/seeds"
)

func TestSeedTwice(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		set := defaultSeeds(t)
		s := open(t, dsn, nil)
		if v, err := s.SeedVersion(ctx); err != nil || v != 0 {
			t.Fatalf("fresh database seed version %d, %v", v, err)
		}
		rep, err := s.Seed(ctx, set)
		if err != nil {
			t.Fatal(err)
		}
		if !rep.Applied || len(rep.Added) != 10 || rep.StoredVersion != 0 {
			t.Errorf("first seed: %+v", rep)
		}
		first, _ := s.ListRules(ctx)

		rep, err = s.Seed(ctx, set)
		if err != nil || rep.Applied || len(rep.Added)+len(rep.Updated) != 0 || rep.StoredVersion != set.Version {
			t.Errorf("second seed: %+v, %v", rep, err)
		}
		// And through Open, as a replica starting later would.
		s2 := seeded(t, dsn)
		again, _ := s2.ListRules(ctx)
		if len(again) != 10 || !slices.EqualFunc(first, again, func(a, b streamrules.Rule) bool {
			return a.ID == b.ID && a.UpdatedAt.Equal(b.UpdatedAt) && a.Text == b.Text
		}) {
			t.Errorf("rules changed by a second seeding:\n%+v\n%+v", first, again)
		}
		want := set.Names()
		slices.Sort(want)
		if got := names(again); !slices.Equal(got, want) {
			t.Errorf("rules %v, want %v", got, want)
		}
		for _, r := range again {
			sr, _ := set.Rule(r.Name)
			if r.Condition != sr.Condition || r.Text != sr.Text || r.Scope != sr.Scope || r.Repeat != sr.Repeat ||
				!slices.Equal(r.When, sr.When) || r.Negate != sr.Negate || r.Mode != sr.Mode || r.Disabled {
				t.Errorf("stored %+v\nseed   %+v", r, sr)
			}
		}
	})
}

func TestConcurrentSeeders(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		set := defaultSeeds(t)
		const n = 8
		var (
			wg      sync.WaitGroup
			mu      sync.Mutex
			reports []rulesdb.SeedReport
		)
		for range n {
			wg.Go(func() {
				// Separate stores: separate pools, as separate processes would have.
				s, err := rulesdb.Open(ctx, dsn, &rulesdb.Config{Logger: quietLogger(), ReloadInterval: -1})
				if err != nil {
					t.Errorf("Open: %v", err)
					return
				}
				defer s.Close()
				rep, err := s.Seed(ctx, set)
				if err != nil {
					t.Errorf("Seed: %v", err)
					return
				}
				mu.Lock()
				reports = append(reports, rep)
				mu.Unlock()
			})
		}
		wg.Wait()
		applied := 0
		for _, r := range reports {
			if r.Applied {
				applied++
				if len(r.Added) != 10 {
					t.Errorf("the seeding report: %+v", r)
				}
			}
		}
		if applied != 1 || len(reports) != n {
			t.Errorf("%d of %d seeders applied the seed, want 1", applied, len(reports))
		}
		s := open(t, dsn, nil)
		rules, _ := s.ListRules(ctx)
		var tomb int
		if err := s.DB().Get(&tomb, "SELECT COUNT(*) FROM stream_rule_seed"); err != nil {
			t.Fatal(err)
		}
		if len(rules) != 10 || tomb != 10 {
			t.Errorf("%d rules, %d seed names", len(rules), tomb)
		}
	})
}

// TestCalibrationWave: a newer seed version rewrites only untouched seeded rules, keeps
// the master's edits (through the editor or by hand in SQL), does not bring back a
// deleted one, and adds a rule new in the wave.
func TestCalibrationWave(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := seeded(t, dsn)
		v1 := defaultSeeds(t)

		// The master edits one rule and deletes another.
		edited := ruleNamed(t, s, "telegram_markdown_image")
		edited.Text = "No markdown images in Telegram: use telegram_send_photo. (master's words)"
		if _, err := s.UpdateRule(ctx, edited.Name, edited); err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteRule(ctx, "telegram_react_not_emoji"); err != nil {
			t.Fatal(err)
		}
		untouched := ruleNamed(t, s, "telegram_reply_tail")

		// Seed version 2: every text recalibrated, and one new rule.
		v2 := seeds.Set{Version: v1.Version + 1}
		for _, r := range v1.Rules {
			r.Text += " (v2)"
			v2.Rules = append(v2.Rules, r)
		}
		v2.Rules = append(v2.Rules, streamrules.Rule{Name: "no_lorem_ipsum", Scope: "text", Condition: `(?i)lorem ipsum`, Text: "Never send placeholder text."})

		var notified sync.WaitGroup
		notified.Add(1)
		var once sync.Once
		cancel := s.Subscribe(func() { once.Do(notified.Done) })
		rep, err := s.Seed(ctx, v2)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		notified.Wait()
		sorted := func(l []string) string { l = slices.Clone(l); slices.Sort(l); return strings.Join(l, ",") }
		if !rep.Applied || rep.StoredVersion != v1.Version || rep.Version != v1.Version+1 ||
			sorted(rep.Added) != "no_lorem_ipsum" ||
			sorted(rep.Updated) != "destructive_shell,local_shell_for_his_machine,look_before_refusing,look_before_refusing_thinking,telegram_reply_tail,unbacked_tool_claim,verify_before_done,write_diff_over_write_file" ||
			sorted(rep.Kept) != "telegram_markdown_image" ||
			sorted(rep.Deleted) != "telegram_react_not_emoji" {
			t.Fatalf("report %+v", rep)
		}
		if got := ruleNamed(t, s, "telegram_markdown_image"); got.Text != edited.Text {
			t.Errorf("the master's edit was overwritten: %q", got.Text)
		}
		if _, err := s.GetRule(ctx, "telegram_react_not_emoji"); !errors.Is(err, streamrules.ErrNotFound) {
			t.Errorf("a deleted seeded rule came back: %v", err)
		}
		got := ruleNamed(t, s, "telegram_reply_tail")
		if !strings.HasSuffix(got.Text, "(v2)") || !got.UpdatedAt.After(untouched.UpdatedAt) || got.ID != untouched.ID {
			t.Errorf("untouched rule not recalibrated: %+v", got)
		}
		if got := ruleNamed(t, s, "no_lorem_ipsum"); got.Text != "Never send placeholder text." {
			t.Errorf("new rule: %+v", got)
		}

		// A hand edit in SQL that does not touch updated_at is an edit too (a trigger bumps it).
		mustExec(t, s, `UPDATE stream_rules SET text = ? WHERE name = ?`, "Hand-tuned in psql.", "telegram_reply_tail")
		// A master-made rule that happens to carry a name the next wave uses is his.
		if _, err := s.CreateRule(ctx, streamrules.Rule{Name: "mine_first", Scope: "text", Condition: "x", Text: "mine"}); err != nil {
			t.Fatal(err)
		}
		v3 := seeds.Set{Version: v1.Version + 2}
		for _, r := range v2.Rules {
			r.Text = strings.TrimSuffix(r.Text, " (v2)") + " (v3)"
			v3.Rules = append(v3.Rules, r)
		}
		v3.Rules = append(v3.Rules, streamrules.Rule{Name: "mine_first", Scope: "text", Condition: "y", Text: "seeded"})
		rep, err = s.Seed(ctx, v3)
		if err != nil {
			t.Fatal(err)
		}
		if sorted(rep.Kept) != "mine_first,telegram_markdown_image,telegram_reply_tail" ||
			sorted(rep.Updated) != "destructive_shell,local_shell_for_his_machine,look_before_refusing,look_before_refusing_thinking,no_lorem_ipsum,unbacked_tool_claim,verify_before_done,write_diff_over_write_file" ||
			len(rep.Added) != 0 || sorted(rep.Deleted) != "telegram_react_not_emoji" {
			t.Errorf("version 3 report %+v", rep)
		}
		if got := ruleNamed(t, s, "telegram_reply_tail"); got.Text != "Hand-tuned in psql." {
			t.Errorf("hand edit overwritten: %q", got.Text)
		}
		if got := ruleNamed(t, s, "mine_first"); got.Text != "mine" {
			t.Errorf("master's own rule overwritten: %q", got.Text)
		}

		// Older or equal versions do nothing.
		for _, old := range []seeds.Set{v1, v2, v3} {
			if rep, err := s.Seed(ctx, old); err != nil || rep.Applied {
				t.Errorf("seed v%d again: %+v %v", old.Version, rep, err)
			}
		}
		if v, _ := s.SeedVersion(ctx); v != v3.Version {
			t.Errorf("seed version %d", v)
		}
	})
}

func TestSeedValidatesFirst(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn, nil)
		set := defaultSeeds(t)
		set.Rules[3].Condition = "("
		if _, err := s.Seed(ctx, set); err == nil || !strings.Contains(err.Error(), set.Rules[3].Name) || !strings.Contains(err.Error(), "condition") {
			t.Errorf("bad seed: %v", err)
		}
		if _, err := s.Seed(ctx, seeds.Set{}); err == nil || !strings.Contains(err.Error(), "version") {
			t.Errorf("version 0: %v", err)
		}
		rules, _ := s.ListRules(ctx)
		if v, _ := s.SeedVersion(ctx); len(rules) != 0 || v != 0 {
			t.Errorf("written: %d rules, version %d", len(rules), v)
		}
		// Open with a bad seed fails.
		if _, err := rulesdb.Open(ctx, dsn, &rulesdb.Config{Seed: &set, Logger: quietLogger()}); err == nil {
			t.Error("Open with a bad seed succeeded")
		}
	})
}
