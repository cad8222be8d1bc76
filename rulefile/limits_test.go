package rulefile_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/ruleinput"
	"github.com/streamrules/streamrules/rulefile"
	"github.com/streamrules/streamrules/seeds"
)

// aliasBomb is the 500-byte file that expanded to gigabytes: ten levels of ten aliases
// each, 10^10 strings once expanded.
func aliasBomb() string {
	var b strings.Builder
	b.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 10; i++ {
		fmt.Fprintf(&b, "a%d: &a%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d,", i-1), 10), ","))
	}
	b.WriteString("version: 1\nrules: *a9\n")
	return b.String()
}

// allocated returns the bytes f allocates: the peak it adds to the heap is no more.
// TotalAlloc only grows, so no GC is needed around f (a fuzz target calls this often).
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// bombs are inputs that cost without bound before anything checked them; each is refused
// at its line, in a few megabytes.
var bombs = []struct {
	name, data string
	line       int
	want       string
}{
	{"alias bomb", aliasBomb(), 1, "an anchor (&)"},
	{"one alias", "version: 1\nrules:\n  - name: a\n    scope: text\n    text: *t\n", 5, "an alias (*)"},
	{"merge key", "version: 1\nrules:\n  - <<: *base\n    name: a\n", 3, "an alias (*)"},
	{"flow nesting", "version: 1\nrules: " + strings.Repeat("[", 100_000) + "\n", 2, "nested deeper than 32 levels"},
	{"block nesting", "version: 1\nrules:\n" + strings.Repeat("- ", 100_000) + "x\n", 3, "nested deeper than 32 levels"},
	// The first "k" is a key of the top mapping, the 33rd is at depth 33.
	{"mapping nesting", "version: 1\nrules:\n" + nestedKeys(40), 35, "nested deeper than 32 levels"},
	{"JSON nesting", `{"version": 1, "rules": [{"name": "a", "when": ` + strings.Repeat("[", 100_000), 1, "nested deeper than 32 levels"},
	{"too many tokens", "version: 1\nrules: [" + strings.Repeat("1,", 60_000) + "1]\n", 2, "more than 100000 YAML tokens"},
	// The line where the file crosses the cap: 11 bytes, then two a line.
	{"too large", "version: 1\n" + strings.Repeat("#\n", rulefile.MaxBytes/2) + "rules: []\n", 1 + 1 + (rulefile.MaxBytes-11)/2, "more than 4194304 bytes"},
}

func nestedKeys(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "%sk:\n", strings.Repeat("  ", i))
	}
	return b.String()
}

// TestBombs: each bomb is refused, naming its line, and parsing it allocates at most
// 64 MB (the alias bomb reached 4.5 GB in 60 s, 100,000 brackets 11.7 GB).
func TestBombs(t *testing.T) {
	const budget = 64 << 20
	for _, tt := range bombs {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			n := allocated(func() { _, err = rulefile.Parse([]byte(tt.data), seeds.Environments()...) })
			t.Logf("%d bytes in, %.1f MB allocated: %v", len(tt.data), float64(n)/(1<<20), ruleinput.Excerpt(fmt.Sprint(err)))
			var fe *rulefile.Error
			if !errors.As(err, &fe) || fe.Line != tt.line || !strings.Contains(fe.Error(), tt.want) {
				t.Fatalf("got %v (line %d), want line %d and %q", err, lineOf(fe), tt.line, tt.want)
			}
			if n > budget {
				t.Errorf("%d bytes allocated, want at most %d", n, budget)
			}
		})
	}
}

func lineOf(e *rulefile.Error) int {
	if e == nil {
		return 0
	}
	return e.Line
}

// TestBombFiles: Load and LoadRule name the file and line, and read no more of a file
// than the cap. Not parallel: the allocation count is this test's alone.
func TestBombFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "bomb.yaml")
	if err := os.WriteFile(path, []byte(aliasBomb()), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := rulefile.Load(path, seeds.Environments()...); err == nil || !strings.HasPrefix(err.Error(), path+":1: an anchor") {
		t.Errorf("Load: %v", err)
	}
	if _, err := rulefile.LoadRule(path, seeds.Environments()...); err == nil || !strings.HasPrefix(err.Error(), path+":1: an anchor") {
		t.Errorf("LoadRule: %v", err)
	}
	big := filepath.Join(dir, "big.json")
	if err := os.WriteFile(big, []byte(`{"version":1,"rules":[]}`+strings.Repeat(" ", 3*rulefile.MaxBytes)), 0o600); err != nil {
		t.Fatal(err)
	}
	var err error
	n := allocated(func() { _, err = rulefile.Load(big, seeds.Environments()...) })
	if err == nil || !strings.Contains(err.Error(), "more than 4194304 bytes") {
		t.Errorf("Load of a 12 MB file: %v", err)
	}
	if n > 3*rulefile.MaxBytes {
		t.Errorf("Load of a 12 MB file allocated %d bytes: it read the whole file", n)
	}
}

// TestDeepestRuleFits: the limits refuse no valid rule. The deepest predicates Validate
// takes, written both ways export writes them (block lists of mappings in YAML), parse.
func TestDeepestRuleFits(t *testing.T) {
	t.Parallel()
	deepest := func(wrap func(streamrules.Predicate) streamrules.Predicate) *streamrules.Predicate {
		p := streamrules.Contains("x")
		for range streamrules.MaxPredicateDepth - 1 {
			p = wrap(p)
		}
		return &p
	}
	for name, p := range map[string]*streamrules.Predicate{
		"any_of": deepest(func(p streamrules.Predicate) streamrules.Predicate {
			return streamrules.AnyOf(p, streamrules.MaxChars(9))
		}),
		"not_": deepest(streamrules.Not),
	} {
		r := streamrules.Rule{Name: "deep", Scope: "text", Predicate: p, Text: "t"}
		r.Normalize()
		if err := streamrules.Validate(&r, seeds.Environments()); err != nil {
			t.Fatalf("%s: the deepest predicate is not valid: %v", name, err)
		}
		for _, f := range []rulefile.Format{rulefile.YAML, rulefile.JSON} {
			data, err := rulefile.Marshal(rulefile.Set{Version: 1, Rules: []streamrules.Rule{r}}, f)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := rulefile.Parse(data, seeds.Environments()...); err != nil {
				t.Errorf("%s in %s: %v\n%s", name, f, err, data)
			}
		}
	}
}

// BenchmarkBombs: what refusing each bomb costs, beside parsing a valid set of the same
// size (the baseline).
func BenchmarkBombs(b *testing.B) {
	var set rulefile.Set
	set.Version = 1
	for i := range 1000 {
		set.Rules = append(set.Rules, streamrules.Rule{Name: fmt.Sprintf("rule_%d", i), Scope: "text",
			Condition: "(?i)lorem ipsum", Text: "Never send placeholder text.", When: []string{"telegram"}})
	}
	valid, err := rulefile.Marshal(set, rulefile.YAML)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("valid set", func(b *testing.B) {
		b.SetBytes(int64(len(valid)))
		for b.Loop() {
			if _, err := rulefile.Parse(valid, seeds.Environments()...); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, bb := range bombs {
		b.Run(bb.name, func(b *testing.B) {
			data := []byte(bb.data)
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := rulefile.Parse(data, seeds.Environments()...); err == nil {
					b.Fatal("accepted")
				}
			}
		})
	}
}

// TestByteOrderMark: a file that starts with a UTF-8 byte order mark (as editors on
// Windows write it) parses as the file without it, in both formats and as a single
// rule, lines unchanged. Before, the mark was read as part of the first key.
func TestByteOrderMark(t *testing.T) {
	t.Parallel()
	const bom = "\xEF\xBB\xBF"
	for _, data := range []string{goodYAML, `{"version": 2, "rules": [{"name": "a", "scope": "text", "text": "t"}]}`} {
		want, err := rulefile.Parse([]byte(data), seeds.Environments()...)
		if err != nil {
			t.Fatal(err)
		}
		got, err := rulefile.Parse([]byte(bom+data), seeds.Environments()...)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("with a BOM: %v\n%+v\n%+v", err, got, want)
		}
	}
	for _, data := range []string{"name: a\nscope: text\ntext: t\n", `{"name": "a", "scope": "text", "text": "t"}`} {
		if _, err := rulefile.ParseRule([]byte(bom+data), seeds.Environments()...); err != nil {
			t.Errorf("ParseRule with a BOM: %v", err)
		}
	}
	if _, err := rulefile.DecodeRule([]byte(bom + `{"name": "a", "scope": "text", "text": "t"}`)); err != nil {
		t.Errorf("DecodeRule with a BOM: %v", err)
	}
	_, err := rulefile.Parse([]byte(bom+"version: 1\nrules:\n  - name: a\n    scope: text\n    text: t\n    Text: u\n"), seeds.Environments()...)
	var fe *rulefile.Error
	if !errors.As(err, &fe) || fe.Line != 6 || fe.Field != "Text" {
		t.Errorf("an error after a BOM: %v, want line 6 naming \"Text\"", err)
	}
}
