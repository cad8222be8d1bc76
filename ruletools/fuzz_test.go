package ruletools_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/tmc/langchaingo/tools"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/ruletools"
	"github.com/streamrules/streamrules/seeds"
)

// FuzzEditNull: whatever JSON the model writes, an edit that goes through had no null
// except in the optional trees (predicate, applies_when, fix), and every field the input
// does not name keeps its value: null never means "clear" by accident.
func FuzzEditNull(f *testing.F) {
	for _, in := range []string{
		`{"name":"telegram_reply_tail","condition":null}`,
		`{"name":"telegram_reply_tail","when":null}`,
		`{"name":"telegram_reply_tail","when":["telegram",null]}`,
		`{"name":"telegram_reply_tail","fix":null}`,
		`{"name":"telegram_reply_tail","enabled":null,"text":"x"}`,
		`{"name":"telegram_reply_tail","new_name":null}`,
		`{"name":null}`,
		`{"name":"telegram_reply_tail","predicate":null,"condition":"a"}`,
		`{"name":"telegram_reply_tail","predicate":{"not_":null}}`,
		`{"name":"telegram_reply_tail","text":"t","shadow":true}`,
		`{"name":"telegram_reply_tail","applies_when":null,"severity":"low"}`,
	} {
		f.Add(in)
	}
	set, err := seeds.Default()
	if err != nil {
		f.Fatal(err)
	}
	s, err := streamrules.NewMemoryStore(set.Rules, seeds.Environments()...)
	if err != nil {
		f.Fatal(err)
	}
	eng, err := streamrules.New(context.Background(), s, &streamrules.Config{Logger: quiet})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(eng.Close)
	tl := map[string]tools.Tool{}
	for _, tool := range ruletools.New(s, eng) {
		tl[tool.Name()] = tool
	}
	ctx, _ := eng.BeginMove(context.Background(), "master-chat", seeds.EnvMaster)
	nullable := []string{"predicate", "applies_when", "fix"}
	f.Fuzz(func(t *testing.T, input string) {
		const name = "telegram_reply_tail"
		before, err := s.GetRule(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		res := call(t, ctx, tl["stream_rule_edit"], input)
		if !res.OK {
			return
		}
		var in map[string]json.RawMessage
		if err := json.Unmarshal([]byte(input), &in); err != nil {
			t.Fatalf("an edit of input that is not a JSON object went through: %q", input)
		}
		for k, v := range in {
			if string(v) == "null" && !slices.Contains(nullable, k) {
				t.Fatalf("%q: null in %q went through: %+v", input, k, res)
			}
		}
		var was, now map[string]json.RawMessage
		mustRoundTrip(t, before, &was)
		mustRoundTrip(t, res.Rule.Rule, &now)
		for k, v := range was {
			_, named := in[k]
			scopeMoved := k == "mode" && in["scope"] != nil
			if k != "name" && k != "id" && k != "created_at" && k != "updated_at" && !named && !scopeMoved && string(now[k]) != string(v) {
				t.Fatalf("%q changed %q, which it does not name: %s -> %s", input, k, v, now[k])
			}
		}
		// Put the rule back for the next input (a rename included).
		if _, err := s.UpdateRule(ctx, res.Rule.Name, before); err != nil {
			t.Fatal(err)
		}
		if err := eng.Reload(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

func mustRoundTrip(t *testing.T, r streamrules.Rule, into *map[string]json.RawMessage) {
	t.Helper()
	if r.When == nil {
		r.When = []string{}
	}
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, into); err != nil {
		t.Fatal(err)
	}
}
