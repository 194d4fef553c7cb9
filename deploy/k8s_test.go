package deploy_test

import (
	"bytes"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"
)

// kinds are the API types the manifests may hold. Decoding is strict: an
// unknown or duplicate field is an error.
var kinds = map[string]func() any{
	"v1/Namespace":                  func() any { return new(corev1.Namespace) },
	"v1/ConfigMap":                  func() any { return new(corev1.ConfigMap) },
	"v1/Secret":                     func() any { return new(corev1.Secret) },
	"v1/Service":                    func() any { return new(corev1.Service) },
	"apps/v1/StatefulSet":           func() any { return new(appsv1.StatefulSet) },
	"apps/v1/Deployment":            func() any { return new(appsv1.Deployment) },
	"batch/v1/CronJob":              func() any { return new(batchv1.CronJob) },
	"policy/v1/PodDisruptionBudget": func() any { return new(policyv1.PodDisruptionBudget) },
}

type manifest struct {
	Where string // file#index
	Kind  string // apiVersion/kind
	Obj   any
}

// decodeManifests decodes every YAML document of data strictly into its
// Kubernetes API type.
func decodeManifests(name string, data []byte) ([]manifest, error) {
	var out []manifest
	for i, doc := range splitYAML(data) {
		where := fmt.Sprintf("%s#%d", name, i)
		var tm struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if err := yaml.Unmarshal(doc, &tm); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		key := tm.APIVersion + "/" + tm.Kind
		newObj, ok := kinds[key]
		if !ok {
			return nil, fmt.Errorf("%s: unexpected kind %s", where, key)
		}
		obj := newObj()
		if err := yaml.UnmarshalStrict(doc, obj); err != nil {
			return nil, fmt.Errorf("%s (%s): %w", where, key, err)
		}
		out = append(out, manifest{Where: where, Kind: key, Obj: obj})
	}
	return out, nil
}

// splitYAML splits a multi-document stream, dropping empty documents.
func splitYAML(data []byte) [][]byte {
	var docs [][]byte
	for _, d := range bytes.Split(append([]byte("\n"), data...), []byte("\n---")) {
		empty := true
		for _, line := range strings.Split(string(d), "\n") {
			if l := strings.TrimSpace(line); l != "" && !strings.HasPrefix(l, "#") {
				empty = false
			}
		}
		if !empty {
			docs = append(docs, d)
		}
	}
	return docs
}

func manifests(t *testing.T) []manifest {
	t.Helper()
	files, err := filepath.Glob("k8s/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in k8s/: %v", err)
	}
	var all []manifest
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		ms, err := decodeManifests(f, b)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, ms...)
	}
	return all
}

func TestKubernetes_strictDecoding(t *testing.T) {
	for name, doc := range map[string]string{
		"unknown field": `apiVersion: apps/v1
kind: Deployment
metadata: {name: x}
spec:
  selector: {matchLabels: {a: b}}
  template:
    metadata: {labels: {a: b}}
    spec:
      containers:
        - name: x
          image: x
          readinesProbe: {httpGet: {path: /readyz, port: 7410}}
`,
		"field of another kind": `apiVersion: apps/v1
kind: Deployment
metadata: {name: x}
spec:
  serviceName: x
  selector: {matchLabels: {a: b}}
  template: {metadata: {labels: {a: b}}, spec: {containers: [{name: x, image: x}]}}
`,
		"wrong type":      "apiVersion: v1\nkind: Service\nmetadata: {name: x}\nspec: {ports: [{port: \"many\"}]}\n",
		"duplicate field": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {a: b}\ndata: {c: d}\n",
		"unknown kind":    "apiVersion: apps/v1\nkind: DaemonSett\nmetadata: {name: x}\n",
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := decodeManifests(name, []byte(doc)); err == nil {
				t.Error("decoded without error, want one")
			} else {
				t.Log(err)
			}
		})
	}
}

// workload is a pod template with where it came from.
type workload struct {
	Name      string
	Kind      string
	Selector  map[string]string
	Labels    map[string]string
	Spec      corev1.PodSpec
	Claims    []string // StatefulSet volumeClaimTemplates
	LongLived bool     // not a job
}

func TestKubernetes_manifests(t *testing.T) {
	ms := manifests(t)
	var (
		works      []workload
		services   = map[string]*corev1.Service{}
		configMaps = map[string]*corev1.ConfigMap{}
		secrets    = map[string]*corev1.Secret{}
		count      = map[string]int{}
		// StatefulSet name to its governing Service's name.
		serviceNames = map[string]string{}
	)
	for _, m := range ms {
		count[m.Kind]++
		switch o := m.Obj.(type) {
		case *corev1.Namespace:
			continue
		case *corev1.Service:
			services[o.Name] = o
		case *corev1.ConfigMap:
			configMaps[o.Name] = o
		case *corev1.Secret:
			secrets[o.Name] = o
		case *appsv1.StatefulSet:
			var claims []string
			for _, c := range o.Spec.VolumeClaimTemplates {
				claims = append(claims, c.Name)
			}
			works = append(works, workload{o.Name, "StatefulSet", o.Spec.Selector.MatchLabels, o.Spec.Template.Labels, o.Spec.Template.Spec, claims, true})
			serviceNames[o.Name] = o.Spec.ServiceName
		case *appsv1.Deployment:
			works = append(works, workload{o.Name, "Deployment", o.Spec.Selector.MatchLabels, o.Spec.Template.Labels, o.Spec.Template.Spec, nil, true})
		case *batchv1.CronJob:
			jt := o.Spec.JobTemplate.Spec.Template
			works = append(works, workload{o.Name, "CronJob", jt.Labels, jt.Labels, jt.Spec, nil, false})
		}
		if meta := objectMeta(m.Obj); meta != "lorekeeper" {
			t.Errorf("%s: namespace %q, want lorekeeper", m.Where, meta)
		}
	}
	for _, k := range []string{"apps/v1/StatefulSet", "apps/v1/Deployment", "batch/v1/CronJob", "v1/Service", "v1/ConfigMap", "v1/Secret"} {
		if count[k] == 0 {
			t.Errorf("no %s", k)
		}
	}

	for sts, name := range serviceNames {
		if svc, ok := services[name]; !ok || svc.Spec.ClusterIP != corev1.ClusterIPNone {
			t.Errorf("StatefulSet %s: serviceName %q is no headless Service", sts, name)
		}
	}

	byName := map[string]workload{}
	for _, w := range works {
		byName[w.Kind+"/"+w.Name] = w
		for k, v := range w.Selector {
			if w.Labels[k] != v {
				t.Errorf("%s %s: selector %v does not match the template's labels %v", w.Kind, w.Name, w.Selector, w.Labels)
			}
		}
		checkPodSpec(t, w, configMaps, secrets, services)
	}

	// Services select pods, and name ports those pods have.
	for _, s := range services {
		var matched []workload
		for _, w := range works {
			if len(s.Spec.Selector) > 0 && matches(s.Spec.Selector, w.Labels) {
				matched = append(matched, w)
			}
		}
		if len(matched) == 0 {
			t.Errorf("Service %s: selector %v selects no pods", s.Name, s.Spec.Selector)
			continue
		}
		for _, p := range s.Spec.Ports {
			if p.TargetPort.Type == intstr.String && !hasPort(matched[0].Spec, p.TargetPort.StrVal) {
				t.Errorf("Service %s: targetPort %s is no container port of %s", s.Name, p.TargetPort.StrVal, matched[0].Name)
			}
		}
	}

	// What the issue asks for.
	q, ok := byName["StatefulSet/query"]
	if !ok || len(q.Claims) == 0 {
		t.Error("query nodes: want a StatefulSet with volumeClaimTemplates")
	} else {
		c := q.Spec.Containers[0]
		if c.Args[0] != "node" {
			t.Errorf("query StatefulSet runs %v, want lorekeeper node", c.Args)
		}
		var consumer *corev1.EnvVar
		for i := range c.Env {
			if c.Env[i].Name == "LOREKEEPER_CONSUMER" {
				consumer = &c.Env[i]
			}
		}
		if consumer == nil || consumer.ValueFrom == nil || consumer.ValueFrom.FieldRef == nil || consumer.ValueFrom.FieldRef.FieldPath != "metadata.name" {
			t.Error("query nodes: LOREKEEPER_CONSUMER must be the pod's name (one durable consumer per replica)")
		}
	}
	if m, ok := byName["Deployment/mcp"]; !ok || !slices.Equal(m.Spec.Containers[0].Args, []string{"mcp", "--http"}) {
		t.Error("want a Deployment mcp running lorekeeper mcp --http")
	}
	if _, ok := services["mcp"]; !ok {
		t.Error("no Service mcp")
	}
	if c, ok := byName["CronJob/lorekeeper-sync"]; !ok || !slices.Equal(c.Spec.Containers[0].Args, []string{"sync"}) {
		t.Error("want a CronJob running lorekeeper sync")
	}
	if n, ok := byName["StatefulSet/nats"]; !ok || len(n.Claims) == 0 {
		t.Error("want NATS as a StatefulSet with volumes")
	}
	if cm, ok := configMaps["lorekeeper"]; !ok || cm.Data["LOREKEEPER_NATS_REPLICAS"] != "3" {
		t.Error("ConfigMap lorekeeper: want LOREKEEPER_NATS_REPLICAS=3")
	}
}

func objectMeta(obj any) string {
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		return o.Namespace
	case *corev1.Secret:
		return o.Namespace
	case *corev1.Service:
		return o.Namespace
	case *appsv1.StatefulSet:
		return o.Namespace
	case *appsv1.Deployment:
		return o.Namespace
	case *batchv1.CronJob:
		return o.Namespace
	case *policyv1.PodDisruptionBudget:
		return o.Namespace
	}
	return "?"
}

func matches(sel, labels map[string]string) bool {
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}

func hasPort(spec corev1.PodSpec, name string) bool {
	for _, c := range spec.Containers {
		for _, p := range c.Ports {
			if p.Name == name {
				return true
			}
		}
	}
	return false
}

func checkPodSpec(t *testing.T, w workload, cms map[string]*corev1.ConfigMap, secrets map[string]*corev1.Secret, services map[string]*corev1.Service) {
	t.Helper()
	where := w.Kind + " " + w.Name
	vols := slices.Clone(w.Claims)
	for _, v := range w.Spec.Volumes {
		vols = append(vols, v.Name)
		if v.Secret != nil && secrets[v.Secret.SecretName] == nil {
			t.Errorf("%s: volume %s: no Secret %s", where, v.Name, v.Secret.SecretName)
		}
		if v.ConfigMap != nil && cms[v.ConfigMap.Name] == nil {
			t.Errorf("%s: volume %s: no ConfigMap %s", where, v.Name, v.ConfigMap.Name)
		}
	}
	for _, c := range slices.Concat(w.Spec.InitContainers, w.Spec.Containers) {
		where := where + " container " + c.Name
		for _, m := range c.VolumeMounts {
			if !slices.Contains(vols, m.Name) {
				t.Errorf("%s: mounts undefined volume %s", where, m.Name)
			}
		}
		env := map[string]string{}
		for _, ef := range c.EnvFrom {
			if ef.ConfigMapRef != nil {
				cm := cms[ef.ConfigMapRef.Name]
				if cm == nil {
					t.Errorf("%s: envFrom: no ConfigMap %s", where, ef.ConfigMapRef.Name)
					continue
				}
				for k, v := range cm.Data {
					env[k] = v
				}
			}
		}
		for _, e := range c.Env {
			env[e.Name] = e.Value
		}
		for _, p := range []*corev1.Probe{c.ReadinessProbe, c.LivenessProbe, c.StartupProbe} {
			if p != nil && p.HTTPGet != nil && p.HTTPGet.Port.Type == intstr.String && !hasPort(corev1.PodSpec{Containers: []corev1.Container{c}}, p.HTTPGet.Port.StrVal) {
				t.Errorf("%s: probe port %s is not a container port", where, p.HTTPGet.Port.StrVal)
			}
		}
		if !strings.HasPrefix(c.Image, "lorekeeper:") || len(c.Command) > 0 {
			continue // not the lorekeeper binary
		}
		// The lorekeeper image: real flags and variables, reachable
		// listeners, the right probes, addresses of real Services.
		var keys []string
		for k := range env {
			keys = append(keys, k)
		}
		for _, p := range checkInvocation(t, where, c.Args, keys) {
			t.Error(p)
		}
		if sc := w.Spec.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
			t.Errorf("%s: want runAsNonRoot", where)
		}
		for _, k := range []string{"LOREKEEPER_METRICS_ADDR", "LOREKEEPER_MCP_ADDR"} {
			if v, ok := env[k]; ok && !strings.HasPrefix(v, "0.0.0.0:") {
				t.Errorf("%s: %s=%s, want 0.0.0.0:port", where, k, v)
			}
		}
		for _, k := range []string{"LOREKEEPER_QDRANT_ADDR", "LOREKEEPER_NATS_URL", "LOREKEEPER_GRPC_ADDR"} {
			v, ok := env[k]
			if !ok || strings.HasPrefix(v, "0.0.0.0:") {
				continue
			}
			hostPort := strings.TrimPrefix(v, "dns:///") // a gRPC target: every address of the name
			if u, err := url.Parse(v); err == nil && u.Scheme != "" && u.Host != "" {
				hostPort = u.Host
			}
			host, port, err := net.SplitHostPort(hostPort)
			if err != nil {
				t.Errorf("%s: %s=%s: %v", where, k, v, err)
				continue
			}
			svc := services[host]
			if svc == nil || !slices.ContainsFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool { return fmt.Sprint(p.Port) == port }) {
				t.Errorf("%s: %s=%s: no Service %s with port %s", where, k, v, host, port)
			}
		}
		if !w.LongLived {
			continue
		}
		_, metricsPort, _ := net.SplitHostPort(env["LOREKEEPER_METRICS_ADDR"])
		for probe, want := range map[string]*corev1.Probe{"/readyz": c.ReadinessProbe, "/healthz": c.LivenessProbe} {
			if want == nil || want.HTTPGet == nil || want.HTTPGet.Path != probe {
				t.Errorf("%s: want an HTTP probe on %s", where, probe)
				continue
			}
			port := want.HTTPGet.Port.String()
			for _, p := range c.Ports {
				if p.Name == port {
					port = fmt.Sprint(p.ContainerPort)
				}
			}
			if port != metricsPort {
				t.Errorf("%s: %s probe on port %s, metrics on %q", where, probe, port, metricsPort)
			}
		}
	}
}
