package ruletools_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/tools"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/ruletools"
)

// manyRules returns n valid rules: every third a tool rule, every fifth disabled; big:
// each with a long condition and a text at its limit, so a page fills by size, not count.
func manyRules(n int, big bool) []streamrules.Rule {
	out := make([]streamrules.Rule, n)
	for i := range out {
		r := streamrules.Rule{
			Name:      fmt.Sprintf("rule_%05d", i),
			Scope:     streamrules.ScopeText,
			Condition: fmt.Sprint("lorem ", i),
			Text:      "No placeholder text.",
			Disabled:  i%5 == 0,
		}
		if big {
			// Mostly disabled: the engine need not compile 10,000 rules for a test of
			// the list's size, which the text at its limit makes.
			r.Condition = "(?i)" + strings.Repeat("lorem ipsum ", 20) + fmt.Sprint(i)
			r.Text = strings.Repeat("x", streamrules.MaxTextChars)
			r.Disabled = i%10 != 0
		}
		if i%3 == 0 {
			r.Scope = "tool:shell"
		}
		out[i] = r
	}
	return out
}

func bigSetup(t *testing.T, n int, big bool) (context.Context, map[string]tools.Tool) {
	t.Helper()
	_, eng, tl := setup(t, func(t *testing.T) editorStore {
		s, err := streamrules.NewMemoryStore(manyRules(n, big))
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
	ctx, _ := eng.BeginMove(context.Background(), "m", streamrules.EnvMaster)
	return ctx, tl
}

// TestListBoundedAtTenThousandRules: with 10,000 rules at their size limits, every page
// stays within 8 KB, a page is cut by size before its limit, and the cursor goes on.
func TestListBoundedAtTenThousandRules(t *testing.T) {
	t.Parallel()
	const n = 10000
	ctx, tl := bigSetup(t, n, true)
	list := tl[ruletools.ListName]
	largest := 0
	for _, input := range []string{
		``, `{}`, `{"limit":100}`, `{"limit":100,"cursor":"rule_04999"}`, `{"limit":100,"cursor":"rule_09990"}`,
		`{"scope":"tool","limit":100}`, `{"enabled":false,"limit":100}`, `{"loaded":true,"limit":100}`,
	} {
		out, err := list.Call(ctx, input)
		if err != nil {
			t.Fatal(err)
		}
		largest = max(largest, len(out))
		res := call(t, ctx, list, input)
		if !res.OK || len(res.Rules) == 0 || len(out) > 8<<10 {
			t.Fatalf("%s: %d bytes, %d rules, %s", input, len(out), len(res.Rules), res.Message)
		}
		if strings.Contains(input, "limit") && !strings.Contains(input, "rule_0999") && (len(res.Rules) >= 100 || res.NextCursor != res.Rules[len(res.Rules)-1].Name) {
			t.Errorf("%s: %d rules, next cursor %q: a page of 100 big rules must be cut by size", input, len(res.Rules), res.NextCursor)
		}
	}
	t.Logf("largest stream_rule_list output at %d rules: %d bytes", n, largest)
}

// TestListPages walks every page under each filter: together the pages show every
// matching rule once, in name order.
func TestListPages(t *testing.T) {
	t.Parallel()
	const n = 600
	ctx, tl := bigSetup(t, n, false)
	list := tl[ruletools.ListName]
	name := func(i int) string { return fmt.Sprintf("rule_%05d", i) }
	filters := []struct {
		name  string
		input string
		want  func(i int) bool
	}{
		{"all, pages of 40", `{"limit":40}`, func(int) bool { return true }},
		{"tool rules", `{"scope":"tool","limit":100}`, func(i int) bool { return i%3 == 0 }},
		{"one tool", `{"scope":"tool:shell","limit":100}`, func(i int) bool { return i%3 == 0 }},
		{"text rules", `{"scope":"text","limit":100}`, func(i int) bool { return i%3 != 0 }},
		{"disabled", `{"enabled":false,"limit":100}`, func(i int) bool { return i%5 == 0 }},
		{"enabled", `{"enabled":true,"limit":100}`, func(i int) bool { return i%5 != 0 }},
		{"not loaded", `{"loaded":false,"limit":100}`, func(i int) bool { return i%5 == 0 }},
		{"name part, default page", `{"name":"_001","scope":"text"}`, func(i int) bool {
			return strings.Contains(name(i), "_001") && i%3 != 0
		}},
	}
	for _, f := range filters {
		var want, got []string
		for i := range n {
			if f.want(i) {
				want = append(want, name(i))
			}
		}
		input := f.input
		for page := 0; ; page++ {
			res := call(t, ctx, list, input)
			if !res.OK {
				t.Fatalf("%s: %+v", f.name, res)
			}
			for _, r := range res.Rules {
				got = append(got, r.Name)
			}
			if res.NextCursor == "" {
				break
			}
			if page > n {
				t.Fatalf("%s: the cursor does not advance", f.name)
			}
			input = strings.TrimSuffix(f.input, "}") + fmt.Sprintf(`,"cursor":%q}`, res.NextCursor)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: listed %d rules, want %d", f.name, len(got), len(want))
		}
	}
}

// TestStrictToolJSON: keys in another case, unknown and duplicate keys, invalid UTF-8
// and trailing data are rejected with the field named, and nothing is written.
func TestStrictToolJSON(t *testing.T) {
	t.Parallel()
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			s, eng, tl := setup(t, st.make)
			ctx, _ := eng.BeginMove(context.Background(), "master-chat", streamrules.EnvMaster)
			before, _ := s.ListRules(context.Background())
			cases := []struct {
				tool, input, field string
			}{
				{ruletools.CreateName, `{"NAME":"r1","SCOPE":"text","TEXT":"t"}`, "NAME"},
				{ruletools.CreateName, `{"name":"r1","Scope":"text","text":"t"}`, "Scope"},
				{ruletools.CreateName, `{"name":"r1","scope":"text","text":"t","text":"u"}`, "text"},
				{ruletools.CreateName, `{"name":"r1","name":"r2","scope":"text","text":"t"}`, "name"},
				{ruletools.CreateName, "{\"name\":\"r1\",\"scope\":\"text\",\"text\":\"bad \xff byte\"}", "text"},
				{ruletools.CreateName, `{"name":"r1","scope":"text","text":"lone \ud800 surrogate"}`, "text"},
				{ruletools.CreateName, "{\"name\":\"r1\",\"scope\":\"text\",\"text\":\"t\",\"wh\xffen\":[]}", "wh\uFFFDen"},
				{ruletools.CreateName, `{"name":"r1","scope":"text","when":["telegram","\udfff"],"text":"t"}`, "when"},
				{ruletools.CreateName, `{"name":"r1","scope":"text","text":"t","id":7}`, "id"},
				{ruletools.CreateName, `{"name":"r1","scope":"text","text":"t"} {"name":"r2"}`, ""},
				{ruletools.CreateName, `["name","r1"]`, ""},
				{ruletools.EditName, `{"name":"telegram_reply_tail","Text":"t"}`, "Text"},
				{ruletools.EditName, `{"name":"telegram_reply_tail","text":"a","text":"b"}`, "text"},
				{ruletools.EditName, `{"Name":"telegram_reply_tail","text":"a"}`, "Name"},
				{ruletools.EditName, `{"name":"telegram_reply_tail","NEW_NAME":"x"}`, "NEW_NAME"},
				{ruletools.EditName, "{\"name\":\"telegram_reply_tail\",\"condition\":\"\xc3\"}", "condition"},
				{ruletools.EditName, `{"name":"telegram_reply_tail","negate":"yes"}`, "negate"},
				{ruletools.DeleteName, `{"NAME":"telegram_reply_tail"}`, "NAME"},
				{ruletools.DeleteName, `{"name":"telegram_reply_tail","name":"x"}`, "name"},
				{ruletools.ListName, `{"LIMIT":5}`, "LIMIT"},
				{ruletools.ListName, `{"limit":5,"limit":6}`, "limit"},
				{ruletools.ListName, `{"limit":1000}`, "limit"},
				{ruletools.ListName, `{"scope":"thought"}`, "scope"},
			}
			for _, c := range cases {
				res := call(t, ctx, tl[c.tool], c.input)
				if res.OK || res.Field != c.field || res.Error == "" {
					t.Errorf("%s %q: %+v, want an error on %q", c.tool, c.input, res, c.field)
				}
			}
			after, _ := s.ListRules(context.Background())
			if !reflect.DeepEqual(after, before) {
				t.Errorf("rules written:\nbefore %+v\nafter  %+v", before, after)
			}
		})
	}
}

// TestNoEcho: however large the input, the output quotes at most an excerpt of it.
func TestNoEcho(t *testing.T) {
	t.Parallel()
	ctx, tl := bigSetup(t, 10, true)
	// Under the input cap (64 KB) the input is decoded and the error quotes an excerpt;
	// over it, the tool refuses before decoding.
	huge := strings.Repeat("é(", 20<<10) // 60 KB
	cases := []struct{ tool, input string }{
		{ruletools.DeleteName, strings.Repeat("not json ", 256<<10)}, // 2 MB
		{ruletools.CreateName, `{"name":"r","scope":"text","text":"` + strings.Repeat("x", 3<<20) + `"}`},
		{ruletools.DeleteName, huge},
		{ruletools.DeleteName, `{"name":"` + huge + `"}`},
		{ruletools.DeleteName, `{"` + huge + `":1}`},
		{ruletools.CreateName, huge},
		{ruletools.CreateName, `{"name":"` + huge + `","scope":"text","text":"t"}`},
		{ruletools.CreateName, `{"name":"r","scope":"text","condition":"` + huge + `","text":"t"}`},
		{ruletools.CreateName, `{"name":"r","scope":"text","condition":"` + strings.Repeat("(", 4000) + `","text":"t"}`},
		{ruletools.CreateName, `{"name":"r","scope":"` + huge + `","text":"t"}`},
		{ruletools.CreateName, `{"name":"r","scope":"text","when":["` + huge + `"],"text":"t"}`},
		{ruletools.CreateName, `{"name":"r","scope":"text","repeat":"` + huge + `","text":"t"}`},
		{ruletools.CreateName, `{"name":"r","scope":"text","text":"` + huge + `"}`},
		{ruletools.EditName, `{"name":"` + huge + `","text":"t"}`},
		{ruletools.EditName, `{"name":"rule_00001","new_name":"` + huge + `"}`},
		{ruletools.ListName, `{"cursor":"` + huge + `"}`},
		{ruletools.ListName, `{"scope":"` + huge + `"}`},
		{ruletools.ListName, huge},
	}
	for _, c := range cases {
		out, err := tl[c.tool].Call(ctx, c.input)
		if err != nil {
			t.Fatal(err)
		}
		if len(out) > 2<<10 && c.tool != ruletools.ListName || len(out) > 8<<10 {
			t.Errorf("%s with a %d-byte input: %d bytes out: %.300s…", c.tool, len(c.input), len(out), out)
		}
	}
}
