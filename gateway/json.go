package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
)

// object is a JSON object read in order, each value kept as the bytes it came as: what
// the gateway does not act on is written back unchanged, in the client's order.
type object []field

type field struct {
	key string
	raw json.RawMessage
}

var errNotObject = errors.New("not a JSON object")

// parseObject reads one JSON object, with nothing after it but space.
func parseObject(b []byte) (object, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := t.(json.Delim); !ok || d != '{' {
		return nil, errNotObject
	}
	var o object
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := kt.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		o = append(o, field{key, raw})
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the JSON object")
	}
	return o, nil
}

// get returns the value of key (the last one, as encoding/json reads duplicates).
func (o object) get(key string) (json.RawMessage, bool) {
	for i := len(o) - 1; i >= 0; i-- {
		if o[i].key == key {
			return o[i].raw, true
		}
	}
	return nil, false
}

// set replaces key's value in place, or appends it.
func (o object) set(key string, raw json.RawMessage) object {
	for i := len(o) - 1; i >= 0; i-- {
		if o[i].key == key {
			out := append(object(nil), o...)
			out[i].raw = raw
			return out
		}
	}
	return append(append(object(nil), o...), field{key, raw})
}

// bytes writes the object back: keys in their order, values as they came.
func (o object) bytes() []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(f.key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(f.raw)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// array writes raw values as a JSON array.
func array(items []json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, it := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(it)
	}
	b.WriteByte(']')
	return b.Bytes()
}

// jsonString encodes s as a JSON string, without HTML escaping (a tool result keeps its
// < and >: the reminder blocks are tags).
func jsonString(s string) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// isNull reports whether raw is absent or JSON null.
func isNull(raw json.RawMessage) bool {
	return len(raw) == 0 || string(raw) == "null"
}

// contentText is what a message's content says: a string, or its text parts joined.
func contentText(raw json.RawMessage) string {
	if isNull(raw) {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}
