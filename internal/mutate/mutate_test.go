package mutate_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/streamrules/streamrules/internal/mutate"
)

const sample = `package p

func f(a, b int, ok bool) int {
	if a < b && !ok {
		a += b
	}
	x := a
	g(x)
	return x
}

func g(int) {}
`

func TestMutants(t *testing.T) {
	t.Parallel()
	ms, err := mutate.Mutants("p.go", []byte(sample))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range ms {
		line := strings.Split(string(m.Apply([]byte(sample))), "\n")[m.Line-1]
		got = append(got, fmt.Sprintf("%d %s: %s", m.Line, m.Op, strings.TrimSpace(line)))
	}
	want := []string{
		"4 keep left of &&: if a < b {",
		"4 keep right of &&: if !ok {",
		"4 <→<=: if a <= b && !ok {",
		"4 &&→||: if a < b || !ok {",
		"4 drop !: if a < b && ok {",
		"5 drop statement: ",
		"5 +=→-=: a -= b",
		"8 drop statement: ",
	}
	if !slices.Equal(got, want) {
		t.Errorf("mutants:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for i, m := range ms {
		if m.ID != i+1 {
			t.Errorf("mutant %d has ID %d", i, m.ID)
		}
	}
}

func TestParseTable(t *testing.T) {
	t.Parallel()
	table := "# comment\n\nflip\tp.go\ta < b && !ok\ta < b\ndrop g\tp.go\t\\tg(x)\\n\t\\n\n"
	rows, err := mutate.ParseTable(strings.NewReader(table))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[1].Old != "\tg(x)\n" || rows[1].New != "\n" || rows[0].Line != 3 {
		t.Fatalf("rows %+v", rows)
	}
	m, err := rows[1].Mutant([]byte(sample))
	if err != nil || m.Line != 8 || strings.Contains(string(m.Apply([]byte(sample))), "g(x)") {
		t.Fatalf("mutant %+v, %v", m, err)
	}
	if _, err := (mutate.Row{Name: "twice", Old: "x"}).Mutant([]byte(sample)); err == nil {
		t.Error("a row whose text occurs more than once was accepted")
	}
	if _, err := mutate.ParseTable(strings.NewReader("only\ttwo\n")); err == nil {
		t.Error("a row of two fields was accepted")
	}
}
