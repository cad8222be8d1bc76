package middleware_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/tmc/langchaingo/llms"

	"github.com/streamrules/streamrules/internal/scripted"
)

// TestManyChatsOneEngine runs many chats at once through one engine and one guard: per-move
// state lives in the context, so no chat sees another's reminders, retries or policies.
func TestManyChatsOneEngine(t *testing.T) {
	t.Parallel()
	once := softRule("shell_once", "shell", ``, "once per chat")
	once.Repeat = "once"
	r := newRig(t, nil, once, imageRule())
	shell := &echoTool{name: "shell"}
	const chats, moves = 24, 3
	var wg sync.WaitGroup
	errs := make(chan error, chats)
	for c := 0; c < chats; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			chat := fmt.Sprintf("chat-%02d", c)
			for mv := 1; mv <= moves; mv++ {
				model := scripted.New(
					scripted.Reply{ToolCalls: []llms.ToolCall{toolCall("shell", `{"__arg1":"`+chat+`"}`)}},
					scripted.Reply{Text: "![" + chat + "](x)"},
					scripted.Reply{Text: chat + " ok"},
				)
				exec, _ := r.executor(kindFunctions, model, shell)
				out, _, err := r.run(context.Background(), exec, chat, "go", "telegram")
				if err != nil {
					errs <- err
					return
				}
				if out != chat+" ok" {
					errs <- fmt.Errorf("%s move %d: output %q", chat, mv, out)
					return
				}
				calls := model.Calls()
				res := toolResults(calls[1])[0]
				if wantReminder := mv == 1; strings.Contains(res, "shell_once") != wantReminder {
					errs <- fmt.Errorf("%s move %d: reminder present=%v: %q", chat, mv, !wantReminder, res)
					return
				}
				if !strings.HasSuffix(res, "output of "+chat) {
					errs <- fmt.Errorf("%s move %d: another chat's output %q", chat, mv, res)
					return
				}
				interrupt := messageText(lastMessages(calls[2], 1)[0])
				if !strings.Contains(interrupt, "telegram_markdown_image") || !strings.Contains(messageText(lastMessages(calls[2], 2)[0]), chat) {
					errs <- fmt.Errorf("%s move %d: wrong retry tail", chat, mv)
					return
				}
			}
		}(c)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	counts := map[string]int{}
	for _, f := range r.store.AllFirings() {
		counts[f.Rule]++
	}
	if counts["shell_once"] != chats || counts["telegram_markdown_image"] != chats*moves {
		t.Errorf("firings %v, want shell_once=%d telegram_markdown_image=%d", counts, chats, chats*moves)
	}
	for c := 0; c < chats; c++ {
		st, _ := r.store.LoadChat(context.Background(), fmt.Sprintf("chat-%02d", c))
		if st.Moves != moves {
			t.Errorf("chat %d counted %d moves", c, st.Moves)
		}
	}
}
