package shellcmd_test

import (
	"slices"
	"testing"

	"github.com/streamrules/streamrules/shellcmd"
)

func TestCommands(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, script string
		want         []string
	}{
		{"plain", "rm -rf x", []string{"rm -r -f x"}},
		{"path and escape", `/bin/rm -fr x; \rm -r x`, []string{"rm -f -r x", "rm -r x"}},
		{"quotes", `"rm" '-rf' x"y"`, []string{"rm -r -f xy"}},
		{"assignments and sudo", "FOO=1 sudo -u root -E rm -rf /", []string{"rm -r -f /"}},
		{"wrappers", "timeout -s KILL 10 nice -n 5 nohup env -i A=b xargs -0 rm -rf", []string{"rm -r -f"}},
		{"bash -c", `bash -lc 'cd /x && rm -rf y'`, []string{"cd /x", "rm -r -f y"}},
		{"substitutions", "echo $(rm -rf a) `rm -rf b`", []string{"echo $(rm\u00a0-rf\u00a0a) `rm\u00a0-rf\u00a0b`", "rm -r -f a", "rm -r -f b"}},
		{"data", "echo \"rm -rf x\" # rm -rf y\ncat <<EOF\nrm -rf z\nEOF", []string{"echo rm\u00a0-rf\u00a0x", "cat"}},
		{"ansi-c", `$'\x72m' -rf x`, []string{"rm -r -f x"}},
		{"braces", `{rm,-rf,x}`, []string{"rm -r -f x"}},
		{"find -exec", `find . -name '*.o' -exec rm -rf {} \;`, []string{"rm -r -f {}", "find . -name *.o -exec rm -rf {} ;"}},
		{"command -v", "command -v rm", []string{"command -v rm"}},
		{"after --", "rm -- -rf", []string{"rm -- -rf"}},
		{"variable", `rm -rf "$DIR"`, []string{"rm -r -f $DIR"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := shellcmd.Commands(tt.script)
			if err != nil {
				t.Fatalf("Commands(%q): %v", tt.script, err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Commands(%q)\n got %q\nwant %q", tt.script, got, tt.want)
			}
		})
	}
}
