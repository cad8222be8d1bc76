package streamrules_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/seeds"
)

// A picture arrives through a tool in the middle of a move: the rule that needs it is
// armed from the next tour on.
func ExampleMove_AddEnvironment() {
	ctx := context.Background()
	store, err := streamrules.NewMemoryStore([]streamrules.Rule{{
		Name: "look_before_refusing", Scope: "text", Condition: `(?i)can't see the picture`,
		When: []string{seeds.EnvPicture}, Text: "The picture is here: look at it.",
	}}, seeds.Environments()...)

	if err != nil {
		panic(err)
	}
	eng, err := streamrules.New(ctx, store, &streamrules.Config{Logger: quiet})
	if err != nil {
		panic(err)
	}
	defer eng.Close()

	ctx, move := eng.BeginMove(ctx, "chat-7")
	move.BeginTour()
	fmt.Println("tour 1 discards:", move.CheckAnswer(ctx, "I can't see the picture yet.").Discard)
	move.AddEnvironment(seeds.EnvPicture) // the image tool ran
	move.BeginTour()
	fmt.Println("tour 2 discards:", move.CheckAnswer(ctx, "I can't see the picture.").Discard)
	// Output:
	// tour 1 discards: false
	// tour 2 discards: true
}

// An early rule cuts a streamed answer at the first certain miss.
func ExampleScanner() {
	ctx := context.Background()
	store, err := streamrules.NewMemoryStore([]streamrules.Rule{{
		Name: "no_markdown_image", Scope: "text", Condition: `!\[[^\]]*\]\([^)\s]+\)`,
		Text: "Send the picture with the photo tool.", Early: true,
	}}, seeds.Environments()...)

	if err != nil {
		panic(err)
	}
	eng, err := streamrules.New(ctx, store, &streamrules.Config{Logger: quiet})
	if err != nil {
		panic(err)
	}
	defer eng.Close()

	ctx, move := eng.BeginMove(ctx, "chat-8")
	scan := move.EarlyScanner()
	answer := "Here:\n![cat](https://x/cat.png)\n" + strings.Repeat("and more words ", 200)
	var held []byte
	for i := 0; i < len(answer); i += 4 { // the provider streams 4-byte chunks
		held = append(held, answer[i:min(i+4, len(answer))]...)
		if v, cut := scan.Scan(ctx, held); cut {
			f := move.Firings()[0]
			fmt.Printf("cut after %d of %d bytes: %v, early=%v at %d\n", len(held), len(answer), v.Rules, f.Early, f.CutAtBytes)
			break
		}
	}
	// Output:
	// cut after 64 of 3032 bytes: [no_markdown_image], early=true at 64
}
