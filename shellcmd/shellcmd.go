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
// error, and the engine refuses the call for a gate (a rule in mode interrupt) and
// matches the raw text for a reminder (see the package doc).
const (
	// MaxScriptBytes bounds the script read; a model's command line is far shorter.
	MaxScriptBytes = 64 << 10
	// MaxDepth bounds the nesting of scripts read inside scripts (bash -c, eval, a
	// function's body at its call).
	MaxDepth = 8
	// MaxCommands bounds the commands one script yields, the ones read inside included.
	MaxCommands = 1024
	// maxBraceWords bounds the words one brace expansion makes.
	maxBraceWords = 4096
)

// Errors of Commands, beside the parser's own (a *syntax.ParseError). Every one means
// the script was not read completely: a gate refuses it.
var (
	ErrTooLong = errors.New("shellcmd: script longer than MaxScriptBytes")
	ErrTooDeep = errors.New("shellcmd: scripts nested deeper than MaxDepth")
	ErrTooMany = errors.New("shellcmd: more than MaxCommands commands")
	// ErrTooLarge: the reading's work or rendering passed its budget, linear in the
	// script (brace expansions, function bodies read at each call).
	ErrTooLarge = errors.New("shellcmd: reading larger than its budget")
	// ErrNotStatic: a command word or a script is known only when the shell runs it: an
	// unquoted expansion or glob as the program ($CMD -rf x, $(curl …)), a script piped
	// or redirected into a shell from something other than echo, printf or a here-doc.
	ErrNotStatic = errors.New("shellcmd: a command is known only when it runs")
)

// parsers reuses parsers: one costs a few allocations to make, and a reading is short.
var parsers = sync.Pool{New: func() any { return syntax.NewParser(syntax.Variant(syntax.LangBash)) }}

// Commands reads script as a shell would and returns each simple command it would run,
// one string per command, in the order they appear: the program's base name and its
// words after quote removal, one space between words, combined short flags split,
// assignments dropped, wrappers unwrapped and the scripts they run read too. A word's
// own whitespace is rendered as U+00A0 (no-break space), so in a rendered command `\s`
// only ever separates words: `git commit -m "never push -f"` is
// "git commit -m never\u00a0push\u00a0-f", whose words hold no flag -f. See the package
// doc for the whole list and what stays out of reach.
//
// The cost is linear in the script: a parse, walks whose nodes, brace words and
// rendered bytes come from one budget of a few times the script's length. Safe for
// concurrent use.
func Commands(script string) ([]string, error) {
	if len(script) > MaxScriptBytes {
		return nil, ErrTooLong
	}
	r := newReader(script)
	if words, ok := plainWords(script); ok {
		// Most command lines a model writes are plain words (ls -la /srv): no quote, no
		// expansion, no operator, so the parser would find exactly these words.
		// FuzzPlainWords holds the two paths to the same result.
		if err := r.command(&scope{}, words, 0); err != nil {
			return nil, err
		}
		return r.out, nil
	}
	if err := r.script(script, 0, nil, nil); err != nil {
		return nil, err
	}
	return r.out, nil
}

func newReader(script string) *reader {
	return &reader{budget: 4*len(script) + 4096, work: 3*len(script) + 4096}
}

// plainWords splits a script made of plain words only: letters, digits and - _ . / = , :
// @ % + between spaces and tabs, not starting with a reserved word. Anything else (a
// quote, $, a glob, an operator, a newline, braces…) goes to the parser.
func plainWords(script string) ([]word, bool) {
	for i := 0; i < len(script); i++ {
		c := script[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == ' ' || c == '\t' || strings.IndexByte("-_./=,:@%+", c) >= 0) {
			return nil, false
		}
	}
	fields := strings.Fields(script)
	if len(fields) == 0 || reserved[fields[0]] {
		return nil, false
	}
	words := make([]word, len(fields))
	for i, f := range fields {
		words[i] = word{s: f}
	}
	return words, true
}

// reserved are the words the parser reads as syntax at the start of a command.
var reserved = map[string]bool{"if": true, "then": true, "else": true, "elif": true, "fi": true, "do": true, "done": true,
	"case": true, "esac": true, "while": true, "until": true, "for": true, "in": true, "function": true, "select": true,
	"time": true, "coproc": true}

// word is one word of a command after quote removal and expansion of what is static.
type word struct {
	s     string
	dyn   bool // holds an expansion only the running shell knows ($x, $(…), `…`)
	split bool // an unquoted expansion or glob: it may become several words, or none
	// proc is the word's process substitution when it is one alone: <(…), as `source`
	// reads; its positions are in the script of the command's scope.
	proc *syntax.ProcSubst
}

// funcDef is one definition of a function, read at each call.
type funcDef struct {
	src    string
	body   *syntax.Stmt
	called bool
}

// reader collects the commands of one reading. Its budgets are the whole script's: the
// scripts read inside it draw on them too.
type reader struct {
	out    []string
	budget int // bytes of rendering left
	work   int // nodes walked, words rendered and brace words made, left
	err    error
	funcs  map[string][]*funcDef
	pipes  map[*syntax.Stmt]pipeFrom // the right side of a pipe → what its stdin is
}

type pipeFrom struct {
	src  string
	stmt *syntax.Stmt
	sc   *scope
}

// scope is where a command is read: the script its nodes are in, the positional
// parameters of a function or bash -c (nil: unknown, as written), and its standard input.
type scope struct {
	src    string
	params []word
	stdin  *input
	depth  int
}

// input is a command's standard input, as far as the reader knows it.
type input struct {
	text  string
	known bool // text is the whole input (echo, printf, a here-doc); else only the running shell knows it
}

func (r *reader) spend(n int) bool {
	if r.work -= n; r.work < 0 && r.err == nil {
		r.err = ErrTooLarge
	}
	return r.err == nil
}

// script parses src and reads it. stdin is the input its top-level commands inherit;
// params its positional parameters.
func (r *reader) script(src string, depth int, params []word, stdin *input) error {
	if depth > MaxDepth {
		return ErrTooDeep
	}
	if !r.spend(len(src) / 4) {
		return r.err
	}
	if err := prescan(src); err != nil {
		return err
	}
	p := parsers.Get().(*syntax.Parser)
	f, err := p.Parse(strings.NewReader(src), "")
	parsers.Put(p)
	if err != nil {
		return err
	}
	// Functions are read at their calls, with the call's arguments; all definitions of a
	// name are read (a redefinition later in the script does not hide the first).
	var defs []*funcDef
	walkDefs := func(n syntax.Node) bool {
		if fd, ok := n.(*syntax.FuncDecl); ok && fd.Name != nil {
			if r.funcs == nil {
				r.funcs = map[string][]*funcDef{}
			}
			d := &funcDef{src: src, body: fd.Body}
			r.funcs[fd.Name.Value] = append(r.funcs[fd.Name.Value], d)
			defs = append(defs, d)
		}
		return true
	}
	if mayDefine(src) {
		syntax.Walk(f, walkDefs)
	}
	sc := &scope{src: src, params: params, stdin: stdin, depth: depth}
	if err := r.walk(sc, f); err != nil {
		return err
	}
	// A function never called here may still run (a trap, export -f, a callback): its
	// body is read once, its parameters unknown.
	for _, d := range defs {
		if !d.called {
			d.called = true
			if err := r.walk(&scope{src: d.src, depth: depth + 1}, d.body); err != nil {
				return err
			}
		}
	}
	return r.err
}

// mayDefine reports whether src may define a function: it holds "function" or a "("
// followed by spaces and ")". Most scripts do not, and skip the walk that finds them.
func mayDefine(src string) bool {
	if strings.Contains(src, "function") {
		return true
	}
	for i := strings.IndexByte(src, '('); i >= 0; {
		j := i + 1
		for j < len(src) && (src[j] == ' ' || src[j] == '\t') {
			j++
		}
		if j < len(src) && src[j] == ')' {
			return true
		}
		k := strings.IndexByte(src[j:], '(')
		if k < 0 {
			break
		}
		i = j + k
	}
	return false
}

// walk reads every simple command under root.
func (r *reader) walk(sc *scope, root syntax.Node) error {
	if sc.depth > MaxDepth {
		return ErrTooDeep
	}
	var werr error
	syntax.Walk(root, func(n syntax.Node) bool {
		if werr != nil || !r.spend(1) {
			return false
		}
		switch x := n.(type) {
		case *syntax.FuncDecl:
			return false // read at its calls
		case *syntax.BinaryCmd:
			if x.Op == syntax.Pipe || x.Op == syntax.PipeAll {
				if r.pipes == nil {
					r.pipes = map[*syntax.Stmt]pipeFrom{}
				}
				r.pipes[x.Y] = pipeFrom{src: sc.src, stmt: x.X, sc: sc}
			}
		case *syntax.Stmt:
			if c, ok := x.Cmd.(*syntax.CallExpr); ok && len(c.Args) > 0 {
				inner := sc
				if in := r.stdinOf(sc, x); in != sc.stdin {
					inner = &scope{src: sc.src, params: sc.params, depth: sc.depth, stdin: in}
				}
				ws := r.words(inner, c.Args)
				if r.err != nil {
					werr = r.err
					return false
				}
				werr = r.command(inner, ws, sc.depth)
			}
		}
		return werr == nil
	})
	if werr != nil {
		return werr
	}
	return r.err
}

// stdinOf is a statement's standard input: its last input redirection (a here-doc, a
// here-string, a file), else the left side of the pipe it ends, else what its script
// inherited. nil: none (the tool's own, empty).
func (r *reader) stdinOf(sc *scope, s *syntax.Stmt) *input {
	var in *input
	for _, rd := range s.Redirs {
		if rd.N != nil && rd.N.Value != "0" {
			continue
		}
		switch rd.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			text, dyn := r.hdoc(sc, rd.Hdoc)
			in = &input{text: text, known: true}
			_ = dyn // a here-doc's expansions stay as written, as in bash -c "…$X…"
		case syntax.WordHdoc:
			ws := r.words(sc, []*syntax.Word{rd.Word})
			var parts []string
			for _, w := range ws {
				parts = append(parts, w.s)
			}
			in = &input{text: strings.Join(parts, " ") + "\n", known: true}
		case syntax.RdrIn, syntax.RdrInOut:
			in = &input{} // a file: only the running shell knows it
		}
	}
	if in != nil {
		return in
	}
	if p, ok := r.pipes[s]; ok {
		text, ok := r.output(p.sc, p.stmt, 0)
		return &input{text: text, known: ok}
	}
	return sc.stdin
}

// hdoc renders a here-doc's body: literal when its delimiter is quoted, else with
// backslash escapes undone and expansions as written.
func (r *reader) hdoc(sc *scope, w *syntax.Word) (string, bool) {
	if w == nil {
		return "", false
	}
	var b strings.Builder
	dyn := false
	for _, p := range w.Parts {
		if l, ok := p.(*syntax.Lit); ok {
			b.WriteString(unescape(l.Value, true))
			continue
		}
		dyn = true
		b.WriteString(sourceOf(sc.src, p))
	}
	return b.String(), dyn
}

// output is what a statement writes to its standard output when that is known before it
// runs: echo, printf and cat of a here-doc with static words, and lists of them.
func (r *reader) output(sc *scope, s *syntax.Stmt, depth int) (string, bool) {
	if s == nil || depth > MaxDepth || !r.spend(1) {
		return "", false
	}
	switch c := s.Cmd.(type) {
	case *syntax.CallExpr:
		if len(c.Args) == 0 {
			return "", true
		}
		ws := r.words(sc, c.Args)
		for _, w := range ws {
			if w.dyn {
				return "", false
			}
		}
		args := make([]string, len(ws)-1)
		for i, w := range ws[1:] {
			args[i] = w.s
		}
		switch baseName(ws[0].s) {
		case "echo":
			nl, esc := "\n", false
			for len(args) > 0 && len(args[0]) > 1 && args[0][0] == '-' && strings.Trim(args[0][1:], "neE") == "" {
				if strings.Contains(args[0], "n") {
					nl = ""
				}
				esc = strings.Contains(args[0], "e")
				args = args[1:]
			}
			out := strings.Join(args, " ")
			if esc {
				out = ansiC(out)
			}
			return out + nl, true
		case "printf":
			return printf(args)
		case "cat":
			if len(args) == 0 {
				if in := r.stdinOf(sc, s); in != nil {
					return in.text, in.known
				}
				return "", true
			}
		}
		return "", false
	case *syntax.Block:
		return r.outputs(sc, c.Stmts, depth)
	case *syntax.Subshell:
		return r.outputs(sc, c.Stmts, depth)
	case *syntax.BinaryCmd:
		if c.Op == syntax.AndStmt || c.Op == syntax.OrStmt {
			return r.outputs(sc, []*syntax.Stmt{c.X, c.Y}, depth)
		}
	}
	return "", false
}

func (r *reader) outputs(sc *scope, stmts []*syntax.Stmt, depth int) (string, bool) {
	var b strings.Builder
	for _, s := range stmts {
		out, ok := r.output(sc, s, depth+1)
		if !ok {
			return "", false
		}
		b.WriteString(out)
	}
	return b.String(), true
}

// printf renders printf's output for the conversions %s, %b, %c, %d and %% (the format
// reused while arguments remain); any other conversion: not known.
func printf(args []string) (string, bool) {
	if len(args) == 0 {
		return "", false
	}
	if args[0] == "--" {
		args = args[1:]
		if len(args) == 0 {
			return "", false
		}
	}
	format, rest := ansiC(args[0]), args[1:]
	var b strings.Builder
	for first := true; first || len(rest) > 0; first = false {
		used := false
		for i := 0; i < len(format); i++ {
			if format[i] != '%' || i+1 == len(format) {
				b.WriteByte(format[i])
				continue
			}
			i++
			switch format[i] {
			case '%':
				b.WriteByte('%')
			case 's', 'b', 'c', 'd':
				used = true
				if len(rest) > 0 {
					v := rest[0]
					if format[i] == 'b' {
						v = ansiC(v)
					}
					if format[i] == 'c' && v != "" {
						v = v[:1]
					}
					b.WriteString(v)
					rest = rest[1:]
				}
			default:
				return "", false
			}
			if b.Len() > MaxScriptBytes {
				return "", false
			}
		}
		if !used {
			break
		}
	}
	return b.String(), true
}

// command unwraps words, a simple command, and records what runs.
func (r *reader) command(sc *scope, words []word, depth int) error {
	for len(words) > 0 {
		if depth > MaxDepth {
			return ErrTooDeep
		}
		if !r.spend(len(words)) {
			return r.err
		}
		// Assignments before the program (FOO=1 rm), and those env and sudo take.
		for len(words) > 0 && isAssignment(words[0].s) {
			words = words[1:]
		}
		if len(words) == 0 {
			return nil
		}
		if words[0].split {
			// $CMD -rf x, $(curl …), /bin/r*: the program and its first words are known
			// only when the shell runs it.
			return ErrNotStatic
		}
		if defs := r.funcs[words[0].s]; len(defs) > 0 && !words[0].dyn {
			for _, d := range defs {
				d.called = true
				if err := r.walk(&scope{src: d.src, params: words[1:], stdin: sc.stdin, depth: depth + 1}, d.body); err != nil {
					return err
				}
			}
			return nil
		}
		prog := baseName(words[0].s)
		args := words[1:]
		if words[0].dyn {
			return r.emit(words) // "$CMD" -rf x: the engine judges it as written and for the programs its rules name
		}
		next, done, err := r.unwrap(sc, prog, args, depth)
		if err != nil || done {
			return err
		}
		if next != nil {
			words = next
			continue
		}
		if prog == "find" {
			return r.find(sc, words, depth)
		}
		return r.emit(words)
	}
	return nil
}

// readScript reads a script a command runs (bash -c, eval, ssh, trap…). A script that is
// an expansion alone ($CMD) is read too: its unquoted program is not static, which
// fails the reading.
func (r *reader) readScript(sc *scope, text string, depth int, params []word) error {
	if r.err != nil {
		return r.err
	}
	return r.script(text, depth+1, params, sc.stdin)
}

// readStdin reads the script a shell gets on its standard input.
func (r *reader) readStdin(sc *scope, depth int, params []word) error {
	if sc.stdin == nil {
		return nil // no input: the shell reads nothing
	}
	if !sc.stdin.known {
		return ErrNotStatic
	}
	return r.script(sc.stdin.text, depth+1, params, nil)
}

// find records find itself and each command its -exec, -execdir, -ok and -okdir run.
func (r *reader) find(sc *scope, words []word, depth int) error {
	for i := 1; i < len(words); i++ {
		switch words[i].s {
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(words) && words[j].s != ";" && words[j].s != "+" {
				j++
			}
			if j > i+1 {
				if err := r.command(sc, words[i+1:j], depth+1); err != nil {
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
func (r *reader) emit(words []word) error { return r.emitAs(words, true) }

// wordSpace replaces a word's own whitespace, so rendered words hold none.
var wordSpace = strings.NewReplacer(" ", "\u00a0", "\t", "\u00a0", "\n", "\u00a0", "\r", "\u00a0", "\v", "\u00a0", "\f", "\u00a0")

// emitAs is emit, with combined short flags split or not.
func (r *reader) emitAs(words []word, split bool) error {
	if len(r.out) >= MaxCommands {
		return ErrTooMany
	}
	var b strings.Builder
	b.WriteString(wordText(baseName(words[0].s)))
	dashdash := false
	for _, w := range words[1:] {
		b.WriteByte(' ')
		if split && !dashdash && isShortCluster(w.s) {
			for i := 1; i < len(w.s); i++ {
				if i > 1 {
					b.WriteByte(' ')
				}
				b.WriteByte('-')
				b.WriteByte(w.s[i])
			}
			continue
		}
		dashdash = dashdash || w.s == "--"
		writeWord(&b, w.s)
	}
	if r.budget -= b.Len(); r.budget < 0 {
		return ErrTooLarge
	}
	r.out = append(r.out, b.String())
	return nil
}

func wordText(s string) string {
	if !strings.ContainsAny(s, " \t\n\r\v\f") {
		return s
	}
	return wordSpace.Replace(s)
}

// writeWord writes a word into b as wordText renders it, without a copy of its own.
func writeWord(b *strings.Builder, s string) {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case ' ', '\t', '\n', '\r', '\v', '\f':
			b.WriteString("\u00a0")
		default:
			b.WriteByte(c)
		}
	}
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

// words renders the words of a call after quote removal and brace expansion; parts that
// only the running shell can expand ($VAR, $(…), globs) stay as written in src. Inside
// a function or bash -c with known arguments, $1…$9, $@ and $* are those arguments.
func (r *reader) words(sc *scope, ws []*syntax.Word) []word {
	out := make([]word, 0, len(ws))
	for _, w := range ws {
		if r.err != nil {
			return out
		}
		if sc.params != nil {
			if ps, ok := positional(w, sc.params); ok {
				out = append(out, ps...)
				continue
			}
		}
		if len(w.Parts) == 1 {
			// Most words are one literal, a quoted string or an expansion: no braces to
			// split, nothing to join.
			switch p := w.Parts[0].(type) {
			case *syntax.BraceExp: // an element of an outer expansion: below
			case *syntax.Lit:
				if strings.IndexByte(p.Value, '{') >= 0 {
					break
				}
				out = append(out, r.lit(p))
				continue
			case *syntax.ProcSubst:
				out = append(out, word{s: sourceOf(sc.src, p), dyn: true, proc: p})
				continue
			default:
				var x word
				r.part(sc, p, &x, false)
				out = append(out, x)
				continue
			}
		}
		// SplitBraces rewrites the word it is given: split a copy, so the walk still to
		// come never meets a brace node (syntax.Walk does not know them).
		if split := *w; syntax.SplitBraces(&split) {
			w = &split
		}
		alts := []word{{}}
		for _, part := range w.Parts {
			if br, ok := part.(*syntax.BraceExp); ok {
				alts = r.braceAlts(sc, alts, br)
				if r.err != nil {
					return out
				}
				continue
			}
			var x word
			r.part(sc, part, &x, false)
			for i := range alts {
				alts[i].s += x.s
				alts[i].dyn = alts[i].dyn || x.dyn
				alts[i].split = alts[i].split || x.split
			}
		}
		out = append(out, alts...) // {rm,-rf,x} is three words
	}
	return out
}

// positional renders a word that is one positional parameter ($1, "$1", $@, "$@", $*)
// with the known arguments.
func positional(w *syntax.Word, params []word) ([]word, bool) {
	if len(w.Parts) != 1 {
		return nil, false
	}
	p := w.Parts[0]
	quoted := false
	if dq, ok := p.(*syntax.DblQuoted); ok && len(dq.Parts) == 1 {
		p, quoted = dq.Parts[0], true
	}
	pe, ok := p.(*syntax.ParamExp)
	if !ok || pe.Param == nil || pe.Exp != nil || pe.Repl != nil || pe.Slice != nil || pe.Index != nil || pe.Length || pe.Excl {
		return nil, false
	}
	switch name := pe.Param.Value; name {
	case "@", "*":
		if quoted && name == "*" {
			var parts []string
			for _, x := range params {
				parts = append(parts, x.s)
			}
			return []word{{s: strings.Join(parts, " ")}}, true
		}
		return params, true
	default:
		n, err := strconv.Atoi(name)
		if err != nil || n < 1 {
			return nil, false
		}
		if n > len(params) {
			if quoted {
				return []word{{}}, true
			}
			return []word{}, true
		}
		return []word{params[n-1]}, true
	}
}

// braceAlts crosses alts with the elements of one brace expansion. The words made and
// their bytes come from the reading's budgets: past them, the reading fails (a brace
// word past its bounds is not left as written, where it could hide a command).
func (r *reader) braceAlts(sc *scope, alts []word, b *syntax.BraceExp) []word {
	var elems []word
	if b.Sequence {
		bounds := r.words(sc, b.Elems)
		seq, ok := sequence(bounds)
		if !ok {
			// Not a sequence bash expands ({a..zz}): it stays as written.
			var parts []string
			for _, e := range bounds {
				parts = append(parts, e.s)
			}
			elems = []word{{s: "{" + strings.Join(parts, "..") + "}"}}
		} else {
			elems = seq
		}
	} else {
		elems = make([]word, 0, len(b.Elems))
		for _, e := range b.Elems {
			if l, ok := soleLit(e); ok {
				elems = append(elems, r.lit(l)) // {a,b}: most elements are one literal
				continue
			}
			elems = append(elems, r.words(sc, []*syntax.Word{e})...)
		}
	}
	n := len(alts) * len(elems)
	if n > maxBraceWords || !r.spend(n) {
		if r.err == nil {
			r.err = ErrTooLarge
		}
		return alts
	}
	size := 0
	for _, a := range alts {
		size += len(elems) * len(a.s)
	}
	for _, e := range elems {
		size += len(alts) * len(e.s)
	}
	if r.budget -= size; r.budget < 0 {
		r.err = ErrTooLarge
		return alts
	}
	out := make([]word, 0, n)
	for _, a := range alts {
		for _, e := range elems {
			out = append(out, word{s: a.s + e.s, dyn: a.dyn || e.dyn, split: a.split || e.split})
		}
	}
	return out
}

// soleLit returns a word's literal when the word is one literal with no brace in it.
func soleLit(w *syntax.Word) (*syntax.Lit, bool) {
	if len(w.Parts) != 1 {
		return nil, false
	}
	l, ok := w.Parts[0].(*syntax.Lit)
	return l, ok && strings.IndexByte(l.Value, '{') < 0
}

// sequence expands {x..y[..step]} over numbers or single letters; false if it is neither.
func sequence(bounds []word) ([]word, bool) {
	if len(bounds) < 2 || len(bounds) > 3 {
		return nil, false
	}
	step := 1
	if len(bounds) == 3 {
		n, err := strconv.Atoi(bounds[2].s)
		if err != nil || n == 0 {
			return nil, false
		}
		step = max(n, -n)
	}
	from, err1 := strconv.Atoi(bounds[0].s)
	to, err2 := strconv.Atoi(bounds[1].s)
	letters := false
	if err1 != nil || err2 != nil {
		if len(bounds[0].s) != 1 || len(bounds[1].s) != 1 {
			return nil, false
		}
		from, to, letters = int(bounds[0].s[0]), int(bounds[1].s[0]), true
	}
	if from > to {
		step = -step
	}
	var out []word
	for i := from; (step > 0 && i <= to) || (step < 0 && i >= to); i += step {
		if len(out) > maxBraceWords {
			return out, true // braceAlts refuses it
		}
		if letters {
			out = append(out, word{s: string(rune(i))})
		} else {
			out = append(out, word{s: strconv.Itoa(i)})
		}
	}
	return out, true
}

// lit renders an unquoted literal: escapes undone; a glob character left makes it split.
func (r *reader) lit(l *syntax.Lit) word {
	return word{s: unescape(l.Value, false), split: hasGlob(l.Value)}
}

// hasGlob reports whether an unquoted literal holds an unescaped glob character.
func hasGlob(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '*', '?', '[':
			return true
		}
	}
	return false
}

// part renders one word part into w.
func (r *reader) part(sc *scope, p syntax.WordPart, w *word, quoted bool) {
	r.spend(1)
	switch x := p.(type) {
	case *syntax.Lit:
		if quoted {
			w.s += unescape(x.Value, true)
			return
		}
		l := r.lit(x)
		w.s += l.s
		w.split = w.split || l.split
	case *syntax.SglQuoted:
		if x.Dollar {
			w.s += ansiC(x.Value)
		} else {
			w.s += x.Value
		}
	case *syntax.DblQuoted:
		for _, q := range x.Parts {
			r.part(sc, q, w, true)
		}
	case *syntax.BraceExp:
		// Only an element's own expansion gets here: as written.
		w.s += sourceOf(sc.src, x)
	default: // $x, ${…}, $(…), `…`, $((…)), <(…), extended globs: only the shell knows
		w.s += sourceOf(sc.src, p)
		w.dyn = true
		if !quoted {
			if _, arith := p.(*syntax.ArithmExp); !arith {
				w.split = true
			}
		}
	}
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
