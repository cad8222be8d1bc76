package callbacks_test

import (
	"fmt"

	"github.com/tmc/langchaingo/llms"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/callbacks"
)

// The retry request of a tour, as the model got it, and as a transcript store should keep
// it: no reminder block on the tool result, no discarded answer, no interrupt.
func ExampleCleanMessages() {
	prompt := []llms.MessageContent{
		llms.TextParts(llms.ChatMessageTypeHuman, "how much disk is free?"),
		{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{llms.ToolCallResponse{
			ToolCallID: "call_1",
			Content:    streamrules.Reminder{Rule: "local_shell_for_his_machine", Text: "This is your server."}.Block() + "\n12G free",
		}}},
		llms.TextParts(llms.ChatMessageTypeAI, "![disk](https://x/disk.png)"),
		llms.TextParts(llms.ChatMessageTypeHuman, streamrules.InterruptBlock("telegram_markdown_image", "No markdown images.")),
	}
	for _, m := range callbacks.CleanMessages(prompt) {
		switch p := m.Parts[0].(type) {
		case llms.TextContent:
			fmt.Printf("%s: %s\n", m.Role, p.Text)
		case llms.ToolCallResponse:
			fmt.Printf("%s: %s\n", m.Role, p.Content)
		}
	}
	// Output:
	// human: how much disk is free?
	// tool: 12G free
}
