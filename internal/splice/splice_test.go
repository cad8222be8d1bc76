package splice

import (
	"testing"
	"unicode/utf8"
)

func TestCapChars(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		max  int
		keep string // the kept prefix; "" with cut false means unchanged
		cut  bool
	}{
		{"", 3, "", false},
		{"abc", 0, "", false},
		{"abc", -1, "", false},
		{"abc", 3, "", false},
		{"abcd", 3, "abc", true},
		{"жжж", 3, "", false}, // 6 bytes, 3 runes
		{"жжжж", 3, "жжж", true},
		{"🙂🙂", 1, "🙂", true},
		{"a\xffb\xfe", 2, "a\xff", true}, // invalid bytes count as one character each
	}
	for _, tt := range tests {
		got := Cap(tt.in, tt.max)
		if !tt.cut {
			if got != tt.in {
				t.Errorf("Cap(%q, %d) = %q, want unchanged", tt.in, tt.max, got)
			}
			continue
		}
		want := tt.keep + "\n[output cut: " + itoa(tt.max) + " of " + itoa(utf8.RuneCountInString(tt.in)) + " characters shown]"
		if got != want {
			t.Errorf("Cap(%q, %d) = %q, want %q", tt.in, tt.max, got, want)
		}
	}
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}
