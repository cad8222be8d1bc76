package ruleinput_test

import (
	"fmt"

	"github.com/streamrules/streamrules/internal/ruleinput"
	_ "github.com/streamrules/streamrules/rulefile" // registers the implementation
)

// A tool's input decoded as strictly as a rule file: a key spelled in another case is
// refused, naming it, where encoding/json would take it.
func ExampleDecodeJSON() {
	var in struct {
		Rule string `json:"rule"`
	}
	fmt.Println(ruleinput.DecodeJSON([]byte(`{"rule":"no_rm"}`), &in), in.Rule)
	fmt.Println(ruleinput.DecodeJSON([]byte(`{"Rule":"no_rm"}`), &in))
	// Output:
	// <nil> no_rm
	// rulefile: line 1: unknown field "Rule": field names are case-sensitive, did you mean "rule"?
}
