package seeds_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/seeds"
)

// TestThinkingSeed: look_before_refusing_thinking discards a response whose reasoning
// refuses to look at a picture in view, and lets the same words pass in the answer (that
// is look_before_refusing's) and outside picture tours.
func TestThinkingSeed(t *testing.T) {
	t.Parallel()
	set, err := seeds.Default()
	if err != nil {
		t.Fatal(err)
	}
	r, ok := set.Rule("look_before_refusing_thinking")
	if !ok || r.Scope != streamrules.ScopeThinking {
		t.Fatalf("rule %+v", r)
	}
	store, err := streamrules.NewMemoryStore([]streamrules.Rule{r})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := streamrules.New(context.Background(), store, &streamrules.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	const thought = "The user sent a photo. I can't see the image, so I'll ask them to describe it."
	ctx, m := eng.BeginMove(context.Background(), "pic", streamrules.EnvPicture)
	if v := m.CheckAnswer(ctx, thought); v.Discard {
		t.Error("the thinking rule judged the answer")
	}
	if v := m.CheckThinking(ctx, "A photo of a receipt; I can see the total."); v.Discard {
		t.Error("a reasoning that looks was discarded")
	}
	if v := m.CheckThinking(ctx, thought); !v.Discard || v.Rules[0] != r.Name {
		t.Errorf("verdict %+v", v)
	}
	ctx, m = eng.BeginMove(context.Background(), "text-only")
	if v := m.CheckThinking(ctx, thought); v.Discard {
		t.Error("fired with no picture in the tour")
	}
}
