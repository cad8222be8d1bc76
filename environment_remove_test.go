package streamrules

import (
	"context"
	"slices"
	"testing"
)

// TestRemoveUnsetEnvironment: removing an environment the move does not have leaves it
// out (it does not toggle it on), and the rules that need it stay unarmed.
func TestRemoveUnsetEnvironment(t *testing.T) {
	t.Parallel()
	r := with(textRule("pic", `can't see`), func(r *Rule) { r.When = []string{envPicture} })
	fx := newFixture(t, []Rule{r}, nil)
	ctx, m := fx.eng.BeginMove(context.Background(), "c", envTelegram)
	for range 2 { // twice: a toggle would be back where it began after two
		m.RemoveEnvironment(envPicture)
		m.BeginTour()
		if got := m.Environments(); !slices.Equal(got, []string{envTelegram}) {
			t.Fatalf("after removing an unset environment: %v, want [%s]", got, envTelegram)
		}
		if m.textArmed() {
			t.Fatal("a picture rule armed without a picture")
		}
		if v := m.CheckAnswer(ctx, "I can't see it"); v.Discard {
			t.Fatalf("judged as if a picture were there: %+v", v)
		}
	}
}
