package shellcmd

import (
	"errors"
	"strconv"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"

	"github.com/streamrules/streamrules"
)

// The engine reads shell rules with Commands as soon as this package is linked in.
func init() { streamrules.RegisterShellReader(Commands) }

// Bounds of one reading. A script past any of them is not read: Commands returns an
// error and the caller matches the raw text instead (see the package doc).
const (
	// MaxScriptBytes bounds the script read; a model's command line is far shorter.
	MaxScriptBytes = 64 << 10
	// MaxDepth bounds the nesting of scripts read inside scripts (bash -c, eval).
	MaxDepth = 8
	// MaxCommands bounds the commands one script yields, the ones read inside included.
	MaxCommands = 1024
	// maxBraceWords bounds the words one brace expansion makes; a bigger one stays as written.
	maxBraceWords = 64
)

// Errors of Commands, beside the parser's own (a *syntax.ParseError).
var (
	ErrTooLong  = errors.New("shellcmd: script longer than MaxScriptBytes")
	ErrTooDeep  = errors.New("shellcmd: scripts nested deeper than MaxDepth")
	ErrTooMany  = errors.New("shellcmd: more than MaxCommands commands")
	errTooLarge = errors.New("shellcmd: rendering larger than the bound")
)

// parsers reuses parsers: one costs a few allocations to make, and a reading is short.
var parsers = sync.Pool{New: func() any { return syntax.NewParser(syntax.Variant(syntax.LangBash)) }}

// Commands reads script as a shell would and returns each simple command it would run,
// one string per command, in the order they appear: the program's base name and its
// arguments after quote removal, one space between words, combined short flags split,
// assignments dropped, wrappers unwrapped and the scripts of bash -c and eval read too.
// See the package doc for the whole list and what stays out of reach.
//
// The cost is linear in the script: a parse, one walk, and a rendering bounded by a few
// times the script's length. Safe for concurrent use.
func Commands(script string) ([]string, error) {
	if len(script) > MaxScriptBytes {
		return nil, ErrTooLong
	}
	r := reader{budget: 4*len(script) + 4096, braces: 8 + len(script)/16}
	if words, ok := plainWords(script); ok {
		// Most command lines a model writes are plain words (ls -la /srv): no quote, no
		// expansion, no operator, so the parser would find exactly these words.
		// FuzzPlainWords holds the two paths to the same result.
		if err := r.command(words, 0); err != nil {
			return nil, err
		}
		return r.out, nil
	}
	if err := r.script(script, 0); err != nil {
		return nil, err
	}
	return r.out, nil
}

// plainWords splits a script made of plain words only: letters, digits and - _ . / = , :
// @ % + between spaces and tabs, not starting with a reserved word. Anything else (a
// quote, $, a glob, an operator, a newline, braces…) goes to the parser.
func plainWords(script string) ([]string, bool) {
	for i := 0; i < len(script); i++ {
		c := script[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == ' ' || c == '\t' || strings.IndexByte("-_./=,:@%+", c) >= 0) {
			return nil, false
		}
	}
	words := strings.Fields(script)
	if len(words) == 0 || reserved[words[0]] {
		return nil, false
	}
	return words, true
}

// reserved are the words the parser reads as syntax at the start of a command.
var reserved = map[string]bool{"if": true, "then": true, "else": true, "elif": true, "fi": true, "do": true, "done": true,
	"case": true, "esac": true, "while": true, "until": true, "for": true, "in": true, "function": true, "select": true,
	"time": true, "coproc": true}

// reader collects the commands of one reading.
type reader struct {
	out    []string
	budget int // bytes of rendering left
	braces int // words brace expansion may still make (8 + one per 16 bytes of the script): bounds the work per byte
}

func (r *reader) script(src string, depth int) error {
	if depth > MaxDepth {
		return ErrTooDeep
	}
	p := parsers.Get().(*syntax.Parser)
	f, err := p.Parse(strings.NewReader(src), "")
	parsers.Put(p)
	if err != nil {
		return err
	}
	var werr error
	syntax.Walk(f, func(n syntax.Node) bool {
		if werr != nil {
			return false
		}
		if c, ok := n.(*syntax.CallExpr); ok && len(c.Args) > 0 {
			werr = r.command(r.words(src, c.Args), depth)
		}
		return true
	})
	return werr
}

// command unwraps words, a simple command, and records what runs.
func (r *reader) command(words []string, depth int) error {
	for len(words) > 0 {
		// Assignments before the program (FOO=1 rm), and those env and sudo take.
		for len(words) > 0 && isAssignment(words[0]) {
			words = words[1:]
		}
		if len(words) == 0 {
			return nil
		}
		prog := baseName(words[0])
		args := words[1:]
		switch prog {
		case "sudo", "doas":
			words = skipOptions(args, "uUgCDhpRrtT", []string{"--user", "--group", "--host", "--prompt", "--chdir", "--role", "--type", "--close-from", "--other-user", "--chroot", "--command-timeout"})
			continue
		case "env":
			rest, split := envArgs(args)
			if split != "" {
				return r.script(split, depth+1)
			}
			words = rest
			continue
		case "nice":
			words = skipOptions(args, "n", []string{"--adjustment"})
			continue
		case "nohup", "builtin", "stdbuf", "unbuffer":
			words = skipOptions(args, "ioe", nil)
			continue
		case "time":
			words = skipOptions(args, "fo", []string{"--format", "--output"})
			continue
		case "command":
			if hasAnyFlag(args, 'v', 'V') {
				return r.emit(words) // command -v only looks the name up
			}
			words = skipOptions(args, "", nil)
			continue
		case "exec":
			words = skipOptions(args, "a", nil)
			continue
		case "xargs":
			words = skipOptions(args, "IiLlnPsdEa", []string{"--replace", "--max-lines", "--max-args", "--max-procs", "--max-chars", "--delimiter", "--eof", "--arg-file", "--process-slot-var"})
			continue
		case "timeout":
			words = skipOptions(args, "sk", []string{"--signal", "--kill-after"})
			if len(words) > 0 {
				words = words[1:] // the duration
			}
			continue
		case "bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "busybox":
			if prog == "busybox" && len(args) > 0 { // busybox sh -c, busybox rm -rf
				words = args
				continue
			}
			if s, ok := shellScript(args); ok {
				return r.script(s, depth+1)
			}
		case "eval":
			return r.script(strings.Join(args, " "), depth+1)
		case "find":
			return r.find(words, depth)
		}
		return r.emit(words)
	}
	return nil
}

// find records find itself and each command its -exec, -execdir, -ok and -okdir run.
func (r *reader) find(words []string, depth int) error {
	for i := 1; i < len(words); i++ {
		switch words[i] {
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(words) && words[j] != ";" && words[j] != "+" {
				j++
			}
			if j > i+1 {
				if err := r.command(words[i+1:j], depth); err != nil {
					return err
				}
			}
			i = j
		}
	}
	return r.emitAs(words, false) // find's options are words: -name is not -n -a -m -e
}

// emit records one command as rules see it: the program's base name, then the arguments
// with combined short flags split (-rf becomes -r -f) up to a "--".
func (r *reader) emit(words []string) error { return r.emitAs(words, true) }

// emitAs is emit, with combined short flags split or not.
func (r *reader) emitAs(words []string, split bool) error {
	if len(r.out) >= MaxCommands {
		return ErrTooMany
	}
	var b strings.Builder
	b.WriteString(baseName(words[0]))
	dashdash := false
	for _, w := range words[1:] {
		b.WriteByte(' ')
		if split && !dashdash && isShortCluster(w) {
			for i := 1; i < len(w); i++ {
				if i > 1 {
					b.WriteByte(' ')
				}
				b.WriteByte('-')
				b.WriteByte(w[i])
			}
			continue
		}
		dashdash = dashdash || w == "--"
		b.WriteString(w)
	}
	if r.budget -= b.Len(); r.budget < 0 {
		return errTooLarge
	}
	r.out = append(r.out, b.String())
	return nil
}

// isShortCluster reports whether w is two or more short flags written together: -rf.
func isShortCluster(w string) bool {
	if len(w) < 3 || w[0] != '-' {
		return false
	}
	for i := 1; i < len(w); i++ {
		if c := w[i]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}

// baseName is the program's name without its directory: /bin/rm and ./rm are rm.
func baseName(w string) string {
	w = strings.TrimRight(w, "/")
	if i := strings.LastIndexByte(w, '/'); i >= 0 {
		return w[i+1:]
	}
	return w
}

// isAssignment reports whether w is NAME=value or NAME+=value.
func isAssignment(w string) bool {
	i := strings.IndexByte(w, '=')
	if i <= 0 {
		return false
	}
	if w[i-1] == '+' { // an append: x+=1
		i--
		if i == 0 {
			return false
		}
	}
	for j := 0; j < i; j++ {
		c := w[j]
		if !(c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || j > 0 && '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

// skipOptions drops a wrapper's options: short flags (clustered or not; a flag in withArg
// takes the next word, or the rest of its cluster), long options (those in longArg take
// the next word unless written --opt=value), and a "--" that ends them.
func skipOptions(args []string, withArg string, longArg []string) []string {
	for len(args) > 0 {
		w := args[0]
		switch {
		case w == "--":
			return args[1:]
		case strings.HasPrefix(w, "--"):
			args = args[1:]
			if !strings.Contains(w, "=") && contains(longArg, w) && len(args) > 0 {
				args = args[1:]
			}
		case len(w) > 1 && w[0] == '-':
			args = args[1:]
			for i := 1; i < len(w); i++ {
				if strings.IndexByte(withArg, w[i]) >= 0 {
					if i == len(w)-1 && len(args) > 0 {
						args = args[1:]
					}
					break
				}
			}
		default:
			return args
		}
	}
	return args
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func hasAnyFlag(args []string, flags ...byte) bool {
	for _, w := range args {
		if len(w) < 2 || w[0] != '-' || w == "--" {
			return false
		}
		for _, f := range flags {
			if strings.IndexByte(w[1:], f) >= 0 {
				return true
			}
		}
	}
	return false
}

// envArgs drops env's options and assignments. env -S (--split-string) splits its string
// into the command: that string is returned to be read as a script.
func envArgs(args []string) (rest []string, split string) {
	for len(args) > 0 {
		w := args[0]
		switch {
		case w == "--":
			return args[1:], ""
		case w == "-S" || w == "--split-string":
			if len(args) > 1 {
				return nil, strings.Join(args[1:], " ")
			}
			return nil, ""
		case strings.HasPrefix(w, "-S"):
			return nil, strings.Join(append([]string{w[2:]}, args[1:]...), " ")
		case strings.HasPrefix(w, "--split-string="):
			return nil, strings.Join(append([]string{strings.TrimPrefix(w, "--split-string=")}, args[1:]...), " ")
		case w == "-u" || w == "-C" || w == "--unset" || w == "--chdir":
			args = args[1:]
			if len(args) > 0 {
				args = args[1:]
			}
		case len(w) > 1 && w[0] == '-':
			args = args[1:]
		case isAssignment(w):
			args = args[1:]
		default:
			return args, ""
		}
	}
	return nil, ""
}

// shellScript finds the script of "bash [options] -c script": the first operand after
// an option cluster that holds c (-c, -lc, -ec).
func shellScript(args []string) (string, bool) {
	c := false
	for i, w := range args {
		switch {
		case w == "--":
			if c && i+1 < len(args) {
				return args[i+1], true
			}
			return "", false
		case len(w) > 1 && (w[0] == '-' || w[0] == '+'):
			if w == "-o" || w == "+o" || w == "-O" || w == "+O" {
				continue // its argument is a word that is not the script; rare, and harmless
			}
			if w[0] == '-' && w[1] != '-' && strings.IndexByte(w[1:], 'c') >= 0 {
				c = true
			}
		default:
			if c {
				return w, true
			}
			return "", false
		}
	}
	return "", false
}

// words renders the words of a call after quote removal and brace expansion; parts that
// only the running shell can expand ($VAR, $(…), globs) stay as written in src.
func (r *reader) words(src string, ws []*syntax.Word) []string {
	out := make([]string, 0, len(ws))
	for _, w := range ws {
		if len(w.Parts) == 1 {
			// Most words are one literal, a quoted string or an expansion: no braces to
			// split, nothing to join.
			switch p := w.Parts[0].(type) {
			case *syntax.BraceExp: // an element of an outer expansion: below
			case *syntax.Lit:
				if strings.IndexByte(p.Value, '{') >= 0 {
					break
				}
				out = append(out, r.part(src, p))
				continue
			default:
				out = append(out, r.part(src, p))
				continue
			}
		}
		// SplitBraces rewrites the word it is given: split a copy, so the walk still to
		// come never meets a brace node (syntax.Walk does not know them).
		if split := *w; r.braces > 0 && syntax.SplitBraces(&split) { // budget spent: as written
			w = &split
		}
		var b strings.Builder
		var alts []string // nil until a brace expansion: the word is b
		for _, part := range w.Parts {
			if br, ok := part.(*syntax.BraceExp); ok {
				if alts == nil {
					alts = []string{b.String()}
				}
				alts = r.braceAlts(src, alts, br)
				continue
			}
			s := r.part(src, part)
			if alts == nil {
				b.WriteString(s)
				continue
			}
			for i := range alts {
				alts[i] += s
			}
		}
		if alts == nil {
			out = append(out, b.String())
			continue
		}
		out = append(out, alts...) // {rm,-rf,x} is three words
	}
	return out
}

// braceAlts crosses alts with the elements of one brace expansion, within maxBraceWords;
// past it, the expansion is kept as one literal word.
func (r *reader) braceAlts(src string, alts []string, b *syntax.BraceExp) []string {
	var elems []string
	if b.Sequence {
		elems = sequence(r.words(src, b.Elems), r.braces)
	} else {
		for _, e := range b.Elems {
			elems = append(elems, r.words(src, []*syntax.Word{e})...)
		}
	}
	n := len(alts) * len(elems)
	over := len(elems) == 0 || n > maxBraceWords || n > r.braces
	r.braces -= max(1, n) // a refused expansion costs its try too: the budget bounds the work
	if over {
		lit := "{" + strings.Join(elems, ",") + "}"
		for i := range alts {
			alts[i] += lit
		}
		return alts
	}
	out := make([]string, 0, n)
	for _, a := range alts {
		for _, e := range elems {
			out = append(out, a+e)
		}
	}
	return out
}

// sequence expands {x..y[..step]} over numbers or single letters; nil if it is neither.
func sequence(bounds []string, limit int) []string {
	if len(bounds) < 2 || len(bounds) > 3 {
		return nil
	}
	step := 1
	if len(bounds) == 3 {
		n, err := strconv.Atoi(bounds[2])
		if err != nil || n == 0 {
			return nil
		}
		step = max(n, -n)
	}
	from, err1 := strconv.Atoi(bounds[0])
	to, err2 := strconv.Atoi(bounds[1])
	letters := false
	if err1 != nil || err2 != nil {
		if len(bounds[0]) != 1 || len(bounds[1]) != 1 {
			return nil
		}
		from, to, letters = int(bounds[0][0]), int(bounds[1][0]), true
	}
	if from > to {
		step = -step
	}
	var out []string
	for i := from; (step > 0 && i <= to) || (step < 0 && i >= to); i += step {
		if len(out) > min(maxBraceWords, limit) {
			return out // too many: braceAlts keeps the expansion as written
		}
		if letters {
			out = append(out, string(rune(i)))
		} else {
			out = append(out, strconv.Itoa(i))
		}
	}
	return out
}

// part renders one word part.
func (r *reader) part(src string, p syntax.WordPart) string {
	switch x := p.(type) {
	case *syntax.Lit:
		return unescape(x.Value, false)
	case *syntax.SglQuoted:
		if x.Dollar {
			return ansiC(x.Value)
		}
		return x.Value
	case *syntax.BraceExp:
		// Only an expansion past the bounds gets here (words expands the others): it
		// stays one word, its elements as written.
		var elems []string
		for _, e := range x.Elems {
			elems = append(elems, strings.Join(r.words(src, []*syntax.Word{e}), " "))
		}
		sep := ","
		if x.Sequence {
			sep = ".."
		}
		return "{" + strings.Join(elems, sep) + "}"
	case *syntax.DblQuoted:
		var b strings.Builder
		for _, q := range x.Parts {
			if l, ok := q.(*syntax.Lit); ok {
				b.WriteString(unescape(l.Value, true))
			} else {
				b.WriteString(r.part(src, q))
			}
		}
		return b.String()
	}
	return sourceOf(src, p)
}

// sourceOf is a node's text as written, or "" when its positions do not fit src.
func sourceOf(src string, n syntax.Node) string {
	start, end := int(n.Pos().Offset()), int(n.End().Offset())
	if !n.Pos().IsValid() || !n.End().IsValid() || start > end || end > len(src) {
		return ""
	}
	return src[start:end]
}

// unescape removes the backslashes quote removal removes: before any character outside
// quotes, before $ ` " \ and a newline inside double quotes; a backslash-newline goes whole.
func unescape(s string, dq bool) string {
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		next := s[i+1]
		switch {
		case next == '\n':
			i++
		case !dq || strings.IndexByte("$`\"\\", next) >= 0:
			b.WriteByte(next)
			i++
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// ansiC decodes the escapes of a $'…' string, as bash does.
func ansiC(s string) string {
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch c := s[i]; c {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'a':
			b.WriteByte(7)
		case 'b':
			b.WriteByte(8)
		case 'e', 'E':
			b.WriteByte(27)
		case 'f':
			b.WriteByte(12)
		case 'v':
			b.WriteByte(11)
		case 'x', 'u', 'U':
			n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[c]
			j := i + 1
			for j < len(s) && j-i-1 < n && isHex(s[j]) {
				j++
			}
			if j == i+1 {
				b.WriteByte('\\')
				b.WriteByte(c)
				continue
			}
			v, _ := strconv.ParseUint(s[i+1:j], 16, 32)
			if c == 'x' {
				b.WriteByte(byte(v))
			} else {
				b.WriteRune(rune(v))
			}
			i = j - 1
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(s) && j-i < 3 && '0' <= s[j] && s[j] <= '7' {
				j++
			}
			v, _ := strconv.ParseUint(s[i:j], 8, 16)
			b.WriteByte(byte(v))
			i = j - 1
		default:
			b.WriteByte(c) // \\ \' \" and the unknown ones
		}
	}
	return b.String()
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }
