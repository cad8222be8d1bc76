package streamrules

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// goodRule returns a valid, normalized soft rule to be spoiled field by field.
func goodRule() Rule {
	return Rule{
		Name:      "write_diff_over_write_file",
		Scope:     "tool:write_file",
		Condition: `"path":"[^"]+"`,
		Text:      "Editing an existing file goes through write_diff.",
		Mode:      ModeRemind,
	}
}

func goodTextRule() Rule {
	return Rule{
		Name:      "telegram_reply_tail",
		Scope:     ScopeText,
		Condition: `↩ #\d+\s*$`,
		Negate:    true,
		When:      []string{EnvTelegram},
		Text:      "A Telegram reply ends with the tail ↩ #id.",
		Mode:      ModeInterrupt,
		Repeat:    "after:3",
	}
}

func TestValidateRejects(t *testing.T) {
	t.Parallel()
	cyr := func(n int) string { return strings.Repeat("ж", n) }
	tests := []struct {
		name   string
		field  string
		known  []string
		modify func(r *Rule)
	}{
		{"empty name", "name", nil, func(r *Rule) { r.Name = "" }},
		{"name with capital", "name", nil, func(r *Rule) { r.Name = "Shell_rule" }},
		{"name starting with digit", "name", nil, func(r *Rule) { r.Name = "1rule" }},
		{"name starting with underscore", "name", nil, func(r *Rule) { r.Name = "_rule" }},
		{"name with dash", "name", nil, func(r *Rule) { r.Name = "my-rule" }},
		{"name with space", "name", nil, func(r *Rule) { r.Name = "my rule" }},
		{"name with newline", "name", nil, func(r *Rule) { r.Name = "rule\nx" }},
		{"name non-ASCII", "name", nil, func(r *Rule) { r.Name = "правило" }},
		{"name too long", "name", nil, func(r *Rule) { r.Name = "a" + strings.Repeat("b", MaxNameBytes) }},
		{"scope tools:x", "scope", nil, func(r *Rule) { r.Scope = "tools:x"; r.Mode = "" }},
		{"scope tool: without name", "scope", nil, func(r *Rule) { r.Scope = "tool:"; r.Mode = "" }},
		{"scope thought", "scope", nil, func(r *Rule) { r.Scope = "thought"; r.Mode = "" }},
		{"scope empty", "scope", nil, func(r *Rule) { r.Scope = ""; r.Mode = "" }},
		{"scope TEXT", "scope", nil, func(r *Rule) { r.Scope = "TEXT"; r.Mode = "" }},
		{"scope tool name with space", "scope", nil, func(r *Rule) { r.Scope = "tool:write file" }},
		{"scope tool name with quote", "scope", nil, func(r *Rule) { r.Scope = `tool:a"b` }},
		{"text scope with remind", "mode", nil, func(r *Rule) { r.Scope = ScopeText; r.Mode = ModeRemind }},
		{"tool scope with an unknown mode", "mode", nil, func(r *Rule) { r.Scope = "tool:x"; r.Mode = "block" }},
		{"shell on a text rule", "shell", nil, func(r *Rule) { r.Scope = "text"; r.Mode = ModeInterrupt; r.Shell = true }},
		{"unknown mode", "mode", nil, func(r *Rule) { r.Mode = "shout" }},
		{"mode left empty without Normalize", "mode", nil, func(r *Rule) { r.Mode = "" }},
		{"regex does not compile", "condition", nil, func(r *Rule) { r.Condition = `(unclosed` }},
		{"regex lookahead (not RE2)", "condition", nil, func(r *Rule) { r.Condition = `foo(?!bar)` }},
		{"regex backreference (not RE2)", "condition", nil, func(r *Rule) { r.Condition = `(a)\1` }},
		{"regex bad repeat count", "condition", nil, func(r *Rule) { r.Condition = `a{1001}` }},
		{"over-long pattern", "condition", nil, func(r *Rule) { r.Condition = strings.Repeat("a", MaxConditionBytes+1) }},
		{"negate with empty condition", "negate", nil, func(r *Rule) { r.Condition = ""; r.Negate = true }},
		{"unknown when", "when", nil, func(r *Rule) { r.When = []string{"slack"} }},
		{"unknown when among known", "when", nil, func(r *Rule) { r.When = []string{EnvMaster, "slack"} }},
		{"host name not passed in known", "when", BuiltinEnvironments, func(r *Rule) { r.When = []string{"voice"} }},
		{"builtin not in a host-only known list", "when", []string{"voice"}, func(r *Rule) { r.When = []string{EnvTelegram} }},
		{"empty text", "text", nil, func(r *Rule) { r.Text = "" }},
		{"401 ASCII chars", "text", nil, func(r *Rule) { r.Text = strings.Repeat("x", MaxTextChars+1) }},
		{"401 Cyrillic chars", "text", nil, func(r *Rule) { r.Text = cyr(MaxTextChars + 1) }},
		{"text not UTF-8", "text", nil, func(r *Rule) { r.Text = "bad \xff byte" }},
		{"repeat twice", "repeat", nil, func(r *Rule) { r.Repeat = "twice" }},
		{"repeat after:0", "repeat", nil, func(r *Rule) { r.Repeat = "after:0" }},
		{"repeat after:-1", "repeat", nil, func(r *Rule) { r.Repeat = "after:-1" }},
		{"repeat after:x", "repeat", nil, func(r *Rule) { r.Repeat = "after:x" }},
		{"repeat after:+3", "repeat", nil, func(r *Rule) { r.Repeat = "after:+3" }},
		{"repeat after:", "repeat", nil, func(r *Rule) { r.Repeat = "after:" }},
		{"repeat ONCE", "repeat", nil, func(r *Rule) { r.Repeat = "ONCE" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := goodRule()
			tt.modify(&r)
			err := Validate(&r, tt.known)
			if err == nil {
				t.Fatalf("Validate(%+v) = nil, want an error on %s", r, tt.field)
			}
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("Validate error %v (%T) is not a *ValidationError", err, err)
			}
			if ve.Field != tt.field {
				t.Fatalf("Validate error names field %q, want %q (%v)", ve.Field, tt.field, err)
			}
			if !strings.Contains(err.Error(), tt.field) {
				t.Errorf("error text %q does not name the field %q", err, tt.field)
			}
		})
	}
}

func TestValidateAccepts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		known  []string
		modify func(r *Rule)
	}{
		{"soft rule", nil, func(r *Rule) {}},
		{"text rule", nil, func(r *Rule) { *r = goodTextRule() }},
		{"empty condition matches all", nil, func(r *Rule) { r.Condition = "" }},
		{"negate with condition", nil, func(r *Rule) { r.Negate = true }},
		{"name of max length", nil, func(r *Rule) { r.Name = "a" + strings.Repeat("b", MaxNameBytes-1) }},
		{"name with digits and underscores", nil, func(r *Rule) { r.Name = "a1_b2__" }},
		{"tool name with dots and dashes", nil, func(r *Rule) { r.Scope = "tool:mcp.fs-write_v2:x" }},
		// A literal with no border (ab…b): one thread, however long. A run of one
		// character (a…a) is refused: on a text of a's, regexp keeps a thread per a.
		{"pattern of max length", nil, func(r *Rule) { r.Condition = "a" + strings.Repeat("b", MaxConditionBytes-1) }},
		{"case-insensitive flag", nil, func(r *Rule) { r.Condition = `(?i)write` }},
		{"every builtin when", nil, func(r *Rule) {
			r.When = []string{EnvClientOps, EnvMaster, EnvPicture, EnvTelegram}
		}},
		{"host-registered when", append([]string{"voice"}, BuiltinEnvironments...), func(r *Rule) {
			r.When = []string{"voice", EnvTelegram}
		}},
		{"400 ASCII chars", nil, func(r *Rule) { r.Text = strings.Repeat("x", MaxTextChars) }},
		{"400 Cyrillic chars (800 bytes)", nil, func(r *Rule) { r.Text = strings.Repeat("ж", MaxTextChars) }},
		{"400 emoji", nil, func(r *Rule) { r.Text = strings.Repeat("🙂", MaxTextChars) }},
		{"repeat once", nil, func(r *Rule) { r.Repeat = "once" }},
		{"repeat after:1", nil, func(r *Rule) { r.Repeat = "after:1" }},
		{"repeat after:1000", nil, func(r *Rule) { r.Repeat = "after:1000" }},
		{"disabled rule is still valid", nil, func(r *Rule) { r.Disabled = true }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := goodRule()
			tt.modify(&r)
			if err := Validate(&r, tt.known); err != nil {
				t.Fatalf("Validate(%+v) = %v, want nil", r, err)
			}
		})
	}
}

func TestValidateReportsFirstBadField(t *testing.T) {
	t.Parallel()
	r := Rule{Name: "Bad", Scope: "nope", Text: ""}
	err := Validate(&r, nil)
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Field != "name" {
		t.Fatalf("Validate = %v, want the name named first", err)
	}
}

func TestNormalize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   Rule
		want Rule
	}{
		{
			name: "text scope derives interrupt",
			in:   Rule{Name: "a", Scope: "text"},
			want: Rule{Name: "a", Scope: "text", Mode: ModeInterrupt, When: []string{}},
		},
		{
			name: "tool scope derives remind",
			in:   Rule{Name: "a", Scope: "tool:shell"},
			want: Rule{Name: "a", Scope: "tool:shell", Mode: ModeRemind, When: []string{}},
		},
		{
			name: "unknown scope derives nothing",
			in:   Rule{Name: "a", Scope: "thought"},
			want: Rule{Name: "a", Scope: "thought", When: []string{}},
		},
		{
			name: "given mode is kept (Validate judges it)",
			in:   Rule{Name: "a", Scope: "text", Mode: ModeRemind},
			want: Rule{Name: "a", Scope: "text", Mode: ModeRemind, When: []string{}},
		},
		{
			name: "trims typed fields, dedups and sorts when",
			in: Rule{
				Name: "  a_rule\n", Scope: " tool:shell ", Repeat: " once ", Text: "\tsay it \n",
				When: []string{" telegram", "master", "", "telegram ", "  "},
			},
			want: Rule{
				Name: "a_rule", Scope: "tool:shell", Repeat: "once", Text: "say it", Mode: ModeRemind,
				When: []string{"master", "telegram"},
			},
		},
		{
			name: "condition is not trimmed: spaces are part of a regex",
			in:   Rule{Name: "a", Scope: "text", Condition: " x "},
			want: Rule{Name: "a", Scope: "text", Condition: " x ", Mode: ModeInterrupt, When: []string{}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := tt.in
			got.Normalize()
			if !rulesEqual(got, tt.want) {
				t.Fatalf("Normalize:\n got %+v\nwant %+v", got, tt.want)
			}
			again := got
			again.When = append([]string(nil), got.When...)
			again.Normalize()
			if !rulesEqual(again, got) {
				t.Fatalf("Normalize is not idempotent:\n once  %+v\n twice %+v", got, again)
			}
		})
	}
}

func TestNormalizeDoesNotAliasWhen(t *testing.T) {
	t.Parallel()
	when := []string{"telegram", "master"}
	r := Rule{Name: "a", Scope: "text", When: when}
	r.Normalize()
	if when[0] != "telegram" || when[1] != "master" {
		t.Fatalf("Normalize reordered the caller's slice: %v", when)
	}
}

func TestNormalizeThenValidate(t *testing.T) {
	t.Parallel()
	r := Rule{Name: " look_before_refusing ", Scope: "text", Condition: `(?i)can'?t see`, Text: " Look first. ", When: []string{"picture"}}
	r.Normalize()
	if err := Validate(&r, nil); err != nil {
		t.Fatalf("Validate after Normalize: %v", err)
	}
	if r.Mode != ModeInterrupt {
		t.Fatalf("mode %q, want %q", r.Mode, ModeInterrupt)
	}
}

func rulesEqual(a, b Rule) bool {
	if (a.When == nil) != (b.When == nil) || !slices.Equal(a.When, b.When) {
		return false
	}
	a.When, b.When = nil, nil
	return reflect.DeepEqual(a, b)
}

func TestModeForScopeAndTool(t *testing.T) {
	t.Parallel()
	tests := []struct {
		scope string
		mode  Mode
		tool  string
	}{
		{"text", ModeInterrupt, ""},
		{"tool:shell", ModeRemind, "shell"},
		{"tool:a:b", ModeRemind, "a:b"},
		{"tool:", "", ""},
		{"tools:x", "", ""},
		{"thought", "", ""},
		{"thinking", ModeInterrupt, ""},
		{"", "", ""},
	}
	for _, tt := range tests {
		if got := ModeForScope(tt.scope); got != tt.mode {
			t.Errorf("ModeForScope(%q) = %q, want %q", tt.scope, got, tt.mode)
		}
		r := Rule{Scope: tt.scope}
		if got := r.Tool(); got != tt.tool {
			t.Errorf("Rule{Scope: %q}.Tool() = %q, want %q", tt.scope, got, tt.tool)
		}
	}
}

func TestParseRepeat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want Repeat
		ok   bool
	}{
		{"", Repeat{Kind: RepeatEvery}, true},
		{"once", Repeat{Kind: RepeatOnce}, true},
		{"after:1", Repeat{Kind: RepeatAfter, Moves: 1}, true},
		{"after:3", Repeat{Kind: RepeatAfter, Moves: 3}, true},
		{"after:9223372036854775807", Repeat{Kind: RepeatAfter, Moves: 1<<63 - 1}, true},
		{"after:9223372036854775808", Repeat{}, false},
		{"after:0", Repeat{}, false},
		{"after:-1", Repeat{}, false},
		{"after:+3", Repeat{}, false},
		{"after:03", Repeat{}, false},
		{"after:x", Repeat{}, false},
		{"after:", Repeat{}, false},
		{"after:3 ", Repeat{}, false},
		{"after: 3", Repeat{}, false},
		{"after:1_000", Repeat{}, false},
		{"after:0x10", Repeat{}, false},
		{"after:٣", Repeat{}, false}, // Arabic-Indic digit three
		{"after3", Repeat{}, false},
		{"twice", Repeat{}, false},
		{"Once", Repeat{}, false},
		{" once", Repeat{}, false},
		{"always", Repeat{}, false},
	}
	for _, tt := range tests {
		got, err := ParseRepeat(tt.in)
		if tt.ok {
			if err != nil || got != tt.want {
				t.Errorf("ParseRepeat(%q) = %+v, %v; want %+v, nil", tt.in, got, err, tt.want)
			}
			continue
		}
		if err == nil {
			t.Errorf("ParseRepeat(%q) = %+v, nil; want an error", tt.in, got)
			continue
		}
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != "repeat" {
			t.Errorf("ParseRepeat(%q) error %v does not name the repeat field", tt.in, err)
		}
		if !errors.Is(err, ErrBadRepeat) {
			t.Errorf("ParseRepeat(%q) error %v does not wrap ErrBadRepeat", tt.in, err)
		}
	}
}

func TestRepeatAllows(t *testing.T) {
	t.Parallel()
	every := Repeat{Kind: RepeatEvery}
	once := Repeat{Kind: RepeatOnce}
	after3 := Repeat{Kind: RepeatAfter, Moves: 3}
	after1 := Repeat{Kind: RepeatAfter, Moves: 1}
	tests := []struct {
		name            string
		p               Repeat
		lastFired, move int64
		want            bool
	}{
		{"every: never fired", every, 0, 1, true},
		{"every: fired this move", every, 5, 5, true},
		{"every: fired before", every, 4, 5, true},
		{"once: never fired", once, 0, 1, true},
		{"once: never fired, late move", once, 0, 1000, true},
		{"once: fired in move 1", once, 1, 2, false},
		{"once: fired long ago", once, 1, 1000, false},
		{"after:3 never fired", after3, 0, 7, true},
		{"after:3 fired in 1, move 1", after3, 1, 1, false},
		{"after:3 fired in 1, move 2", after3, 1, 2, false},
		{"after:3 fired in 1, move 3", after3, 1, 3, false},
		{"after:3 fired in 1, move 4", after3, 1, 4, true},
		{"after:3 fired in 1, move 10", after3, 1, 10, true},
		{"after:1 fired in 4, move 4", after1, 4, 4, false},
		{"after:1 fired in 4, move 5", after1, 4, 5, true},
	}
	for _, tt := range tests {
		if got := tt.p.Allows(tt.lastFired, tt.move); got != tt.want {
			t.Errorf("%s: Allows(%d, %d) = %v, want %v", tt.name, tt.lastFired, tt.move, got, tt.want)
		}
	}
}

func TestValidationErrorMessage(t *testing.T) {
	t.Parallel()
	err := error(&ValidationError{Field: "text", Reason: "empty"})
	if got, want := err.Error(), "streamrules: invalid text: empty"; got != want {
		t.Fatalf("Error() = %q, want %q", got, want)
	}
}
