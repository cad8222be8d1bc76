package streamrules_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/seeds"
)

// TestEarlyCutAgreesWithWholeVerdict: with early interrupt on, in a Telegram tour with a
// picture, an answer whose markdown image runs into "cannot view the picture". Judged
// whole, the image rule's repair leaves "…p.jpgcannot view…", where look_before_refusing's
// \b no longer matches: the answer is repaired, not discarded. The early scan must not cut
// what the whole verdict keeps; before, it cut on the raw text and the client got a replay.
func TestEarlyCutAgreesWithWholeVerdict(t *testing.T) {
	t.Parallel()
	eng := quietEngine(t, &streamrules.Config{EarlyInterrupt: true}, seedRules(t)...)
	ctx := context.Background()
	const answer = "Here: ![photo](https://e.org/p.jpg)cannot view the picture, sorry, it did not load for me."
	judge := func() streamrules.Verdict {
		_, m := eng.BeginMove(ctx, "whole", seeds.EnvTelegram, seeds.EnvPicture)
		m.SetVar("message_id", "4711")
		return m.CheckAnswer(ctx, answer)
	}
	whole := judge()
	if whole.Discard || whole.Fixed == "" {
		t.Fatalf("whole verdict %+v: want repaired", whole)
	}
	_, m := eng.BeginMove(ctx, "early", seeds.EnvTelegram, seeds.EnvPicture)
	m.SetVar("message_id", "4711")
	s := m.HeldScanner()
	for i := 8; ; i += 8 {
		text := []byte(answer[:min(i, len(answer))])
		if v, cut := s.Scan(ctx, text); cut {
			t.Fatalf("cut early at %d bytes on %v; the whole answer is repaired to %q", len(text), v.Rules, whole.Fixed)
		}
		s.Release(text)
		if i >= len(answer) {
			break
		}
	}
	if v := m.CheckAnswer(ctx, answer); v.Discard || v.Fixed != whole.Fixed {
		t.Errorf("verdict after the stream %+v, want %+v", v, whole)
	}

	// A refusal the repair leaves standing is still cut early, and the whole verdict
	// discards it too.
	const refusal = "Here: ![photo](https://e.org/p.jpg) I cannot view the picture, sorry, it did not load for me." +
		" Let me say more about it so the stream goes on for a while after the miss."
	_, m = eng.BeginMove(ctx, "early2", seeds.EnvTelegram, seeds.EnvPicture)
	m.SetVar("message_id", "4711")
	s = m.HeldScanner()
	var cut *streamrules.Verdict
	for i := 8; i <= len(refusal)+8 && cut == nil; i += 8 {
		if v, ok := s.Scan(ctx, []byte(refusal[:min(i, len(refusal))])); ok {
			cut = &v
		}
	}
	if cut == nil || !slices.Contains(cut.Rules, "look_before_refusing") {
		t.Fatalf("not cut early: %+v", cut)
	}
	_, m = eng.BeginMove(ctx, "whole2", seeds.EnvTelegram, seeds.EnvPicture)
	m.SetVar("message_id", "4711")
	if v := m.CheckAnswer(ctx, refusal); !v.Discard || !slices.Contains(v.Rules, "look_before_refusing") {
		t.Errorf("whole verdict %+v, want the discard the early cut made", v)
	}
}

// TestEarlyCutWaitsForUnfollowedFix: an early rule's match that an armed fix may repair
// away at the end, a fix the release cannot follow as the answer streams, is not cut on:
// the whole verdict repairs it. A match the fix cannot touch (no rune in common, no
// assertion) is still cut at once.
func TestEarlyCutWaitsForUnfollowedFix(t *testing.T) {
	t.Parallel()
	early := streamrules.Rule{Name: "no_secret", Scope: "text", Condition: `secret`, Text: "Keep it quiet.", Early: true}
	early2 := streamrules.Rule{Name: "no_pin", Scope: "text", Condition: `\d{4}`, Text: "No PINs.", Early: true}
	fix := streamrules.Rule{Name: "classified", Scope: "text", Condition: `top\s+secret`, Text: "Say classified.",
		Fix: &streamrules.Fix{ReplaceRegex: &streamrules.ReplaceRegex{Pattern: `top\s+secret`, With: "classified"}}}
	eng := quietEngine(t, nil, early, early2, fix)
	ctx := context.Background()
	tail := strings.Repeat(" and more words after it", 20)
	stream := func(answer string) (streamrules.Verdict, bool) {
		_, m := eng.BeginMove(ctx, "c")
		s := m.EarlyScanner()
		for i := 8; i < len(answer)+8; i += 8 {
			if v, ok := s.Scan(ctx, []byte(answer[:min(i, len(answer))])); ok {
				return v, true
			}
		}
		return streamrules.Verdict{}, false
	}
	answer := "This is top   secret" + tail
	if v, cut := stream(answer); cut {
		t.Errorf("cut on %v; the fix repairs the match at the end", v.Rules)
	}
	_, m := eng.BeginMove(ctx, "whole")
	if v := m.CheckAnswer(ctx, answer); v.Discard || !strings.HasPrefix(v.Fixed, "This is classified and") {
		t.Errorf("whole verdict %+v, want repaired", v)
	}
	if v, cut := stream("Your PIN is 1234" + tail); !cut || !slices.Equal(v.Rules, []string{"no_pin"}) {
		t.Errorf("a match the fix cannot touch was not cut early: %+v", v)
	}
}
