package tracing_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/openaitest"
	"github.com/streamrules/streamrules/internal/scripted"
)

// TestThinkingSpans: a thinking rule cuts the reasoning through the openai client; the
// cut model call and the firing carry streamrules.thinking, the replay does not.
func TestThinkingSpans(t *testing.T) {
	t.Parallel()
	rule := streamrules.Rule{Name: "blind", Scope: streamrules.ScopeThinking, Condition: `can't see`, Text: "Look at it."}
	srv := openaitest.New(t,
		scripted.Reply{Reasoning: "Hmm, I can't see it. " + strings.Repeat("And so on. ", 200), Text: "No.", Chunk: 6, Pace: 50 * time.Microsecond},
		scripted.Reply{Reasoning: "A cat.", Text: "A cat."})
	r := newRig(t, nil, []streamrules.Rule{rule}, srv.LLM(t))
	if out, err := r.guard.Run(context.Background(), r.exec, "chat-t", "picture?"); err != nil || out != "A cat." {
		t.Fatalf("out %q, err %v", out, err)
	}
	got := tree(r.rec.Ended())
	if n := strings.Count(got, "streamrules.thinking=true"); n != 2 || !strings.Contains(got, "streamrules.cut_early=true") {
		t.Errorf("%d thinking marks, want the cut call's and the firing's:\n%s", n, got)
	}
}
