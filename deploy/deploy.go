// Package deploy holds LoreKeeper's distributed deployment: the Dockerfile,
// the compose file, the Kubernetes manifests, the Prometheus configuration
// and alert rules, and the Grafana provisioning and dashboards. Files embeds
// them, so tests (here and in cmd/lorekeeper) read exactly what ships.
package deploy

import "embed"

// Files are the deployment files, by their path under deploy/.
//
//go:embed Dockerfile compose.yaml k8s/*.yaml
//go:embed prometheus/prometheus.yml prometheus/rules.yml prometheus/rules_test.yml
//go:embed grafana/provisioning/datasources/*.yaml grafana/provisioning/dashboards/*.yaml
//go:embed grafana/dashboards/*.json
var Files embed.FS

// Paths of the files the other packages read.
const (
	PrometheusConfig = "prometheus/prometheus.yml"
	PrometheusRules  = "prometheus/rules.yml"
	PrometheusTests  = "prometheus/rules_test.yml"
	Compose          = "compose.yaml"
	KubernetesDir    = "k8s"
	DashboardsDir    = "grafana/dashboards"
)
