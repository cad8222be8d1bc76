package shellcmd

// The parser's cost grows faster than the script on deep nesting: 64 KiB of nested
// subshells or $((…)) took seconds, of `a | b | …` or `a && b && …` tens of
// milliseconds where 4 KB took one. Before parsing, one linear pass bounds what makes it
// recurse: the nesting of brackets and of compound commands, and the length of one chain
// of pipes and && || operators. A script past a bound is refused unread (ErrTooDeep,
// ErrTooMany), as bash scripts a model writes never come near: quoted text and
// here-document bodies are skipped, so data full of brackets is not counted.
const (
	// maxNesting bounds the nesting of ( { [ $( and of if/while/until/for/case/select.
	maxNesting = 100
	// maxChain bounds the operators of one pipeline or && || list.
	maxChain = 256
)

// prescan applies the bounds above to src in one pass.
func prescan(src string) error {
	brackets, keywords, chain := 0, 0, 0
	var heredocs []string // delimiters whose bodies start at the next newline
	wordStart := true
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch c {
		case '\\':
			i++
			wordStart = false
			continue
		case '\'':
			j := i + 1
			for j < len(src) && src[j] != '\'' {
				j++
			}
			i = j
			wordStart = false
			continue
		case '"':
			// Inside double quotes only $( and ` nest; brackets there are counted too
			// (rare in data, and counting more only refuses sooner).
		case '(', '{', '[':
			if brackets++; brackets > maxNesting {
				return ErrTooDeep
			}
		case ')', '}', ']':
			if brackets > 0 {
				brackets--
			}
		case '|':
			if i+1 < len(src) && src[i+1] == '|' {
				i++
			}
			if chain++; chain > maxChain {
				return ErrTooMany
			}
		case '&':
			if i+1 < len(src) && src[i+1] == '&' {
				i++
				if chain++; chain > maxChain {
					return ErrTooMany
				}
			}
		case ';':
			chain = 0
		case '\n':
			chain = 0
			if len(heredocs) > 0 {
				i = skipHeredocs(src, i+1, heredocs) - 1
				heredocs = heredocs[:0]
			}
		case '<':
			if i+2 < len(src) && src[i+1] == '<' && src[i+2] != '<' {
				j := i + 2
				if j < len(src) && src[j] == '-' {
					j++
				}
				for j < len(src) && (src[j] == ' ' || src[j] == '\t') {
					j++
				}
				start := j
				for j < len(src) && !isSpace(src[j]) && src[j] != ';' && src[j] != '|' && src[j] != '&' && src[j] != '<' && src[j] != '>' && src[j] != ')' {
					j++
				}
				if delim := unquoteDelim(src[start:j]); delim != "" {
					heredocs = append(heredocs, delim)
				}
				i = j - 1
				continue
			}
		}
		if wordStart && isKeywordStart(c) {
			j := i
			for j < len(src) && 'a' <= src[j] && src[j] <= 'z' {
				j++
			}
			if j == len(src) || isSpace(src[j]) || src[j] == ';' {
				switch src[i:j] {
				case "if", "while", "until", "for", "case", "select":
					if keywords++; keywords > maxNesting {
						return ErrTooDeep
					}
				case "fi", "done", "esac":
					if keywords > 0 {
						keywords--
					}
				}
			}
			i = j - 1
			wordStart = false
			continue
		}
		wordStart = isSpace(c) || c == ';' || c == '|' || c == '&' || c == '(' || c == ')' || c == '{' || c == '}'
	}
	return nil
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func isKeywordStart(c byte) bool {
	return c == 'i' || c == 'w' || c == 'u' || c == 'f' || c == 'c' || c == 's' || c == 'd' || c == 'e'
}

// unquoteDelim is a here-document delimiter with its quotes removed.
func unquoteDelim(w string) string {
	out := make([]byte, 0, len(w))
	for i := 0; i < len(w); i++ {
		switch w[i] {
		case '\'', '"':
		case '\\':
			if i+1 < len(w) {
				i++
				out = append(out, w[i])
			}
		default:
			out = append(out, w[i])
		}
	}
	return string(out)
}

// skipHeredocs returns the offset after the bodies of the here-documents delims, which
// start at src[i]: each ends at a line that is its delimiter (leading tabs allowed).
func skipHeredocs(src string, i int, delims []string) int {
	for _, d := range delims {
		for i < len(src) {
			end := i
			for end < len(src) && src[end] != '\n' {
				end++
			}
			line := src[i:end]
			for len(line) > 0 && line[0] == '\t' {
				line = line[1:]
			}
			i = end + 1
			if line == d {
				break
			}
		}
	}
	return min(i, len(src))
}
