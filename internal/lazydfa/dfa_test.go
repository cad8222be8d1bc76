package lazydfa

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"regexp/syntax"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"github.com/streamrules/streamrules/internal/regexgen"
)

// Patterns chosen for what a DFA can get wrong: the empty-width assertions at every
// kind of edge, case folding beyond ASCII, invalid UTF-8, an empty pattern, anchors,
// prefixes, and programs that keep many threads alive.
var tricky = []string{
	``, `a`, `^`, `$`, `^$`, `\A`, `\z`, `(?m)^`, `(?m)$`, `(?m)^$`, `\b`, `\B`, `^\b`, `\b$`,
	`\bfoo\b`, `\Bfoo\B`, `foo\b`, `(?m)^foo$`, `(?m)^\s*#{1,6} `, `^foo`, `foo$`, `\Afoo\z`,
	`(?i)kiss`, `(?i)\bkelvin\b`, `(?i)straße`, `(?i)σ`, `(?i)ǅ`, `a\x{FFFD}b`, `[^a]bc`, `(?s).bc`, `.`,
	`(?s).`, `[^\n]`, `\x{FFFD}`, `[\x{1F600}-\x{1F64F}]`, `[\x{4e00}-\x{9fff}]{2}`, `\pL+\d`,
	`abc(?i)def`, `x{2,5}y`, `(ab){2,}`, `-----BEGIN (RSA |EC )?PRIVATE KEY-----`,
	`(?i)\b(can'?t|cannot|unable to)\b.{0,40}\b(see|view|look at)\b`,
	`(?i)\bf[\W_]*u[\W_]*c[\W_]*k\b`, `[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}`,
	`↩ #\d+\s*$`, `the(?:\S+\s*)+\n\d{9,}`, `(\w+\s+){0,10}z`, `(a|b)*a(a|b){8}`, `^.{0,3}$`,
	`github_pat_[A-Za-z0-9_]{22,}`, `(?U)a+?b`, `\d{3}-\d{4}`, `(?m)\s+$`,
}

var texts = []string{
	"", "a", "\n", "foo", " foo ", "foo_", "xfoo", "\nfoo\n", "foo\nbar", "kiſs", "KIss", "273 \u212aELVIN",
	"STRAẞE", "ς", "ǆ", "a\xffb", "a\uFFFDb", "\xffbc", "x\nbc", "hi 😀", "日本語", "abcDEF", "ABCdef", "xxxxy",
	"ababab", "-----BEGIN EC PRIVATE KEY-----", "I CAN'T really see it", "fu_c k", "mail me@example.com.",
	"done ↩ #12  ", "done ↩ #12 x", "the quick\n123456789", "a b c d z", "aaaaaaaaab", "ab", "abcd",
	"github_pat_ABCDEFGHIJKLMNOPQRSTUVWXYZ", "aab", "555-1234", "trailing  \nx", "\xe2\x82", "é\xe2\x82\xac\xff",
}

func mustDFA(t testing.TB, p string) *DFA {
	t.Helper()
	d, err := Compile(p)
	if err != nil {
		t.Fatalf("%q: %v", p, err)
	}
	return d
}

// check compares Match, and a stream fed in pieces, with regexp on one text. It reports
// whether Match decided (did not give up): callers require most texts to be decided, so
// that a DFA giving up everywhere cannot pass.
func check(t *testing.T, p string, re *regexp.Regexp, d *DFA, text string, cuts []int) bool {
	t.Helper()
	want := re.MatchString(text)
	got, ok := d.Match(text)
	if ok && got != want {
		t.Fatalf("Match(%q, %q) = %v, regexp says %v", p, text, got, want)
	}
	// The same text fed in pieces, cut anywhere (inside runes too).
	c := d.Start()
	streamed := false
	prev := 0
	for _, cut := range append(cuts, len(text)) {
		if cut < prev || cut > len(text) {
			continue
		}
		piece := []byte(text[prev:cut])
		prev = cut
		for len(piece) > 0 && !streamed {
			out, rest, ok := d.Feed(&c, piece)
			if !ok {
				return ok
			}
			if out != nil {
				streamed = true
				if !want {
					t.Fatalf("Feed(%q, %q cut at %v) matched before %d bytes; regexp finds no match", p, text, cuts, c.Read())
				}
				// Certain: the text up to here matches on its own, whatever follows.
				if !re.MatchString(text[:c.Read()]) {
					t.Fatalf("Feed(%q, %q) matched at %d, but %q alone does not match", p, text, c.Read(), text[:c.Read()])
				}
			}
			piece = rest
		}
	}
	if !streamed {
		out, ok := d.End(&c)
		if !ok {
			return ok
		}
		if (len(out) > 0) != want {
			t.Fatalf("stream %q over %q cut at %v: End = %v, regexp says %v", p, text, cuts, out, want)
		}
		if c.Read() != len(text) {
			t.Fatalf("stream read %d bytes of %d", c.Read(), len(text))
		}
	}
	return ok
}

func TestTricky(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	checked, decided := 0, 0
	for _, p := range tricky {
		re := regexp.MustCompile(p)
		d := mustDFA(t, p)
		for _, text := range texts {
			for range 4 {
				var cuts []int
				for range r.IntN(4) {
					cuts = append(cuts, r.IntN(len(text)+1))
				}
				slices.Sort(cuts)
				checked++
				if check(t, p, re, d, text, cuts) {
					decided++
				}
			}
		}
	}
	if decided < checked*9/10 {
		t.Fatalf("Match decided %d texts of %d", decided, checked)
	}
}

// TestRealworld runs the guardrail corpus over the real answers, whole and in lines.
func TestRealworld(t *testing.T) {
	pats := readLines(t, "../workload/testdata/realworld/guardrails.txt")
	var answers []string
	for _, n := range []string{"1", "2", "3", "4"} {
		b, err := os.ReadFile("../workload/testdata/realworld/answer" + n + ".md")
		if err != nil {
			t.Fatal(err)
		}
		answers = append(answers, string(b))
	}
	for _, a := range answers {
		answers = append(answers, strings.Split(a, "\n")...)
	}
	matched := 0
	for _, p := range pats {
		re := regexp.MustCompile(p)
		d := mustDFA(t, p)
		for _, a := range answers {
			got, ok := d.Match(a)
			if !ok {
				t.Errorf("%q gave up on a real answer", p)
				continue
			}
			if want := re.MatchString(a); got != want {
				t.Fatalf("Match(%q, %.60q…) = %v, regexp says %v", p, a, got, want)
			}
			if got {
				matched++
			}
		}
	}
	if matched == 0 {
		t.Fatal("no guardrail matched any answer: the corpus is not exercised")
	}
	t.Logf("%d patterns, %d texts, %d matches", len(pats), len(answers), matched)
}

func readLines(t *testing.T, path string) []string {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := sc.Text(); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

var textRunes = []string{"a", "b", "k", "K", "s", "S", "é", "ß", "σ", "ς", "ſ", "\u212a", "\xff", "\xe2\x82", " ", "\n", "0", "7", ".", "_", "😀", "x"}

func randText(r *rand.Rand) string {
	var b strings.Builder
	for n := r.IntN(12); n > 0; n-- {
		b.WriteString(textRunes[r.IntN(len(textRunes))])
	}
	return b.String()
}

// TestRandom compares the DFA with regexp on random patterns and texts, whole and
// streamed in random pieces.
func TestRandom(t *testing.T) {
	iters := 4000
	if testing.Short() {
		iters = 500
	}
	r := rand.New(rand.NewPCG(7, 8))
	checked, decided := 0, 0
	for range iters {
		p := regexgen.Pattern(r, 0)
		re, err := regexp.Compile(p)
		if err != nil {
			continue
		}
		d := mustDFA(t, p)
		for range 12 {
			text := randText(r)
			cuts := []int{r.IntN(len(text) + 1), r.IntN(len(text) + 1)}
			slices.Sort(cuts)
			checked++
			if check(t, p, re, d, text, cuts) {
				decided++
			}
		}
	}
	if decided < checked*9/10 {
		t.Fatalf("Match decided %d texts of %d", decided, checked)
	}
}

// TestSetOutputs: a DFA of several programs reports, over a stream, exactly the
// patterns regexp finds in the whole text.
func TestSetOutputs(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for range 600 {
		var pats []string
		var res []*regexp.Regexp
		var progs []*syntax.Prog
		for len(pats) < 1+r.IntN(4) {
			p := regexgen.Pattern(r, 1)
			re, err := regexp.Compile(p)
			if err != nil {
				continue
			}
			pats, res = append(pats, p), append(res, re)
			progs = append(progs, mustProg(t, p))
		}
		d := New(progs...)
		for range 10 {
			text := randText(r) + randText(r)
			var want []int32
			for i, re := range res {
				if re.MatchString(text) {
					want = append(want, int32(i))
				}
			}
			c := d.Start()
			var got []int32
			p := []byte(text)
			for len(p) > 0 {
				out, rest, ok := d.Feed(&c, p)
				if !ok {
					t.Fatalf("gave up on %q", text)
				}
				got = append(got, out...)
				p = rest
			}
			end, _ := d.End(&c)
			got = append(got, end...)
			slices.Sort(got)
			got = slices.Compact(got)
			if !slices.Equal(got, want) {
				t.Fatalf("set %q over %q: got %v, regexp %v", pats, text, got, want)
			}
			which, done, ok := d.Which(text, []int32{-1}, 0, len(text)+1, 1)
			if !ok || !done {
				t.Fatalf("Which gave up on %q (done %v, ok %v)", text, done, ok)
			}
			if !slices.Equal(which[1:], want) || which[0] != -1 {
				t.Fatalf("set %q over %q: Which %v, regexp %v", pats, text, which, want)
			}
		}
	}
}

// TestWhichTricky runs the tricky patterns combined, eight to a DFA, over the texts
// cut and laid end to end: Which must say exactly which of them regexp finds.
func TestWhichTricky(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for lo := 0; lo < len(tricky); lo += 8 {
		pats := tricky[lo:min(lo+8, len(tricky))]
		var progs []*syntax.Prog
		for _, p := range pats {
			progs = append(progs, mustProg(t, p))
		}
		d := New(progs...)
		decided := 0
		for range 200 {
			text := texts[r.IntN(len(texts))] + texts[r.IntN(len(texts))] + texts[r.IntN(len(texts))]
			var want []int32
			for i, p := range pats {
				if regexp.MustCompile(p).MatchString(text) {
					want = append(want, int32(i))
				}
			}
			got, done, ok := d.Which(text, nil, 0, len(text)+1, 1)
			if ok && done && !slices.Equal(got, want) {
				t.Fatalf("%q over %q: Which %v, regexp %v", pats, text, got, want)
			}
			// Stopped after one match, it says only what matches.
			if some, done, ok := d.Which(text, nil, 0, 1, 1); ok && !done {
				for _, k := range some {
					if !slices.Contains(want, k) {
						t.Fatalf("%q over %q: Which stopped early with %v, regexp %v", pats, text, some, want)
					}
				}
			}
			if ok {
				decided++
			}
		}
		if decided < 150 { // texts this short rarely exhaust the budget
			t.Errorf("%q: Which decided %d texts of 200", pats, decided)
		}
	}
}

// TestWhichStops: Which stops at its maxStops-th match, and once the patterns it waits
// for have matched, saying then only what it has seen.
func TestWhichStops(t *testing.T) {
	d := New(mustProg(t, `a`), mustProg(t, `b`), mustProg(t, `c`))
	for _, c := range []struct {
		text     string
		want     uint64
		maxStops int
		out      []int32
		complete bool
	}{
		{"aaab", 0, 2, []int32{0}, false},         // stopped at the second a
		{"aaab", 0, 3, []int32{0}, false},         // at the third
		{"aaab", 0, 4, []int32{0, 1}, true},       // read it all
		{"aaab", 0b10, 9, []int32{0, 1}, true},    // b is seen at the end: the text was read
		{"aaabxx", 0b10, 9, []int32{0, 1}, false}, // waited for b, then stopped
		{"ab" + strings.Repeat("x", 100) + "c", 0b01, 9, []int32{0}, false},
		{"ab" + strings.Repeat("x", 100) + "c", 0b11, 9, []int32{0, 1}, false},
		{"ab" + strings.Repeat("x", 100) + "c", 0b111, 9, []int32{0, 1, 2}, true}, // all matched
		{"xbx", 0b01, 9, []int32{1}, true},                                        // a never matches: the text is read to its end
	} {
		out, complete, ok := d.Which(c.text, nil, c.want, c.maxStops, 1)
		if !ok || complete != c.complete || !slices.Equal(out, c.out) {
			t.Errorf("Which(%.12q…, want %b, maxStops %d) = %v, complete %v, ok %v; want %v, complete %v",
				c.text, c.want, c.maxStops, out, complete, ok, c.out, c.complete)
		}
	}
}

func mustProg(t testing.TB, p string) *syntax.Prog {
	re, err := syntax.Parse(p, syntax.Perl)
	if err != nil {
		t.Fatal(err)
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		t.Fatal(err)
	}
	return prog
}

// TestGivesUp: an exponential DFA on a text that keeps finding new states gives up
// instead of building a state per byte, and a small cache bound still gives right
// verdicts (the cache is dropped and rebuilt).
func TestGivesUp(t *testing.T) {
	p := `(a|b)*a(a|b){12}c`
	d := mustDFA(t, p)
	r := rand.New(rand.NewPCG(3, 4))
	var b strings.Builder
	for range 1 << 14 {
		b.WriteByte("ab"[r.IntN(2)])
	}
	if _, ok := d.Match(b.String()); ok {
		t.Fatal("an exponential DFA over random a/b did not give up")
	}
	small := mustDFA(t, `(a|b)*a(a|b){3}c`)
	small.SetMaxStates(16)
	re := regexp.MustCompile(`(a|b)*a(a|b){3}c`)
	for range 200 {
		var s strings.Builder
		for range 40 {
			s.WriteByte("abc"[r.IntN(3)])
		}
		text := s.String()
		got, ok := small.Match(text)
		if ok && got != re.MatchString(text) {
			t.Fatalf("with 16 states kept: Match(%q) = %v", text, got)
		}
	}
}

// TestConcurrent: one DFA used by many goroutines at once, whole texts and streams
// fed in two pieces (as the early scanners of concurrent moves share a group's DFA),
// with a small cache that is dropped while others read (run with -race).
func TestConcurrent(t *testing.T) {
	p := `(?i)\b(can'?t|cannot|unable to)\b.{0,40}\b(see|view|look at)\b`
	re := regexp.MustCompile(p)
	d := mustDFA(t, p)
	d.SetMaxStates(16)
	var wg sync.WaitGroup
	var decided atomic.Int64 // answers the DFA gave rather than gave up on
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 5))
			words := []string{"I", "can't", "cannot", "see", "view", "look at", "it", "é", "\n", "unable to", "CAN'T"}
			for range 300 {
				var b strings.Builder
				for range r.IntN(20) {
					b.WriteString(words[r.IntN(len(words))])
					b.WriteByte(" ,"[r.IntN(2)])
				}
				text := b.String()
				want := re.MatchString(text)
				if got, ok := d.Match(text); ok {
					decided.Add(1)
					if got != want {
						t.Errorf("Match(%q) = %v", text, got)
						return
					}
				}
				if got, ok := feedInTwo(d, text, r.IntN(len(text)+1)); ok {
					decided.Add(1)
					if got != want {
						t.Errorf("stream %q = %v", text, got)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	if decided.Load() == 0 {
		t.Error("the DFA gave up on every text: nothing was compared")
	}
}

// feedInTwo streams text to d cut at cut and reports whether it matched; ok is false
// when the DFA gave up.
func feedInTwo(d *DFA, text string, cut int) (matched, ok bool) {
	c := d.Start()
	for _, piece := range []string{text[:cut], text[cut:]} {
		out, _, ok := d.Feed(&c, []byte(piece))
		if !ok {
			return false, false
		}
		if out != nil {
			return true, true
		}
	}
	out, ok := d.End(&c)
	return len(out) > 0, ok
}

// TestMemoryLimit: DFAs together keep no more than the limit in states; past it they
// drop their own states or give up (and regexp answers), and their verdicts stay right.
// Dropped DFAs give their memory back.
func TestMemoryLimit(t *testing.T) {
	old := SetMemoryLimit(256 << 10)
	defer SetMemoryLimit(old)
	r := rand.New(rand.NewPCG(11, 12))
	var dfas []*DFA
	gaveUp := 0
	for i := range 200 {
		p := fmt.Sprintf(`(?i)\bw%d\w{0,9}\b.{0,60}\bz%d\b`, i, i)
		re := regexp.MustCompile(p)
		d := mustDFA(t, p)
		dfas = append(dfas, d)
		for range 3 {
			var b strings.Builder
			for range 60 {
				fmt.Fprintf(&b, "w%d%c z%d ", r.IntN(300), 'a'+rune(r.IntN(26)), r.IntN(300))
			}
			text := b.String()
			got, ok := d.Match(text)
			if !ok {
				gaveUp++
				continue
			}
			if got != re.MatchString(text) {
				t.Fatalf("Match(%q) = %v", p, got)
			}
		}
		if held := heldBy(dfas); held > 256<<10 {
			t.Fatalf("DFAs hold %d bytes, limit %d", held, 256<<10)
		}
	}
	if held := heldBy(dfas); held < 128<<10 {
		t.Fatalf("the DFAs held only %d bytes: the limit was never tested", held)
	}
	base := MemoryHeld() - heldBy(dfas) // what the other DFAs of the process hold
	t.Logf("%d runs gave up at the limit", gaveUp)
	dfas = nil
	for i := 0; MemoryHeld()-base > 0; i++ {
		if i == 100 {
			t.Fatalf("dropped DFAs still hold %d bytes", MemoryHeld()-base)
		}
		runtime.GC() // cleanups run after a collection finds the DFAs unreachable
		runtime.Gosched()
	}
	runtime.KeepAlive(dfas)
}

func heldBy(dfas []*DFA) int64 {
	var n int64
	for _, d := range dfas {
		n += d.held.Load()
	}
	return n
}

// TestManyDistinctRunesGiveUp: non-ASCII runes that every instruction treats alike are one
// class, so a text of many distinct Chinese runes finds its steps cached and is decided
// (it once made every DFA give up and handed the text to regexp). A pattern that
// tells more runes apart than a state caches (maxOther) still gives up on them: those
// steps are never cached, and count against the budget.
func TestManyDistinctRunesGiveUp(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	var b strings.Builder
	for b.Len() < 60000 {
		b.WriteRune(rune(0x4e00 + r.IntN(20000)))
	}
	text := b.String()
	re := regexp.MustCompile(`\p{Han}{3}x`)
	if m, ok := mustDFA(t, `\p{Han}{3}x`).Match(text); !ok || m != re.MatchString(text) {
		t.Fatalf("Match = %v, %v; want %v, decided", m, ok, re.MatchString(text))
	}
	var alt []string
	for k := range 2 * maxOther {
		alt = append(alt, string(rune(0x4e00+k))+"x")
	}
	d := mustDFA(t, "(?:"+strings.Join(alt, "|")+")")
	var many strings.Builder
	for many.Len() < 60000 {
		many.WriteRune(rune(0x4e00 + r.IntN(2*maxOther)))
	}
	for range 3 { // warm: every state has cached what it may
		d.Match(many.String())
	}
	if m, ok := d.Match(many.String()); ok {
		t.Fatalf("Match = %v, ok: want it to give up", m)
	}
	// A few distinct runes are cached and decided.
	short := strings.Repeat("中文字", 2000) + "x"
	if m, ok := mustDFA(t, `\p{Han}{3}x`).Match(short); !ok || !m {
		t.Fatalf("Match(short) = %v, %v; want a match, decided", m, ok)
	}
}

// TestRuneClassesAgreeWithRegexp: stepping a non-ASCII rune by its class's representative
// gives regexp's verdicts, on patterns that tell runes apart by ranges, single runes and
// case folding, and texts of runes on and around their edges.
func TestRuneClassesAgreeWithRegexp(t *testing.T) {
	patterns := []string{`(?i)ſ+k`, `[é-ü]{2}x`, `[^é]{3}\d`, `(?i)straße`, `\p{Greek}+\P{Greek}`, `[\x{10000}-\x{10FFFF}]{2}`, `K|k|\x{212A}`, `[αβγ]+[^αβγ]`}
	edges := []rune{'é', 'ê', 'è', 'ü', 'ý', 'ſ', 's', 'S', 'k', 'K', 0x212A, 'ß', 'ẞ', 'α', 'β', 'γ', 'δ', 'Ω', 'x', '1', 0x10000, 0xFFFF, 0x10FFFF, utf8.RuneError, '中'}
	r := rand.New(rand.NewPCG(26, 26))
	for _, p := range patterns {
		re := regexp.MustCompile(p)
		d := mustDFA(t, p)
		for range 300 {
			var b strings.Builder
			for n := r.IntN(8); n >= 0; n-- {
				b.WriteRune(edges[r.IntN(len(edges))])
			}
			text := b.String()
			if m, ok := d.Match(text); ok && m != re.MatchString(text) {
				t.Fatalf("%q on %q: %v, regexp %v", p, text, m, !m)
			}
		}
	}
}

// TestExplore: the whole DFA of a small pattern is found, with the widest state regexp
// would step (a text of e's keeps e and every \w of `e\w{5}\d` alive); an exponential one
// stops at the limit.
func TestExplore(t *testing.T) {
	if x := mustDFA(t, `abc`).Explore(100); !x.Complete || x.States > 16 || x.Widest != 2 || x.Work <= 0 { // states by the kind of the character before, too
		t.Errorf("abc: %+v", x)
	}
	if x := mustDFA(t, `e\w{5}\d`).Explore(1000); !x.Complete || x.Widest != 7 {
		t.Errorf(`e\w{5}\d: %+v; want widest 7`, x)
	}
	if x := mustDFA(t, `a[ab]{14}c`).Explore(256); x.Complete || x.States != 256 {
		t.Errorf("a[ab]{14}c: %+v; want it cut at 256", x)
	}
}
