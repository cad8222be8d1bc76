package shellcmd_test

import (
	"slices"
	"testing"

	"github.com/streamrules/streamrules/shellcmd"
)

// TestReservedWordsTakeTheParser: a plain-word script that starts with a word the shell
// reads as syntax (if, for, time, …) reads exactly as the parser reads it, error or
// commands, never as a command named after the reserved word.
func TestReservedWordsTakeTheParser(t *testing.T) {
	t.Parallel()
	for _, w := range []string{"if", "then", "else", "elif", "fi", "do", "done", "case", "esac", "while",
		"until", "for", "in", "function", "select", "time", "coproc"} {
		for _, script := range []string{w + " rm -rf x", w, w + " x in rm -rf y"} {
			fast, err1 := shellcmd.Commands(script)
			parsed, err2 := shellcmd.ParsedCommands(script)
			if (err1 == nil) != (err2 == nil) || !slices.Equal(fast, parsed) {
				t.Errorf("%q: Commands %q (%v), parser %q (%v)", script, fast, err1, parsed, err2)
			}
		}
	}
}
