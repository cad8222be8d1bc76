package rulefile

import (
	"reflect"
	"testing"
)

// node is a recursive type, as a predicate tree is.
type node struct {
	Op    string `json:"op"`
	AllOf []node `json:"all_of,omitempty"`
	Not   *node  `json:"not_,omitempty"`
	Hide  string `json:"-"`
	//lint:ignore SA5008 encoding/json names a field "-" this way; the strict reader must too
	Dash string `json:"-,"`
	Data []byte `json:"data"`
	M    map[string]int
}

// TestShapeOfRecursiveType: a type that holds itself has a finite shape, strict at every
// depth.
func TestShapeOfRecursiveType(t *testing.T) {
	s := shapeOf(reflect.TypeFor[node](), true)
	if got := s.names(); !reflect.DeepEqual(got, []string{"-", "M", "all_of", "data", "not_", "op"}) {
		t.Errorf("keys %v", got)
	}
	if s.keys["all_of"].elem != s || s.keys["not_"] != s {
		t.Error("the recursion does not refer back to the type's shape")
	}
	for _, tc := range []struct {
		in    string
		field string
	}{
		{`{"op":"a","all_of":[{"op":"b","not_":{"op":"c"}}]}`, ""},
		{`{"op":"a","all_of":[{"op":"b","not_":{"OP":"c"}}]}`, "OP"},
		{`{"op":"a","all_of":[{"op":"b","op":"c"}]}`, "op"},
		{`{"M":{"any":1,"keys":2}}`, ""},
	} {
		perr := check([]byte(tc.in), s, nil)
		if (perr == nil) != (tc.field == "") || (perr != nil && perr.field != tc.field) {
			t.Errorf("%s: %+v, want field %q", tc.in, perr, tc.field)
		}
	}
}
