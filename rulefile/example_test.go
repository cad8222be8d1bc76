package rulefile_test

import (
	"fmt"

	"github.com/streamrules/streamrules/rulefile"
	"github.com/streamrules/streamrules/seeds"
)

func ExampleParse() {
	set, err := rulefile.Parse([]byte(`version: 1
rules:
  - name: no_lorem
    scope: text
    condition: (?i)lorem ipsum
    text: Never send placeholder text.
`), seeds.Environments()...)

	if err != nil {
		panic(err)
	}
	out, err := rulefile.Marshal(set, rulefile.JSON)
	if err != nil {
		panic(err)
	}
	fmt.Print(string(out))

	// A key in another case, and a bad regex: the line, the rule and the field.
	_, err = rulefile.Parse([]byte("version: 1\nrules:\n  - name: a\n    Scope: text\n"), seeds.Environments()...)
	fmt.Println(err)
	_, err = rulefile.Parse([]byte("version: 1\nrules:\n  - name: a\n    scope: text\n    condition: (\n    text: t\n"), seeds.Environments()...)
	fmt.Println(err)
	// Output:
	// {
	//   "version": 1,
	//   "rules": [
	//     {
	//       "name": "no_lorem",
	//       "scope": "text",
	//       "condition": "(?i)lorem ipsum",
	//       "negate": false,
	//       "when": [],
	//       "text": "Never send placeholder text.",
	//       "mode": "interrupt",
	//       "repeat": "",
	//       "enabled": true
	//     }
	//   ]
	// }
	// rulefile: line 4: rule #1 "a": unknown field "Scope": field names are case-sensitive, did you mean "scope"?
	// rulefile: line 5: rule #1 "a": streamrules: invalid condition: not an RE2 regular expression: error parsing regexp: missing closing ): `(`
}
