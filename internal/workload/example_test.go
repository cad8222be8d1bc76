package workload_test

import (
	"fmt"
	"regexp"

	"github.com/streamrules/streamrules/internal/workload"
)

func Example() {
	rules := workload.RealisticPatterns(200, 1)
	quiet := workload.RealisticText(4096, 1, "")
	fired := workload.RealisticText(4096, 1, workload.FireText)
	count := func(text string) (n int) {
		for _, p := range rules {
			if regexp.MustCompile(p).MatchString(text) {
				n++
			}
		}
		return n
	}
	fmt.Println(len(rules), len(quiet), len(fired))
	fmt.Println(count(quiet), count(fired)) // FireText fires exactly rule 0
	// Output:
	// 200 4096 4096
	// 0 1
}
