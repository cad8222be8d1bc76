package replay_test

import (
	"reflect"
	"testing"

	"github.com/tmc/langchaingo/llms"

	"github.com/streamrules/streamrules/replay"
)

func TestFromChatMessages(t *testing.T) {
	t.Parallel()
	msgs := []llms.ChatMessage{
		llms.SystemChatMessage{Content: "be brief"},
		llms.AIChatMessage{Content: "a greeting before anyone spoke opens no move"},
		llms.HumanChatMessage{Content: "free disk?"},
		llms.AIChatMessage{ToolCalls: []llms.ToolCall{{FunctionCall: &llms.FunctionCall{Name: "shell", Arguments: `{"cmd":"df"}`}}}},
		llms.ToolChatMessage{Content: "12G"},
		llms.AIChatMessage{Content: "12G free."},
		&llms.HumanChatMessage{Content: "thanks"},
		&llms.AIChatMessage{Content: "You're welcome."},
		llms.HumanChatMessage{Content: "one more"}, // no answer yet: not a move
	}
	got := replay.FromChatMessages("tg-7", []string{"telegram"}, msgs)
	want := []replay.Move{
		{Chat: "tg-7", Move: 1, Env: []string{"telegram"}, Tools: []replay.ToolCall{{Name: "shell", Args: `{"cmd":"df"}`}}, Answer: "12G free."},
		{Chat: "tg-7", Move: 2, Env: []string{"telegram"}, Answer: "You're welcome."},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}
