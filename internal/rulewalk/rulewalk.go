// Package rulewalk visits every string a rule holds, named by its wire path
// (fix.replace_regex.with, predicate.all_of[1].not_.contains_regex), so tests can hold
// every text field to the same rules without listing the fields by hand: a field added
// to streamrules.Rule is visited the day it is added.
package rulewalk

import (
	"reflect"
	"strconv"
	"strings"
)

// Strings calls visit with the path and a pointer to each string reachable from v (a
// pointer to a struct) through exported fields with a JSON name, pointers and slices.
// Empty strings are visited too; nil pointers and empty slices hold none.
func Strings(v any, visit func(path string, s *string)) {
	walk(reflect.ValueOf(v).Elem(), "", visit)
}

func walk(v reflect.Value, path string, visit func(string, *string)) {
	switch v.Kind() {
	case reflect.String:
		visit(path, (*string)(v.Addr().UnsafePointer()))
	case reflect.Pointer:
		if !v.IsNil() {
			walk(v.Elem(), path, visit)
		}
	case reflect.Slice:
		for i := range v.Len() {
			walk(v.Index(i), path+"["+strconv.Itoa(i)+"]", visit)
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if !f.IsExported() || name == "-" || name == "" {
				continue
			}
			if path != "" {
				name = path + "." + name
			}
			walk(v.Field(i), name, visit)
		}
	}
}
