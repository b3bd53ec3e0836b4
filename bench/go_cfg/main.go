// Command gocfg prints the control-flow graph that golang.org/x/tools/go/cfg
// builds for every function of the Go files it is given, one JSON object per
// function, as the reference side of quarry's Go control-flow check
// (bench/go_cfg/compare.py).
//
// Usage:
//
//	gocfg FILE_OR_DIR...
//
// Directories are walked for *.go files; vendor/, testdata/ and directories
// whose name starts with "." or "_" are skipped (as the go tool does).
// A file that does not parse is reported on stderr and skipped; the exit
// status is 1 if any file was skipped, else 0.
//
// One line per function (FuncDecl or FuncLit with a body), in source order:
//
//	{"file": path, "name": "Name" | "Recv.Name" | "<anonymous>",
//	 "start_line": line of the func keyword, "end_line": line of the closing brace,
//	 "blocks": [{"id", "start_line", "end_line", "live", "kind", "stmt_line", "nodes"}],
//	 "edges": [{"from", "to"}],
//	 "complexity": N,
//	 "multiline_headers": [[first line, line of the body's "{"], ...],
//	 "short_circuits": number of && and || operators,
//	 "test_short_circuits": those in if/for conditions, switch tags and cases,
//	 "case_short_circuits": those in cases}
//
// A block's lines run from its first node's start line to its last node's
// end line. Blocks without nodes are kept, with start_line = end_line = 0, so
// that edges can be followed through them. go/cfg materialises the implicit
// return of a body that falls off its end as a ReturnStmt at the closing
// brace; that synthetic statement is not counted in a block's lines (a block
// holding only it is empty). "kind" is go/cfg's BlockKind and "stmt_line" the
// line of the statement that gave rise to the block (0 if none), "nodes" the
// block's nodes as [start_line, end_line, AST type] with a range clause's
// parts marked RangeX/RangeKey/RangeValue and a for loop's init ForInit:
// compare.py uses them to anchor go/cfg's loop heads at the loop's line.
// Every block's edges are printed, live or not. "multiline_headers" lists the
// if/for/range/switch statements of the body (not of nested function
// literals) whose header runs over several lines, for compare.py's categories;
// "short_circuits" counts the body's && and || operators (not those of nested
// function literals), which go/cfg does not split into blocks, and
// "test_short_circuits" those of them in an if or for condition, a switch tag
// or a case expression ("case_short_circuits": those in a case).
//
// complexity = E - N + 2 over the live blocks, after adding one virtual exit
// block that every live block without successors flows to; for structured
// code that is the number of decisions + 1. Note that go/cfg splits every
// case expression of a switch into its own test, and does not model && / ||.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/tools/go/cfg"
)

type blockOut struct {
	ID        int       `json:"id"`
	StartLine int       `json:"start_line"`
	EndLine   int       `json:"end_line"`
	Live      bool      `json:"live"`
	Kind      string    `json:"kind"`
	StmtLine  int       `json:"stmt_line"`
	Nodes     []nodeOut `json:"nodes"`
}

// nodeOut is one node of a block: [start_line, end_line, what], "what" being
// the AST type ("AssignStmt", "BinaryExpr", ...) or, for the parts of a range
// clause that go/cfg evaluates in the block before the loop, "RangeX",
// "RangeKey", "RangeValue", and for a for statement's init, "ForInit".
type nodeOut [3]any

type edgeOut struct {
	From int `json:"from"`
	To   int `json:"to"`
}

type funcOut struct {
	File       string     `json:"file"`
	Name       string     `json:"name"`
	StartLine  int        `json:"start_line"`
	EndLine    int        `json:"end_line"`
	Blocks     []blockOut `json:"blocks"`
	Edges      []edgeOut  `json:"edges"`
	Complexity int        `json:"complexity"`
	Headers    [][2]int   `json:"multiline_headers"`
	// && and || operators in the body (not in nested function literals):
	// go/cfg does not split them, so they are not in its complexity.
	ShortCircuits int `json:"short_circuits"`
	// Those of them in a test: an if or for condition, a switch tag, a case.
	TestShortCircuits int `json:"test_short_circuits"`
	// Those of them in a case.
	CaseShortCircuits int `json:"case_short_circuits"`
}

// shortCircuits counts the && and || operators of e (not in function literals).
func shortCircuits(e ast.Expr) int {
	if e == nil {
		return 0
	}
	n := 0
	ast.Inspect(e, func(x ast.Node) bool {
		if _, ok := x.(*ast.FuncLit); ok {
			return false
		}
		if be, ok := x.(*ast.BinaryExpr); ok && (be.Op == token.LAND || be.Op == token.LOR) {
			n++
		}
		return true
	})
	return n
}

// mayReturn tells go/cfg which calls (in statement position) may return.
// Without type information it goes by the names as written:
//   - the builtin panic (an identifier "panic"; a local shadowing it would be
//     misread),
//   - os.Exit and log.Fatal, log.Fatalf, log.Fatalln (any Fatal* selected
//     from a package named "log" or "os" as written; an import alias or a
//     variable with that name would be misread).
//
// They do not return; everything else may (log.Panic* included).
func mayReturn(call *ast.CallExpr) bool {
	switch fun := ast.Unparen(call.Fun).(type) {
	case *ast.Ident:
		return fun.Name != "panic"
	case *ast.SelectorExpr:
		if pkg, ok := fun.X.(*ast.Ident); ok {
			if pkg.Name == "os" && fun.Sel.Name == "Exit" {
				return false
			}
			if pkg.Name == "log" && strings.HasPrefix(fun.Sel.Name, "Fatal") {
				return false
			}
		}
	}
	return true
}

func recvName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
			continue
		case *ast.ParenExpr:
			t = x.X
			continue
		case *ast.IndexExpr: // generic receiver T[P]
			t = x.X
			continue
		case *ast.IndexListExpr:
			t = x.X
			continue
		case *ast.Ident:
			return x.Name + "." + fd.Name.Name
		}
		return fd.Name.Name
	}
}

func graph(fset *token.FileSet, file, name string, funcPos token.Pos, body *ast.BlockStmt) funcOut {
	g := cfg.New(body, mayReturn)
	line := func(p token.Pos) int { return fset.Position(p).Line }
	out := funcOut{
		File:      file,
		Name:      name,
		StartLine: line(funcPos),
		EndLine:   line(body.Rbrace),
		Blocks:    []blockOut{},
		Edges:     []edgeOut{},
		Headers:   [][2]int{},
	}
	rangeParts := map[ast.Node]string{}
	ast.Inspect(body, func(n ast.Node) bool {
		if _, ok := n.(*ast.FuncLit); ok {
			return false // its own function
		}
		if be, ok := n.(*ast.BinaryExpr); ok && (be.Op == token.LAND || be.Op == token.LOR) {
			out.ShortCircuits++
		}
		var tests []ast.Expr
		switch s := n.(type) {
		case *ast.IfStmt:
			tests = []ast.Expr{s.Cond}
		case *ast.ForStmt:
			tests = []ast.Expr{s.Cond}
		case *ast.SwitchStmt:
			tests = []ast.Expr{s.Tag}
		case *ast.CaseClause:
			tests = s.List
			for _, t := range tests {
				out.CaseShortCircuits += shortCircuits(t)
			}
		}
		for _, t := range tests {
			out.TestShortCircuits += shortCircuits(t)
		}
		var lbrace token.Pos
		switch s := n.(type) {
		case *ast.RangeStmt:
			rangeParts[s.X] = "RangeX"
			if s.Key != nil {
				rangeParts[s.Key] = "RangeKey"
			}
			if s.Value != nil {
				rangeParts[s.Value] = "RangeValue"
			}
			lbrace = s.Body.Lbrace
		case *ast.ForStmt:
			if s.Init != nil {
				rangeParts[s.Init] = "ForInit"
			}
			lbrace = s.Body.Lbrace
		case *ast.IfStmt:
			lbrace = s.Body.Lbrace
		case *ast.SwitchStmt:
			lbrace = s.Body.Lbrace
		case *ast.TypeSwitchStmt:
			lbrace = s.Body.Lbrace
		}
		if lbrace.IsValid() && line(lbrace) != line(n.Pos()) {
			out.Headers = append(out.Headers, [2]int{line(n.Pos()), line(lbrace)})
		}
		return true
	})
	nLive, eLive, nExits := 0, 0, 0
	for _, b := range g.Blocks {
		bo := blockOut{ID: int(b.Index), Live: b.Live, Kind: b.Kind.String()}
		if b.Stmt != nil {
			bo.StmtLine = line(b.Stmt.Pos())
		}
		var nodes []ast.Node
		for _, n := range b.Nodes {
			// The implicit return go/cfg adds at the closing brace is not source.
			if r, ok := n.(*ast.ReturnStmt); ok && r.Results == nil && r.Return == body.Rbrace {
				continue
			}
			nodes = append(nodes, n)
		}
		bo.Nodes = []nodeOut{}
		for _, n := range nodes {
			what, ok := rangeParts[n]
			if !ok {
				what = strings.TrimPrefix(fmt.Sprintf("%T", n), "*ast.")
			}
			bo.Nodes = append(bo.Nodes, nodeOut{line(n.Pos()), line(n.End()), what})
		}
		if len(nodes) > 0 {
			bo.StartLine = line(nodes[0].Pos())
			bo.EndLine = line(nodes[len(nodes)-1].End())
		}
		out.Blocks = append(out.Blocks, bo)
		for _, s := range b.Succs {
			out.Edges = append(out.Edges, edgeOut{From: int(b.Index), To: int(s.Index)})
		}
		if b.Live {
			nLive++
			eLive += len(b.Succs)
			if len(b.Succs) == 0 {
				nExits++
			}
		}
	}
	// One virtual exit block, reached by every live block without successors.
	out.Complexity = (eLive + nExits) - (nLive + 1) + 2
	return out
}

func doFile(path string, enc *json.Encoder) error {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		return err
	}
	var funcs []funcOut
	ast.Inspect(f, func(n ast.Node) bool {
		switch fn := n.(type) {
		case *ast.FuncDecl:
			if fn.Body != nil {
				funcs = append(funcs, graph(fset, path, recvName(fn), fn.Type.Pos(), fn.Body))
			}
		case *ast.FuncLit:
			if fn.Body != nil {
				funcs = append(funcs, graph(fset, path, "<anonymous>", fn.Type.Pos(), fn.Body))
			}
		}
		return true
	})
	sort.SliceStable(funcs, func(i, j int) bool { return funcs[i].StartLine < funcs[j].StartLine })
	for i := range funcs {
		if err := enc.Encode(&funcs[i]); err != nil {
			return err
		}
	}
	return nil
}

func collect(arg string) ([]string, error) {
	st, err := os.Stat(arg)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return []string{arg}, nil
	}
	var files []string
	err = filepath.WalkDir(arg, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			base := d.Name()
			if p != arg && (base == "vendor" || base == "testdata" ||
				strings.HasPrefix(base, ".") || strings.HasPrefix(base, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(p, ".go") && d.Type().IsRegular() {
			files = append(files, p)
		}
		return nil
	})
	sort.Strings(files)
	return files, err
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: gocfg FILE_OR_DIR...")
		os.Exit(2)
	}
	w := bufio.NewWriter(os.Stdout)
	enc := json.NewEncoder(w)
	status := 0
	for _, arg := range os.Args[1:] {
		files, err := collect(arg)
		if err != nil {
			fmt.Fprintln(os.Stderr, "gocfg:", err)
			status = 1
		}
		for _, path := range files {
			if err := doFile(path, enc); err != nil {
				fmt.Fprintln(os.Stderr, "gocfg: skipped:", err)
				status = 1
			}
		}
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, "gocfg:", err)
		status = 1
	}
	os.Exit(status)
}
