package shellcmd

// ParsedCommands is Commands without the plain-words path: every script goes through
// the parser (FuzzPlainWords compares the two).
func ParsedCommands(script string) ([]string, error) {
	r := reader{budget: 4*len(script) + 4096, braces: 8 + len(script)/16}
	if err := r.script(script, 0); err != nil {
		return nil, err
	}
	return r.out, nil
}
