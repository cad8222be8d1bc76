package streamrules

import (
	"strings"
	"unicode/utf8"
)

// checkEncoding rejects a NUL byte or invalid UTF-8 in any text field, naming the field.
// Every store runs it through Validate, so a rule behaves the same everywhere: PostgreSQL
// would refuse such text with an error that names no field ("invalid byte sequence for
// encoding UTF8: 0x00"), SQLite would store it and put the raw byte into the prompt.
func checkEncoding(r *Rule) error {
	fields := [...]struct{ name, value string }{
		{"name", r.Name}, {"scope", r.Scope}, {"condition", r.Condition},
		{"text", r.Text}, {"repeat", r.Repeat}, {"mode", string(r.Mode)},
	}
	for _, f := range fields {
		if err := checkString(f.name, f.value); err != nil {
			return err
		}
	}
	for _, w := range r.When {
		if err := checkString("when", w); err != nil {
			return err
		}
	}
	return nil
}

func checkString(field, s string) error {
	if i := strings.IndexByte(s, 0); i >= 0 {
		return invalid(field, "contains a NUL byte at byte %d", i)
	}
	if !utf8.ValidString(s) {
		return invalid(field, "not valid UTF-8")
	}
	return nil
}
