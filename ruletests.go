package streamrules

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// Limits on a rule's tests (Rule.Tests), enforced by Validate.
const (
	// MaxTestExamples bounds each list of a rule's tests: fires and passes.
	MaxTestExamples = 32
	// MaxExampleBytes bounds an example's text (an answer, or a tool call's arguments)
	// and its input.
	MaxExampleBytes = 8192
	// MaxExampleTools bounds an example's tool record.
	MaxExampleTools = 64
)

// RuleTests are a rule's examples: each of Fires must fire the rule, each of Passes must
// not (a pass, or not applicable). They are never sent to the model and change nothing
// in a move; the rule's judge runs them (the ruletest package, `streamrules test`).
type RuleTests struct {
	Fires  []Example `json:"fires,omitempty"`
	Passes []Example `json:"passes,omitempty"`
}

// Example is one of a rule's tests: what the rule judges, and the context a rule with
// context atoms reads. On the wire an example with text only is a JSON string; with
// context it is an object {"text": …, "input": …, "tools": [{"tool": …, "ok": …}]}.
type Example struct {
	// Text is what the rule judges: the answer for a text rule, the call's arguments
	// (JSON, as the model sends them) for a tool rule.
	Text string `json:"text"`
	// Input is the move's input (the user's message) the context atoms read; nil: the
	// example gives none, and an input atom is not applicable.
	Input *string `json:"input,omitempty"`
	// Tools is the move's tool record before the target; nil: the example gives none, and
	// a tool atom is not applicable. An empty, non-nil slice is a record of no calls.
	Tools []ToolRun `json:"tools,omitempty"`
}

// exampleObject is an example's object form.
type exampleObject struct {
	Text  string     `json:"text"`
	Input *string    `json:"input,omitempty"`
	Tools *[]ToolRun `json:"tools,omitempty"`
}

// Facts returns the context the example gives, for Judge.Check: nil when it gives none.
func (e Example) Facts() *Facts {
	if e.Input == nil && e.Tools == nil {
		return nil
	}
	f := &Facts{HasInput: e.Input != nil, HasTools: e.Tools != nil, Tools: e.Tools}
	if e.Input != nil {
		f.Input = *e.Input
	}
	return f
}

// MarshalJSON writes a string for an example with text only, else the object form.
func (e Example) MarshalJSON() ([]byte, error) {
	var v any = e.Text
	if e.Input != nil || e.Tools != nil {
		o := exampleObject{Text: e.Text, Input: e.Input}
		if e.Tools != nil {
			o.Tools = &e.Tools
		}
		v = o
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// UnmarshalJSON reads a string, or the object form with exactly its keys.
func (e *Example) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '"' {
		*e = Example{}
		return json.Unmarshal(data, &e.Text)
	}
	if len(data) == 0 || data[0] != '{' {
		what := "number"
		switch {
		case len(data) == 0:
			what = "nothing"
		case data[0] == '[':
			what = "array"
		case data[0] == 't' || data[0] == 'f':
			what = "bool"
		case data[0] == 'n':
			return nil // null: as encoding/json, no change
		}
		return &json.UnmarshalTypeError{Value: what, Type: reflect.TypeFor[Example]()}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var o exampleObject
	if err := dec.Decode(&o); err != nil {
		return fmt.Errorf("an example object has the keys text, input and tools: %w", err)
	}
	*e = Example{Text: o.Text, Input: o.Input}
	if o.Tools != nil {
		e.Tools = *o.Tools
		if e.Tools == nil {
			e.Tools = []ToolRun{}
		}
	}
	return nil
}

// checkTests checks a rule's tests: the count of each list, each example's size, its
// encoding (no NUL byte, valid UTF-8) and its tool record. The field is named by its
// path in the object form: tests.fires[2].text, tests.passes[0].input.
func checkTests(t *RuleTests) error {
	if t == nil {
		return nil
	}
	for _, list := range [...]struct {
		key      string
		examples []Example
	}{{"fires", t.Fires}, {"passes", t.Passes}} {
		if n := len(list.examples); n > MaxTestExamples {
			return invalid("tests."+list.key, "%d examples, at most %d", n, MaxTestExamples)
		}
		for i, e := range list.examples {
			at := fmt.Sprintf("tests.%s[%d]", list.key, i)
			if err := checkExampleString(at+".text", e.Text); err != nil {
				return err
			}
			if e.Input != nil {
				if err := checkExampleString(at+".input", *e.Input); err != nil {
					return err
				}
			}
			if n := len(e.Tools); n > MaxExampleTools {
				return invalid(at+".tools", "%d calls, at most %d", n, MaxExampleTools)
			}
			for k, run := range e.Tools {
				field := fmt.Sprintf("%s.tools[%d].tool", at, k)
				if err := checkString(field, run.Tool); err != nil {
					return err
				}
				if strings.TrimSpace(run.Tool) == "" {
					return invalid(field, "empty: name the tool that ran")
				}
			}
		}
	}
	return nil
}

func checkExampleString(field, s string) error {
	if err := checkString(field, s); err != nil {
		return err
	}
	if len(s) > MaxExampleBytes {
		return invalid(field, "%d bytes, at most %d", len(s), MaxExampleBytes)
	}
	return nil
}
