package lazydfa_test

import (
	"fmt"

	"github.com/streamrules/streamrules/internal/lazydfa"
)

func ExampleDFA_Match() {
	d, err := lazydfa.Compile(`(?i)\b(can'?t|cannot)\b.{0,40}\bsee\b`)
	if err != nil {
		panic(err)
	}
	for _, text := range []string{"Sorry, I CAN'T really see it.", "I can see it."} {
		matched, ok := d.Match(text) // ok is false only when the DFA gave up
		fmt.Println(matched, ok)
	}
	// Output:
	// true true
	// false true
}

// A stream fed piece by piece: the match is reported once the character after it has
// arrived, so it holds whatever comes next.
func ExampleDFA_Feed() {
	d, err := lazydfa.Compile(`\bcan't\b`)
	if err != nil {
		panic(err)
	}
	c := d.Start()
	for _, piece := range []string{"I ca", "n't", " do that"} {
		out, _, _ := d.Feed(&c, []byte(piece))
		fmt.Printf("%q: %v\n", piece, out)
	}
	// Output:
	// "I ca": []
	// "n't": []
	// " do that": [0]
}
