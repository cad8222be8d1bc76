package streamrules

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// releasedOf streams answer to a held scanner of a move of r alone, in chunks of 3 bytes,
// and returns what the client had before the answer ended: the release the verdict of
// SpeechHoldOf must describe. vars and input set the move's variables and input.
func releasedOf(t *testing.T, r Rule, env []string, vars map[string]string, input *string, answer string) string {
	t.Helper()
	f := newFixture(t, []Rule{r}, nil)
	ctx := context.Background()
	if input != nil {
		ctx = WithInput(ctx, *input)
	}
	_, m := f.eng.BeginMove(ctx, "c", env...)
	for k, v := range vars {
		m.SetVar(k, v)
	}
	s := m.HeldScanner()
	var got []byte
	for i := 3; i <= len(answer)+2; i += 3 {
		got = s.Release([]byte(answer[:min(i, len(answer))]))
	}
	return string(got)
}

// TestSpeechHoldMatchesRelease: each seeded rule's verdict is what the real release does
// with an answer of each kind, in a move where the rule is armed: "streams" and the
// bounded tail let nearly everything through, "holds while ![ is open" lets through what
// comes before it, "holds the whole tour" lets nothing through. The oracle is the engine's
// own held scanner, not the verdict's code.
func TestSpeechHoldMatchesRelease(t *testing.T) {
	t.Parallel()
	// The seed file itself (package seeds imports this one): its rules as Rule reads them.
	data, err := os.ReadFile("seeds/seeds.json")
	if err != nil {
		t.Fatal(err)
	}
	var set struct{ Rules []Rule }
	if err := json.Unmarshal(data, &set); err != nil {
		t.Fatal(err)
	}
	audio := "Please send the team a voice message."
	plain := "Here is the plan for today, step by step, with every detail you asked for.  "
	tests := []struct {
		rule     string
		kind     HoldKind
		vars     map[string]string
		input    *string
		answer   string
		released string // what the client has before the end
	}{
		{"telegram_markdown_image", HoldOpen, nil, nil, "Here she is: ![cat](https://example.org/c", "Here she is: "},
		{"telegram_markdown_image", HoldOpen, nil, nil, plain, plain},
		{"telegram_reply_tail", HoldTail, map[string]string{"message_id": "7"}, nil, plain, strings.TrimRight(plain, " ")},
		{"telegram_react_not_emoji", HoldHead, nil, nil, plain, plain},
		{"look_before_refusing", HoldTour, nil, nil, plain, ""},
		{"destructive_shell", HoldNone, nil, nil, plain, plain}, // a gate never holds text
		{"unbacked_tool_claim", HoldOpen, nil, &audio, "Sure. Audio saved: team", "Sure. "},
		{"verify_before_done", HoldTour, nil, nil, plain, plain}, // nothing edited: folded away
	}
	byName := map[string]Rule{}
	for _, r := range set.Rules {
		r.Normalize()
		if err := Validate(&r, testEnvs); err != nil {
			t.Fatal(err)
		}
		byName[r.Name] = r
	}
	for _, tt := range tests {
		r := byName[tt.rule]
		h := SpeechHoldOf(&r)
		if h.Kind != tt.kind {
			t.Errorf("%s: verdict %q (%v), want kind %v", r.Name, h, h.Kind, tt.kind)
		}
		got := releasedOf(t, r, r.When, tt.vars, tt.input, tt.answer)
		// The release reads releaseBatchBytes at a time: the client may be that far behind.
		if !strings.HasPrefix(tt.released, got) || len(got) < len(tt.released)-releaseBatchBytes || tt.released == "" && got != "" {
			t.Errorf("%s on %q: the release let through %q before the end, want %q (verdict %q)", r.Name, tt.answer, got, tt.released, h)
		}
	}
	// The tail rule without its variable: the whole tour, as its verdict's Otherwise says.
	tail := byName["telegram_reply_tail"]
	if h := SpeechHoldOf(&tail); !h.HoldsTour() || !strings.Contains(h.Otherwise, "{{message_id}}") {
		t.Errorf("the tail rule's verdict %+v does not say it holds whole tours without message_id", h)
	}
	if got := releasedOf(t, tail, tail.When, nil, nil, plain); got != "" {
		t.Errorf("the tail rule without message_id let through %q", got)
	}
}

// A replace_regex fix whose pattern starts with a character class: in a shape the release
// cannot follow it holds every tour whole, since any letter may open a match; in one it can
// follow, each word is held until it cannot begin one. The verdict says which, and why,
// and the release agrees.
func TestSpeechHoldCharacterClassFix(t *testing.T) {
	t.Parallel()
	answer := "Your files are ready and the backup ran fine today."
	tests := []struct {
		with, verdict, released string
	}{
		{"$1.", "holds the whole tour when client_ops", ""},
		{"$1", "holds while a match is open (it can start at any letter) when client_ops", "Your files are ready and the backup ran fine "},
	}
	for _, tt := range tests {
		r := Rule{Name: "no_shouting", Scope: ScopeText, Condition: `[A-Za-z]+!+`, When: []string{envClientOps},
			Text: "No exclamation marks.", Fix: &Fix{ReplaceRegex: &ReplaceRegex{Pattern: `([A-Za-z]+)!+`, With: tt.with}}}
		r.Normalize()
		if err := Validate(&r, testEnvs); err != nil {
			t.Fatal(err)
		}
		h := SpeechHoldOf(&r)
		if h.String() != tt.verdict || !strings.Contains(h.Reason, "can start at any letter") {
			t.Errorf("with %q: verdict %q, reason %q; want %q", tt.with, h, h.Reason, tt.verdict)
		}
		got := releasedOf(t, r, r.When, nil, nil, answer)
		if !strings.HasPrefix(tt.released, got) || len(got) < len(tt.released)-releaseBatchBytes || tt.released == "" && got != "" {
			t.Errorf("with %q: the release let through %q, want %q", tt.with, got, tt.released)
		}
	}
}

// The load summary names each rule that holds speech and how; a soft rule, which never
// holds, is left out.
func TestLoadSummarySaysHeldSpeech(t *testing.T) {
	t.Parallel()
	image := Rule{Name: "md_image", Scope: ScopeText, Condition: `!\[[^\]]*\]\([^)\s]+\)`, When: []string{envTelegram}, Text: "No markdown images.",
		Fix: &Fix{ReplaceRegex: &ReplaceRegex{Pattern: `!\[[^\]]*\]\(([^)\s]+)\)`, With: "$1"}}}
	anywhere := Rule{Name: "no_sorry", Scope: ScopeText, Condition: `(?i)sorry`, When: []string{envPicture}, Text: "Do not apologise."}
	f := newFixture(t, []Rule{image, anywhere, softRule("soft_one", "shell", "ls")}, nil)
	want := "held_speech=\"[md_image: holds while a `![` is open when telegram no_sorry: holds the whole tour when picture]\""
	if lines := f.log.Lines("stream rules loaded", want); len(lines) != 1 {
		t.Errorf("the load summary does not say how each rule holds speech (want %s):\n%s", want, f.log.String())
	}
	if got := f.eng.SpeechHolds()["soft_one"]; got.Kind != HoldNone {
		t.Errorf("a soft rule holds: %+v", got)
	}
}
