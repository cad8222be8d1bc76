package replay_test

import (
	"context"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/replay"
)

// A Compiled serves many backtests, one after another and at once, each as replay.Run
// would report it alone: the chats' state (here a once rule's) is each run's own.
func TestCompiledRunsAreIndependent(t *testing.T) {
	ctx := context.Background()
	rules := []streamrules.Rule{
		{Name: "once_sorry", Scope: "text", Condition: `(?i)sorry`, Text: "Do not apologise.", Repeat: "once"},
		{Name: "no_rm", Scope: "tool:shell", Mode: streamrules.ModeInterrupt, Condition: `rm -rf`, Text: "Never.", Disabled: true},
	}
	jsonl := `{"chat":"a","answer":"Sorry."}
{"chat":"a","answer":"Sorry again."}
{"chat":"b","tools":[{"name":"shell","args":"{\"cmd\":\"rm -rf x\"}"}],"answer":"done"}
`
	src := func() []replay.Source { return []replay.Source{{Name: "t.jsonl", R: strings.NewReader(jsonl)}} }
	want, err := replay.Run(ctx, rules, src(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if f := want.Rules[0].Fired; f != 1 { // once in chat a: a state kept between runs would make it 0
		t.Fatalf("once_sorry fired %d, want 1", f)
	}
	c, err := replay.Compile(ctx, rules, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var wg sync.WaitGroup
	got := make([]*replay.Report, 6)
	errs := make([]error, len(got))
	got[0], errs[0] = c.Run(ctx, src(), nil)
	got[1], errs[1] = c.Run(ctx, src(), nil)
	for i := 2; i < len(got); i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], errs[i] = c.Run(ctx, src(), &replay.Options{Workers: i % 3})
		}()
	}
	wg.Wait()
	for i, rep := range got {
		if errs[i] != nil {
			t.Fatalf("run %d: %v", i, errs[i])
		}
		if !reflect.DeepEqual(rep, want) {
			t.Errorf("run %d: %+v, want %+v", i, rep, want)
		}
	}
	// A bad rule is refused at Compile, named.
	if _, err := replay.Compile(ctx, []streamrules.Rule{{Name: "bad", Scope: "text", Condition: "(", Text: "x"}}, nil); err == nil || !strings.Contains(err.Error(), "bad") {
		t.Errorf("bad rule: %v", err)
	}
}
