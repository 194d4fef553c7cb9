package deploy_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/nats-io/nats-server/v2/conf"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// TestKubernetes_natsConfig parses the NATS StatefulSet's configuration
// with nats-server's own parser and checks it makes a JetStream cluster of
// every replica, routed through the headless Service.
func TestKubernetes_natsConfig(t *testing.T) {
	var cm *corev1.ConfigMap
	var sts *appsv1.StatefulSet
	for _, m := range manifests(t) {
		switch o := m.Obj.(type) {
		case *corev1.ConfigMap:
			if o.Name == "nats-config" {
				cm = o
			}
		case *appsv1.StatefulSet:
			if o.Name == "nats" {
				sts = o
			}
		}
	}
	if cm == nil || sts == nil {
		t.Fatal("want ConfigMap nats-config and StatefulSet nats")
	}
	t.Setenv("POD_NAME", "nats-0") // the config names the server after its pod
	c, err := conf.Parse(cm.Data["nats.conf"])
	if err != nil {
		t.Fatalf("nats.conf: %v", err)
	}
	if c["server_name"] != "nats-0" {
		t.Errorf("server_name %v, want the pod's name", c["server_name"])
	}
	js, ok := c["jetstream"].(map[string]any)
	if !ok || js["store_dir"] == nil {
		t.Fatalf("jetstream %v: want a store_dir", c["jetstream"])
	}
	mounted := false
	for _, vm := range sts.Spec.Template.Spec.Containers[0].VolumeMounts {
		mounted = mounted || (vm.Name == sts.Spec.VolumeClaimTemplates[0].Name && vm.MountPath == js["store_dir"])
	}
	if !mounted {
		t.Errorf("store_dir %v is not the persistent volume's mount", js["store_dir"])
	}
	cluster, _ := c["cluster"].(map[string]any)
	var routes []string
	if rs, ok := cluster["routes"].([]any); ok {
		for _, r := range rs {
			routes = append(routes, fmt.Sprint(r))
		}
	}
	var want []string
	for i := range int(*sts.Spec.Replicas) {
		want = append(want, fmt.Sprintf("nats://%s-%d.%s:6222", sts.Name, i, sts.Spec.ServiceName))
	}
	if !slices.Equal(routes, want) {
		t.Errorf("routes %v, want %v (every replica through the headless Service)", routes, want)
	}
	if *sts.Spec.Replicas != 3 {
		t.Errorf("%d NATS replicas, want 3 (the stream has 3 replicas)", *sts.Spec.Replicas)
	}
}
