package clientview_test

import (
	"slices"
	"testing"

	"github.com/tmc/langchaingo/llms"

	"github.com/streamrules/streamrules/clientview"
	"github.com/streamrules/streamrules/internal/cleanview"
)

// TestCleanViewKeepsAQuotedInterrupt: only the engine's own interrupt message is taken out
// of the client's view. A user message that quotes an interrupt (pasted back, or a model's
// answer the user forwards) is the user's, and stays with the words around it.
func TestCleanViewKeepsAQuotedInterrupt(t *testing.T) {
	t.Parallel()
	ctx, _, _, discarded, interrupt := fixture()
	quote := "why did you get this?\n" + interrupt + "\nplease explain"
	in := []llms.MessageContent{
		llms.TextParts(llms.ChatMessageTypeHuman, quote),
		llms.TextParts(llms.ChatMessageTypeAI, discarded),
		llms.TextParts(llms.ChatMessageTypeHuman, interrupt),
		llms.TextParts(llms.ChatMessageTypeHuman, interrupt+" (again)"),
	}
	got := clientview.CleanMessages(ctx, in)
	var texts []string
	for _, m := range got {
		texts = append(texts, m.Parts[0].(llms.TextContent).Text)
	}
	if len(got) != 2 || texts[0] != quote || texts[1] != interrupt+" (again)" {
		t.Errorf("clean view %q, want the two quoting messages and not the retry", texts)
	}
}

// TestCleanViewRemovesOnlyRecordedMessages: the interrupt is taken out only as the human
// message it was sent as (its exact text, alone); the same text as the model's answer,
// or beside an image, is someone's message and stays. Every recorded splice is cleaned,
// not only the first.
func TestCleanViewRemovesOnlyRecordedMessages(t *testing.T) {
	t.Parallel()
	ctx, reminder, spliced, _, interrupt := fixture()
	in := cleanview.InsertedFrom(ctx)
	in.AddSplice(reminder+"second", "second")
	withImage := llms.MessageContent{Role: llms.ChatMessageTypeHuman, Parts: []llms.ContentPart{
		llms.TextContent{Text: interrupt}, llms.ImageURLContent{URL: "https://x/c.png"}}}
	msgs := []llms.MessageContent{
		llms.TextParts(llms.ChatMessageTypeAI, interrupt),
		withImage,
		{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{llms.ToolCallResponse{ToolCallID: "c1", Content: spliced}}},
		{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{llms.ToolCallResponse{ToolCallID: "c2", Content: reminder + "second"}}},
	}
	got := clientview.CleanMessages(ctx, msgs)
	if len(got) != 4 {
		t.Fatalf("%d messages left of 4: %+v", len(got), got)
	}
	if got[0].Role != llms.ChatMessageTypeAI || len(got[1].Parts) != 2 {
		t.Errorf("the model's or the user's message was taken for the interrupt: %+v", got[:2])
	}
	for i, want := range []string{"out", "second"} {
		if c := got[2+i].Parts[0].(llms.ToolCallResponse).Content; c != want {
			t.Errorf("tool result %d: %q, want %q", i+1, c, want)
		}
	}
}

// TestCleanViewDiscardedAnswer: the message before an interrupt goes only when it is the
// recorded discarded answer, as the model's message; a retry with no discarded text takes
// nothing before it, and an interrupt first in the list is removed alone. A spliced tool
// result inside a text part (an agent's scratchpad) is cleaned too.
func TestCleanViewDiscardedAnswer(t *testing.T) {
	t.Parallel()
	ctx, _, spliced, discarded, interrupt := fixture()
	bare := interrupt + " (no text discarded)"
	cleanview.InsertedFrom(ctx).AddRetry("", bare)
	msgs := []llms.MessageContent{
		llms.TextParts(llms.ChatMessageTypeHuman, interrupt),
		llms.TextParts(llms.ChatMessageTypeHuman, discarded),
		llms.TextParts(llms.ChatMessageTypeHuman, interrupt),
		llms.TextParts(llms.ChatMessageTypeAI, ""),
		llms.TextParts(llms.ChatMessageTypeHuman, bare),
		llms.TextParts(llms.ChatMessageTypeAI, "Observation: "+spliced),
	}
	got := clientview.CleanMessages(ctx, msgs)
	var view []string
	for _, m := range got {
		view = append(view, string(m.Role)+": "+m.Parts[0].(llms.TextContent).Text)
	}
	want := []string{"human: " + discarded, "ai: ", "ai: Observation: out"}
	if !slices.Equal(view, want) {
		t.Errorf("clean view\n%q\nwant\n%q", view, want)
	}
}
