package lazydfa

import (
	"regexp/syntax"
	"slices"
	"testing"
)

// TestWalk: a walk goes through alternations and groups on its own, past a rune only
// when visit says so, and meets each instruction once, with the same memory reused.
func TestWalk(t *testing.T) {
	re, err := syntax.Parse(`a(?:bx|cy)*d`, syntax.Perl)
	if err != nil {
		t.Fatal(err)
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		t.Fatal(err)
	}
	var w Walker
	runes := func(follow bool) string {
		var got []rune
		seen := map[uint32]bool{}
		w.Walk(prog, []uint32{uint32(prog.Start)}, func(pc uint32, in *syntax.Inst) bool {
			if seen[pc] {
				t.Errorf("instruction %d met twice", pc)
			}
			seen[pc] = true
			if in.Op == syntax.InstRune1 {
				got = append(got, in.Rune[0])
			}
			return follow
		})
		slices.Sort(got)
		return string(got)
	}
	for _, c := range []struct {
		follow bool
		want   string
	}{{false, "a"}, {true, "abcdxy"}, {false, "a"}} {
		if got := runes(c.follow); got != c.want {
			t.Errorf("follow=%v: met runes %q, want %q", c.follow, got, c.want)
		}
	}
}
