package callbacks_test

import (
	"testing"

	"github.com/tmc/langchaingo/llms"

	"github.com/streamrules/streamrules/callbacks"
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
	got := callbacks.CleanMessages(ctx, in)
	var texts []string
	for _, m := range got {
		texts = append(texts, m.Parts[0].(llms.TextContent).Text)
	}
	if len(got) != 2 || texts[0] != quote || texts[1] != interrupt+" (again)" {
		t.Errorf("clean view %q, want the two quoting messages and not the retry", texts)
	}
}
