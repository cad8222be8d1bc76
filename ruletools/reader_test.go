package ruletools_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/ruletools"
	"github.com/streamrules/streamrules/seeds"
)

// readerFixture: three 250-character rules on shell under a budget of 400, and a rule on
// grep; a move in which shell was called (alpha whole, bravo and charlie in manifest form).
func readerFixture(t *testing.T) (context.Context, *streamrules.Move, *streamrules.Engine) {
	t.Helper()
	var rules []streamrules.Rule
	for _, name := range []string{"alpha", "bravo", "charlie"} {
		head := name + " says so. "
		rules = append(rules, streamrules.Rule{Name: name, Scope: "tool:shell", Text: head + strings.Repeat("x", 250-len(head))})
	}
	rules = append(rules, streamrules.Rule{Name: "delta", Scope: "tool:grep", Text: "Grep less."})
	st, err := streamrules.NewMemoryStore(rules, seeds.Environments()...)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := streamrules.New(context.Background(), st, &streamrules.Config{Logger: quiet, ReminderBudget: 400})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(eng.Close)
	ctx, m := eng.BeginMove(context.Background(), "client", seeds.EnvTelegram) // not the master: any move may read
	m.ToolReminders(ctx, "shell", `{"cmd":"ls"}`)
	return ctx, m, eng
}

func TestReader(t *testing.T) {
	t.Parallel()
	ctx, m, eng := readerFixture(t)
	read := ruletools.Reader(eng)
	if read.Name() != "stream_rule_read" || !strings.Contains(read.Description(), `{"rule": "rule_name"}`) {
		t.Fatalf("tool %q: %s", read.Name(), read.Description())
	}
	bravo := "bravo says so. " + strings.Repeat("x", 250-len("bravo says so. "))
	tests := []struct {
		name, input string
		ok          bool
		want        string // the text, or a part of the error
		field       string
	}{
		{"a manifest rule", `{"rule": "bravo"}`, true, bravo, ""},
		{"the bare name", `bravo`, true, bravo, ""},
		// A leading byte order mark says nothing, as for the CRUD tools.
		{"JSON after a byte order mark", "\ufeff{\"rule\":\"bravo\"}", true, bravo, ""},
		{"a byte order mark, space, JSON", "\ufeff {\"rule\": \"bravo\"}\n", true, bravo, ""},
		{"the bare name after a byte order mark", "\ufeffbravo", true, bravo, ""},
		{"fenced", "```json\n{\"rule\": \"charlie\"}\n```", true, "charlie says so. " + strings.Repeat("x", 250-len("charlie says so. ")), ""},
		{"a rule delivered whole", `{"rule": "alpha"}`, false, `rule "alpha" was not delivered in manifest form`, "rule"},
		{"a rule that did not fire", `{"rule": "delta"}`, false, `rule "delta" was not delivered`, "rule"},
		{"no such rule", `{"rule": "nosuch"}`, false, `rule "nosuch" was not delivered`, "rule"},
		{"no name", `{}`, false, `"rule" must name the rule`, "rule"},
		{"unknown key", `{"rule": "bravo", "all": true}`, false, `all`, "all"},
		{"key in another case", `{"RULE": "bravo"}`, false, `RULE`, "RULE"},
		{"data after the object", `{"rule": "bravo"} {}`, false, "", ""},
		{"too large", `{"rule": "` + strings.Repeat("b", 2000) + `"}`, false, "more than stream_rule_read takes", ""},
	}
	for _, tt := range tests {
		out, err := read.Call(ctx, tt.input)
		if err != nil {
			t.Fatalf("%s: Go error %v: refusals are output", tt.name, err)
		}
		if len(out) > 1200 {
			t.Errorf("%s: output of %d bytes", tt.name, len(out))
		}
		dec := json.NewDecoder(strings.NewReader(out))
		dec.DisallowUnknownFields()
		if tt.ok {
			var res ruletools.ReadResult
			if err := dec.Decode(&res); err != nil || !res.OK || res.Text != tt.want {
				t.Errorf("%s: %s (%v)", tt.name, out, err)
			}
			continue
		}
		var res ruletools.Result
		if err := dec.Decode(&res); err != nil || res.OK || res.Error == "" || !strings.Contains(res.Error, tt.want) || res.Field != tt.field {
			t.Errorf("%s: %s (%v), want an error with %q on field %q", tt.name, out, err, tt.want, tt.field)
		}
	}
	read1, read2 := 0, 0
	for _, f := range m.Firings() {
		if f.Read {
			read1++
			if f.Rule != "bravo" && f.Rule != "charlie" {
				t.Errorf("read recorded on %s", f.Rule)
			}
		}
		if f.Delivery == streamrules.DeliveryManifest {
			read2++
		}
	}
	if read1 != 2 || read2 != 2 {
		t.Fatalf("firings %+v: want bravo and charlie manifest and read", m.Firings())
	}
}

func TestReaderOutsideAMove(t *testing.T) {
	t.Parallel()
	_, _, eng := readerFixture(t)
	out, err := ruletools.Reader(eng).Call(context.Background(), `{"rule": "bravo"}`)
	if err != nil || !strings.Contains(out, `"ok":false`) || !strings.Contains(out, "refused") {
		t.Fatalf("outside a move: %s, %v", out, err)
	}
	// Another engine's move is not this engine's.
	ctx, _, _ := readerFixture(t)
	if out, _ := ruletools.Reader(eng).Call(ctx, `{"rule": "bravo"}`); !strings.Contains(out, "refused") {
		t.Fatalf("another engine's move: %s", out)
	}
}

// FuzzReader: whatever the input, stream_rule_read answers with one bounded JSON object
// and never a Go error, and reads only the rules delivered in manifest form.
func FuzzReader(f *testing.F) {
	for _, s := range []string{`{"rule": "bravo"}`, `bravo`, `{"rule": "alpha"}`, "```json\n{}\n```", `{"rule": 1}`, `{"rule":"bravo"}{}`, "\"charlie\"", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, input string) {
		ctx, _, eng := readerFixture(t)
		out, err := ruletools.Reader(eng).Call(ctx, input)
		if err != nil {
			t.Fatalf("Go error %v", err)
		}
		if len(out) > 1200 {
			t.Fatalf("%d bytes of output", len(out))
		}
		var res struct {
			OK   bool   `json:"ok"`
			Rule string `json:"rule"`
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("output is not JSON: %q", out)
		}
		if res.OK && res.Rule != "bravo" && res.Rule != "charlie" {
			t.Fatalf("read %q, which was not delivered in manifest form", res.Rule)
		}
	})
}
