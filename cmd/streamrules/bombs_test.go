package main

import (
	"fmt"
	"strings"
	"testing"
)

// TestBombFiles: a YAML alias bomb and 100,000 nested brackets, given to every command
// that reads a rule file, exit 2 at once naming the file and the line; before, each grew
// to gigabytes.
func TestBombFiles(t *testing.T) {
	t.Parallel()
	var alias strings.Builder
	alias.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 10; i++ {
		fmt.Fprintf(&alias, "a%d: &a%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d,", i-1), 10), ","))
	}
	alias.WriteString("version: 1\nrules: *a9\n")
	tests := []struct {
		name, data, where, want string
	}{
		{"alias bomb", alias.String(), ":1: ", "an anchor (&)"},
		{"nesting bomb", "version: 1\nrules: " + strings.Repeat("[", 100_000) + "\n", ":2: ", "nested deeper than 32 levels"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := sqliteEnv(t)
			path := writeTemp(t, "bomb.yaml", tt.data)
			for _, args := range [][]string{
				{"validate", path},
				{"import", "--dry-run", path},
				{"rules", "create", "-f", path},
			} {
				r := cli(t, env, "", args...)
				if r.code != 2 || !strings.Contains(r.stderr, path+tt.where+tt.want) {
					t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", args, r.code, r.stderr, path+tt.where+tt.want)
				}
			}
			r := cli(t, env, tt.data, "rules", "create", "-f", "-")
			if r.code != 2 || !strings.Contains(r.stderr, "line "+strings.Trim(tt.where, ": ")+": "+tt.want) {
				t.Errorf("rules create -f - (stdin): exit %d, stderr %q", r.code, r.stderr)
			}
		})
	}
}
