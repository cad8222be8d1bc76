package mutate_test

import (
	"fmt"

	"github.com/streamrules/streamrules/internal/mutate"
)

func ExampleMutants() {
	src := []byte("package p\n\nfunc positive(n int) bool { return n > 0 }\n")
	ms, err := mutate.Mutants("p.go", src)
	if err != nil {
		panic(err)
	}
	for _, m := range ms {
		fmt.Printf("%s: %s", m, m.Apply(src)[len("package p\n\n"):])
	}
	// Output:
	// #1 line 3 >→>=: func positive(n int) bool { return n >= 0 }
}
