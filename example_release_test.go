package streamrules_test

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/seeds"
)

// A Telegram reply streams through the seeded rules: the text before the image goes at
// once, nothing while the image is incomplete, then the image as its plain link; trailing
// space waits (the tail's fix would trim it), and the tail the fix appends comes at the
// end with the rest. (Release reads the new bytes once 16 have come.) The move made its
// speech before the answer, so unbacked_tool_claim cannot fire in this tour and is not
// followed; with the claim unbacked, no prefix of a Telegram reply would be final.
func ExampleScanner_Release() {
	set, err := seeds.Default()
	if err != nil {
		panic(err)
	}
	var rules []streamrules.Rule
	for _, name := range set.Names() {
		r, _ := set.Rule(name)
		rules = append(rules, r)
	}
	store, err := streamrules.NewMemoryStore(rules, seeds.Environments()...)
	if err != nil {
		panic(err)
	}
	eng, err := streamrules.New(context.Background(), store, &streamrules.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	defer eng.Close()
	ctx, move := eng.BeginMove(context.Background(), "chat-42", seeds.EnvTelegram)
	move.SetVar("message_id", "4711")
	move.ToolReminders(ctx, "generate_speech", `{"text":"hi"}`)
	s := move.HeldScanner()
	var text []byte
	sent := 0
	for _, chunk := range []string{"Here is the cat: ", "![cat](https://x/c", ".png) and that was ", "all of it, enjoy it!\n"} {
		text = append(text, chunk...)
		final := s.Release(text)
		fmt.Printf("sent %q\n", final[sent:])
		sent = len(final)
	}
	v := move.CheckAnswer(ctx, string(text))
	fmt.Printf("at the end %q\n", v.Fixed[sent:])
	// Output:
	// sent "Here is the cat:"
	// sent ""
	// sent " https://x/c.png and that was"
	// sent " all of it, enjoy it!"
	// at the end "\n\n↩ #4711"
}
