package replay

import (
	"testing"

	"github.com/streamrules/streamrules/internal/ruleinput"
)

// FuzzPlainLine: plainLine only skips lines CheckJSON accepts. A line it calls plain
// that CheckJSON refuses would let a duplicate key or invalid UTF-8 through.
func FuzzPlainLine(f *testing.F) {
	for _, s := range []string{
		`{"chat":"c","answer":"a","answer":"b"}`,
		`{"chat":"c","tools":[{"name":"x","args":{"k":1,"k":2}}]}`,
		`{"Chat":"c"}`,
		`{"chat":"c","vars":{"Key":"v","key":"w"}}`,
		`{"chat":"c","answer":"\ud800"}`,
		"{\"chat\":\"c\",\"answer\":\"a\xffb\"}",
		`{"chat":"c","answer":"a\"b:\":","tools":[{"name":"x","args":"{\"a\":1,\"a\":2}"}]}`,
		`{"ch\u0061t":"c","chat":"d"}`,
		`{"chat":"c","tools":[{"name":"a","args":[{"x":1},{"x":2}]}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		var w wireMove
		if strictDecode(line, &w) != nil || !plainLine(line) {
			return
		}
		if err := ruleinput.CheckJSON(line, (*wireShape)(nil)); err != nil {
			t.Fatalf("plainLine(%q) but CheckJSON: %v", line, err)
		}
	})
}
