package streamrules_test

import (
	"context"
	"strings"
	"testing"

	"github.com/streamrules/streamrules"
)

// TestReleaseWatchesTheRepairedText: while an image is repaired into its plain link, a
// watched rule is judged on the text the client would get, not only on what the model
// wrote: a rule (anchored, so it settles on what the model wrote) that only the repaired
// text breaks keeps the answer held.
func TestReleaseWatchesTheRepairedText(t *testing.T) {
	t.Parallel()
	img := streamrules.Rule{Name: "image_as_link", Scope: "text", Mode: streamrules.ModeInterrupt,
		Condition: `!\[[^\]]*\]\(([^)\s]+)\)`, Text: "Send links, not images.",
		Fix: &streamrules.Fix{ReplaceRegex: &streamrules.ReplaceRegex{Pattern: `!\[[^\]]*\]\(([^)\s]+)\)`, With: "$1"}}}
	bare := streamrules.Rule{Name: "no_bare_link_first", Scope: "text", Mode: streamrules.ModeInterrupt,
		Condition: `^Here it is: https://`, Text: "Introduce a link with words."}
	text := []byte("Here it is: ![cat](https://x/c.png) and some more words to pass the batch size.")
	_, alone := quietEngine(t, nil, img).BeginMove(context.Background(), "c")
	if final := alone.HeldScanner().Release(text); !strings.Contains(string(final), ": https://x/c.png") {
		t.Fatalf("without the watched rule, released %q: want the repaired link", final)
	}
	_, m := quietEngine(t, nil, img, bare).BeginMove(context.Background(), "c")
	if final := m.HeldScanner().Release(text); strings.Contains(string(final), "https://") {
		t.Errorf("released %q, which the watched rule forbids once repaired", final)
	}
}
