package streamrules

import (
	"context"
	"strings"
	"testing"
)

// TestScannerStandsDownOnceTheRetryIsSpent: a scanner handed out while a retry was left
// does not discard once another check spent that retry: the answer it watches is the
// one that will be kept, and no early firing is recorded for it.
func TestScannerStandsDownOnceTheRetryIsSpent(t *testing.T) {
	t.Parallel()
	img := with(textRule("img", `!\[[^\]]*\]\([^)\s]+\)`), func(r *Rule) { r.Early = true })
	fx := newFixture(t, []Rule{img, textRule("no_lorem", `(?i)lorem`)}, nil)
	ctx, m := fx.eng.BeginMove(context.Background(), "c")
	s := m.EarlyScanner()
	if s == nil {
		t.Fatal("no scanner while a retry is left")
	}
	if v := m.CheckAnswer(ctx, "lorem"); !v.Discard {
		t.Fatalf("the first miss did not spend the retry: %+v", v)
	}
	text := "see ![cat](https://x/c.png) " + strings.Repeat("word ", 400)
	if v, cut := scanIn(t, s, text, 7); cut >= 0 || v.Discard {
		t.Fatalf("the scanner discarded at %d with no retry left: %+v", cut, v)
	}
	for _, f := range m.Firings() {
		if f.Early {
			t.Errorf("early firing %+v recorded after the retry was spent", f)
		}
	}
	if v := m.CheckAnswer(ctx, text); v.Discard {
		t.Errorf("the answer was discarded after the ceiling: %+v", v)
	}
}
