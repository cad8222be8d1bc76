package rulefile_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/rulefile"
	"github.com/streamrules/streamrules/seeds"
)

// TestDeliveryFields: a rule file carries delivery and hint both ways, and a bad value is
// an error naming the line, the rule and the field.
func TestDeliveryFields(t *testing.T) {
	t.Parallel()
	src := "version: 1\nrules:\n  - name: teeth\n    scope: tool:shell\n    text: Never rm -rf. Ask first.\n    delivery: full\n    hint: No rm -rf.\n"
	set, err := rulefile.Parse([]byte(src), seeds.Environments()...)
	if err != nil {
		t.Fatal(err)
	}
	r := set.Rules[0]
	if r.Delivery != streamrules.DeliveryFull || r.Hint != "No rm -rf." {
		t.Fatalf("parsed %+v", r)
	}
	for _, f := range []rulefile.Format{rulefile.YAML, rulefile.JSON} {
		data, err := rulefile.Marshal(set, f)
		if err != nil {
			t.Fatal(err)
		}
		again, err := rulefile.Parse(data, seeds.Environments()...)
		if err != nil || !reflect.DeepEqual(again, set) {
			t.Fatalf("%s round trip: %+v, %v\n%s", f, again, err, data)
		}
	}
	_, err = rulefile.Parse([]byte("version: 1\nrules:\n  - name: teeth\n    scope: tool:shell\n    text: t\n    delivery: manifest\n"), seeds.Environments()...)
	var fe *rulefile.Error
	var ve *streamrules.ValidationError
	if !errors.As(err, &fe) || fe.Rule != 1 || fe.Name != "teeth" || !errors.As(err, &ve) || ve.Field != "delivery" {
		t.Fatalf("bad delivery: %v", err)
	}
}
