package rawjson_test

import (
	"fmt"

	"github.com/streamrules/streamrules/internal/rawjson"
)

func ExampleString() {
	fmt.Printf("%q\n", rawjson.String("a\x00b\"\xff"))
	// Output: "\"a\\u0000b\\\"\xff\""
}
