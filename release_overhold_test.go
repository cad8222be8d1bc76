package streamrules_test

import (
	"context"
	"strings"
	"testing"

	"github.com/streamrules/streamrules/internal/streamrulestest"
	"github.com/streamrules/streamrules/seeds"

	"github.com/streamrules/streamrules"
)

// releasedAt streams answer in 8-byte chunks through a held scanner of m and returns how
// many bytes were released by the time the whole answer had arrived (before its verdict).
func releasedAt(m *streamrules.Move, answer string) int {
	s := m.HeldScanner()
	n := 0
	for i := 8; i < len(answer)+8; i += 8 {
		n = len(s.Release([]byte(answer[:min(i, len(answer))])))
	}
	return n
}

// TestReleaseOverHolding: tours where no rule left in them could discard, repair or cut
// the answer stream. With replays off, look_before_refusing (no fix) cannot discard, so a
// Telegram tour with a picture streams under its repairs alone; so does the replay tour
// after a discard spent the move's retry; and a max_words bound the answer has passed
// settles its all_of.
func TestReleaseOverHolding(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	answer := strings.Repeat("The picture shows a cat asleep on a warm windowsill. ", 8) + "\n\n↩ #4711"
	picture := []string{seeds.EnvTelegram, seeds.EnvPicture}

	off := quietEngine(t, &streamrules.Config{MaxRetriesPerMove: -1}, seedRules(t)...)
	_, m := off.BeginMove(ctx, "off", picture...)
	m.SetVar("message_id", "4711")
	if !m.Armed() {
		t.Fatal("the Telegram repairs are not armed with replays off")
	}
	if n := releasedAt(m, answer); n < len(answer)-len("\n\n↩ #4711")-8 {
		t.Errorf("replays off: %d of %d bytes released before the end", n, len(answer))
	}

	eng := quietEngine(t, nil, seedRules(t)...)
	mctx, m := eng.BeginMove(ctx, "replay", picture...)
	m.SetVar("message_id", "4711")
	if v := m.CheckAnswer(mctx, "👍"); !v.Discard {
		t.Fatalf("the bare emoji was not discarded: %+v", v)
	}
	if n := releasedAt(m, answer); n < len(answer)-len("\n\n↩ #4711")-8 {
		t.Errorf("the replay: %d of %d bytes released before the end", n, len(answer))
	}

	short := streamrules.AllOf(streamrules.MaxWords(5), streamrules.Contains(`(?i)\bbye\b`))
	rule := streamrules.Rule{Name: "no_curt_bye", Scope: "text", Predicate: &short, Text: "Say more than bye."}
	_, m = quietEngine(t, nil, rule).BeginMove(ctx, "count")
	if n := releasedAt(m, answer); n < len(answer)-streamrulestest.ReleaseBatchBytes-8 {
		t.Errorf("max_words passed: %d of %d bytes released before the end", n, len(answer))
	}
	_, m = quietEngine(t, nil, rule).BeginMove(ctx, "count2")
	if n := releasedAt(m, "Bye now."); n != 0 {
		t.Errorf("an answer still within max_words released %d bytes", n)
	}
}
