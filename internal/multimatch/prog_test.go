package multimatch

import "testing"

// TestRestartThreads: a narrow character the start reaches, read again by the chain behind
// it, wakes a thread per instruction of that chain on a text dense in it; a literal the
// chain does not read, or a multi-character entry, does not.
func TestRestartThreads(t *testing.T) {
	for _, c := range []struct {
		pattern string
		want    int
	}{
		{`e\w{20}\d`, 20}, // the \w chain (\d does not read e)
		{`a[ab]{14}c`, 14},
		{`f[\W_]*u`, 0},
		{`\bnevi.{0,30}\bsupa\b`, 0},
		{`darn`, 0},
	} {
		a, err := Analyze(c.pattern)
		if err != nil {
			t.Fatal(err)
		}
		if a.restart != c.want {
			t.Errorf("%q: %d restarted threads, want %d", c.pattern, a.restart, c.want)
		}
	}
}
