package multimatch

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestRequiredGroups(t *testing.T) {
	emoji := make([]string, 0, 80)
	for r := rune(0x1F600); r <= 0x1F64F; r++ {
		emoji = append(emoji, string(r))
	}
	tests := []struct{ pattern, want string }{
		// Plain literals are case-sensitive (=X=); (?i) literals are folded.
		{"foo", "=f==o==o="},
		{"foo|bar", "=b==a==r=|=f==o==o="},
		{"ab+c", "=b==c="},
		{"(?i)foo", "foo"},
		// k and s fold to non-ASCII runes (U+212A KELVIN SIGN, U+017F LONG S).
		{"(?i)kiss", "kiss|kisſ|kiſs|kiſſ|\u212aiss|\u212aisſ|\u212aiſs|\u212aiſſ"},
		{"(?i)ſ", "s|ſ"},
		{"(?i)\\x{212A}elvin", "kelvin|\u212aelvin"},
		{"(?i)Straße", "straße|straẞe|ſtraße|ſtraẞe"},
		{"é", "é"},
		{"(?i)é", "É|é"},
		// Case-sensitive and folded parts combine.
		{"abc(?i)def", "=a==b==c=def"},
		{"(?i:abc)DEF", "abc=D==E==F="},
		{"(?i)a(?-i)B", "a=B="},
		// Alternations, optional parts, \b and repetition.
		{`(?i)\b(can'?t|cannot|unable to)\b.{0,40}\b(see|view|look at)\b`,
			"can't|cannot|cant|unable to & look at|loo\u212a at|see|view|ſee"},
		{"x?yz", "=y==z="},
		{"(foo)?bar", "=b==a==r="},
		{`\bhello\b`, "=h==e==l==l==o="},
		{"(?m)^foo$", "=f==o==o="},
		{"(?U)ab+?c", "=b==c="},
		{"(ab){2,}", "=a==b==a==b="},
		{"(ab){3}", "=a==b==a==b==a==b="},
		{"xx(?:a|b*)yy", "=x==x="},
		{"-----BEGIN (RSA |EC )?PRIVATE KEY-----",
			"-----=B==E==G==I==N= =E==C= =P==R==I==V==A==T==E= =K==E==Y=-----|" +
				"-----=B==E==G==I==N= =P==R==I==V==A==T==E= =K==E==Y=-----|" +
				"-----=B==E==G==I==N= =R==S==A= =P==R==I==V==A==T==E= =K==E==Y=-----"},
		// Character classes.
		{"(?i)[ab]cd", "acd|bcd"},
		{"[ab][cd]", "=a==c=|=a==d=|=b==c=|=b==d="},
		{`\d+`, "0|1|2|3|4|5|6|7|8|9"},
		{`(?m)^\s*#{1,6} `, "# "},
		{`!\[[^\]]*\]\([^)]*\)`, "!["},
		{`[\x{1F600}-\x{1F64F}]`, strings.Join(emoji, "|")},
		{`[\x{4e00}-\x{9fff}]+`, "\xe4|\xe5|\xe6|\xe7|\xe8|\xe9"},
		{"[^a]bcd", "=b==c==d="},
		{"(?s)a.b", "=b="},
		// U+FFFD also matches invalid bytes, so it is never required.
		{"a\\x{FFFD}bcd", "=b==c==d="},
		{"\\x{FFFD}", "*"},
		{"[\\x{FFF0}-\\x{FFFF}]x", "=x="},
		// No literal: always run.
		{"^.{0,3}$", "*"},
		{".*", "*"},
		{"^$", "*"},
		{"", "*"},
		{"x*", "*"},
		{"[^\\x00-\\x{10FFFF}]", "*"},
		{"a[^\\x00-\\x{10FFFF}]|bcd", "=b==c==d="},
	}
	for _, tt := range tests {
		if got := renderGroups(t, tt.pattern); got != tt.want {
			t.Errorf("%q:\n got %q\nwant %q", tt.pattern, got, tt.want)
		}
	}
}

func TestImplies(t *testing.T) {
	fold := func(s string) lit { return lit{s: s} }
	cs := func(s string) lit { return lit{s: s, m: strings.Repeat("\x01", len(s))} }
	tests := []struct {
		a, b lit
		want bool
	}{
		{fold("cannot"), fold("can"), true},
		{fold("cannot"), fold("not"), true},
		{fold("can"), fold("cannot"), false},
		{cs("Cannot"), fold("can"), true},
		{fold("cannot"), cs("can"), false},
		{cs("can"), cs("can"), true},
		{cs("Can"), cs("can"), false},
	}
	for _, tt := range tests {
		if got := implies(tt.a, tt.b); got != tt.want {
			t.Errorf("implies(%v, %v) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestShrink(t *testing.T) {
	var set []lit
	for r := rune(0x1F300); r < 0x1F300+300; r++ {
		set = append(set, lit{s: string(r)})
	}
	// Each result must be within maxSet, made of prefixes (suffixes) of
	// elements of set, and cover every element of set.
	for _, tc := range []struct {
		name   string
		shrink func([]lit) []lit
		part   func(s, p string) bool
	}{
		{"shrinkPrefix", shrinkPrefix, strings.HasPrefix},
		{"shrinkSuffix", shrinkSuffix, strings.HasSuffix},
	} {
		got := tc.shrink(set)
		if len(got) == 0 || len(got) > maxSet {
			t.Fatalf("%s left %d elements", tc.name, len(got))
		}
		for _, p := range got {
			if !slices.ContainsFunc(set, func(l lit) bool { return tc.part(l.s, p.s) }) {
				t.Errorf("%s: %q is not part of any element", tc.name, p.s)
			}
		}
		for _, l := range set {
			if !slices.ContainsFunc(got, func(p lit) bool { return tc.part(l.s, p.s) }) {
				t.Errorf("%s: %q is covered by none of %v", tc.name, l.s, got)
			}
		}
	}
}

// TestMinimizeSmall: the filtered pairwise form keeps what the plain one keeps.
func TestMinimizeSmall(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for k := 0; k < 5000; k++ {
		var set []lit
		for n := 1 + r.IntN(smallSet); n > 0; n-- {
			b := make([]byte, r.IntN(4))
			var m []byte
			sensitive := r.IntN(3) == 0
			for i := range b {
				b[i] = "abAB\xe9-"[r.IntN(6)]
				m = append(m, 0)
				if sensitive && isLower(asciiLowerByte(b[i])) && r.IntN(2) == 0 {
					m[i] = 1
				} else {
					b[i] = asciiLowerByte(b[i])
				}
			}
			set = append(set, lit{s: string(b), m: normMask(string(m))})
		}
		set = dedup(set)
		if got, want := (*litArena)(nil).minimizeSmall(set), minimizePairs(set); !slices.Equal(got, want) {
			t.Fatalf("set %q: minimizeSmall %q, pairwise %q", set, got, want)
		}
	}
}

// TestMinimizeLarge: the lookup form of minimize keeps what the pairwise form keeps.
func TestMinimizeLarge(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for k := 0; k < 200; k++ {
		var set []lit
		for n := 17 + r.IntN(100); n > 0; n-- {
			b := make([]byte, 1+r.IntN(5))
			var m []byte
			sensitive := r.IntN(5) == 0
			for i := range b {
				b[i] = "abAB"[r.IntN(4)]
				if !sensitive {
					b[i] = asciiLowerByte(b[i])
				}
				if sensitive {
					m = append(m, byte(r.IntN(2)))
					if m[i] == 0 {
						b[i] = asciiLowerByte(b[i])
					}
				}
			}
			set = append(set, lit{s: string(b), m: normMask(string(m))})
		}
		want := minimizePairs(dedup(slices.Clone(set)))
		if got := minimize(set); !slices.Equal(got, want) {
			t.Fatalf("set %q: minimize %q, pairwise %q", set, got, want)
		}
	}
}

// TestKeyCompare: keyCompare orders groups as strings.Compare orders their keys (each
// element's s and m followed by a NUL), NUL bytes in literals included.
func TestKeyCompare(t *testing.T) {
	key := func(g []lit) string {
		var b strings.Builder
		for _, l := range g {
			b.WriteString(l.s)
			b.WriteByte(0)
			b.WriteString(l.m)
			b.WriteByte(0)
		}
		return b.String()
	}
	r := rand.New(rand.NewPCG(5, 6))
	group := func() []lit {
		g := make([]lit, r.IntN(3))
		for i := range g {
			s := make([]byte, r.IntN(3))
			for k := range s {
				s[k] = "a\x00b"[r.IntN(3)]
			}
			g[i].s = string(s)
			if r.IntN(3) == 0 && len(s) > 0 {
				m := make([]byte, len(s))
				m[0] = 1
				g[i].m = string(m)
			}
		}
		return g
	}
	for range 20000 {
		a, b := group(), group()
		if got, want := keyCompare(a, b), strings.Compare(key(a), key(b)); got != want {
			t.Fatalf("keyCompare(%q, %q) = %d, the keys compare %d", a, b, got, want)
		}
	}
}

// TestCatAll holds product's one-string concatenation to cat, pair by pair: empty
// elements, masks on either side or both, and none.
func TestCatAll(t *testing.T) {
	sets := [][]lit{
		{{}},
		{{s: "ab"}, {s: "c"}},
		{{}, {s: "x"}, {s: "Y", m: "\x01"}},
		{{s: "Ab", m: "\x01\x00"}, {s: "é"}},
		{{s: "k"}, {s: "K", m: "\x01"}, {s: "kk"}},
	}
	for _, a := range sets {
		for _, b := range sets {
			got := (*litArena)(nil).catAll(a, b)
			var want []lit
			for _, x := range a {
				for _, y := range b {
					want = append(want, cat(x, y))
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("catAll(%q, %q) = %q, want %q", a, b, got, want)
			}
		}
	}
}
