package streamrules

import (
	"context"
	"slices"
	"sync"
	"testing"
)

// TestEnvironmentChangesAtTheNextTour: a change is staged and takes effect when the next
// tour begins; arming and verdicts follow the tour's environment.
func TestEnvironmentChangesAtTheNextTour(t *testing.T) {
	t.Parallel()
	r := with(textRule("pic", `can't see`), func(r *Rule) { r.When = []string{envPicture} })
	fx := newFixture(t, []Rule{r}, nil)
	ctx, m := fx.eng.BeginMove(context.Background(), "c", envTelegram)
	if m.textArmed() {
		t.Fatal("armed without a picture")
	}
	m.AddEnvironment(envPicture, "no_such_env")
	if m.textArmed() || m.Has(envPicture) {
		t.Fatal("the change applied before the next tour")
	}
	if v := m.CheckAnswer(ctx, "I can't see it"); v.Discard {
		t.Fatal("judged under the staged environment")
	}
	m.BeginTour()
	if !m.Has(envPicture) || !m.textArmed() {
		t.Fatal("the next tour does not see the picture")
	}
	if got := m.Environments(); !slices.Equal(got, []string{envTelegram, envPicture}) {
		t.Errorf("environments %v", got)
	}
	if v := m.CheckAnswer(ctx, "I can't see it"); !v.Discard {
		t.Fatal("the tour after the picture did not discard")
	}
	m.RemoveEnvironment(envTelegram)
	m.BeginTour()
	if got := m.Environments(); !slices.Equal(got, []string{envPicture}) {
		t.Errorf("after remove: %v", got)
	}
	m.SetEnvironment(envMaster)
	m.BeginTour()
	if got := m.Environments(); !slices.Equal(got, []string{envMaster}) {
		t.Errorf("after set: %v", got)
	}
	if n := len(fx.log.Lines("unknown environment ignored")); n != 1 {
		t.Errorf("%d warnings for the unknown name, want 1", n)
	}
}

// TestToolRemindersFollowTheTour: a soft rule's `when` is judged on the tour's
// environment too: a client who joins mid-move arms the rule from the next tour on.
func TestToolRemindersFollowTheTour(t *testing.T) {
	t.Parallel()
	r := with(softRule("local_shell", "shell", ``), func(r *Rule) { r.When = []string{envClientOps} })
	fx := newFixture(t, []Rule{r}, nil)
	ctx, m := fx.eng.BeginMove(context.Background(), "c", envTelegram)
	if got := m.ToolReminders(ctx, "shell", `{"cmd":"ls"}`); len(got) != 0 {
		t.Fatalf("reminded without a client: %+v", got)
	}
	m.AddEnvironment(envClientOps)
	if got := m.ToolReminders(ctx, "shell", `{"cmd":"ls"}`); len(got) != 0 {
		t.Fatalf("reminded under the staged environment: %+v", got)
	}
	m.BeginTour()
	if got := m.ToolReminders(ctx, "shell", `{"cmd":"ls"}`); len(got) != 1 || got[0].Rule != "local_shell" {
		t.Fatalf("the tour after the client joined got %+v, want the local_shell reminder", got)
	}
}

// TestEnvironmentConcurrent: tools change the environment while tours begin and are judged
// (run with -race).
func TestEnvironmentConcurrent(t *testing.T) {
	t.Parallel()
	r := with(textRule("pic", `x`), func(r *Rule) { r.When = []string{envPicture} })
	fx := newFixture(t, []Rule{r}, &Config{MaxRetriesPerMove: 1000})
	ctx, m := fx.eng.BeginMove(context.Background(), "c")
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 200 {
				switch i {
				case 0:
					m.AddEnvironment(envPicture)
				case 1:
					m.RemoveEnvironment(envPicture)
				case 2:
					m.BeginTour()
					m.textArmed()
					m.CheckAnswer(ctx, "y")
				default:
					m.Has(envPicture)
					m.Environments()
				}
			}
		}()
	}
	wg.Wait()
	m.SetEnvironment(envPicture)
	m.BeginTour()
	if !m.textArmed() {
		t.Error("not armed after the last change")
	}
}
