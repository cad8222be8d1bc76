package rulesdb

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/streamrules/streamrules"
)

// missingName returns ErrNotFound, wrapped with the name, for a name no row can have: a
// NUL or invalid UTF-8. PostgreSQL refuses such a parameter with an encoding error
// (22021) that would read as the store failing; no query is sent for it.
func missingName(name string) error {
	if utf8.ValidString(name) && !strings.ContainsRune(name, 0) {
		return nil
	}
	return fmt.Errorf("rulesdb: rule %q: %w", name, streamrules.ErrNotFound)
}
