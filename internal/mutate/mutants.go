package mutate

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strings"
)

// Mutant is one small change to a Go source file: the bytes [Off, End) of the original
// become Repl. A mutant changes one token or one statement, never more than one line.
type Mutant struct {
	ID   int    // 1-based, in source order; stable while the file is unchanged
	Line int    // 1-based line of the change
	Op   string // the operator that made it, e.g. "==→!=" or "drop statement"
	Off  int    // byte offset of the replaced text in the original
	End  int
	Repl string
}

// Apply returns src with m applied. src must be the text m was generated from.
func (m Mutant) Apply(src []byte) []byte {
	out := make([]byte, 0, len(src)+len(m.Repl))
	out = append(out, src[:m.Off]...)
	out = append(out, m.Repl...)
	return append(out, src[m.End:]...)
}

// String names the mutant as a report line does: "file:line op".
func (m Mutant) String() string { return fmt.Sprintf("#%d line %d %s", m.ID, m.Line, m.Op) }

// swaps are the token operators: each is replaced by its partner, the off-by-one and the
// negated comparison a careless edit makes.
var swaps = map[token.Token]token.Token{
	token.EQL:            token.NEQ,
	token.NEQ:            token.EQL,
	token.LSS:            token.LEQ,
	token.LEQ:            token.LSS,
	token.GTR:            token.GEQ,
	token.GEQ:            token.GTR,
	token.LAND:           token.LOR,
	token.LOR:            token.LAND,
	token.AND_NOT_ASSIGN: token.XOR_ASSIGN,
	token.ADD_ASSIGN:     token.SUB_ASSIGN,
	token.SUB_ASSIGN:     token.ADD_ASSIGN,
}

// Mutants returns every mutant of src in source order. The operators:
//
//   - a comparison flipped or moved by one: == and !=, < and <=, > and >=;
//   - && and || swapped, or one operand of either dropped (a && b becomes a, or b);
//   - a ! dropped;
//   - true and false swapped;
//   - &^= made ^=, += and -= swapped;
//   - a one-line statement dropped (not a := declaration, nor a function's closing
//     return, which would not compile).
//
// Test files are not mutated; pass a production file.
func Mutants(filename string, src []byte) ([]Mutant, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filename, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	tf := fset.File(f.Pos())
	off := func(p token.Pos) int { return tf.Offset(p) }
	line := func(p token.Pos) int { return tf.Line(p) }
	text := func(a, b token.Pos) string { return string(src[off(a):off(b)]) }

	// A function's closing return cannot go: the function would not compile.
	closing := map[ast.Stmt]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		var body *ast.BlockStmt
		switch n := n.(type) {
		case *ast.FuncDecl:
			body = n.Body
		case *ast.FuncLit:
			body = n.Body
		}
		if body != nil && len(body.List) > 0 {
			if r, ok := body.List[len(body.List)-1].(*ast.ReturnStmt); ok && len(r.Results) > 0 {
				closing[r] = true
			}
		}
		return true
	})

	var out []Mutant
	add := func(at token.Pos, a, b int, op, repl string) {
		out = append(out, Mutant{Line: line(at), Op: op, Off: a, End: b, Repl: repl})
	}
	dropStmts := func(list []ast.Stmt) {
		for _, s := range list {
			if line(s.Pos()) != line(s.End()) || closing[s] {
				continue
			}
			switch s := s.(type) {
			case *ast.DeclStmt, *ast.LabeledStmt, *ast.EmptyStmt:
				continue
			case *ast.AssignStmt:
				if s.Tok == token.DEFINE {
					continue
				}
			}
			add(s.Pos(), off(s.Pos()), off(s.End()), "drop statement", "")
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BinaryExpr:
			if to, ok := swaps[n.Op]; ok {
				p := off(n.OpPos)
				add(n.OpPos, p, p+len(n.Op.String()), n.Op.String()+"→"+to.String(), to.String())
			}
			if n.Op == token.LAND || n.Op == token.LOR {
				a, b := off(n.X.Pos()), off(n.Y.End())
				add(n.OpPos, a, b, "keep left of "+n.Op.String(), text(n.X.Pos(), n.X.End()))
				add(n.OpPos, a, b, "keep right of "+n.Op.String(), text(n.Y.Pos(), n.Y.End()))
			}
		case *ast.AssignStmt:
			if to, ok := swaps[n.Tok]; ok {
				p := off(n.TokPos)
				add(n.TokPos, p, p+len(n.Tok.String()), n.Tok.String()+"→"+to.String(), to.String())
			}
		case *ast.UnaryExpr:
			if n.Op == token.NOT {
				add(n.OpPos, off(n.OpPos), off(n.X.Pos()), "drop !", "")
			}
		case *ast.Ident:
			if n.Name == "true" || n.Name == "false" {
				to := map[string]string{"true": "false", "false": "true"}[n.Name]
				add(n.Pos(), off(n.Pos()), off(n.End()), n.Name+"→"+to, to)
			}
		case *ast.BlockStmt:
			dropStmts(n.List)
		case *ast.CaseClause:
			dropStmts(n.Body)
		case *ast.CommClause:
			dropStmts(n.Body)
		}
		return true
	})
	slices.SortStableFunc(out, func(a, b Mutant) int {
		if a.Off != b.Off {
			return a.Off - b.Off
		}
		return strings.Compare(a.Op, b.Op)
	})
	for i := range out {
		out[i].ID = i + 1
	}
	return out, nil
}
