package mutate

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Row is a hand-written mutant, from a table: in File, the one occurrence of Old becomes
// New. Tables keep a known set of mutants reproducible while the code around them moves.
type Row struct {
	Line     int // the row's line in the table
	Name     string
	File     string
	Old, New string
}

// ParseTable reads a table: one row a line, four tab-separated fields (a name, the file
// relative to the module root, the text to replace and its replacement), the last two
// with Go's escapes (\t, \n, \\). Blank lines and lines starting with # are skipped.
//
//	drop the blank-repair check	judge.go	 || strings.TrimSpace(repaired) == ""
func ParseTable(r io.Reader) ([]Row, error) {
	var rows []Row
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 4 {
			return nil, fmt.Errorf("mutate: table line %d: %d fields, want 4 (name, file, old, new)", n, len(f))
		}
		old, err1 := unescape(f[2])
		repl, err2 := unescape(f[3])
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("mutate: table line %d: bad escape", n)
		}
		rows = append(rows, Row{Line: n, Name: f[0], File: f[1], Old: old, New: repl})
	}
	return rows, sc.Err()
}

func unescape(s string) (string, error) {
	return strconv.Unquote(`"` + strings.ReplaceAll(s, `"`, `\"`) + `"`)
}

// Mutant returns the row as a mutant of src: an error unless Old occurs exactly once.
func (r Row) Mutant(src []byte) (Mutant, error) {
	if n := bytes.Count(src, []byte(r.Old)); n != 1 || r.Old == "" {
		return Mutant{}, fmt.Errorf("mutate: table line %d (%s): %q occurs %d times in %s, want once", r.Line, r.Name, r.Old, n, r.File)
	}
	off := bytes.Index(src, []byte(r.Old))
	return Mutant{Line: 1 + bytes.Count(src[:off], []byte("\n")), Op: r.Name, Off: off, End: off + len(r.Old), Repl: r.New}, nil
}
