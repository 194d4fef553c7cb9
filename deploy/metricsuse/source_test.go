package metricsuse_test

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	dto "github.com/prometheus/client_model/go"
)

// family is a metric family the code exports.
type family struct {
	Name   string
	Type   string // counter, gauge, histogram, summary, untyped
	Labels []string
	Where  string // file:line, or "collector"
}

var (
	optsRE      = regexp.MustCompile(`\b(Counter|Gauge|Histogram|Summary|Untyped)Opts\s*\{`)
	fieldRE     = func(f string) *regexp.Regexp { return regexp.MustCompile(`(?:^|[\s,{])` + f + `:\s*"([^"]*)"`) }
	namespaceRE = fieldRE("Namespace")
	subsystemRE = fieldRE("Subsystem")
	nameRE      = fieldRE("Name")
	labelsRE    = regexp.MustCompile(`^\s*,\s*\[\]string\s*\{([^}]*)\}`)
	quotedRE    = regexp.MustCompile(`"([^"]*)"`)
)

// scanGoSource finds the metrics declared in Go source: every
// prometheus.{Counter,Gauge,Histogram,Summary}Opts literal, its Namespace,
// Subsystem and Name (string literals), and the label names of the []string
// that follows it in a New...Vec call. A literal whose Name is not a string
// literal is an error: the scan could not vouch for it.
func scanGoSource(file string, src []byte) ([]family, error) {
	s := string(src)
	var out []family
	for _, loc := range optsRE.FindAllStringSubmatchIndex(s, -1) {
		open := loc[1] - 1
		end, err := matchBrace(s, open)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		lit := s[open : end+1]
		line := 1 + strings.Count(s[:loc[0]], "\n")
		kind := strings.ToLower(s[loc[2]:loc[3]])
		var parts []string
		for _, re := range []*regexp.Regexp{namespaceRE, subsystemRE, nameRE} {
			if m := re.FindStringSubmatch(lit); m != nil && m[1] != "" {
				parts = append(parts, m[1])
			}
		}
		if nameRE.FindStringSubmatch(lit) == nil {
			if strings.Contains(lit, "Name:") {
				return nil, fmt.Errorf("%s:%d: a %sOpts Name that is not a string literal", file, line, kind)
			}
			continue // an Opts literal that is not a metric definition
		}
		f := family{Name: strings.Join(parts, "_"), Type: kind, Where: fmt.Sprintf("%s:%d", file, line)}
		if m := labelsRE.FindStringSubmatch(s[end+1:]); m != nil {
			for _, q := range quotedRE.FindAllStringSubmatch(m[1], -1) {
				f.Labels = append(f.Labels, q[1])
			}
		}
		out = append(out, f)
	}
	return out, nil
}

// matchBrace returns the index of the brace closing the one at open,
// skipping Go string and rune literals and comments.
func matchBrace(s string, open int) (int, error) {
	depth := 0
	for i := open; i < len(s); i++ {
		switch c := s[i]; c {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return i, nil
			}
		case '"', '\'':
			for i++; i < len(s) && s[i] != c; i++ {
				if s[i] == '\\' {
					i++
				}
			}
		case '`':
			for i++; i < len(s) && s[i] != '`'; i++ {
			}
		case '/':
			if i+1 < len(s) && s[i+1] == '/' {
				for i < len(s) && s[i] != '\n' {
					i++
				}
			}
		}
	}
	return 0, fmt.Errorf("unbalanced braces after offset %d", open)
}

// repoRoot is the workspace root: two levels above this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.work")); err != nil {
		t.Fatalf("workspace root not found at %s: %v", root, err)
	}
	return root
}

// sourceFamilies scans the workspace's non-test Go files (deploy/ and
// generated protobuf code excluded).
func sourceFamilies(t *testing.T) map[string]family {
	t.Helper()
	root := repoRoot(t)
	fams := map[string]family{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			base := d.Name()
			if rel == "deploy" || base == "testdata" || base == "vendor" || base == "node_modules" ||
				(strings.HasPrefix(base, ".") && rel != ".") || rel == "data" || rel == "bin" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") || strings.HasSuffix(p, ".pb.go") {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		found, err := scanGoSource(rel, src)
		if err != nil {
			return err
		}
		for _, f := range found {
			if prev, ok := fams[f.Name]; ok && prev.Type != f.Type {
				return fmt.Errorf("%s declared as %s at %s and as %s at %s", f.Name, prev.Type, prev.Where, f.Type, f.Where)
			}
			fams[f.Name] = f
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

// collectorFamilies are the Go runtime and process collectors' families, as
// lorekeeper registers them (cmd/lorekeeper/ops.go newRegistry), gathered
// from the real collectors.
func collectorFamilies(t *testing.T) map[string]family {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]family{}
	for _, mf := range mfs {
		f := family{Name: mf.GetName(), Type: strings.ToLower(mf.GetType().String()), Where: "collector"}
		if f.Type == strings.ToLower(dto.MetricType_GAUGE_HISTOGRAM.String()) {
			f.Type = "histogram"
		}
		seen := map[string]bool{}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if !seen[l.GetName()] {
					seen[l.GetName()] = true
					f.Labels = append(f.Labels, l.GetName())
				}
			}
		}
		sort.Strings(f.Labels)
		out[f.Name] = f
	}
	return out
}
