package main

import (
	"context"
	"os"
)

func Example() {
	if err := run(context.Background(), os.Stdout); err != nil {
		panic(err)
	}
	// Output:
	// draft 1: "Here is the sorted list:\n```python\nprint(sorted([3, 1, 2]))\n```"
	//   no_empty_refusal                 medium not_applicable
	//   end_with_runnable_or_assumption  medium pass
	//   no_pii_in_examples               high   pass
	//   cite_when_asserting_fact         low    not_applicable
	//   no_internal_library_leak         high   pass
	//   bounded_length                   low    pass
	// draft 2: "```python\nprint(open(path).read())\n```\nThis prints the file."
	//   no_empty_refusal                 medium not_applicable
	//   end_with_runnable_or_assumption  medium violation
	//   no_pii_in_examples               high   pass
	//   cite_when_asserting_fact         low    not_applicable
	//   no_internal_library_leak         high   pass
	//   bounded_length                   low    pass
	//   fixed in place, no model call: "```python\nprint(open(path).read())\n```\nThis prints the file.\n\nAssumption: example inputs are valid."
	//     +5 ""
	//     +6 "Assumption: example inputs are valid."
	// draft 3: "Sorting is done with sorted(): it returns a new list."
	//   no_empty_refusal                 medium not_applicable
	//   end_with_runnable_or_assumption  medium not_applicable
	//   no_pii_in_examples               high   pass
	//   cite_when_asserting_fact         low    not_applicable
	//   no_internal_library_leak         high   pass
	//   bounded_length                   low    pass
}
