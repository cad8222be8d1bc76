package streamrules

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"
)

// fuzzRegexes are the atoms of fuzzed trees: literals the prefilter indexes, classes it
// cannot, anchors and $ inside, case folding, alternations.
var fuzzRegexes = []string{`a`, `b+`, `^a`, `a$`, `(?i)ab`, `\d`, `x|yz`, `a.*b`, `\s$`, `(?m)^c`, `.`, `ж`}

// takeByte consumes data's first byte and returns it; 0 when data is empty.
func takeByte(data *[]byte) int {
	if len(*data) == 0 {
		return 0
	}
	b := (*data)[0]
	*data = (*data)[1:]
	return int(b)
}

// textAtom is atom op (0-6) of the fuzzed trees over the target: re's four regex atoms,
// then the word and character bounds at n%6.
func textAtom(op int, re string, n int) Predicate {
	n %= 6
	switch op {
	case 0:
		return Contains(re)
	case 1:
		return NotContains(re)
	case 2:
		return StartsWith(re)
	case 3:
		return EndsWith(re)
	case 4:
		return MaxWords(n)
	case 5:
		return MinWords(n)
	}
	return MaxChars(n * 3)
}

// treeFrom builds a valid tree from bytes, consuming them; the same bytes build the same tree.
func treeFrom(data *[]byte, depth int) Predicate {
	next := func() int { return takeByte(data) }
	op := next() % 10
	if depth >= 4 && op >= 7 {
		op %= 7
	}
	re := fuzzRegexes[next()%len(fuzzRegexes)]
	n := next() % 6
	switch op {
	case 0, 1, 2, 3, 4, 5, 6:
		return textAtom(op, re, n)
	case 9:
		return Not(treeFrom(data, depth+1))
	}
	kids := make([]Predicate, 1+n%3)
	for i := range kids {
		kids[i] = treeFrom(data, depth+1)
	}
	if op == 7 {
		return AllOf(kids...)
	}
	return AnyOf(kids...)
}

// checkAgainstNaive compares the engine's verdict with the naive evaluator's, for the tree
// as a condition and as applies_when.
func checkAgainstNaive(t *testing.T, p Predicate, text string) {
	t.Helper()
	want := naiveHolds(&p, text)
	j, err := NewJudge(treeTextRule(p), testEnvs...)
	if err != nil {
		t.Fatalf("tree %s does not validate: %v", p.String(), err)
	}
	if got := j.Check(text, nil).Status == StatusViolation; got != want {
		t.Fatalf("tree %s on %q: engine %v, naive %v", p.String(), text, got, want)
	}
	r := textRule("scoped", "")
	r.AppliesWhen = &p
	if got := mustJudge(t, r).Check(text, nil).Status != StatusNotApplicable; got != want {
		t.Fatalf("applies_when %s on %q: engine %v, naive %v", p.String(), text, got, want)
	}
}

// FuzzPredicate: any tree, any text: the engine agrees with the naive evaluator.
func FuzzPredicate(f *testing.F) {
	f.Add([]byte{7, 0, 2, 0, 1, 0, 3, 4, 0}, "ab ba\n")
	f.Add([]byte{8, 0, 5, 9, 0, 6, 0}, "x 1 yz")
	f.Add([]byte{3, 8, 0}, "a b ")
	f.Add([]byte{2, 9, 0}, "c\nc")
	f.Add([]byte{9, 7, 0, 1, 4, 0, 3}, "ЖЖ жж")
	f.Fuzz(func(t *testing.T, shape []byte, text string) {
		p := treeFrom(&shape, 0)
		checkAgainstNaive(t, p, text)
	})
}

// TestPredicateRandom: the fuzz property over many seeded random trees, in every test run.
func TestPredicateRandom(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(13, 2))
	texts := []string{"", "a", "ab", "ba ab", "x yz 1", "c\nd", "a \n", "жж a b", "AB ab\nc", "1 2 3 4 5 6 7 8"}
	for range 2000 {
		shape := make([]byte, 24)
		for i := range shape {
			shape[i] = byte(rng.IntN(256))
		}
		p := treeFrom(&shape, 0)
		checkAgainstNaive(t, p, texts[rng.IntN(len(texts))])
	}
}

// FuzzRuleJSON: any JSON that decodes to a valid rule marshals back to a rule equal to it,
// trees, fixes and fields included: the wire form is exact.
func FuzzRuleJSON(f *testing.F) {
	f.Add(`{"name":"a","scope":"text","predicate":{"all_of":[{"contains_regex":"x"},{"not_":{"max_words":3}}]},"negate":true,"text":"t"}`)
	f.Add(`{"name":"b","scope":"tool:patch_file","field":"edits.new_string","condition":"TODO","severity":"low","text":"t"}`)
	f.Add(`{"name":"c","scope":"text","condition":"x$","applies_when":{"any_of":[{"starts_with_regex":"a"},{"min_chars":1}]},"fix":{"replace_regex":{"pattern":"(x)","with":"$1 {{id}}"}},"text":"t","enabled":false}`)
	f.Fuzz(func(t *testing.T, data string) {
		var r Rule
		if json.Unmarshal([]byte(data), &r) != nil {
			return
		}
		r.Normalize()
		if Validate(&r, testEnvs) != nil {
			return
		}
		out, err := json.Marshal(r)
		if err != nil {
			t.Fatalf("marshal %+v: %v", r, err)
		}
		var back Rule
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("unmarshal %s: %v", out, err)
		}
		if !reflect.DeepEqual(back, r) {
			t.Fatalf("round trip of %s\n got %+v\nwant %+v", out, back, r)
		}
		if _, err := NewJudge(r, testEnvs...); err != nil {
			t.Fatalf("a valid rule does not compile: %v", err)
		}
	})
}
