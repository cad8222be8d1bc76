package streamrules_test

import (
	"testing"

	"github.com/streamrules/streamrules"
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
		if got := streamrules.FirstSentence(tt.in); got != tt.want {
			t.Errorf("FirstSentence(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
