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
	// draft 1, asked "Sort [3, 1, 2] in Python.": "Here is the sorted list:\n```python\nprint(sorted([3, 1, 2]))\n```"
	//   no_empty_refusal                 medium not_applicable
	//   end_with_runnable_or_assumption  medium pass
	//   no_pii_in_examples               high   pass
	//   cite_when_asserting_fact         low    not_applicable
	//   no_internal_library_leak         high   pass
	//   bounded_length                   low    pass
	//   urgent_line_on_safety            medium not_applicable
	// draft 2, asked "Print a file in Python.": "```python\nprint(open(path).read())\n```\nThis prints the file."
	//   no_empty_refusal                 medium not_applicable
	//   end_with_runnable_or_assumption  medium violation
	//   no_pii_in_examples               high   pass
	//   cite_when_asserting_fact         low    not_applicable
	//   no_internal_library_leak         high   pass
	//   bounded_length                   low    pass
	//   urgent_line_on_safety            medium not_applicable
	//   fixed in place, no model call: "```python\nprint(open(path).read())\n```\nThis prints the file.\n\nAssumption: example inputs are valid."
	//     +5 ""
	//     +6 "Assumption: example inputs are valid."
	// draft 3, asked "How do I sort a list?": "Sorting is done with sorted(): it returns a new list."
	//   no_empty_refusal                 medium not_applicable
	//   end_with_runnable_or_assumption  medium not_applicable
	//   no_pii_in_examples               high   pass
	//   cite_when_asserting_fact         low    not_applicable
	//   no_internal_library_leak         high   pass
	//   bounded_length                   low    pass
	//   urgent_line_on_safety            medium not_applicable
	// draft 4, asked "Is it safe to stay home during a gas leak?": "No. Leave the house, leave the door open and do not touch any switch."
	//   no_empty_refusal                 medium not_applicable
	//   end_with_runnable_or_assumption  medium not_applicable
	//   no_pii_in_examples               high   pass
	//   cite_when_asserting_fact         low    not_applicable
	//   no_internal_library_leak         high   pass
	//   bounded_length                   low    pass
	//   urgent_line_on_safety            medium violation
	//   fixed in place, no model call: "No. Leave the house, leave the door open and do not touch any switch.\n\nIf this is urgent, call your local emergency number now."
	//     +2 ""
	//     +3 "If this is urgent, call your local emergency number now."
}
