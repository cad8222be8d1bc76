package multimatch

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/streamrules/streamrules/internal/workload"
)

// trickyPatterns exercise the corners of the literal extraction.
var trickyPatterns = []string{
	``,
	`(?i)kiss`,
	`(?i)\bkelvin\b`,
	`(?i)ſ`,
	`(?i)STRASSE`,
	`(?i)straße`,
	`(?i)\x{212A}`,
	`\x{FFFD}`,
	`a\x{FFFD}b`,
	`[^a]`,
	`(?i)é`,
	`(?i)σ`,
	`abc(?i)def`,
	`(?i:abc)DEF`,
	`(?i)a(?-i)B(?i)c`,
	`(?s)a.b`,
	`(?m)^foo$`,
	`^foo`,
	`foo$`,
	`\Afoo\z`,
	`\bfoo\b`,
	`\Bfoo\B`,
	`x{2,5}y`,
	`(ab){2,}`,
	`(?:ab|cd){1,3}ef`,
	`(?U)a+?b`,
	`[ab][cd]e`,
	`(?i)[k-m]ey`,
	`[\x{1F600}-\x{1F64F}]`,
	`[\x{4e00}-\x{9fff}]{2}`,
	`[^\x00-\x{10FFFF}]`,
	`a[^\x00-\x{10FFFF}]|bcd`,
	`\d{4}`,
	`^.{0,3}$`,
	`(?s)^\s*$`,
	`.*`,
	`\pL+é`,
	`\p{Greek}+`,
	`(?i)\x{0130}`,
	`(?i)ǅ`,
	`\x{80}`,
	`\xff`,
	`[\x{D7FF}-\x{E000}]`,
	`(?i)(?:foo|bar)(?:baz)?qux`,
	`(?m)^\s*#{1,6} `,
	`!\[[^\]]*\]\([^)]*\)`,
	`(?i)\b(can'?t|cannot|unable to)\b.{0,40}\b(see|view|look at)\b`,
	`(?i)ss|ß`,
	"-----BEGIN (RSA |EC )?PRIVATE KEY-----",
}

// sample returns a random string that tries to match re (assertions are
// ignored, so it may not).
func sample(r *rand.Rand, re *syntax.Regexp, depth int) string {
	switch re.Op {
	case syntax.OpLiteral:
		var b strings.Builder
		for _, c := range re.Rune {
			if re.Flags&syntax.FoldCase != 0 {
				for n := r.IntN(4); n > 0; n-- {
					c = unicode.SimpleFold(c)
				}
			}
			b.WriteRune(c)
		}
		return b.String()
	case syntax.OpCharClass:
		if len(re.Rune) == 0 {
			return ""
		}
		i := r.IntN(len(re.Rune)/2) * 2
		lo, hi := re.Rune[i], re.Rune[i+1]
		c := lo + rune(r.Int64N(int64(min(hi-lo, 300))+1))
		if c == utf8.RuneError && r.IntN(2) == 0 {
			return "\xff"
		}
		return string(c)
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return []string{"a", "Z", " ", "é", "\xff", "k", "\u212a", "7"}[r.IntN(8)]
	case syntax.OpCapture:
		return sample(r, re.Sub[0], depth)
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		lo, hi := 0, 3
		switch re.Op {
		case syntax.OpPlus:
			lo = 1
		case syntax.OpQuest:
			hi = 1
		case syntax.OpRepeat:
			lo, hi = re.Min, re.Max
			if hi < 0 {
				hi = lo + 2
			}
		}
		if depth > 6 {
			hi = lo
		}
		n := lo + r.IntN(hi-lo+1)
		var b strings.Builder
		for range n {
			b.WriteString(sample(r, re.Sub[0], depth+1))
		}
		return b.String()
	case syntax.OpConcat:
		var b strings.Builder
		for _, s := range re.Sub {
			b.WriteString(sample(r, s, depth+1))
		}
		return b.String()
	case syntax.OpAlternate:
		return sample(r, re.Sub[r.IntN(len(re.Sub))], depth+1)
	}
	return ""
}

// mutate perturbs case, folds and bytes of s.
func mutate(r *rand.Rand, s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch x := r.IntN(40); {
		case x == 0 && (c == 'k' || c == 'K'):
			b.WriteString("\u212a")
		case x == 1 && (c == 's' || c == 'S'):
			b.WriteString("ſ")
		case x < 5 && isLower(c):
			b.WriteByte(c - 'a' + 'A')
		case x < 8 && isUpper(c):
			b.WriteByte(c + 'a' - 'A')
		case x == 8:
			b.WriteByte("\xff\x80\xe2\xc5"[r.IntN(4)])
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// compile builds a Set of pats and, for the naive loop, their regexps.
func compile(t testing.TB, pats []string) (*Set, []*regexp.Regexp) {
	t.Helper()
	set, err := New(pats)
	if err != nil {
		t.Fatal(err)
	}
	return set, regexps(pats)
}

// regexps compiles pats for the naive loop (naiveMatch).
func regexps(pats []string) []*regexp.Regexp {
	res := make([]*regexp.Regexp, len(pats))
	for i, p := range pats {
		res[i] = regexp.MustCompile(p)
	}
	return res
}

func naiveMatch(res []*regexp.Regexp, text string) []int {
	var out []int
	for i, re := range res {
		if re.MatchString(text) {
			out = append(out, i)
		}
	}
	return out
}

// testTexts builds texts around samples of the patterns.
func testTexts(r *rand.Rand, pats []string, n int) []string {
	var texts []string
	words := func(k int) string {
		w := make([]string, k)
		for i := range w {
			w[i] = workload.CommonWord(r)
		}
		return strings.Join(w, " ")
	}
	sep := []string{" ", "\n", "", ". ", "\n\n", "\xff", "é", "_"}
	for len(texts) < n {
		var b strings.Builder
		switch r.IntN(5) {
		case 0:
			b.WriteString(workload.RealisticText(32+r.IntN(1500), r.Int64(), ""))
		case 1:
			b.WriteString(workload.RealisticText(64+r.IntN(800), r.Int64(), workload.FireText))
		default:
			for k := 1 + r.IntN(6); k > 0; k-- {
				b.WriteString(sep[r.IntN(len(sep))])
				if r.IntN(3) == 0 {
					b.WriteString(words(r.IntN(8)))
					b.WriteString(sep[r.IntN(len(sep))])
				}
				p := pats[r.IntN(len(pats))]
				re := mustParse(p).Simplify()
				s := sample(r, re, 0)
				if r.IntN(3) == 0 {
					s = mutate(r, s)
				}
				b.WriteString(s)
			}
		}
		t := b.String()
		if r.IntN(10) == 0 {
			t = mutate(r, t)
		}
		texts = append(texts, t)
	}
	return texts
}

func TestDifferential(t *testing.T) {
	n := 2000
	ntexts := 300
	if testing.Short() || raceEnabled {
		n, ntexts = 600, 60
	}
	pats := append(workload.RealisticPatterns(n, 7), trickyPatterns...)
	set, res := compile(t, pats)
	r := rand.New(rand.NewPCG(1, 2))
	texts := testTexts(r, pats, ntexts)
	texts = append(texts, "", "\xff", "K", "ſ", "\ufffd", "a\xffb")
	total := 0
	var dst []int
	for _, text := range texts {
		want := naiveMatch(res, text)
		dst = set.Match(text, dst[:0])
		if !slices.Equal(dst, want) {
			t.Errorf("text %q:\n got %v\nwant %v", text, dst, want)
			for _, i := range symDiff(dst, want) {
				t.Errorf("  pattern %d %q: %s", i, pats[i], renderGroups(t, pats[i]))
			}
		}
		total += len(want)
	}
	t.Logf("%d patterns, %d texts, %d matches", len(pats), len(texts), total)
	if total < len(texts) {
		t.Errorf("only %d matches over %d texts: the test does not exercise matches", total, len(texts))
	}
}

func symDiff(a, b []int) []int {
	var out []int
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	for _, x := range b {
		if !slices.Contains(a, x) {
			out = append(out, x)
		}
	}
	return out
}

// TestSamples checks each pattern alone against texts built to match it.
func TestSamples(t *testing.T) {
	pats := append(workload.RealisticPatterns(300, 11), trickyPatterns...)
	r := rand.New(rand.NewPCG(3, 4))
	for i, p := range pats {
		set, err := New([]string{p})
		if err != nil {
			t.Fatal(err)
		}
		re := regexp.MustCompile(p)
		syn := mustParse(p).Simplify()
		for k := 0; k < 20; k++ {
			s := sample(r, syn, 0)
			if k%2 == 1 {
				s = mutate(r, s)
			}
			text := []string{s, "x " + s + " y", "\n" + s + "\n", "é" + s + "\xff"}[k%4]
			want := re.MatchString(text)
			got := len(set.Match(text, nil)) == 1
			if got != want {
				t.Errorf("pattern %d %q (%s) text %q: got %v want %v", i, p, renderGroups(t, p), text, got, want)
			}
		}
	}
}

func TestNewError(t *testing.T) {
	_, err := New([]string{"a", "b(", "c"})
	if err == nil || !strings.Contains(err.Error(), "pattern 1") {
		t.Fatalf("err = %v, want one naming pattern 1", err)
	}
}

func TestEmptySet(t *testing.T) {
	set, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := set.Match("anything", []int{7}); !slices.Equal(got, []int{7}) {
		t.Fatal("empty set matched")
	}
}

func TestEmptyPatternMatchesEverything(t *testing.T) {
	set, err := New([]string{"zzz", ""})
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"", "abc", "\xff"} {
		if got := set.Match(text, nil); !slices.Equal(got, []int{1}) {
			t.Errorf("Match(%q) = %v", text, got)
		}
	}
}

// TestBenchmarkTexts checks the premise of the benchmarks with the naive
// loop: the none texts match nothing and the one texts match rule 0 only.
func TestBenchmarkTexts(t *testing.T) {
	n := 1000
	if testing.Short() || raceEnabled {
		n = 200
	}
	set, res := compile(t, workload.RealisticPatterns(n, 1))
	for _, size := range []int{512, 4096} {
		for kind, want := range map[string][]int{"none": nil, "one": {0}} {
			text, _ := benchText(size, kind)
			if got := naiveMatch(res, text); !slices.Equal(got, want) {
				t.Errorf("size %d %s: naive %v, want %v", size, kind, got, want)
			}
			if got := set.Match(text, nil); !slices.Equal(got, want) {
				t.Errorf("size %d %s: Match %v, want %v", size, kind, got, want)
			}
		}
	}
}

// TestPrefilterSelective checks that the prefilter filters: the other tests
// would still pass if every pattern were run on every text.
func TestPrefilterSelective(t *testing.T) {
	set, _ := compile(t, workload.RealisticPatterns(1000, 1))
	if len(set.always) > 5 {
		t.Errorf("%d of 1000 patterns are always run: %v", len(set.always), set.always)
	}
	for _, size := range []int{512, 4096} {
		for kind, want := range map[string][]int32{"none": {}, "one": {0}} {
			text, _ := benchText(size, kind)
			sc := set.pool.Get().(*scratch)
			sc.gen++
			sc.cands = sc.cands[:0]
			set.scan(text, sc)
			if !slices.Equal(sc.cands, want) {
				t.Errorf("size %d %s: candidates %v, want %v", size, kind, sc.cands, want)
			}
		}
	}
}

func TestRealisticPatternsPrefix(t *testing.T) {
	a, b := workload.RealisticPatterns(50, 3), workload.RealisticPatterns(80, 3)
	if !slices.Equal(a, b[:50]) {
		t.Fatal("RealisticPatterns(50) is not a prefix of RealisticPatterns(80)")
	}
	if _, err := New(workload.RealisticPatterns(3000, 5)); err != nil {
		t.Fatal(err)
	}
}

func TestMatchNoAlloc(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items at random under the race detector")
	}
	set, err := New(workload.RealisticPatterns(500, 1))
	if err != nil {
		t.Fatal(err)
	}
	text := workload.RealisticText(4096, 9, workload.FireText)
	dst := make([]int, 0, 16)
	set.Match(text, dst)
	if n := testing.AllocsPerRun(50, func() { dst = set.Match(text, dst[:0]) }); n != 0 {
		t.Fatalf("Match allocates %v times per call", n)
	}
}

func TestConcurrent(t *testing.T) {
	pats := append(workload.RealisticPatterns(300, 2), trickyPatterns...)
	set, res := compile(t, pats)
	texts := testTexts(rand.New(rand.NewPCG(5, 6)), pats, 16)
	wants := make([][]int, len(texts))
	for i, text := range texts {
		wants[i] = naiveMatch(res, text)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var dst []int
			for k := 0; k < 20; k++ {
				i := (g + k) % len(texts)
				dst = set.Match(texts[i], dst[:0])
				if !slices.Equal(dst, wants[i]) {
					errs <- fmt.Errorf("text %d: got %v want %v", i, dst, wants[i])
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func mustParse(p string) *syntax.Regexp {
	re, err := syntax.Parse(p, syntax.Perl)
	if err != nil {
		panic(err)
	}
	return re
}
