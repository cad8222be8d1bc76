package streamrules_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/seeds"
)

// unreadableChats is a memory store whose chat state cannot be read, as with a database
// that is down for reads.
type unreadableChats struct{ *streamrules.MemoryStore }

func (unreadableChats) LoadChat(context.Context, string) (streamrules.ChatState, error) {
	return streamrules.ChatState{}, errors.New("chat state unreadable")
}

// TestGateWithoutChatState: when the chat's state cannot be read, a gate without a repeat
// limit still stops its calls (discard, then refusal past the ceiling), while a `once`
// gate fails closed and lets its call through.
func TestGateWithoutChatState(t *testing.T) {
	t.Parallel()
	once := deploy
	once.Name, once.Scope, once.Repeat = "once_rollback", "tool:rollback", "once"
	mem, err := streamrules.NewMemoryStore([]streamrules.Rule{deploy, once}, seeds.Environments()...)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := streamrules.New(context.Background(), unreadableChats{mem}, &streamrules.Config{MaxRetriesPerMove: 1, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(eng.Close)

	ctx, m := eng.BeginMove(context.Background(), "ops", seeds.EnvClientOps)
	if !m.Armed() {
		t.Fatal("an every-time gate is disarmed by an unreadable chat state")
	}
	prod := `{"target":"prod"}`
	if v := m.CheckResponse(ctx, "", []streamrules.DeclaredCall{{Tool: "rollback", Input: prod}}); v.Discard {
		t.Fatalf("a once gate acted without the chat's history: %+v", v)
	}
	if v := m.CheckResponse(ctx, "", []streamrules.DeclaredCall{{Tool: "deploy", Input: prod}}); !v.Discard {
		t.Fatalf("the every-time gate let the call through: %+v", v)
	}
	if rem := m.GateCall(ctx, "deploy", prod); len(rem) != 1 || rem[0].Rule != deploy.Name {
		t.Fatalf("past the ceiling, refusal %v", rem)
	}
	if rem := m.GateCall(ctx, "rollback", prod); rem != nil {
		t.Fatalf("a once gate refused without the chat's history: %v", rem)
	}
}
