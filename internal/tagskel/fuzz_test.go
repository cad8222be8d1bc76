package tagskel

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/streamrules/streamrules/internal/forged"
)

// countTags counts the tags the skeleton detector reads in s.
func countTags(s string) int {
	n := 0
	for i, k := Find(s, 0); k > 0; i, k = Find(s, i+k) {
		n++
	}
	return n
}

func FuzzNeutralize(f *testing.F) {
	for _, s := range forged.Seeds {
		f.Add(s)
	}
	for _, v := range forgedVariants {
		f.Add(v.forged)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Neutralize(s)
		// Nothing the skeleton detector reads as a tag is left, nor what the plain
		// case-insensitive reading (an oracle apart from the detector) finds.
		if i, n := Find(out, 0); n > 0 {
			t.Fatalf("Neutralize(%q) = %q still holds a tag at %d", s, out, i)
		}
		if tag, ok := forged.EngineTag(out); ok {
			t.Fatalf("Neutralize(%q) = %q still holds %q", s, out, tag)
		}
		tags := countTags(s)
		if tags == 0 && out != s {
			t.Fatalf("Neutralize(%q) = %q changed text without a tag", s, out)
		}
		// Each tag's '<', however written, became one '[': nothing else changed.
		if strings.Count(out, "[")-strings.Count(s, "[") != tags || len(out) > len(s) {
			t.Fatalf("Neutralize(%q) = %q: %d tags, but not one '[' for each '<'", s, out, tags)
		}
		// Tool-call arguments are JSON and are neutralised in the prompt copy: JSON stays JSON.
		if json.Valid([]byte(s)) && !json.Valid([]byte(out)) {
			t.Fatalf("Neutralize(%q) = %q is no longer JSON", s, out)
		}
		if again := Neutralize(out); again != out {
			t.Fatalf("Neutralize not idempotent: %q then %q", out, again)
		}
	})
}

// FuzzForgedWithIgnorable: a forged tag stays a tag wherever a character that reads as
// nothing is slipped in after its '<', and the neutralised text holds no tag.
func FuzzForgedWithIgnorable(f *testing.F) {
	for i := range forged.Variants {
		f.Add(uint8(i), uint8(i*3), int32(0x200b))
	}
	f.Add(uint8(0), uint8(5), int32(0xad))
	f.Add(uint8(3), uint8(1), int32(0))
	f.Add(uint8(7), uint8(9), int32(0xe007f)) // CANCEL TAG: the tag characters that stand for ASCII are read as it
	f.Fuzz(func(t *testing.T, vi, pos uint8, r int32) {
		v := forged.Variants[int(vi)%len(forged.Variants)]
		if r < 0 || r > unicode.MaxRune || !utf8.ValidRune(r) {
			return
		}
		if sk, ok := skeletonOf(r); !ok || sk != "" {
			return // only what reads as nothing
		}
		if strings.ContainsAny(v.Tag[len(v.LT):], `&%\`) {
			return // inside an escape ("%2F"), a character breaks it for every reader
		}
		rest := []rune(v.Tag[len(v.LT):])
		p := int(pos) % (len(rest) + 1)
		s := v.LT + string(rest[:p]) + string(r) + string(rest[p:]) + ` rule="x">obey`
		if i, n := Find(s, 0); n != len(v.LT) || i != 0 {
			t.Fatalf("%s with %U at %d: %q not read as a tag (%d, %d)", v.Name, r, p, s, i, n)
		}
		if out := Neutralize(s); countTags(out) != 0 || !strings.HasPrefix(out, "[") {
			t.Fatalf("Neutralize(%q) = %q", s, out)
		}
	})
}
