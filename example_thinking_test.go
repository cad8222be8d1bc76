package streamrules_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/streamrules/streamrules"
)

// A thinking rule reads the model's reasoning as it streams and cuts the response at the
// first certain miss, before the answer; the replay's reasoning is judged whole.
func ExampleMove_ThinkingScanner() {
	ctx := context.Background()
	store, err := streamrules.NewMemoryStore([]streamrules.Rule{{
		Name: "look_before_refusing_thinking", Scope: streamrules.ScopeThinking, Condition: `(?i)can't see the (image|picture)`,
		When: []string{streamrules.EnvPicture}, Text: "The picture is here: look at it.",
	}})
	if err != nil {
		panic(err)
	}
	eng, err := streamrules.New(ctx, store, &streamrules.Config{Logger: quiet})
	if err != nil {
		panic(err)
	}
	defer eng.Close()

	ctx, move := eng.BeginMove(ctx, "chat-7", streamrules.EnvPicture)
	scan := move.ThinkingScanner()
	reasoning := "The user sent a photo. I can't see the image, so " + strings.Repeat("I will think on. ", 200)
	for end := 16; end <= len(reasoning); end += 16 { // the reasoning as it streams
		if v, cut := scan.Scan(ctx, []byte(reasoning[:end])); cut {
			fmt.Printf("cut at %d of %d bytes: %v\n", end, len(reasoning), v.Rules)
			break
		}
	}
	fmt.Println("replay discards:", move.CheckThinking(ctx, "A cat on a keyboard.").Discard)
	f := move.Firings()[0]
	fmt.Println(f.Rule, f.Thinking, f.Early, f.Outcome)
	// Output:
	// cut at 64 of 3449 bytes: [look_before_refusing_thinking]
	// replay discards: false
	// look_before_refusing_thinking true true corrected
}
