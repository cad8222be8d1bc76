package shellcmd_test

import (
	"slices"
	"testing"

	"github.com/streamrules/streamrules/shellcmd"
)

// TestExpansions: brace sequences count up and down, by numbers or letters, and ANSI-C
// escapes become the bytes they name.
func TestExpansions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		script string
		want   []string
	}{
		{`rm x{1..3}`, []string{"rm x1 x2 x3"}},
		{`rm x{3..1}`, []string{"rm x3 x2 x1"}},
		{`rm {a..c}`, []string{"rm a b c"}},
		{`rm {c..a}`, []string{"rm c b a"}},
		{`rm {1..7..3}`, []string{"rm 1 4 7"}},
		{`echo $'\e[1m' $'\a\b\f\v\t\r'`, []string{"echo \x1b[1m \a\b\u00a0\u00a0\u00a0\u00a0"}},
	}
	for _, tt := range tests {
		got, err := shellcmd.Commands(tt.script)
		if err != nil {
			t.Errorf("Commands(%q): %v", tt.script, err)
			continue
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("Commands(%q)\n got %q\nwant %q", tt.script, got, tt.want)
		}
	}
}
