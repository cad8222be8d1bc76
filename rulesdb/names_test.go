package rulesdb_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/rulesdb"
	"github.com/streamrules/streamrules/ruletools"
	"github.com/streamrules/streamrules/seeds"
)

// TestHandTypedNamesDisplaceNothing is the repro on both stores: rows typed in by
// hand with a padded name beside the real rules. The engine runs the real rules, the
// tools edit and delete exact names only, and stream_rule_list says why the hand rows
// are not loaded.
func TestHandTypedNamesDisplaceNothing(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn, nil)
		for _, r := range []streamrules.Rule{
			{Name: "good_tool", Scope: "tool:shell", Condition: "rm", Text: "Careful with rm."},
			{Name: "good_text", Scope: "text", Condition: "bad", Text: "Say it well."},
		} {
			if _, err := s.CreateRule(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		// Inserted after the real rows: a lower id would not matter either.
		mustExec(t, s, `INSERT INTO stream_rules (name, scope, condition, text) VALUES (?, ?, ?, ?)`, " good_tool", "tool:shell", "ls", "shadow")
		mustExec(t, s, `INSERT INTO stream_rules (name, scope, condition, text) VALUES (?, ?, ?, ?)`, "good_text ", "text", "x", "shadow")
		log, buf := capture()
		eng := newEngine(t, s, log)

		mctx, m := eng.BeginMove(ctx, "c", seeds.EnvMaster)
		if got := m.ToolReminders(mctx, "shell", `{"cmd":"rm -rf /"}`); len(got) != 1 || got[0].Text != "Careful with rm." {
			t.Fatalf("rm -rf / got %+v, want the real good_tool's reminder", got)
		}
		if got := m.ToolReminders(mctx, "shell", `{"cmd":"ls"}`); len(got) != 0 {
			t.Fatalf("ls got %+v: the hand row runs", got)
		}
		for _, name := range []string{`" good_tool"`, `"good_text "`} {
			if lines := buf.Lines("level=WARN", "skipped", "rule="+name, "id="); len(lines) != 1 {
				t.Errorf("want one warning naming %s and its id, log:\n%s", name, buf)
			}
		}

		tools := map[string]interface {
			Call(context.Context, string) (string, error)
		}{}
		for _, tool := range ruletools.New(s, eng) {
			tools[tool.Name()] = tool
		}
		call := func(name, input string) ruletools.Result {
			t.Helper()
			out, err := tools[name].Call(mctx, input)
			if err != nil {
				t.Fatal(err)
			}
			var res ruletools.Result
			if err := json.Unmarshal([]byte(out), &res); err != nil {
				t.Fatalf("%s: %v", out, err)
			}
			return res
		}
		// Edit addresses the exact name: the hand row is edited in place, keeping its name as
		// stored (not trimmed onto the real one's, which is taken), and says why it does not
		// load; it cannot take the real one's name by a rename either.
		if res := call(ruletools.EditName, `{"name":" good_tool","text":"edited"}`); !res.OK || res.Rule == nil || res.Rule.Name != " good_tool" || res.Rule.Loaded || !strings.Contains(res.Rule.Problem, "not a valid name as stored") {
			t.Fatalf("edit of \" good_tool\": %+v, want it edited in place, not loaded, with its problem", res)
		}
		if r := ruleNamed(t, s, " good_tool"); r.Text != "edited" || r.Condition != "ls" {
			t.Fatalf("the hand row after its edit: %+v", r)
		}
		if res := call(ruletools.EditName, `{"name":" good_tool","new_name":"good_tool"}`); res.OK || res.Field != "name" {
			t.Fatalf("rename of \" good_tool\" onto good_tool: %+v, want a name error", res)
		}
		if r := ruleNamed(t, s, "good_tool"); r.Text != "Careful with rm." {
			t.Fatalf("the real good_tool was edited: %+v", r)
		}
		list := call(ruletools.ListName, `{}`)
		problems := 0
		for _, v := range list.Rules {
			switch v.Name {
			case " good_tool", "good_text ":
				if v.Loaded || !strings.Contains(v.Problem, "not a valid name as stored") {
					t.Errorf("row %q: loaded %v, problem %q; want why it is not loaded", v.Name, v.Loaded, v.Problem)
				}
				problems++
			case "good_tool", "good_text":
				if !v.Loaded || v.Problem != "" {
					t.Errorf("row %q: loaded %v, problem %q", v.Name, v.Loaded, v.Problem)
				}
			}
		}
		if problems != 2 {
			t.Fatalf("list %+v, want both hand rows with their problem", list.Rules)
		}
		// Delete addresses the exact name: the hand row goes, the real one stays.
		if res := call(ruletools.DeleteName, `{"name":"good_text "}`); !res.OK {
			t.Fatalf("delete of the hand row: %+v", res)
		}
		ruleNamed(t, s, "good_text")
		if _, err := s.GetRule(ctx, "good_text "); err == nil {
			t.Fatal("the hand row is still there")
		}
	})
}

// TestRuleLiteralLoads: a Rule literal that says nothing about being enabled is stored
// enabled and runs; a typed nil *Store is refused by streamrules.New, not a panic later.
func TestRuleLiteralLoads(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn, nil)
		if _, err := s.CreateRule(ctx, streamrules.Rule{Name: "literal", Scope: "tool:shell", Condition: "rm", Text: "Careful."}); err != nil {
			t.Fatal(err)
		}
		log, buf := capture()
		eng := newEngine(t, s, log)
		mctx, m := eng.BeginMove(ctx, "c")
		if got := m.ToolReminders(mctx, "shell", `{"cmd":"rm x"}`); len(got) != 1 || got[0].Rule != "literal" {
			t.Fatalf("reminders %+v, want the literal rule", got)
		}
		if err := m.End(mctx, nil); err != nil {
			t.Fatal(err)
		}
		if lines := buf.Lines("level=INFO", "stream rules loaded", "loaded=1", "disabled=0", "skipped=0"); len(lines) != 1 {
			t.Fatalf("want one load summary, log:\n%s", buf)
		}
	})
}

func TestNewRefusesATypedNilStore(t *testing.T) {
	t.Parallel()
	var s *rulesdb.Store // what `s, err := rulesdb.Open(…)` leaves when err is ignored
	eng, err := streamrules.New(context.Background(), s, nil)
	if err == nil {
		eng.Close()
		t.Fatal("New accepted a nil *rulesdb.Store")
	}
}
