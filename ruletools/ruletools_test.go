package ruletools_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tmc/langchaingo/tools"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/rulesdb"
	"github.com/streamrules/streamrules/ruletools"
	"github.com/streamrules/streamrules/seeds"
)

var quiet = slog.New(slog.DiscardHandler)

type editorStore interface {
	streamrules.Store
	streamrules.RuleEditor
}

// stores: the in-memory reference and the SQLite rulesdb store, both seeded.
var stores = []struct {
	name string
	make func(t *testing.T) editorStore
}{
	{"memory", func(t *testing.T) editorStore {
		set, _ := seeds.Default()
		s, err := streamrules.NewMemoryStore(set.Rules)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}},
	{"sqlite", func(t *testing.T) editorStore {
		set, _ := seeds.Default()
		s, err := rulesdb.Open(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "r.db"), &rulesdb.Config{Seed: &set, Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}},
}

func setup(t *testing.T, mk func(t *testing.T) editorStore) (editorStore, *streamrules.Engine, map[string]tools.Tool) {
	t.Helper()
	s := mk(t)
	eng, err := streamrules.New(context.Background(), s, &streamrules.Config{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(eng.Close)
	byName := map[string]tools.Tool{}
	for _, tool := range ruletools.New(s, eng) {
		byName[tool.Name()] = tool
	}
	return s, eng, byName
}

func call(t *testing.T, ctx context.Context, tool tools.Tool, input string) ruletools.Result {
	t.Helper()
	out, err := tool.Call(ctx, input)
	if err != nil {
		t.Fatalf("%s(%s): Go error %v (must be output)", tool.Name(), input, err)
	}
	var res ruletools.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%s: output is not JSON: %q", tool.Name(), out)
	}
	return res
}

func TestNames(t *testing.T) {
	t.Parallel()
	_, _, byName := setup(t, stores[0].make)
	for _, n := range []string{"stream_rule_list", "stream_rule_create", "stream_rule_edit", "stream_rule_delete"} {
		tool, ok := byName[n]
		if !ok {
			t.Fatalf("no tool %s", n)
		}
		if len(tool.Description()) < 60 {
			t.Errorf("%s: description too thin: %q", n, tool.Description())
		}
	}
	if d := byName["stream_rule_create"].Description(); !strings.Contains(d, "telegram") || !strings.Contains(d, "after:N") {
		t.Errorf("create description lacks the environments or repeat forms: %s", d)
	}
}

func TestRefuseWithoutMaster(t *testing.T) {
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			s, eng, byName := setup(t, st.make)
			before, err := s.ListRules(context.Background())
			if err != nil || len(before) != 10 {
				t.Fatalf("ListRules: %d rules, %v", len(before), err)
			}
			loadedBefore := eng.Rules()
			inputs := map[string]string{
				"stream_rule_list":   `{}`,
				"stream_rule_create": `{"name":"sneaky","scope":"text","condition":"x","text":"y"}`,
				"stream_rule_edit":   `{"name":"telegram_reply_tail","enabled":false}`,
				"stream_rule_delete": `{"name":"telegram_reply_tail"}`,
			}
			noMove := context.Background()
			clientMove, _ := eng.BeginMove(context.Background(), "client-chat", streamrules.EnvTelegram)
			for name, in := range inputs {
				for _, ctx := range []context.Context{noMove, clientMove} {
					res := call(t, ctx, byName[name], in)
					if res.OK || !strings.Contains(res.Error, "master") || len(res.Rules) != 0 {
						t.Errorf("%s without master: %+v", name, res)
					}
				}
			}
			// Nothing written (the edit would not change the count, so compare every field),
			// and the engine runs what it ran.
			after, _ := s.ListRules(context.Background())
			if !reflect.DeepEqual(before, after) {
				t.Errorf("rules changed:\nbefore %+v\nafter  %+v", before, after)
			}
			if !reflect.DeepEqual(loadedBefore, eng.Rules()) {
				t.Errorf("engine rules changed: %v -> %v", loadedBefore, eng.Rules())
			}
		})
	}
}

// countingStore counts LoadRules calls. Embedding the interface hides Subscribe: wrap a
// notifying store in notifyingStore to keep it.
type countingStore struct {
	editorStore
	loads atomic.Int64
}

func (c *countingStore) LoadRules(ctx context.Context) ([]streamrules.Rule, error) {
	c.loads.Add(1)
	return c.editorStore.LoadRules(ctx)
}

type notifyingStore struct {
	*countingStore
	n streamrules.ChangeNotifier
}

func (s notifyingStore) Subscribe(fn func()) func() { return s.n.Subscribe(fn) }

// TestEditInForceOneReload: after every tool edit the engine runs the change, reloaded
// exactly once: by the store's notification when it notifies (the memory store and
// rulesdb), by the tool when it does not.
func TestEditInForceOneReload(t *testing.T) {
	cases := []struct {
		name     string
		make     func(t *testing.T) editorStore
		notifies bool
	}{
		{"memory", stores[0].make, true},
		{"sqlite", stores[1].make, true},
		{"silent", stores[0].make, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			inner := c.make(t)
			cs := &countingStore{editorStore: inner}
			var store editorStore = cs
			if c.notifies {
				store = notifyingStore{cs, inner.(streamrules.ChangeNotifier)}
			}
			_, eng, tl := setup(t, func(*testing.T) editorStore { return store })
			ctx, _ := eng.BeginMove(context.Background(), "m", streamrules.EnvMaster)
			runs := func() string {
				var out []string
				for _, r := range eng.Rules() {
					if strings.HasPrefix(r.Name, "r_") {
						out = append(out, r.Name)
					}
				}
				return strings.Join(out, ",") + "|" + textOf(eng.Rules(), "r_one")
			}
			steps := []struct{ tool, input, want string }{
				{"stream_rule_create", `{"name":"r_one","scope":"text","condition":"x","text":"first"}`, "r_one|first"},
				{"stream_rule_edit", `{"name":"r_one","text":"second"}`, "r_one|second"},
				{"stream_rule_edit", `{"name":"r_one","new_name":"r_two"}`, "r_two|"},
				{"stream_rule_edit", `{"name":"r_two","enabled":false}`, "|"},
				{"stream_rule_edit", `{"name":"r_two","enabled":true}`, "r_two|"},
				{"stream_rule_delete", `r_two`, "|"},
			}
			for _, st := range steps {
				before := cs.loads.Load()
				if res := call(t, ctx, tl[st.tool], st.input); !res.OK {
					t.Fatalf("%s %s: %+v", st.tool, st.input, res)
				}
				if got := runs(); got != st.want {
					t.Errorf("%s %s: engine runs %q, want %q", st.tool, st.input, got, st.want)
				}
				if n := cs.loads.Load() - before; n != 1 {
					t.Errorf("%s %s: %d reloads, want 1", st.tool, st.input, n)
				}
			}
		})
	}
}

func textOf(rules []streamrules.Rule, name string) string {
	for _, r := range rules {
		if r.Name == name {
			return r.Text
		}
	}
	return ""
}

func TestCRUDAsMaster(t *testing.T) {
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			s, eng, tl := setup(t, st.make)
			ctx, _ := eng.BeginMove(context.Background(), "master-chat", streamrules.EnvMaster)

			res := call(t, ctx, tl["stream_rule_list"], "")
			if !res.OK || len(res.Rules) != 10 || len(res.Environments) != 4 {
				t.Fatalf("list: %+v", res)
			}
			for _, r := range res.Rules {
				if !r.Loaded || r.Problem != "" {
					t.Errorf("listed %+v", r)
				}
			}

			// Create: enabled by default, mode derived, the engine has it at once.
			res = call(t, ctx, tl["stream_rule_create"], "```json\n"+`{"name":"no_lorem","scope":"text","condition":"(?i)lorem ipsum","when":["telegram"],"text":"Never send placeholder text."}`+"\n```")
			if !res.OK || res.Rule == nil || res.Rule.Disabled || res.Rule.Mode != "interrupt" || !res.Rule.Loaded {
				t.Fatalf("create: %+v", res)
			}
			mctx, move := eng.BeginMove(context.Background(), "tg", streamrules.EnvTelegram)
			if v := move.CheckAnswer(mctx, "Lorem ipsum dolor\n↩ #1"); strings.Join(v.Rules, ",") != "no_lorem" {
				t.Errorf("new rule does not fire: %+v", v)
			}

			// Edit: a partial patch; other fields keep their values.
			res = call(t, ctx, tl["stream_rule_edit"], `{"name":"no_lorem","text":"No lorem ipsum, ever.","repeat":"once"}`)
			if !res.OK || res.Rule.Text != "No lorem ipsum, ever." || res.Rule.Condition != "(?i)lorem ipsum" || res.Rule.Repeat != "once" || strings.Join(res.Rule.When, ",") != "telegram" {
				t.Fatalf("edit: %+v", res)
			}
			// Changing the scope re-derives the mode.
			res = call(t, ctx, tl["stream_rule_edit"], `{"name":"no_lorem","scope":"tool:write_file","new_name":"no_lorem_files"}`)
			if !res.OK || res.Rule.Name != "no_lorem_files" || res.Rule.Mode != "remind" || !strings.Contains(res.Message, "renamed") {
				t.Fatalf("edit scope: %+v", res)
			}
			// Disable: the engine drops it.
			res = call(t, ctx, tl["stream_rule_edit"], `{"name":"no_lorem_files","enabled":false}`)
			if !res.OK || !res.Rule.Disabled || res.Rule.Loaded {
				t.Fatalf("disable: %+v", res)
			}
			for _, r := range eng.Rules() {
				if r.Name == "no_lorem_files" {
					t.Error("the engine still runs a disabled rule")
				}
			}

			// Delete, by object and by bare name.
			if res = call(t, ctx, tl["stream_rule_delete"], `{"name":"no_lorem_files"}`); !res.OK {
				t.Fatalf("delete: %+v", res)
			}
			if res = call(t, ctx, tl["stream_rule_delete"], `telegram_react_not_emoji`); !res.OK {
				t.Fatalf("delete bare: %+v", res)
			}
			if res = call(t, ctx, tl["stream_rule_delete"], `{"name":"no_lorem_files"}`); res.OK || res.Field != "name" || !strings.Contains(res.Error, "no rule") {
				t.Errorf("delete again: %+v", res)
			}
			rules, _ := s.ListRules(context.Background())
			if len(rules) != 9 || len(eng.Rules()) != 9 {
				t.Errorf("%d rules stored, %d loaded", len(rules), len(eng.Rules()))
			}
		})
	}
}

func TestBadInputAsOutput(t *testing.T) {
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			s, eng, tl := setup(t, st.make)
			ctx, _ := eng.BeginMove(context.Background(), "master-chat", streamrules.EnvMaster)
			before, _ := s.ListRules(context.Background())
			cases := []struct {
				tool, input, field string
			}{
				{"stream_rule_create", `{"name":"r1","scope":"text","condition":"(","text":"t"}`, "condition"},
				{"stream_rule_create", `{"name":"r1","scope":"thought","text":"t"}`, "scope"},
				{"stream_rule_create", `{"name":"r1","scope":"text","mode":"remind","text":"t"}`, "mode"},
				{"stream_rule_create", `{"name":"r1","scope":"text","when":["whatsapp"],"text":"t"}`, "when"},
				{"stream_rule_create", `{"name":"r1","scope":"text","text":"` + strings.Repeat("x", 401) + `"}`, "text"},
				{"stream_rule_create", `{"name":"r1","scope":"text","text":"t","repeat":"sometimes"}`, "repeat"},
				{"stream_rule_create", `{"name":"R-1","scope":"text","text":"t"}`, "name"},
				{"stream_rule_create", `{"name":"telegram_reply_tail","scope":"text","text":"t"}`, "name"},
				{"stream_rule_create", `{"name":"r1","scope":"text","text":"t","colour":"red"}`, "colour"},
				{"stream_rule_create", `{"name":"r1","scope":"text","text":"t","negate":"yes"}`, "negate"},
				{"stream_rule_create", `not json`, ""},
				{"stream_rule_edit", `{"name":"telegram_reply_tail","condition":"(?<=x)"}`, "condition"},
				{"stream_rule_edit", `{"name":"telegram_reply_tail","when":["nowhere"]}`, "when"},
				{"stream_rule_edit", `{"name":"telegram_reply_tail","new_name":"telegram_markdown_image"}`, "name"},
				{"stream_rule_edit", `{"name":"no_such_rule","text":"x"}`, "name"},
				{"stream_rule_edit", `{"text":"x"}`, "name"},
				{"stream_rule_delete", `{"nom":"x"}`, "nom"},
				{"stream_rule_delete", `Not A Rule`, "name"}, // not JSON: taken as a bare name, which the store does not have
			}
			for _, c := range cases {
				res := call(t, ctx, tl[c.tool], c.input)
				if res.OK || res.Field != c.field || res.Error == "" || (c.field != "" && !strings.Contains(res.Error, c.field)) {
					t.Errorf("%s %s: %+v, want an error on %q", c.tool, c.input, res, c.field)
				}
			}
			after, _ := s.ListRules(context.Background())
			if len(after) != len(before) {
				t.Fatalf("rules written: %d -> %d", len(before), len(after))
			}
			for i := range after {
				if !reflect.DeepEqual(after[i], before[i]) {
					t.Errorf("rule %s changed:\nbefore %+v\nafter  %+v", after[i].Name, before[i], after[i])
				}
			}
		})
	}
}

// TestListShowsBrokenRow: a row broken by hand is listed with its problem, so the master
// can repair it.
func TestListShowsBrokenRow(t *testing.T) {
	t.Parallel()
	set, _ := seeds.Default()
	s, err := streamrules.NewMemoryStore(set.Rules)
	if err != nil {
		t.Fatal(err)
	}
	bad, _ := s.GetRule(context.Background(), "telegram_markdown_image")
	bad.Condition = "(("
	s.PutRaw(bad)
	eng, err := streamrules.New(context.Background(), s, &streamrules.Config{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	tl := ruletools.New(s, eng)
	ctx, _ := eng.BeginMove(context.Background(), "m", streamrules.EnvMaster)
	res := call(t, ctx, tl[0], "{}")
	found := false
	for _, r := range res.Rules {
		if r.Name == "telegram_markdown_image" {
			found = true
			if r.Loaded || !strings.Contains(r.Problem, "condition") || r.Fired == nil {
				t.Errorf("broken row listed as %+v", r)
			}
		}
	}
	if !found {
		t.Error("broken row not listed")
	}
	// Repairing it through the edit tool loads it again.
	res = call(t, ctx, tl[2], `{"name":"telegram_markdown_image","condition":"!\\[[^\\]]*\\]\\([^)\\s]+\\)"}`)
	if !res.OK || !res.Rule.Loaded {
		t.Errorf("repair: %+v", res)
	}
}

// TestShadowThroughTheTools: a rule created in shadow is listed so and only watched; an
// edit puts it in force.
func TestShadowThroughTheTools(t *testing.T) {
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			_, eng, tl := setup(t, st.make)
			ctx, _ := eng.BeginMove(context.Background(), "master-chat", streamrules.EnvMaster)
			res := call(t, ctx, tl["stream_rule_create"], `{"name":"no_lorem","scope":"text","condition":"lorem","text":"No placeholder text.","shadow":true}`)
			if !res.OK || !res.Rule.Shadow || !res.Rule.Loaded {
				t.Fatalf("create: %+v", res)
			}
			mctx, move := eng.BeginMove(context.Background(), "c1")
			if v := move.CheckAnswer(mctx, "lorem"); v.Discard || len(v.Rules) != 0 {
				t.Fatalf("a shadowed rule acted: %+v", v)
			}
			listed := call(t, ctx, tl["stream_rule_list"], "")
			for _, r := range listed.Rules {
				if r.Name == "no_lorem" && !r.Shadow {
					t.Fatalf("listed without shadow: %+v", r)
				}
			}
			res = call(t, ctx, tl["stream_rule_edit"], `{"name":"no_lorem","shadow":false}`)
			if !res.OK || res.Rule.Shadow || res.Rule.Condition != "lorem" {
				t.Fatalf("edit: %+v", res)
			}
			mctx, move = eng.BeginMove(context.Background(), "c2")
			if v := move.CheckAnswer(mctx, "lorem"); !v.Discard {
				t.Fatalf("the enforced rule did not act: %+v", v)
			}
		})
	}
}
