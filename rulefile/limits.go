package rulefile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"sync"

	"github.com/goccy/go-yaml/scanner"
	"github.com/goccy/go-yaml/token"
)

// The bounds every input goes through before it is parsed, so that no file, however
// small, costs more than a bounded time and memory (a YAML alias bomb of 500 bytes
// expands to gigabytes; 100,000 nested brackets take the parser's tree quadratic).
const (
	// MaxBytes is the largest file or input a rule set may be: about 9,000 rules as
	// export writes them.
	MaxBytes = 4 << 20
	// MaxDepth is how deeply objects and lists may nest. A set's deepest predicate
	// (streamrules.MaxPredicateDepth levels, an object and a list each) is at depth 19.
	MaxDepth = 32
	// maxYAMLTokens bounds what the YAML parser builds: a rule as export writes it is
	// about 30 tokens (so about 3,000 rules; JSON has no such bound), and the scanner and
	// the parser's tree cost about 1 KB a token at worst.
	maxYAMLTokens = 100_000
)

func tooLarge(data []byte) *Error {
	// The line that crosses the cap: a file read through readFile ends there.
	return &Error{Line: 1 + bytes.Count(data[:MaxBytes], []byte("\n")), Err: fmt.Errorf("more than %d bytes: split the set", MaxBytes)}
}

// readFile reads at most MaxBytes+1 bytes of a file: enough to know it is too large
// without reading all of /dev/zero.
func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("rulefile: %w", err)
	}
	defer f.Close()
	// One buffer of the file's size (io.ReadAll would grow one by a quarter at a time,
	// five times the file on the way), and the rest, if it grew since Stat.
	n := int64(MaxBytes + 1)
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() < n {
		n = st.Size() + 1
	}
	data := make([]byte, n)
	k, err := io.ReadFull(f, data)
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return data[:k], nil
	case err != nil:
		return nil, fmt.Errorf("rulefile: %w", err)
	case n == MaxBytes+1:
		return data, nil
	}
	rest, err := io.ReadAll(io.LimitReader(f, MaxBytes+1-n))
	if err != nil {
		return nil, fmt.Errorf("rulefile: %w", err)
	}
	return append(data, rest...), nil
}

// readAll reads what r holds as a rule file, or MaxBytes+1 bytes of it, which Parse and
// ParseRule then refuse: for standard input, whose size is not known in advance
// (ruleinput.ReadAll).
func readAll(r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("rulefile: %w", err)
	}
	return data, nil
}

// yamlTokens scans YAML token by token and refuses, at the line where it starts, what a
// rule file has no use for and what would cost without bound: anchors and aliases (an
// alias repeats a subtree, and aliases of aliases multiply), nesting deeper than
// MaxDepth, and more than maxYAMLTokens tokens. Only then may the parser build its tree.
//
// Block nesting has no brackets; it is read from the columns of its indicators: an entry
// ("- ", or a key before ":") at a greater column than the open collection's opens one
// inside it, at a smaller column closes collections, and a "- " at the column of a key
// is that key's list. This counts every level the parser will build, and at most that.
func yamlTokens(data []byte) (token.Tokens, *Error) {
	var s scanner.Scanner
	s.Init(string(data))
	type open struct {
		col int
		seq bool
	}
	var (
		tokens token.Tokens
		block  []open
		flow   int
		prev   *token.Token
	)
	enter := func(col int, seq bool) {
		for len(block) > 0 && block[len(block)-1].col > col {
			block = block[:len(block)-1]
		}
		if n := len(block); n > 0 && block[n-1].col == col {
			top := block[n-1]
			switch {
			case top.seq == seq:
				return // the next entry of the same collection
			case top.seq: // a key where the list of the key above ended
				block = block[:n-1]
				if n > 1 && block[n-2].col == col && !block[n-2].seq {
					return
				}
			}
		}
		block = append(block, open{col, seq})
	}
	for {
		batch, err := s.Scan()
		if errors.Is(err, io.EOF) {
			break
		}
		for _, tk := range batch {
			line := tk.Position.Line
			switch tk.Type {
			case token.AnchorType, token.AliasType:
				what := "an anchor (&)"
				if tk.Type == token.AliasType {
					what = "an alias (*)"
				}
				return nil, &Error{Line: line, Err: fmt.Errorf("%s: a rule file has no anchors or aliases, write the value out", what)}
			case token.DocumentHeaderType:
				block, flow = block[:0], 0
			case token.SequenceStartType, token.MappingStartType:
				flow++
			case token.SequenceEndType, token.MappingEndType:
				flow = max(flow-1, 0)
			case token.SequenceEntryType:
				if flow == 0 {
					enter(tk.Position.Column, true)
				}
			case token.MappingKeyType:
				if flow == 0 {
					enter(tk.Position.Column, false)
				}
			case token.MappingValueType:
				if flow == 0 && prev != nil {
					enter(prev.Position.Column, false)
				}
			}
			if len(block)+flow > MaxDepth {
				return nil, &Error{Line: line, Err: fmt.Errorf("nested deeper than %d levels", MaxDepth)}
			}
			if tk.Type != token.CommentType && tk.Type != token.SpaceType {
				prev = tk
			}
			tokens = append(tokens, tk)
			if len(tokens) > maxYAMLTokens {
				return nil, &Error{Line: line, Err: fmt.Errorf("more than %d YAML tokens: split the set", maxYAMLTokens)}
			}
		}
	}
	return tokens, nil
}

// checkShapes are the shapes checkJSON read, by type: a reader checks every line.
var checkShapes sync.Map

// checkJSON is ruleinput.CheckJSON: DecodeJSON's checks without decoding, for data of
// any size.
func checkJSON(data []byte, v any) error {
	t := reflect.TypeOf(v)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	s, ok := checkShapes.Load(t)
	if !ok {
		s, _ = checkShapes.LoadOrStore(t, shapeOf(t, true))
	}
	// Not read: the caller bounds its input (a transcript line is not a rule file).
	if perr := check(data, s.(*shape), nil); perr != nil {
		e := &Error{Field: perr.field, Err: perr.err}
		if perr.offset >= 0 {
			e.Line = lineAt(data, perr.offset)
		}
		return e
	}
	return nil
}
