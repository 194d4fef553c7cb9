package deploy_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// The lorekeeper command's flags, read from its source (cmd/lorekeeper):
// what each subcommand registers on its flagSet, directly (fs.String(&x,
// "name", ...)) or through a register method (nf.register(fs), and the
// register methods those call). Compose, Kubernetes and the Dockerfile may
// only pass flags, and LOREKEEPER_* variables, that their command has.

var (
	flagsOnce sync.Once
	flagsErr  error
	cmdFlags  map[string]map[string]bool
)

// commandFlags returns the flags of each subcommand ("up", "node", ...).
func commandFlags(t *testing.T) map[string]map[string]bool {
	t.Helper()
	flagsOnce.Do(func() { cmdFlags, flagsErr = readCommandFlags(filepath.Join("..", "cmd", "lorekeeper")) })
	if flagsErr != nil {
		t.Fatalf("reading the lorekeeper command's flags: %v", flagsErr)
	}
	return cmdFlags
}

var flagMethods = map[string]bool{"String": true, "Bool": true, "Int": true, "Duration": true, "Float64": true, "Uint": true, "Int64": true, "OptionalString": true, "ByteSize": true}

func readCommandFlags(dir string) (map[string]map[string]bool, error) {
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	var parsed []*ast.File
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			return nil, err
		}
		parsed = append(parsed, af)
	}
	// Struct field types, and register methods, by type name.
	fields := map[string]map[string]string{}
	registers := map[string]*ast.FuncDecl{}
	var runs []*ast.FuncDecl
	for _, af := range parsed {
		for _, d := range af.Decls {
			switch d := d.(type) {
			case *ast.GenDecl:
				for _, s := range d.Specs {
					ts, ok := s.(*ast.TypeSpec)
					if !ok {
						continue
					}
					st, ok := ts.Type.(*ast.StructType)
					if !ok {
						continue
					}
					m := map[string]string{}
					for _, f := range st.Fields.List {
						if id, ok := f.Type.(*ast.Ident); ok {
							for _, n := range f.Names {
								m[n.Name] = id.Name
							}
						}
					}
					fields[ts.Name.Name] = m
				}
			case *ast.FuncDecl:
				if d.Recv != nil && d.Name.Name == "register" && len(d.Recv.List) == 1 {
					registers[typeName(d.Recv.List[0].Type)] = d
				} else if d.Recv == nil && d.Body != nil {
					runs = append(runs, d)
				}
			}
		}
	}

	var flagsOf func(body *ast.BlockStmt, vars map[string]string, seen map[string]bool) (map[string]bool, error)
	registerFlags := func(typ string, seen map[string]bool) (map[string]bool, error) {
		d, ok := registers[typ]
		if !ok {
			return nil, fmt.Errorf("no register method on %s", typ)
		}
		if seen[typ] {
			return nil, fmt.Errorf("register recursion through %s", typ)
		}
		seen = maps.Clone(seen)
		seen[typ] = true
		vars := map[string]string{}
		if len(d.Recv.List[0].Names) == 1 {
			vars[d.Recv.List[0].Names[0].Name] = typ
		}
		return flagsOf(d.Body, vars, seen)
	}
	// typeOf resolves x, or x.f.g, to a type name.
	var typeOf func(e ast.Expr, vars map[string]string) string
	typeOf = func(e ast.Expr, vars map[string]string) string {
		switch e := e.(type) {
		case *ast.Ident:
			return vars[e.Name]
		case *ast.SelectorExpr:
			return fields[typeOf(e.X, vars)][e.Sel.Name]
		case *ast.ParenExpr:
			return typeOf(e.X, vars)
		case *ast.StarExpr:
			return typeOf(e.X, vars)
		}
		return ""
	}
	flagsOf = func(body *ast.BlockStmt, vars map[string]string, seen map[string]bool) (map[string]bool, error) {
		out := map[string]bool{}
		var err error
		ast.Inspect(body, func(n ast.Node) bool {
			if err != nil {
				return false
			}
			switch n := n.(type) {
			case *ast.ValueSpec: // var nf natsFlags
				if id, ok := n.Type.(*ast.Ident); ok {
					for _, name := range n.Names {
						vars[name.Name] = id.Name
					}
				}
			case *ast.CallExpr:
				sel, ok := n.Fun.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				switch {
				case sel.Sel.Name == "register":
					typ := typeOf(sel.X, vars)
					if typ == "" {
						err = fmt.Errorf("%s.register: unknown type", exprString(sel.X))
						return false
					}
					var fl map[string]bool
					if fl, err = registerFlags(typ, seen); err == nil {
						maps.Copy(out, fl)
					}
				case flagMethods[sel.Sel.Name] && exprString(sel.X) == "fs" && len(n.Args) >= 2:
					if lit, ok := n.Args[1].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						name, _ := strconv.Unquote(lit.Value)
						out[name] = true
					}
				}
			}
			return true
		})
		return out, err
	}

	cmds := map[string]map[string]bool{}
	for _, d := range runs {
		name := ""
		ast.Inspect(d.Body, func(n ast.Node) bool {
			if c, ok := n.(*ast.CallExpr); ok && exprString(c.Fun) == "newFlagSet" && len(c.Args) > 0 {
				if lit, ok := c.Args[0].(*ast.BasicLit); ok && name == "" {
					name, _ = strconv.Unquote(lit.Value)
				}
			}
			return name == ""
		})
		if name == "" {
			continue
		}
		fl, err := flagsOf(d.Body, map[string]string{}, map[string]bool{})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", d.Name.Name, err)
		}
		maps.Copy(fl, cmds[name])
		cmds[name] = fl
	}
	if len(cmds) == 0 {
		return nil, fmt.Errorf("no subcommands found in %s", dir)
	}
	return cmds, nil
}

func typeName(e ast.Expr) string {
	if s, ok := e.(*ast.StarExpr); ok {
		e = s.X
	}
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

func exprString(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return exprString(e.X) + "." + e.Sel.Name
	}
	return fmt.Sprintf("%T", e)
}

// envFlag turns LOREKEEPER_NATS_URL into nats-url.
func envFlag(env string) (string, bool) {
	rest, ok := strings.CutPrefix(env, "LOREKEEPER_")
	if !ok {
		return "", false
	}
	return strings.ToLower(strings.ReplaceAll(rest, "_", "-")), true
}

// checkInvocation reports arguments and environment variables the
// subcommand in args[0] does not accept. Image-wide variables (set in the
// Dockerfile for every role) are allowed when any command accepts them.
func checkInvocation(t *testing.T, where string, args []string, env []string) []string {
	t.Helper()
	cmds := commandFlags(t)
	if len(args) == 0 {
		return []string{where + ": no subcommand"}
	}
	fl, ok := cmds[args[0]]
	if !ok {
		return []string{fmt.Sprintf("%s: unknown subcommand %q (have %v)", where, args[0], slices.Sorted(maps.Keys(cmds)))}
	}
	var probs []string
	for _, a := range args[1:] {
		if !strings.HasPrefix(a, "-") {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !fl[name] {
			probs = append(probs, fmt.Sprintf("%s: lorekeeper %s has no flag --%s", where, args[0], name))
		}
	}
	for _, e := range env {
		name, ok := envFlag(e)
		if ok && !fl[name] {
			probs = append(probs, fmt.Sprintf("%s: lorekeeper %s has no flag --%s for %s", where, args[0], name, e))
		}
	}
	return probs
}

func TestCommandFlags(t *testing.T) {
	cmds := commandFlags(t)
	for cmd, want := range map[string][]string{
		"node":   {"nats-url", "nats-replicas", "grpc-addr", "data-dir", "consumer", "vector-index", "qdrant-addr", "metrics-addr", "model-dir"},
		"ingest": {"nats-url", "metrics-addr", "open5e-url", "resync-interval", "orcbrew-dir"},
		"mcp":    {"http", "mcp-addr", "grpc-addr", "mcp-stateless", "mcp-token-file", "mcp-allowed-hosts", "metrics-addr"},
		"sync":   {"nats-url", "nats-replicas", "open5e-url"},
		"up":     {"data-dir", "metrics-addr", "grpc-addr", "mcp-addr", "nats-listen"},
	} {
		for _, f := range want {
			if !cmds[cmd][f] {
				t.Errorf("lorekeeper %s: flag --%s not found (found %v)", cmd, f, slices.Sorted(maps.Keys(cmds[cmd])))
			}
		}
	}
	if cmds["ingest"]["consumer"] {
		t.Error("lorekeeper ingest has --consumer: the flag reader mixes commands up")
	}
	if got := checkInvocation(t, "test", []string{"node", "--consumr", "x"}, []string{"LOREKEEPER_NATS_URLS"}); len(got) != 2 {
		t.Errorf("checkInvocation on two typos: got %q, want two problems", got)
	}
}
