package ruleinput

import (
	"encoding/json"
	"io"
	"strings"
)

// Impl is rulefile's implementation of the functions below. Only rulefile calls Register.
type Impl struct {
	CheckJSON    func(data []byte, v any) error
	DecodeJSON   func(data []byte, v any) error
	DecodeFields func(data []byte, extra ...string) (map[string]json.RawMessage, error)
	ReadAll      func(r io.Reader) ([]byte, error)
}

var impl *Impl

// Register installs rulefile's implementation; rulefile calls it from init.
func Register(i Impl) { impl = &i }

func get() *Impl {
	if impl == nil {
		panic("ruleinput: package rulefile is not linked in: import it beside ruleinput")
	}
	return impl
}

// CheckJSON runs the checks of DecodeJSON on data against v's JSON names (v is a pointer
// to a struct, or the struct), without decoding: for a reader that decodes with
// encoding/json itself and must refuse what encoding/json lets through (a duplicate key,
// a key in another case, invalid UTF-8). Null is refused where v's field is not a
// pointer, as everywhere. Unlike the other readers it takes data of any size. The error
// is a *rulefile.Error naming the field.
func CheckJSON(data []byte, v any) error { return get().CheckJSON(data, v) }

// DecodeJSON decodes a JSON object into v (a pointer to a struct) as strictly as
// rulefile.Parse: v's JSON names exactly, no duplicates, valid UTF-8, nothing after the
// object. It is for the small inputs beside the rule's own (a tool's filters). The error
// is a *rulefile.Error naming the field.
func DecodeJSON(data []byte, v any) error { return get().DecodeJSON(data, v) }

// DecodeFields decodes a JSON object of some of a rule's fields, as strictly as
// rulefile.Parse, plus the extra keys the caller takes (an edit's "new_name"). The values
// are raw: give them to rulefile.Apply. The error is a *rulefile.Error naming the field.
func DecodeFields(data []byte, extra ...string) (map[string]json.RawMessage, error) {
	return get().DecodeFields(data, extra...)
}

// ReadAll reads what r holds as a rule file, or rulefile.MaxBytes+1 bytes of it, which
// rulefile.Parse and ParseRule then refuse: for standard input, whose size is not known in
// advance.
func ReadAll(r io.Reader) ([]byte, error) { return get().ReadAll(r) }

// excerptRunes is how much of its input an error quotes.
const excerptRunes = 64

// Excerpt returns s cut to its first 64 characters ("…" marks the cut), valid UTF-8:
// what an error or a tool's output may quote of its input.
func Excerpt(s string) string {
	if len(s) <= excerptRunes {
		return strings.ToValidUTF8(s, "\uFFFD")
	}
	n := 0
	for i := range s {
		if n == excerptRunes {
			return strings.ToValidUTF8(s[:i], "\uFFFD") + "…"
		}
		n++
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
