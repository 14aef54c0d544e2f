// Command codestats prints the figures issue 30's review used to judge the
// layout, from go/ast alone (no build): per package, its lines (tests
// apart), exported names, exported methods and exported fields; the longest
// functions; the functions with more than 6 parameters; the methods per
// receiver type above a count; and which of the module's packages each
// package imports.
//
//	go run ./bench/codestats                 # the module's packages under .
//	go run ./bench/codestats -top 15 -methods 15
package main

import (
	"bufio"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

type fn struct {
	name   string
	lines  int
	params int
}

type pkg struct {
	dir                                   string
	lines, testLines                      int
	exported, expMethods, expFields, recv int
	funcs                                 []fn
	methods                               map[string]int // receiver type -> methods
	imports                               map[string]bool
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("codestats", flag.ContinueOnError)
	fs.SetOutput(stderr)
	top := fs.Int("top", 20, "how many of the longest functions to list")
	methods := fs.Int("methods", 15, "list receiver types with at least this many methods")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	mod, err := modulePath("go.mod")
	if err != nil {
		fmt.Fprintf(stderr, "codestats: %v (run it at the module root)\n", err)
		return 1
	}
	pkgs := map[string]*pkg{}
	fset := token.NewFileSet()
	err = filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "out") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && path != "." {
				return filepath.SkipDir // another module (deploy/)
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		dir := filepath.ToSlash(filepath.Dir(path))
		p := pkgs[dir]
		if p == nil {
			p = &pkg{dir: dir, methods: map[string]int{}, imports: map[string]bool{}}
			pkgs[dir] = p
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		n := strings.Count(string(src), "\n")
		if strings.HasSuffix(path, "_test.go") {
			p.testLines += n
			return nil
		}
		p.lines += n
		f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, im := range f.Imports {
			ip, _ := strconv.Unquote(im.Path.Value)
			if rel, ok := strings.CutPrefix(ip, mod+"/"); ok {
				p.imports[rel] = true
			}
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				name := d.Name.Name
				params := 0
				for _, f := range d.Type.Params.List {
					params += max(1, len(f.Names))
				}
				if d.Recv != nil && len(d.Recv.List) > 0 {
					rt := recvType(d.Recv.List[0].Type)
					p.methods[rt]++
					if d.Name.IsExported() {
						p.expMethods++
					}
					name = rt + "." + name
				} else if d.Name.IsExported() {
					p.exported++
				}
				lines := fset.Position(d.End()).Line - fset.Position(d.Pos()).Line + 1
				p.funcs = append(p.funcs, fn{name: dir + "." + name, lines: lines, params: params})
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							p.exported++
						}
						if st, ok := s.Type.(*ast.StructType); ok && s.Name.IsExported() {
							for _, f := range st.Fields.List {
								for _, n := range f.Names {
									if n.IsExported() {
										p.expFields++
									}
								}
							}
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								p.exported++
							}
						}
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		fmt.Fprintf(stderr, "codestats: %v\n", err)
		return 1
	}
	dirs := make([]string, 0, len(pkgs))
	for d := range pkgs {
		if pkgs[d].lines > 0 {
			dirs = append(dirs, d)
		}
	}
	sort.Strings(dirs)
	fmt.Fprintf(stdout, "%-22s %7s %7s %9s %8s %7s  %s\n", "package", "lines", "tests", "exported", "methods", "fields", "imports (this module's)")
	var all []fn
	for _, d := range dirs {
		p := pkgs[d]
		var im []string
		for i := range p.imports {
			im = append(im, i)
		}
		sort.Strings(im)
		fmt.Fprintf(stdout, "%-22s %7d %7d %9d %8d %7d  %s\n", d, p.lines, p.testLines, p.exported, p.expMethods, p.expFields, strings.Join(im, " "))
		all = append(all, p.funcs...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].lines > all[j].lines })
	fmt.Fprintf(stdout, "\nlongest functions (lines)\n")
	for _, f := range all[:min(*top, len(all))] {
		fmt.Fprintf(stdout, "%5d  %s\n", f.lines, f.name)
	}
	fmt.Fprintf(stdout, "\nfunctions with more than 6 parameters\n")
	sort.Slice(all, func(i, j int) bool {
		return all[i].params > all[j].params || all[i].params == all[j].params && all[i].name < all[j].name
	})
	for _, f := range all {
		if f.params > 6 {
			fmt.Fprintf(stdout, "%5d  %s\n", f.params, f.name)
		}
	}
	fmt.Fprintf(stdout, "\nreceiver types with %d or more methods\n", *methods)
	for _, d := range dirs {
		for rt, n := range pkgs[d].methods {
			if n >= *methods {
				fmt.Fprintf(stdout, "%5d  %s.%s\n", n, d, rt)
			}
		}
	}
	return 0
}

func recvType(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return recvType(t.X)
	case *ast.Ident:
		return t.Name
	case *ast.IndexExpr:
		return recvType(t.X)
	case *ast.IndexListExpr:
		return recvType(t.X)
	}
	return "?"
}

func modulePath(gomod string) (string, error) {
	f, err := os.Open(gomod)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.TrimSpace(m), nil
		}
	}
	return "", fmt.Errorf("%s: no module line", gomod)
}
