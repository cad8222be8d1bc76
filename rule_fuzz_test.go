package streamrules

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func FuzzParseRepeat(f *testing.F) {
	for _, s := range []string{
		"", "once", "after:1", "after:3", "after:0", "after:-1", "after:+3", "after:03", "after:x",
		"after:", "twice", "after:9223372036854775807", "after:9223372036854775808", "after:1_0", "after:٣",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParseRepeat(s)
		if err != nil {
			var ve *ValidationError
			if !errors.As(err, &ve) || ve.Field != "repeat" || !errors.Is(err, ErrBadRepeat) {
				t.Fatalf("ParseRepeat(%q) error %v: want a *ValidationError on repeat wrapping ErrBadRepeat", s, err)
			}
			if p != (Repeat{}) {
				t.Fatalf("ParseRepeat(%q) = %+v with an error", s, p)
			}
			return
		}
		// Every accepted policy has exactly one spelling.
		var canon string
		switch p.Kind {
		case RepeatEvery:
			canon = ""
		case RepeatOnce:
			canon = "once"
		case RepeatAfter:
			if p.Moves < 1 {
				t.Fatalf("ParseRepeat(%q) = after:%d, want N >= 1", s, p.Moves)
			}
			canon = "after:" + strconv.FormatInt(p.Moves, 10)
		default:
			t.Fatalf("ParseRepeat(%q): unknown kind %d", s, p.Kind)
		}
		if s != canon {
			t.Fatalf("ParseRepeat(%q) = %+v accepted a non-canonical spelling of %q", s, p, canon)
		}
		// A policy never allows a second firing in the move it fired in, except "every time".
		if p.Kind != RepeatEvery && p.Allows(7, 7) {
			t.Fatalf("%q allows firing again in the same move", s)
		}
		if !p.Allows(0, 1) {
			t.Fatalf("%q does not allow a first firing", s)
		}
	})
}

func FuzzValidate(f *testing.F) {
	f.Add("write_diff", "tool:write_file", `"path"`, false, "telegram", "Use write_diff.", "", "once")
	f.Add("tail", "text", `↩ #\d+$`, true, "telegram,master", "End with the tail.", "", "after:3")
	f.Add("Bad", "tools:x", `(`, true, "slack", "", "remind", "twice")
	f.Add("a", "text", "", true, "", "x", "interrupt", "after:+3")
	f.Add("a", "tool:", `a{1001}`, false, " ", strings.Repeat("ж", 401), "", "after:0")
	f.Add("a", "text", `(?i)`+strings.Repeat("(a|b)*", 50), false, "voice", "x", "", "")
	f.Add("a\x00", "tool:sh\x00", "x\x00", false, "tele\x00gram", "T\x00", "", "once\x00")
	f.Add("a", "text", "x\xff", false, "\xfftelegram", "T\xfe", "", "")
	f.Fuzz(func(t *testing.T, name, scope, cond string, negate bool, when, text, mode, repeat string) {
		r := Rule{
			Name: name, Scope: scope, Condition: cond, Negate: negate, Text: text,
			Mode: Mode(mode), Repeat: repeat,
		}
		if when != "" {
			r.When = strings.Split(when, ",")
		}
		known := append([]string{"voice"}, testEnvs...)
		raw := r
		raw.When = append([]string(nil), r.When...)
		_ = Validate(&raw, known) // never panics, even on a rule not normalized

		r.Normalize()
		err := Validate(&r, known)
		if err != nil {
			var ve *ValidationError
			if !errors.As(err, &ve) || ve.Field == "" {
				t.Fatalf("Validate error %v is not a *ValidationError naming a field", err)
			}
			return
		}
		// A valid rule has no NUL byte and no invalid UTF-8 in any field: every store takes
		// it alike.
		for _, v := range append([]string{r.Name, r.Scope, r.Condition, r.Text, r.Repeat, string(r.Mode)}, r.When...) {
			if strings.IndexByte(v, 0) >= 0 || !utf8.ValidString(v) {
				t.Fatalf("valid rule with a NUL or invalid UTF-8: %q", v)
			}
		}
		// A valid rule is usable as is: it compiles, parses and loads into an engine.
		if _, err := regexp.Compile(r.Condition); err != nil {
			t.Fatalf("valid rule with a bad regex %q: %v", r.Condition, err)
		}
		if _, err := ParseRepeat(r.Repeat); err != nil {
			t.Fatalf("valid rule with a bad repeat %q: %v", r.Repeat, err)
		}
		if ModeForScope(r.Scope) != r.Mode {
			t.Fatalf("valid rule with scope %q and mode %q", r.Scope, r.Mode)
		}
		again := r
		again.When = append([]string(nil), r.When...)
		again.Normalize()
		if err := Validate(&again, known); err != nil || !rulesEqual(again, r) {
			t.Fatalf("Normalize+Validate not stable: %+v -> %+v (%v)", r, again, err)
		}
		st, err := NewMemoryStore([]Rule{r}, known...)
		if err != nil {
			t.Fatalf("memory store rejects a valid rule %+v: %v", r, err)
		}
		eng, err := New(context.Background(), st, &Config{Environments: []string{"voice"}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		defer eng.Close()
		if got := eng.Rules(); len(got) != 1 || got[0].Name != r.Name {
			t.Fatalf("engine loaded %+v, want the rule %q", got, r.Name)
		}
	})
}
