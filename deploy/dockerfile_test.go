package deploy_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// No Docker engine runs where these tests run, so the Dockerfile is checked
// statically: its instructions parse, what it copies exists, its command
// and variables are the binary's, and its Go matches the workspace's.

type instruction struct {
	Cmd  string // upper case
	Args string
	Line int
}

// parseDockerfile joins continuation lines and drops comments and parser
// directives.
func parseDockerfile(t *testing.T, src string) []instruction {
	t.Helper()
	var out []instruction
	var cur strings.Builder
	start := 0
	for i, line := range strings.Split(src, "\n") {
		trimmed := strings.TrimSpace(line)
		if cur.Len() == 0 && (trimmed == "" || strings.HasPrefix(trimmed, "#")) {
			continue
		}
		if strings.HasPrefix(trimmed, "#") { // a comment inside a continuation
			continue
		}
		if cur.Len() == 0 {
			start = i + 1
		}
		if s, ok := strings.CutSuffix(trimmed, "\\"); ok {
			cur.WriteString(s + " ")
			continue
		}
		cur.WriteString(trimmed)
		cmd, args, _ := strings.Cut(cur.String(), " ")
		out = append(out, instruction{Cmd: strings.ToUpper(cmd), Args: strings.TrimSpace(args), Line: start})
		cur.Reset()
	}
	if cur.Len() > 0 {
		t.Fatal("Dockerfile ends inside a continuation")
	}
	return out
}

var knownInstructions = map[string]bool{"FROM": true, "ARG": true, "WORKDIR": true, "COPY": true, "RUN": true, "ENV": true, "USER": true, "VOLUME": true, "EXPOSE": true, "ENTRYPOINT": true, "CMD": true, "LABEL": true, "HEALTHCHECK": true}

func TestDockerfile(t *testing.T) {
	src, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	ins := parseDockerfile(t, string(src))
	root := ".."
	var (
		stages     []string
		env        = map[string]string{}
		entrypoint []string
		cmd        []string
		copiedTo   = map[string]string{} // destination -> "stage:source"
		args       = map[string]string{}
		cgo        bool
	)
	for _, in := range ins {
		if !knownInstructions[in.Cmd] {
			t.Errorf("line %d: unknown instruction %s", in.Line, in.Cmd)
		}
		switch in.Cmd {
		case "ARG":
			k, v, _ := strings.Cut(in.Args, "=")
			args[k] = v
		case "FROM":
			f := slices.DeleteFunc(strings.Fields(in.Args), func(a string) bool { return strings.HasPrefix(a, "--") })
			stages = append(stages, f[0])
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				stages[len(stages)-1] = f[0] + " AS " + f[2]
			}
		case "ENV":
			for _, kv := range regexp.MustCompile(`(\w+)=(\S+)`).FindAllStringSubmatch(in.Args, -1) {
				env[kv[1]] = kv[2]
			}
		case "RUN":
			if strings.Contains(in.Args, "CGO_ENABLED=1") && strings.Contains(in.Args, "go build") && strings.Contains(in.Args, "./cmd/lorekeeper") {
				cgo = true
			}
			if strings.Contains(in.Args, "scripts/model.sh") {
				if _, err := os.Stat(filepath.Join(root, "scripts", "model.sh")); err != nil {
					t.Errorf("line %d: %v", in.Line, err)
				}
			}
		case "COPY":
			f := strings.Fields(in.Args)
			from := ""
			var paths []string
			for _, a := range f {
				if v, ok := strings.CutPrefix(a, "--from="); ok {
					from = v
				} else if !strings.HasPrefix(a, "--") {
					paths = append(paths, a)
				}
			}
			dst := paths[len(paths)-1]
			for _, p := range paths[:len(paths)-1] {
				copiedTo[dst] = from + ":" + p
				if from != "" {
					continue
				}
				// Optional files are globbed (go.sum*); others must exist.
				m, _ := filepath.Glob(filepath.Join(root, p))
				if len(m) == 0 && !strings.Contains(p, "*") {
					t.Errorf("line %d: COPY %s: not in the repository", in.Line, p)
				}
			}
		case "ENTRYPOINT":
			if err := json.Unmarshal([]byte(in.Args), &entrypoint); err != nil {
				t.Errorf("line %d: ENTRYPOINT must be exec form: %v", in.Line, err)
			}
		case "CMD":
			if err := json.Unmarshal([]byte(in.Args), &cmd); err != nil {
				t.Errorf("line %d: CMD must be exec form: %v", in.Line, err)
			}
		}
	}
	if len(stages) < 2 {
		t.Errorf("stages %v: want a multi-stage build", stages)
	}
	if !cgo {
		t.Error("no `CGO_ENABLED=1 go build ... ./cmd/lorekeeper`: the embedder needs cgo for ONNX Runtime")
	}
	if len(entrypoint) != 1 || copiedTo[entrypoint[0]] == "" {
		t.Errorf("ENTRYPOINT %v is not a copied binary (copied: %v)", entrypoint, copiedTo)
	}
	if md := env["LOREKEEPER_MODEL_DIR"]; md == "" || !strings.HasPrefix(copiedTo[md], "model:") {
		t.Errorf("LOREKEEPER_MODEL_DIR=%q is not where the model stage's output is copied (%v)", md, copiedTo)
	}
	for _, p := range checkInvocation(t, "Dockerfile CMD", cmd, nil) {
		t.Error(p)
	}
	// Image-wide variables: each must be some command's flag.
	for k := range env {
		name, ok := envFlag(k)
		if !ok {
			continue
		}
		found := false
		for _, fl := range commandFlags(t) {
			found = found || fl[name]
		}
		if !found {
			t.Errorf("ENV %s: no lorekeeper command has --%s", k, name)
		}
	}
	// The build image's Go is the workspace's.
	work, err := os.ReadFile(filepath.Join(root, "go.work"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindSubmatch(work)
	if m == nil {
		t.Fatal("go.work has no go line")
	}
	if args["GO_VERSION"] != string(m[1]) {
		t.Errorf("ARG GO_VERSION=%s, go.work wants go %s", args["GO_VERSION"], m[1])
	}
	// Every workspace module's go.mod is copied before the download step.
	for _, mod := range regexp.MustCompile(`(?m)^\s+\./(\S+)$`).FindAllSubmatch(work, -1) {
		if !strings.Contains(string(src), "COPY "+string(mod[1])+"/go.mod") {
			t.Errorf("module %s: its go.mod is not copied for `go mod download`", mod[1])
		}
	}
}
