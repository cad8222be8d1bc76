package seeds_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/seeds"
)

func TestDefault(t *testing.T) {
	t.Parallel()
	set, err := seeds.Default()
	if err != nil {
		t.Fatal(err)
	}
	if set.Version < 1 {
		t.Errorf("version %d", set.Version)
	}
	want := map[string]struct {
		scope  string
		mode   streamrules.Mode
		when   string
		repeat string
		negate bool
	}{
		"write_diff_over_write_file":    {"tool:write_file", streamrules.ModeRemind, "", "after:5", false},
		"local_shell_for_his_machine":   {"tool:shell", streamrules.ModeRemind, "client_ops", "once", false},
		"telegram_markdown_image":       {"text", streamrules.ModeInterrupt, "telegram", "", false},
		"telegram_reply_tail":           {"text", streamrules.ModeInterrupt, "telegram", "", true},
		"look_before_refusing":          {"text", streamrules.ModeInterrupt, "picture", "after:3", false},
		"look_before_refusing_thinking": {"thinking", streamrules.ModeInterrupt, "picture", "after:3", false},
		"telegram_react_not_emoji":      {"text", streamrules.ModeInterrupt, "telegram", "", false},
		"destructive_shell":             {"tool:shell", streamrules.ModeInterrupt, "client_ops", "", false},
		"unbacked_tool_claim":           {"text", streamrules.ModeInterrupt, "", "", false},
		"verify_before_done":            {"text", streamrules.ModeInterrupt, "", "", false},
	}
	if len(set.Rules) != len(want) {
		t.Fatalf("%d rules, want %d: %v", len(set.Rules), len(want), set.Names())
	}
	for _, r := range set.Rules {
		w, ok := want[r.Name]
		if !ok {
			t.Errorf("unexpected rule %q", r.Name)
			continue
		}
		if r.Scope != w.scope || r.Mode != w.mode || strings.Join(r.When, ",") != w.when || r.Repeat != w.repeat || r.Negate != w.negate || r.Disabled {
			t.Errorf("%s = %+v, want %+v (enabled)", r.Name, r, w)
		}
		if n := utf8.RuneCountInString(r.Text); n > streamrules.MaxTextChars || n < 40 {
			t.Errorf("%s: text has %d characters", r.Name, n)
		}
	}
	// DefaultJSON is the file Default parses, and a copy: writing to it changes nothing.
	data := seeds.DefaultJSON()
	fromJSON, err := seeds.Parse(data)
	if err != nil || !reflect.DeepEqual(fromJSON, set) {
		t.Errorf("Parse(DefaultJSON()) = %+v, %v; want Default() %+v", fromJSON, err, set)
	}
	clear(data)
	if again, err := seeds.Default(); err != nil || !reflect.DeepEqual(again, set) {
		t.Errorf("Default after clearing DefaultJSON's bytes: %+v, %v", again, err)
	}
}

// fires reports whether the seed rule fires on target, as the engine decides it:
// the regex matches, xor negate.
func fires(t *testing.T, r streamrules.Rule, target string) bool {
	t.Helper()
	re := regexp.MustCompile(r.Condition)
	return re.MatchString(target) != r.Negate
}

func TestConditions(t *testing.T) {
	t.Parallel()
	set, err := seeds.Default()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		rule   string
		target string // compact JSON arguments for a tool rule, the answer for a text rule
		fire   bool
	}{
		// write_diff_over_write_file: any write_file with a path.
		{"write_diff_over_write_file", `{"path":"main.go","content":"package main\n"}`, true},
		{"write_diff_over_write_file", `{"content":"x","path":"/etc/hosts"}`, true},
		{"write_diff_over_write_file", `{"path":"","content":"x"}`, false},
		{"write_diff_over_write_file", `{"content":"x"}`, false},

		// local_shell_for_his_machine: empty condition, every shell call (when client_ops).
		{"local_shell_for_his_machine", `{"cmd":"ls -la"}`, true},
		{"local_shell_for_his_machine", `ls`, true},

		// telegram_markdown_image.
		{"telegram_markdown_image", "Here it is: ![chart](https://x.test/c.png)\n↩ #7", true},
		{"telegram_markdown_image", "![](/tmp/a.png)", true},
		{"telegram_markdown_image", "Here is the chart: https://x.test/c.png\n↩ #7", false},
		{"telegram_markdown_image", "See [the docs](https://x.test/docs)\n↩ #7", false},
		{"telegram_markdown_image", "Wow! [really] (yes)", false},

		// telegram_reply_tail (negate: fires when the tail is missing).
		{"telegram_reply_tail", "Done, the file is saved.", true},
		{"telegram_reply_tail", "Done.\n↩ #", true},
		{"telegram_reply_tail", "↩ #12 is the message I answer. Done.", true},
		{"telegram_reply_tail", "Done, the file is saved.\n↩ #12", false},
		{"telegram_reply_tail", "Done.\n↩ #12\n", false},
		{"telegram_reply_tail", "Done.\n↩ #4711  ", false},

		// look_before_refusing.
		{"look_before_refusing", "I can't see the image you sent.", true},
		{"look_before_refusing", "Sorry, I cannot view images.", true},
		{"look_before_refusing", "I’m unable to open the attachment.", true},
		{"look_before_refusing", "I can’t look at the picture, but describe it to me.", true},
		{"look_before_refusing", "Unfortunately I am not able to directly view or access your screenshots", true},
		{"look_before_refusing", "As a text model I CAN NOT SEE THE PHOTO.", true},
		{"look_before_refusing", "The image shows a red bicycle leaning on a wall.", false},
		{"look_before_refusing", "I can see the image: a cat on a sofa.", false},
		{"look_before_refusing", "I can't see any problem in the screenshot: the build is green.", false},
		{"look_before_refusing", "I can't open the file you mentioned. The picture shows a receipt.", false},

		// telegram_react_not_emoji.
		{"telegram_react_not_emoji", "👍", true},
		{"telegram_react_not_emoji", "  ❤️ ", true},
		{"telegram_react_not_emoji", "👍🏽", true},
		{"telegram_react_not_emoji", "👨‍👩‍👧", true},
		{"telegram_react_not_emoji", "🔥🔥🔥", true},
		{"telegram_react_not_emoji", "👍\n↩ #12", true},
		{"telegram_react_not_emoji", "🙏 ↩ #12", true},
		{"telegram_react_not_emoji", "🇩🇪", true},
		{"telegram_react_not_emoji", "1️⃣", true},
		{"telegram_react_not_emoji", "↩ #12", false},
		{"telegram_react_not_emoji", "Done 👍\n↩ #12", false},
		{"telegram_react_not_emoji", "👍 sure, on it\n↩ #12", false},
		{"telegram_react_not_emoji", "Thanks!", false},
		{"telegram_react_not_emoji", "42", false},
		{"telegram_react_not_emoji", "", false},
	}
	for _, c := range cases {
		r, ok := set.Rule(c.rule)
		if !ok {
			t.Fatalf("no rule %q", c.rule)
		}
		if got := fires(t, r, c.target); got != c.fire {
			t.Errorf("%s on %q: fires=%v, want %v", c.rule, c.target, got, c.fire)
		}
	}
}

// TestSeedsInEngine runs the default set through an engine: the environments gate
// the rules, and the soft and hard halves fire where they should.
func TestSeedsInEngine(t *testing.T) {
	t.Parallel()
	set, err := seeds.Default()
	if err != nil {
		t.Fatal(err)
	}
	store, err := streamrules.NewMemoryStore(set.Rules)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	eng, err := streamrules.New(ctx, store, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	if got := len(eng.Rules()); got != 10 {
		t.Fatalf("engine loaded %d rules", got)
	}

	// No environment: only write_diff_over_write_file can fire.
	mctx, move := eng.BeginMove(ctx, "quiet")
	if rem := move.ToolReminders(mctx, "shell", `{"cmd":"ls"}`); len(rem) != 0 {
		t.Errorf("shell without client_ops: %v", rem)
	}
	if rem := move.ToolReminders(mctx, "write_file", `{"path": "a.go", "content": "x"}`); len(rem) != 1 || rem[0].Rule != "write_diff_over_write_file" {
		t.Errorf("write_file: %v", rem)
	}
	if v := move.CheckAnswer(mctx, "👍"); v.Discard {
		t.Errorf("quiet chat answer discarded: %+v", v)
	}

	// Telegram with a client.
	mctx, move = eng.BeginMove(ctx, "tg", streamrules.EnvTelegram, streamrules.EnvClientOps)
	if rem := move.ToolReminders(mctx, "shell", `{"cmd":"ls"}`); len(rem) != 1 || rem[0].Rule != "local_shell_for_his_machine" {
		t.Errorf("shell with client_ops: %v", rem)
	}
	v := move.CheckAnswer(mctx, "👍")
	if !v.Discard || strings.Join(v.Rules, ",") != "telegram_react_not_emoji,telegram_reply_tail" {
		t.Errorf("bare emoji: %+v", v)
	}
	if v := move.CheckAnswer(mctx, "Here: ![a](https://x.test/a.png)\n↩ #3"); len(v.Rules) != 1 || v.Rules[0] != "telegram_markdown_image" {
		t.Errorf("markdown image: %+v", v)
	}

	// The gate on shell calls: a client is on, so a forced recursive rm never runs.
	mctx, move = eng.BeginMove(ctx, "ops", streamrules.EnvClientOps)
	rm := []streamrules.DeclaredCall{{Tool: "shell", Input: `{"cmd":"sudo rm -r -f /srv"}`}}
	if v := move.CheckResponse(mctx, "", rm); !v.Discard || strings.Join(v.Rules, ",") != "destructive_shell" {
		t.Errorf("rm -r -f with a client on: %+v", v)
	}
	if rem := move.GateCall(mctx, "shell", rm[0].Input); len(rem) != 1 || rem[0].Rule != "destructive_shell" {
		t.Errorf("after the ceiling the call is not refused: %v", rem)
	}
	mctx, move = eng.BeginMove(ctx, "alone")
	if v := move.CheckResponse(mctx, "", rm); v.Discard || move.GateCall(mctx, "shell", rm[0].Input) != nil {
		t.Errorf("destructive_shell fired without client_ops: %+v", v)
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	const good = `{"name":"a_rule","scope":"text","condition":"x","text":"say y"}`
	cases := []struct {
		name  string
		data  string
		field string // the ValidationError field, "" when the error is not a validation error
		in    string // the error text must contain this
	}{
		{"not json", `{`, "", "rulefile:"},
		{"unknown top field", `{"version":1,"rules":[],"extra":1}`, "", "extra"},
		{"unknown rule field", `{"version":1,"rules":[{"name":"a_rule","scope":"text","text":"t","colour":"red"}]}`, "", `rule #1 "a_rule"`},
		{"id not allowed", `{"version":1,"rules":[{"id":3,"name":"a_rule","scope":"text","text":"t"}]}`, "", `"id"`},
		{"trailing data", `{"version":1,"rules":[]} {}`, "", "after"},
		{"no version", `{"rules":[` + good + `]}`, "", "version"},
		{"zero version", `{"version":0,"rules":[` + good + `]}`, "", "version"},
		{"bad regex", `{"version":1,"rules":[{"name":"b_rule","scope":"text","condition":"(","text":"t"}]}`, "condition", `"b_rule"`},
		{"bad scope", `{"version":1,"rules":[{"name":"b_rule","scope":"thought","text":"t"}]}`, "scope", `"b_rule"`},
		{"mode mismatch", `{"version":1,"rules":[{"name":"b_rule","scope":"text","mode":"remind","text":"t"}]}`, "mode", `"b_rule"`},
		{"unknown when", `{"version":1,"rules":[{"name":"b_rule","scope":"text","when":["whatsapp"],"text":"t"}]}`, "when", "whatsapp"},
		{"long text", `{"version":1,"rules":[{"name":"b_rule","scope":"text","text":"` + strings.Repeat("x", 401) + `"}]}`, "text", `"b_rule"`},
		{"bad repeat", `{"version":1,"rules":[{"name":"b_rule","scope":"text","text":"t","repeat":"twice"}]}`, "repeat", `"b_rule"`},
		{"bad name", `{"version":1,"rules":[{"name":"Bad-Name","scope":"text","text":"t"}]}`, "name", "Bad-Name"},
		{"duplicate", `{"version":1,"rules":[` + good + `,` + good + `]}`, "name", "duplicate"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := seeds.Parse([]byte(c.data))
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), c.in) {
				t.Errorf("error %q does not contain %q", err, c.in)
			}
			var ve *streamrules.ValidationError
			if errors.As(err, &ve) != (c.field != "") || (ve != nil && ve.Field != c.field) {
				t.Errorf("error %v: ValidationError %+v, want field %q", err, ve, c.field)
			}
		})
	}
}

func TestParseCustomEnvironmentAndDisabled(t *testing.T) {
	t.Parallel()
	data := []byte(`{"version":3,"rules":[{"name":"c_rule","scope":"tool:deploy","when":["prod","master"],"text":"Deploys need a ticket.","enabled":false}]}`)
	if _, err := seeds.Parse(data); err == nil {
		t.Fatal("unknown environment prod accepted without registering it")
	}
	set, err := seeds.Parse(data, "prod")
	if err != nil {
		t.Fatal(err)
	}
	r := set.Rules[0]
	if set.Version != 3 || !r.Disabled || r.Mode != streamrules.ModeRemind || strings.Join(r.When, ",") != "master,prod" {
		t.Errorf("got %+v", set)
	}
}

func TestLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "my-seeds.json")
	if err := os.WriteFile(path, []byte(`{"version":2,"rules":[{"name":"x_rule","scope":"text","condition":"(?i)lorem","text":"No placeholder text."}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	set, err := seeds.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if set.Version != 2 || len(set.Rules) != 1 || set.Rules[0].Disabled {
		t.Errorf("got %+v", set)
	}
	if _, err := seeds.Load(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("missing file loaded")
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"version":2,"rules":[{"name":"x_rule","scope":"text","condition":"(","text":"t"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := seeds.Load(bad); err == nil || !strings.Contains(err.Error(), "bad.json") || !strings.Contains(err.Error(), "condition") {
		t.Errorf("bad file: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add(seeds.DefaultJSON())
	f.Add([]byte(`{"version":1,"rules":[{"name":"a","scope":"text","text":"t"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		set, err := seeds.Parse(data)
		if err != nil {
			return
		}
		for _, r := range set.Rules {
			if err := streamrules.Validate(&r, nil); err != nil {
				t.Fatalf("Parse returned an invalid rule %+v: %v", r, err)
			}
		}
	})
}

func TestParseShadowAndEarly(t *testing.T) {
	t.Parallel()
	set, err := seeds.Parse([]byte(`{"version":1,"rules":[{"name":"watched","scope":"text","condition":"x","text":"t","shadow":true,"early":true},{"name":"live","scope":"text","condition":"x","text":"t"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if r := set.Rules[0]; !r.Shadow || !r.Early {
		t.Errorf("watched: %+v, want shadow and early", r)
	}
	if r := set.Rules[1]; r.Shadow || r.Early {
		t.Errorf("live: %+v, want neither (absent means false)", r)
	}
}

// TestSeedFixes: the two seeded fixes repair a sample miss so that the rule passes it,
// and the reply tail takes the move's message_id (without it, no fix: the retry runs).
func TestSeedFixes(t *testing.T) {
	t.Parallel()
	set, err := seeds.Default()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, rule, answer string
		vars               map[string]string
		want               string // "" when no fix applies
	}{
		{"image to link", "telegram_markdown_image", "Here it is: ![chart](https://x.test/c.png)\n↩ #7", nil, "Here it is: https://x.test/c.png\n↩ #7"},
		{"tail appended", "telegram_reply_tail", "Done, the file is saved.", map[string]string{"message_id": "4711"}, "Done, the file is saved.\n\n↩ #4711"},
		{"tail without message_id", "telegram_reply_tail", "Done, the file is saved.", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, ok := set.Rule(tt.rule)
			if !ok || r.Fix == nil {
				t.Fatalf("seed %q: found %v, fix %v", tt.rule, ok, r.Fix)
			}
			j, err := streamrules.NewJudge(r)
			if err != nil {
				t.Fatal(err)
			}
			if st := j.Check(tt.answer, nil).Status; st != streamrules.StatusViolation {
				t.Fatalf("sample %q: %s, want a violation", tt.answer, st)
			}
			got, _, ok := j.Fix(tt.answer, tt.vars)
			if tt.want == "" {
				if ok {
					t.Errorf("fixed to %q, want no fix", got)
				}
				return
			}
			if !ok || got != tt.want {
				t.Errorf("Fix = %q, %v; want %q", got, ok, tt.want)
			}
			if st := j.Check(got, nil).Status; st != streamrules.StatusPass {
				t.Errorf("the fixed answer %q: %s, want pass", got, st)
			}
		})
	}
}

// TestContextSeeds: the two seed rules that read the move's tool record, judged with the
// record a move would give them.
func TestContextSeeds(t *testing.T) {
	t.Parallel()
	set, err := seeds.Default()
	if err != nil {
		t.Fatal(err)
	}
	// The user asked for a voice message: unbacked_tool_claim applies only then.
	record := func(runs ...streamrules.ToolRun) *streamrules.Facts {
		return &streamrules.Facts{HasTools: true, Tools: runs, HasInput: true, Input: "Send them a voice message, please."}
	}
	chatOnly := func() *streamrules.Facts {
		return &streamrules.Facts{HasTools: true, HasInput: true, Input: "What's the weather like?"}
	}
	ok := func(tool string) streamrules.ToolRun { return streamrules.ToolRun{Tool: tool, OK: true} }
	failed := func(tool string) streamrules.ToolRun { return streamrules.ToolRun{Tool: tool} }
	tests := []struct {
		name, rule, answer string
		facts              *streamrules.Facts
		want               streamrules.Status
		fixed              string // the fix's repair of a violation; "": no fix
	}{
		{"claim without the tool", "unbacked_tool_claim", "Audio saved: hello.mp3", record(), streamrules.StatusViolation,
			"I could not make the audio: the speech tool did not run."},
		{"claim after a failed call", "unbacked_tool_claim", "Done.\nAudio saved: hello.mp3", record(failed("generate_speech")), streamrules.StatusViolation,
			"Done.\nI could not make the audio: the speech tool did not run."},
		{"claim after a successful call", "unbacked_tool_claim", "Audio saved: hello.mp3", record(ok("generate_speech")), streamrules.StatusPass, ""},
		{"no claim", "unbacked_tool_claim", "Here is the weather.", record(), streamrules.StatusPass, ""},
		{"claim without a record", "unbacked_tool_claim", "Audio saved: hello.mp3", nil, streamrules.StatusNotApplicable, ""},
		{"claim when no audio was asked for", "unbacked_tool_claim", "Audio saved: hello.mp3", chatOnly(), streamrules.StatusNotApplicable, ""},
		{"the claim's repair keeps the tail", "unbacked_tool_claim", "Audio saved: hello.mp3 ↩ #42", record(), streamrules.StatusViolation,
			"I could not make the audio: the speech tool did not run.↩ #42"},
		{"done after an unchecked edit", "verify_before_done", "Done.", record(ok("write_file")), streamrules.StatusViolation, ""},
		{"done after a failed check", "verify_before_done", "Finished.", record(ok("write_diff"), failed("run_tests")), streamrules.StatusViolation, ""},
		{"done after edit and check", "verify_before_done", "Done.", record(ok("write_file"), ok("run_tests")), streamrules.StatusPass, ""},
		{"an edit after the check", "verify_before_done", "Done.", record(ok("run_tests"), ok("write_file")), streamrules.StatusViolation, ""},
		{"no edit", "verify_before_done", "Done.", record(ok("run_tests")), streamrules.StatusPass, ""},
		{"not done", "verify_before_done", "I changed the file.", record(ok("write_file")), streamrules.StatusPass, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, ok := set.Rule(tt.rule)
			if !ok {
				t.Fatalf("no seed %q", tt.rule)
			}
			j, err := streamrules.NewJudge(r)
			if err != nil {
				t.Fatal(err)
			}
			if got := j.Check(tt.answer, tt.facts).Status; got != tt.want {
				t.Fatalf("Check(%q) = %s, want %s", tt.answer, got, tt.want)
			}
			got, _, fixed := j.Fix(tt.answer, nil)
			if tt.fixed == "" {
				if fixed && tt.want == streamrules.StatusViolation {
					t.Errorf("fixed to %q, want no fix", got)
				}
				return
			}
			if got != tt.fixed {
				t.Errorf("Fix = %q, want %q", got, tt.fixed)
			}
			if st := j.Check(got, tt.facts).Status; st != streamrules.StatusPass {
				t.Errorf("the repair %q: %s, want pass", got, st)
			}
		})
	}
}
