package splice

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/streamrules/streamrules/internal/tagskel"
)

// Body returns a tool's output as it is laid into the prompt copy, under the engine's
// reminder blocks when underBlocks. The empty-output marker (emptyMarker; "": none) is the
// service's, not the tool's: it is kept as is alone and removed under blocks. Any other
// output is cut at maxChars characters (0: no cap, see Cap), then neutralised.
func Body(output string, underBlocks bool, maxChars int, emptyMarker string) string {
	if emptyMarker != "" && strings.TrimSpace(output) == emptyMarker {
		// The marker is the service's, not the tool's output: never cut, gone under reminders.
		if !underBlocks {
			return output
		}
		output = ""
	}
	return tagskel.Neutralize(Cap(output, maxChars))
}

// Cap cuts s to max runes and says so, so the model knows the output was cut. A max of 0
// or less is no cap.
func Cap(s string, max int) string {
	if max <= 0 || len(s) <= max {
		return s
	}
	n := utf8.RuneCountInString(s)
	if n <= max {
		return s
	}
	i, count := 0, 0
	for i = range s {
		if count == max {
			break
		}
		count++
	}
	return s[:i] + "\n[output cut: " + strconv.Itoa(max) + " of " + strconv.Itoa(n) + " characters shown]"
}

// Blocks returns the blocks of reminders as they are laid on top of a tool result, in the
// order given, each followed by a newline; "" without reminders.
func Blocks[R interface{ Block() string }](reminders []R) string {
	if len(reminders) == 0 {
		return ""
	}
	var b strings.Builder
	for _, r := range reminders {
		b.WriteString(r.Block())
		b.WriteByte('\n')
	}
	return b.String()
}
