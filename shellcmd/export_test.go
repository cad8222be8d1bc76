package shellcmd

// ParsedCommands is Commands without the plain-words path: every script goes through
// the parser (FuzzPlainWords compares the two).
func ParsedCommands(script string) ([]string, error) {
	if len(script) > MaxScriptBytes {
		return nil, ErrTooLong
	}
	r := newReader(script)
	if err := r.script(script, 0, nil, nil); err != nil {
		return nil, err
	}
	return r.out, nil
}
