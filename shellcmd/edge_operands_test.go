package shellcmd_test

import (
	"slices"
	"testing"

	"github.com/streamrules/streamrules/shellcmd"
)

// TestEdgeOperands: a script after "bash -c --" is read; a find -exec with no command
// adds nothing but find itself; env -S reads its string whether it comes as the next
// word or glued to the flag.
func TestEdgeOperands(t *testing.T) {
	t.Parallel()
	tests := []struct {
		script string
		want   []string
	}{
		{`bash -c -- 'rm -rf x'`, []string{"rm -r -f x"}},
		{`bash -c --`, []string{"bash -c --"}},
		{`find . -exec \; -print`, []string{"find . -exec ; -print"}},
		{`find . -exec + -print`, []string{"find . -exec + -print"}},
		{`env -S 'rm -rf x'`, []string{"rm -r -f x"}},
		{`env -S'rm -rf x'`, []string{"rm -r -f x"}},
		{`env --split-string 'rm -rf x'`, []string{"rm -r -f x"}},
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
