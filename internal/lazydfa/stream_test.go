package lazydfa

import "testing"

// TestPendingDead: a cursor is pending while a thread is alive (or a rune is cut off),
// and an anchored pattern's cursor is dead once no thread is.
func TestPendingDead(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, pattern, text string
		pending, dead       bool
	}{
		{"idle", `![a]`, "hello", false, false},
		{"live start", `![a]`, "hello !", true, false},
		{"cut rune", `x`, "ab\xe2\x86", true, false},
		{"anchored alive", `^\s*👍\s*$`, "  ", true, false},
		{"anchored dead", `^\s*👍\s*$`, " a", false, true},
		{"match pending its end", `ab`, "ab", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d, err := Compile(tt.pattern)
			if err != nil {
				t.Fatal(err)
			}
			c := d.Start()
			for p := []byte(tt.text); len(p) > 0; {
				_, rest, ok := d.Feed(&c, p)
				if !ok {
					t.Fatal("gave up")
				}
				p = rest
			}
			if c.Pending() != tt.pending || c.Dead() != tt.dead {
				t.Errorf("pending %v dead %v, want %v %v", c.Pending(), c.Dead(), tt.pending, tt.dead)
			}
		})
	}
}

// TestMatchesEvery: every text ending with the suffix (then any run of the tail runes)
// matches, or not.
func TestMatchesEvery(t *testing.T) {
	t.Parallel()
	tests := []struct {
		pattern, suffix string
		tail            []rune
		want            bool
	}{
		{`↩ #\d+\s*$`, "↩ #42", nil, true},
		{`↩ #\d+\s*$`, "↩ #42", []rune{' ', '\n'}, true},
		{`↩ #\d+\s*$`, "↩ #42", []rune{' ', '\u00a0'}, false}, // \s is ASCII only
		{`↩ #\d+$`, "↩ #", nil, false},
		{`ok`, "ok", []rune{'x'}, true}, // matched on the way
	}
	for _, tt := range tests {
		d, err := Compile(tt.pattern)
		if err != nil {
			t.Fatal(err)
		}
		if got := d.MatchesEvery(tt.suffix, tt.tail, 64); got != tt.want {
			t.Errorf("%q after %q then %q: %v, want %v", tt.pattern, tt.suffix, string(tt.tail), got, tt.want)
		}
	}
}
