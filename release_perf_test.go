package streamrules

import (
	"bytes"
	"testing"
	"unicode"
)

// TestReleaseTemplateSplit: the tail's template split once expands as expand does.
func TestReleaseTemplateSplit(t *testing.T) {
	vars := map[string]string{"message_id": "4711", "a": "x{{y}}", "empty": ""}
	for _, tmpl := range []string{
		"", "plain", "\n\n↩ #{{message_id}}", "{{ message_id }}", "{{a}}{{a}} {{empty}}!",
		"{{message_id}", "{{missing}} and {{message_id}}", "{{message_id}} and {{missing}}",
		"{{{message_id}}}", "{{ }}", "a{{message_id}}b{{ a }}c",
	} {
		want, wantMissing := expand(tmpl, vars, nil)
		got, missing := splitTemplate(tmpl).expand(vars)
		if missing != wantMissing || got != want {
			t.Errorf("%q: got %q, %q; expand gives %q, %q", tmpl, got, missing, want, wantMissing)
		}
	}
}

// TestReleaseTrimRightSpace: the ASCII-first trim is bytes.TrimRightFunc with unicode.IsSpace.
func TestReleaseTrimRightSpace(t *testing.T) {
	for _, s := range []string{"", " ", "a", "a \t\n\v\f\r", "a\u00a0", "a \u0085 ", "\x1c", "a\x00", "é ", " \u2003\n"} {
		want := bytes.TrimRightFunc([]byte(s), unicode.IsSpace)
		if got := trimRightSpace([]byte(s)); !bytes.Equal(got, want) {
			t.Errorf("%q: got %q, want %q", s, got, want)
		}
	}
}
