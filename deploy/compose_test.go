package deploy_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/types"
	"sigs.k8s.io/yaml"
)

// loadCompose loads a compose file with the Compose specification's own
// loader: schema validation (unknown attributes are errors), interpolation,
// normalization and the consistency checks (undefined volumes, networks,
// secrets, dependencies), every profile enabled.
func loadCompose(t *testing.T, content []byte) (*types.Project, error) {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return loader.LoadWithContext(context.Background(), types.ConfigDetails{
		WorkingDir:  wd,
		ConfigFiles: []types.ConfigFile{{Filename: filepath.Join(wd, "compose.yaml"), Content: content}},
		Environment: types.Mapping{},
	}, func(o *loader.Options) {
		o.SetProjectName("lorekeeper", true)
		o.Profiles = []string{"*"}
	})
}

func composeProject(t *testing.T) *types.Project {
	t.Helper()
	b, err := os.ReadFile("compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := loadCompose(t, b)
	if err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	return p
}

func TestCompose_strict(t *testing.T) {
	b, err := os.ReadFile("compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for name, edit := range map[string]func(string) string{
		"unknown service attribute": func(s string) string {
			return strings.Replace(s, "    command: [\"ingest\"]", "    command: [\"ingest\"]\n    helthcheck: {}", 1)
		},
		"undefined volume": func(s string) string {
			return strings.Replace(s, "query2-data:/var/lib/lorekeeper", "query3-data:/var/lib/lorekeeper", 1)
		},
		"dependency on a missing service": func(s string) string {
			return strings.Replace(s, "query1: {condition: service_started}", "query9: {condition: service_started}", 1)
		},
		"undefined secret": func(s string) string {
			return strings.Replace(s, "      - mcp-token\n", "      - mcp-tokn\n", 1)
		},
	} {
		t.Run(name, func(t *testing.T) {
			bad := edit(string(b))
			if bad == string(b) {
				t.Fatal("the edit changed nothing")
			}
			if _, err := loadCompose(t, []byte(bad)); err == nil {
				t.Error("loaded without error, want one")
			} else {
				t.Log(err)
			}
		})
	}
}

// lorekeeperServices are the services built from deploy/Dockerfile.
func lorekeeperServices(p *types.Project) map[string]types.ServiceConfig {
	out := map[string]types.ServiceConfig{}
	for name, s := range p.Services {
		if s.Build != nil && strings.HasSuffix(s.Build.Dockerfile, "Dockerfile") {
			out[name] = s
		}
	}
	return out
}

func env(s types.ServiceConfig, key string) string {
	if v, ok := s.Environment[key]; ok && v != nil {
		return *v
	}
	return ""
}

func TestCompose_services(t *testing.T) {
	p := composeProject(t)
	for _, want := range []string{"nats1", "nats2", "nats3", "qdrant", "ingest", "query1", "query2", "mcp", "sync", "prometheus", "grafana"} {
		if _, ok := p.Services[want]; !ok {
			t.Errorf("no service %s", want)
		}
	}
	lk := lorekeeperServices(p)
	roles := map[string]string{"ingest": "ingest", "query1": "node", "query2": "node", "mcp": "mcp", "sync": "sync"}
	for name, role := range roles {
		s, ok := lk[name]
		if !ok {
			t.Errorf("%s is not built from deploy/Dockerfile", name)
			continue
		}
		if len(s.Command) == 0 || s.Command[0] != role {
			t.Errorf("%s: command %v, want lorekeeper %s", name, s.Command, role)
		}
		var keys []string
		for k := range s.Environment {
			keys = append(keys, k)
		}
		for _, prob := range checkInvocation(t, "compose.yaml "+name, s.Command, keys) {
			t.Error(prob)
		}
		if role != "sync" && role != "mcp" && env(s, "LOREKEEPER_NATS_REPLICAS") != "3" {
			t.Errorf("%s: LOREKEEPER_NATS_REPLICAS %q, want 3 (the NATS cluster has 3 servers)", name, env(s, "LOREKEEPER_NATS_REPLICAS"))
		}
		if role != "mcp" && strings.Count(env(s, "LOREKEEPER_NATS_URL"), "nats://") != 3 {
			t.Errorf("%s: LOREKEEPER_NATS_URL %q, want the three servers", name, env(s, "LOREKEEPER_NATS_URL"))
		}
		// Listeners bind loopback by default: in a container they must not.
		for _, k := range []string{"LOREKEEPER_METRICS_ADDR", "LOREKEEPER_MCP_ADDR"} {
			if v := env(s, k); v != "" && !strings.HasPrefix(v, "0.0.0.0:") {
				t.Errorf("%s: %s=%s, want 0.0.0.0:port", name, k, v)
			}
		}
		if role == "sync" {
			continue
		}
		// The healthcheck asks the role's own health endpoint.
		_, port, err := net.SplitHostPort(env(s, "LOREKEEPER_METRICS_ADDR"))
		if err != nil {
			t.Errorf("%s: LOREKEEPER_METRICS_ADDR: %v", name, err)
			continue
		}
		if s.HealthCheck == nil || len(s.HealthCheck.Test) == 0 {
			t.Errorf("%s: no healthcheck", name)
			continue
		}
		test := strings.Join(s.HealthCheck.Test, " ")
		if !strings.Contains(test, "127.0.0.1:"+port+"/readyz") && !strings.Contains(test, "127.0.0.1:"+port+"/healthz") {
			t.Errorf("%s: healthcheck %q does not ask /readyz or /healthz on the metrics port %s", name, test, port)
		}
	}

	// Two query nodes: own consumers, own volumes, Qdrant, gRPC reachable.
	q1, q2 := lk["query1"], lk["query2"]
	if c1, c2 := env(q1, "LOREKEEPER_CONSUMER"), env(q2, "LOREKEEPER_CONSUMER"); c1 == "" || c1 == c2 {
		t.Errorf("query nodes' consumers %q and %q: want two different names", c1, c2)
	}
	if len(q1.Volumes) == 0 || len(q2.Volumes) == 0 || q1.Volumes[0].Source == q2.Volumes[0].Source {
		t.Errorf("query nodes' volumes %v and %v: want one each", q1.Volumes, q2.Volumes)
	}
	for _, q := range []types.ServiceConfig{q1, q2} {
		if env(q, "LOREKEEPER_VECTOR_INDEX") != "qdrant" || !strings.HasPrefix(env(q, "LOREKEEPER_QDRANT_ADDR"), "qdrant:") {
			t.Errorf("%s: want --vector-index qdrant at qdrant:6334", q.Name)
		}
		if !strings.HasPrefix(env(q, "LOREKEEPER_GRPC_ADDR"), "0.0.0.0:") {
			t.Errorf("%s: gRPC binds %q, want 0.0.0.0", q.Name, env(q, "LOREKEEPER_GRPC_ADDR"))
		}
	}

	// The MCP front end: stateless, token from a secret, asks the nodes.
	m := lk["mcp"]
	if !slices.Contains(m.Command, "--http") || env(m, "LOREKEEPER_MCP_STATELESS") != "true" {
		t.Errorf("mcp: want --http and LOREKEEPER_MCP_STATELESS=true")
	}
	// A token file is a secret the service mounts.
	mounted := func(s types.ServiceConfig, v string) string {
		file := env(s, v)
		for _, sec := range s.Secrets {
			if file == "/run/secrets/"+sec.Source {
				return sec.Source
			}
		}
		t.Errorf("%s: %s %q, secrets %v: want a mounted secret", s.Name, v, file, s.Secrets)
		return ""
	}
	mounted(m, "LOREKEEPER_MCP_TOKEN_FILE")
	// The nodes' gRPC service requires the token the front end sends.
	if grpc := mounted(m, "LOREKEEPER_GRPC_TOKEN_FILE"); grpc == "" || mounted(q1, "LOREKEEPER_GRPC_TOKEN_FILE") != grpc || mounted(q2, "LOREKEEPER_GRPC_TOKEN_FILE") != grpc {
		t.Errorf("the query nodes and the MCP front end: want the same gRPC token secret")
	}
	// Every address of a name both nodes answer to, round robin.
	target := env(m, "LOREKEEPER_GRPC_ADDR")
	host, _, _ := net.SplitHostPort(strings.TrimPrefix(target, "dns:///"))
	if !strings.HasPrefix(target, "dns:///") || !slices.Contains(q1.Networks["default"].Aliases, host) || !slices.Contains(q2.Networks["default"].Aliases, host) {
		t.Errorf("mcp dials %q, want dns:/// and an alias of both query nodes", target)
	}
	// Start order does not matter: no LoreKeeper role waits for another
	// service to be healthy before it starts (each waits by itself).
	for name, s := range lk {
		for dep, d := range s.DependsOn {
			if d.Condition == types.ServiceConditionHealthy {
				t.Errorf("%s waits for %s to be healthy; roles wait by themselves", name, dep)
			}
		}
	}

	// NATS: a JetStream cluster of three, each routing to all.
	for _, n := range []string{"nats1", "nats2", "nats3"} {
		cmd := strings.Join(p.Services[n].Command, " ")
		if !strings.Contains(cmd, "--jetstream") || strings.Count(cmd, "nats://nats") != 3 || !strings.Contains(cmd, "--name "+n) {
			t.Errorf("%s: command %q: want --jetstream, its name and routes to nats1..3", n, cmd)
		}
	}
	// Published ports bind loopback only.
	for name, s := range p.Services {
		for _, port := range s.Ports {
			if port.HostIP != "127.0.0.1" {
				t.Errorf("%s publishes %s on %q, want 127.0.0.1", name, port.Published, port.HostIP)
			}
		}
	}
}

// TestCompose_prometheusTargets checks that every scrape target of
// prometheus.yml is a compose service's metrics address.
func TestCompose_prometheusTargets(t *testing.T) {
	p := composeProject(t)
	b, err := os.ReadFile("prometheus/prometheus.yml")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		ScrapeConfigs []struct {
			JobName       string `json:"job_name"`
			StaticConfigs []struct {
				Targets []string `json:"targets"`
			} `json:"static_configs"`
		} `json:"scrape_configs"`
	}
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	scraped := map[string]bool{}
	for _, sc := range cfg.ScrapeConfigs {
		for _, st := range sc.StaticConfigs {
			for _, target := range st.Targets {
				host, port, err := net.SplitHostPort(target)
				if err != nil {
					t.Errorf("%s: %v", sc.JobName, err)
					continue
				}
				if host == "localhost" {
					continue
				}
				s, ok := p.Services[host]
				if !ok {
					t.Errorf("job %s scrapes %s: no such service", sc.JobName, target)
					continue
				}
				if got := env(s, "LOREKEEPER_METRICS_ADDR"); got != "0.0.0.0:"+port {
					t.Errorf("job %s scrapes %s, but %s serves metrics on %q", sc.JobName, target, host, got)
				}
				scraped[host] = true
			}
		}
	}
	for name, s := range lorekeeperServices(p) {
		if env(s, "LOREKEEPER_METRICS_ADDR") != "" && !scraped[name] {
			t.Errorf("%s serves metrics but Prometheus does not scrape it", name)
		}
	}
}

// TestCompose_grafana checks that the provisioning files Grafana gets point
// at the mounted dashboards and at the Prometheus service.
func TestCompose_grafana(t *testing.T) {
	p := composeProject(t)
	g := p.Services["grafana"]
	mounts := map[string]string{}
	for _, v := range g.Volumes {
		if v.Type == types.VolumeTypeBind {
			rel, _ := filepath.Rel(p.WorkingDir, v.Source)
			mounts[rel] = v.Target
		}
	}
	if mounts["grafana/provisioning"] != "/etc/grafana/provisioning" {
		t.Errorf("grafana/provisioning mounted at %q, want /etc/grafana/provisioning", mounts["grafana/provisioning"])
	}
	var prov struct {
		Providers []struct {
			Options struct {
				Path string `json:"path"`
			} `json:"options"`
		} `json:"providers"`
	}
	readYAML(t, "grafana/provisioning/dashboards/lorekeeper.yaml", &prov)
	if len(prov.Providers) != 1 || prov.Providers[0].Options.Path != mounts["grafana/dashboards"] {
		t.Errorf("dashboards provider path %+v, dashboards mounted at %q", prov.Providers, mounts["grafana/dashboards"])
	}
	var ds struct {
		Datasources []struct {
			UID, URL string
		} `json:"datasources"`
	}
	readYAML(t, "grafana/provisioning/datasources/prometheus.yaml", &ds)
	if len(ds.Datasources) != 1 || ds.Datasources[0].URL != fmt.Sprintf("http://prometheus:%d", 9090) {
		t.Errorf("datasources %+v, want one at http://prometheus:9090", ds.Datasources)
	}
	if _, ok := p.Services["prometheus"]; !ok {
		t.Error("no prometheus service")
	}
}

func readYAML(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}
