package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"lorekeeper.dev/embedder/natsconsume"
	"lorekeeper.dev/ingest"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// natsCluster is three (or n) in-process nats-servers with JetStream
// forming a real cluster over routes, on loopback ports chosen up front so
// that roles can be pointed at it before it runs and a stopped server can
// come back where it was.
type natsCluster struct {
	opts    []*natsserver.Options
	servers []*natsserver.Server
}

func newNATSCluster(t *testing.T, n int) *natsCluster {
	t.Helper()
	c := &natsCluster{servers: make([]*natsserver.Server, n)}
	var routes []string
	var clusterPorts []int
	for range n {
		p := freePort(t)
		clusterPorts = append(clusterPorts, p)
		routes = append(routes, "nats://127.0.0.1:"+strconv.Itoa(p))
	}
	for i := range n {
		c.opts = append(c.opts, &natsserver.Options{
			ServerName: fmt.Sprintf("lorekeeper-test-%d", i),
			Host:       "127.0.0.1",
			Port:       freePort(t),
			JetStream:  true,
			StoreDir:   t.TempDir(),
			NoLog:      true,
			NoSigs:     true,
			MaxPayload: 8 << 20,
			Cluster:    natsserver.ClusterOpts{Name: "lorekeeper-test", Host: "127.0.0.1", Port: clusterPorts[i]},
			Routes:     natsserver.RoutesFromStr(strings.Join(routes, ",")),
		})
	}
	t.Cleanup(func() {
		for i := range c.servers {
			c.stop(i)
		}
	})
	return c
}

// urls is what --nats-url takes.
func (c *natsCluster) urls() string {
	var u []string
	for _, o := range c.opts {
		u = append(u, "nats://127.0.0.1:"+strconv.Itoa(o.Port))
	}
	return strings.Join(u, ",")
}

func (c *natsCluster) start(t *testing.T, i int) {
	t.Helper()
	opts := *c.opts[i]
	ns, err := natsserver.NewServer(&opts)
	if err != nil {
		t.Fatal(err)
	}
	ns.Start()
	if !ns.ReadyForConnections(30 * time.Second) {
		t.Fatalf("nats-server %d not ready", i)
	}
	c.servers[i] = ns
}

func (c *natsCluster) stop(i int) {
	if ns := c.servers[i]; ns != nil {
		ns.Shutdown()
		ns.WaitForShutdown()
		c.servers[i] = nil
	}
}

// serverWithout returns a running server none of whose clients is named
// name, so that stopping it tests the others' failover, not a publisher
// losing its in-flight acknowledgements.
func (c *natsCluster) serverWithout(t *testing.T, name string) int {
	t.Helper()
	for i, ns := range c.servers {
		if ns == nil {
			continue
		}
		cz, err := ns.Connz(nil)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, conn := range cz.Conns {
			found = found || conn.Name == name
		}
		if !found {
			return i
		}
	}
	t.Fatalf("every server has a client named %q", name)
	return -1
}

// roleRun is a role (`lorekeeper node`, `ingest`) running in process as
// the command runs it.
type roleRun struct {
	cancel context.CancelFunc
	done   chan error
}

func startRole(t *testing.T, run func(ctx context.Context) error) *roleRun {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &roleRun{cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- run(ctx) }()
	t.Cleanup(func() { r.stop(t) })
	return r
}

// stop stops the role as SIGTERM does and checks it exited cleanly.
func (r *roleRun) stop(t *testing.T) {
	t.Helper()
	if r.done == nil {
		return
	}
	r.cancel()
	select {
	case err := <-r.done:
		if err != nil {
			t.Errorf("role exited with %v after a graceful stop", err)
		}
	case <-time.After(2 * time.Minute):
		t.Error("role still running 2 minutes after it was told to stop")
	}
	r.done = nil
}

// clusterNode is a `lorekeeper node` role of the cluster test.
type clusterNode struct {
	name, grpcAddr, metricsAddr, dir string
	args                             []string
	run                              *roleRun
}

func (n *clusterNode) start(t *testing.T) {
	n.run = startRole(t, func(ctx context.Context) error {
		return runNode(ctx, n.args, testWriter{t})
	})
}

func (n *clusterNode) status(t *testing.T) (*lkv1.StatusResponse, bool) {
	return queryStatus(t, n.grpcAddr, n.dir)
}

func (n *clusterNode) readyz(t *testing.T) (int, string) {
	t.Helper()
	resp, err := http.Get("http://" + n.metricsAddr + "/readyz")
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestCluster_AnyStartOrderAndFaults runs LoreKeeper as the distributed
// deployment does, on a real three-server NATS cluster with an R3 stream:
// the ingest role and two query nodes start first, before any NATS server
// (so before the stream exists) and wait for it; then, mid-load, one NATS
// server shuts down, and one node stops and starts again. Both nodes end
// with exactly the snapshot's entities and a vector for each, nothing is
// dead-lettered, and a resync afterwards publishes nothing.
func TestCluster_AnyStartOrderAndFaults(t *testing.T) {
	began := time.Now()
	phase := func(what string) { t.Logf("%6.1fs %s", time.Since(began).Seconds(), what) }
	// What the nodes must end with, read while they start.
	snapshot := snapshotCount(t)
	cluster := newNATSCluster(t, 3)
	common := []string{"--nats-url", cluster.urls(), "--nats-replicas", "3", "--log-level", "warn"}
	addr := func() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(freePort(t))) }
	// Roles first.
	ingestMetrics := addr()
	startRole(t, func(ctx context.Context) error {
		return runIngest(ctx, append([]string{"--metrics-addr", ingestMetrics, "--orcbrew-dir", "", "--open5e-url", "snapshot"}, common...), testWriter{t})
	})
	var nodes []*clusterNode
	for _, name := range []string{"node-a", "node-b"} {
		n := &clusterNode{name: name, grpcAddr: addr(), metricsAddr: addr(), dir: t.TempDir()}
		n.args = append([]string{
			"--grpc-addr", n.grpcAddr, "--metrics-addr", n.metricsAddr,
			"--data-dir", n.dir, "--consumer", name, "--model-dir", testModelDir(t),
		}, common...)
		n.start(t)
		nodes = append(nodes, n)
	}
	for _, n := range nodes {
		waitUntil(t, n.name+" to say it waits for NATS", func() bool {
			code, body := n.readyz(t)
			return code == http.StatusServiceUnavailable && strings.Contains(body, "waiting for NATS")
		})
	}
	phase("ingest and both nodes started; they wait for NATS")

	// Then the cluster.
	for i := range cluster.servers {
		cluster.start(t, i)
	}
	phase("NATS cluster started")

	want := snapshot()
	stored := func(n *clusterNode) uint64 {
		s, ok := n.status(t)
		if !ok {
			return 0
		}
		return s.GetEntities()
	}
	var at uint64
	waitUntilFor(t, 10*time.Minute, "node-a a quarter loaded", func() bool { at = stored(nodes[0]); return at >= want/4 })
	down := cluster.serverWithout(t, "lorekeeper ingest")
	cluster.stop(down)
	phase(fmt.Sprintf("NATS server %d shut down (node-a at %d of %d)", down, at, want))

	waitUntilFor(t, 10*time.Minute, "node-b half loaded", func() bool { at = stored(nodes[1]); return at >= want/2 })
	nodes[1].run.stop(t)
	nodes[1].start(t)
	phase(fmt.Sprintf("node-b stopped at %d and started again", at))

	cluster.start(t, down)
	phase(fmt.Sprintf("NATS server %d back", down))

	for _, n := range nodes {
		var last *lkv1.StatusResponse
		waitUntilFor(t, 10*time.Minute, n.name+" to hold the whole catalogue", func() bool {
			s, ok := n.status(t)
			if ok {
				last = s
			}
			return ok && s.GetEntities() == want && s.GetVectors() == want && s.GetPending() == 0
		})
		if last.GetEntities() != want || last.GetVectors() != want {
			t.Errorf("%s: %d entities and %d vectors, want %d of each", n.name, last.GetEntities(), last.GetVectors(), want)
		}
	}
	phase(fmt.Sprintf("both nodes hold %d entities and %d vectors", want, want))

	nc, err := nats.Connect(cluster.urls())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if n := streamMsgsOf(t, js, natsconsume.DeadLetterStream); n != 0 {
		t.Errorf("%d dead letters, want none", n)
	}
	before := streamMsgsOf(t, js, ingest.StreamName)
	var out strings.Builder
	if err := runSync(t.Context(), append([]string{"--open5e-url", "snapshot"}, common...), &out, testWriter{t}); err != nil {
		t.Fatalf("resync: %v\n%s", err, out.String())
	}
	if after := streamMsgsOf(t, js, ingest.StreamName); after != before {
		t.Errorf("a resync after the load published %d messages, want none:\n%s", after-before, out.String())
	}
	phase(fmt.Sprintf("resync published nothing (%d messages on the stream)", before))
}

// snapshotCount counts the bundled snapshot's entities in the background
// (snapshotEntities: read once per test binary, slow under the race
// detector); the returned func waits for the count.
func snapshotCount(t *testing.T) func() uint64 {
	type result struct {
		n   uint64
		err error
	}
	ch := make(chan result, 1)
	go func() {
		es, err := snapshotEntities()
		ch <- result{uint64(len(es)), err}
	}()
	return func() uint64 {
		t.Helper()
		r := <-ch
		ch <- r
		if r.err != nil {
			t.Fatal(r.err)
		}
		return r.n
	}
}
