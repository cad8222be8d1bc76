package main

// Colours for a terminal. Every code is five bytes, and a row is painted whole: a
// tabwriter counts the escape bytes as text, so rows whose escapes have the same length
// stay aligned.
const (
	plain  = "\x1b[39m"
	bold   = "\x1b[01m"
	dim    = "\x1b[02m"
	red    = "\x1b[31m"
	yellow = "\x1b[33m"
	reset  = "\x1b[0m"
)

// colors paints rows when stdout is a terminal and NO_COLOR is unset (no-color.org).
type colors struct{ on bool }

func (e *proc) colors() colors {
	return colors{on: isTerminal(e.stdout) && e.getenv("NO_COLOR") == ""}
}

func (c colors) paint(code, row string) string {
	if !c.on {
		return row
	}
	return code + row + reset
}
