package streamrules_test

import (
	"context"
	"strings"
	"testing"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/enginetest"
	"github.com/streamrules/streamrules/seeds"
)

// seededEngine is an engine over the nine seeds.
func seededEngine(t *testing.T) *streamrules.Engine {
	t.Helper()
	return enginetest.WithRules(t, nil, seedRules(t)...)
}

// released streams answer through a held scanner in 8-byte chunks and returns what was
// let go before the end.
func released(s *streamrules.Scanner, answer string) string {
	var got []byte
	for i := 8; ; i += 8 {
		got = s.Release([]byte(answer[:min(i, len(answer))]))
		if i >= len(answer) {
			return string(got)
		}
	}
}

// TestReleaseHeldWhileClaimUnbacked: in a Telegram tour where the user asked for audio
// and no generate_speech call succeeded, unbacked_tool_claim is live and no prefix of an
// answer is final: "aud![x](io) saved: y" may follow any text (the image's repair makes
// the claim, which discards the answer). So the release holds. Once the move has made its
// speech, or when the user asked for no audio at all, the context folds the rule away and
// the same answer streams. The claim's repair keeps a tail on its line, so that one is
// repaired, not discarded.
func TestReleaseHeldWhileClaimUnbacked(t *testing.T) {
	eng := seededEngine(t)
	ctx := context.Background()
	const voice = "Send the team a voice message, please."
	head := strings.Repeat("The weather is mild today. ", 4) + "\n"
	begin := func(input string) *streamrules.Move {
		_, move := eng.BeginMove(ctx, "c", seeds.EnvTelegram)
		move.SetVar("message_id", "4711")
		move.SetInput(input)
		return move
	}
	if v := begin(voice).CheckAnswer(ctx, head+"aud![x](io) saved: y\n\n↩ #4711"); !v.Discard {
		t.Fatalf("%+v, want a discard (the proof that nothing may be released)", v)
	}
	if v := begin(voice).CheckAnswer(ctx, head+"audio saved: y ↩ #4711"); v.Discard ||
		v.Fixed != head+"I could not make the audio: the speech tool did not run.↩ #4711" {
		t.Fatalf("%+v, want the claim repaired and the tail kept", v)
	}
	answer := head + "That is all.\n\n↩ #4711"
	for _, tt := range []struct {
		input string
		made  bool
		held  bool
	}{{voice, false, true}, {voice, true, false}, {"How is the weather?", false, false}} {
		move := begin(tt.input)
		if tt.made {
			move.ToolReminders(ctx, "generate_speech", `{"text":"hi"}`)
		}
		got := released(move.HeldScanner(), answer)
		switch {
		case tt.held && got != "":
			t.Errorf("%q, speech made %v: released %q", tt.input, tt.made, got)
		case !tt.held && len(got) < len(head)-1:
			t.Errorf("%q, speech made %v: released only %q", tt.input, tt.made, got)
		}
	}
}

// TestReleaseVerifyBeforeDone: verify_before_done streams when its context says it
// cannot fire (no edit unchecked) and holds when it can (a positive rule over the whole
// answer), as the final check then judges; a failed test run checks nothing.
func TestReleaseVerifyBeforeDone(t *testing.T) {
	eng := seededEngine(t)
	answer := strings.Repeat("I looked at the code and changed it. ", 4) + "All finished."
	for _, tt := range []struct {
		tools []string // ! marks a failed call
		held  bool
	}{
		{nil, false},
		{[]string{"write_file"}, true},
		{[]string{"write_file", "run_tests"}, false},
		{[]string{"write_file", "!run_tests"}, true},
		{[]string{"run_tests", "write_diff"}, true},
	} {
		ctx, move := eng.BeginMove(context.Background(), "c")
		move.ToolReminders(ctx, "generate_speech", `{"text":"hi"}`)
		for _, tool := range tt.tools {
			if name, failed := strings.CutPrefix(tool, "!"); failed {
				move.ToolError(name)
			} else {
				move.ToolReminders(ctx, tool, "{}")
			}
		}
		got := released(move.HeldScanner(), answer)
		v := move.CheckAnswer(ctx, answer)
		if tt.held != (got == "") || tt.held != v.Discard {
			t.Errorf("tools %v: released %q, verdict %+v; want held=%v", tt.tools, got, v, tt.held)
		}
	}
}

// TestReleaseClaimStreams: in a tour without the Telegram rules, a live
// unbacked_tool_claim streams through its repair: the text before the claim goes at
// once, the claim's line is held until it ends and then goes repaired, and every byte
// let go is the final text's.
func TestReleaseClaimStreams(t *testing.T) {
	eng := seededEngine(t)
	ctx, move := eng.BeginMove(context.Background(), "c")
	move.SetInput("Read this out as audio, please.")
	s := move.HeldScanner()
	head := "Working on it, here is what happened so far.\n"
	answer := head + "Audio saved: /tmp/a.ogg and more\nThat is all for now, thanks a lot!"
	var got []byte
	var atHead, atLine string
	for i := 1; i <= len(answer); i++ {
		got = s.Release([]byte(answer[:i]))
		if i == len(head)+20 {
			atHead = string(got)
		}
		if i == strings.Index(answer, "That")+20 {
			atLine = string(got)
		}
	}
	v := move.CheckAnswer(ctx, answer)
	want := head + "I could not make the audio: the speech tool did not run.\nThat is all for now, thanks a lot!"
	if v.Fixed != want || v.Discard {
		t.Fatalf("verdict %+v", v)
	}
	if atHead != strings.TrimSuffix(head, "\n") && atHead != head || !strings.HasPrefix(want, atLine) ||
		!strings.Contains(atLine, "speech tool did not run.") || !strings.HasPrefix(want, string(got)) {
		t.Errorf("released %q while the claim streamed, %q after its line, %q in all", atHead, atLine, got)
	}
}
