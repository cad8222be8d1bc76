package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"unicode/utf8"
)

// object is a JSON object read in order, each value kept as the bytes it came as: what
// the gateway does not act on is written back unchanged, in the client's order.
type object []field

type field struct {
	key string
	raw json.RawMessage
}

var errNotObject = errors.New("not a JSON object")

// parseObject reads one JSON object, with nothing after it but space. The values are
// b's own bytes (not copied): b is checked once with json.Valid, then split by a scan
// that only has to find where each value ends.
func parseObject(b []byte) (object, error) {
	if !json.Valid(b) {
		var v any
		err := json.Unmarshal(b, &v)
		if err == nil {
			err = errors.New("invalid JSON")
		}
		return nil, err
	}
	return splitObject(b)
}

// splitObject is parseObject for b already known valid JSON or empty (a value cut out of
// a document parseObject or parseArray read): not checked again.
func splitObject(b []byte) (object, error) {
	i := skipSpace(b, 0)
	if i == len(b) || b[i] != '{' {
		return nil, errNotObject
	}
	var o object
	i = skipSpace(b, i+1)
	for b[i] != '}' {
		end := skipString(b, i)
		key := b[i+1 : end-1]
		var k string
		if bytes.IndexByte(key, '\\') < 0 && utf8.Valid(key) {
			k = string(key)
		} else if err := json.Unmarshal(b[i:end], &k); err != nil {
			return nil, err
		}
		i = skipSpace(b, end)
		i = skipSpace(b, i+1) // the colon
		end = skipValue(b, i)
		o = append(o, field{k, json.RawMessage(b[i:end:end])})
		i = skipSpace(b, end)
		if b[i] == ',' {
			i = skipSpace(b, i+1)
		}
	}
	return o, nil
}

// parseArray reads a JSON array's items (null: none), each as b's own bytes.
func parseArray(b []byte) ([]json.RawMessage, error) {
	if !json.Valid(b) {
		var v []json.RawMessage
		err := json.Unmarshal(b, &v)
		if err == nil {
			err = errors.New("invalid JSON")
		}
		return nil, err
	}
	return splitArray(b)
}

// splitArray is parseArray for b already known valid JSON or empty (see splitObject).
func splitArray(b []byte) ([]json.RawMessage, error) {
	i := skipSpace(b, 0)
	if i == len(b) {
		return nil, errors.New("not a JSON array")
	}
	if b[i] == 'n' { // valid, so null
		return nil, nil
	}
	if b[i] != '[' {
		return nil, errors.New("not a JSON array")
	}
	items := []json.RawMessage{}
	i = skipSpace(b, i+1)
	for b[i] != ']' {
		end := skipValue(b, i)
		items = append(items, json.RawMessage(b[i:end:end]))
		i = skipSpace(b, end)
		if b[i] == ',' {
			i = skipSpace(b, i+1)
		}
	}
	return items, nil
}

// The skips read valid JSON (json.Valid said so): each returns where its token ends.

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString: b[i] is a string's opening quote.
func skipString(b []byte, i int) int {
	for i++; ; i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
}

func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
	}
	for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != ' ' && b[i] != '\t' && b[i] != '\n' && b[i] != '\r' {
		i++
	}
	return i
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
		if plainKey(f.key) {
			b.WriteByte('"')
			b.WriteString(f.key)
			b.WriteByte('"')
		} else {
			k, _ := json.Marshal(f.key)
			b.Write(k)
		}
		b.WriteByte(':')
		b.Write(f.raw)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// plainKey reports whether json.Marshal writes key as it is, in quotes: printable ASCII
// without quote, backslash or what it escapes for HTML.
func plainKey(key string) bool {
	for i := 0; i < len(key); i++ {
		if c := key[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
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
