package cputime_test

import (
	"fmt"

	"github.com/streamrules/streamrules/internal/cputime"
)

func Example() {
	start := cputime.Process()
	sum := 0
	for i := range 1_000_000 {
		sum += i
	}
	fmt.Println(sum, cputime.Process() >= start)
	// Output: 499999500000 true
}
