package streamrules

import (
	"testing"
)

// TestFirstSentenceEveryMark: each sentence mark ends the first sentence when a space or
// the end follows it, the ideographic full stop included.
func TestFirstSentenceEveryMark(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ in, want string }{
		{"Stop. Go.", "Stop."},
		{"Stop! Go.", "Stop!"},
		{"Stop? Go.", "Stop?"},
		{"止まれ。 次へ。", "止まれ。"},
		{"止まれ。次へ", "止まれ。次へ"},
		{"a.b! c", "a.b!"},
	} {
		if got := firstSentence(tt.in); got != tt.want {
			t.Errorf("firstSentence(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
