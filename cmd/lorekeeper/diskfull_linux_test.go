package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"lorekeeper.dev/embedder/badgerstore/storetest"
	"lorekeeper.dev/ingest"
)

// TestUp_DiskFilledDuringFirstLoad covers issue 49, rows 3 and 4, as they
// were found: lorekeeper up on a real tmpfs, whose disk another program
// fills during the first load. It died of SIGBUS within 3 s (Badger's
// value log), /readyz passed meanwhile, and once space was freed the
// embedded NATS kept refusing homebrew until a restart. Now the process
// lives, /readyz says "disk full", an import meanwhile fails and
// list_documents and status say why; once the space is freed the load
// ends with every entity, and an import passes.
func TestUp_DiskFilledDuringFirstLoad(t *testing.T) {
	mnt := storetest.Tmpfs(t, "300m")
	dir := filepath.Join(mnt, "data")
	bin := buildBinary(t)
	metrics, mcpAddr := loopbackAddr(t), loopbackAddr(t)
	cmd := exec.Command(bin, "up", "--data-dir", dir, "--nats-listen", "127.0.0.1:0", "--grpc-addr", "127.0.0.1:0",
		"--mcp-addr", mcpAddr, "--metrics-addr", metrics, "--model-dir", testModelDir(t),
		"--open5e-endpoints", "v2/spells", "--orcbrew-dir", filepath.Join(dir, "orcbrew"), "--log-level", "warn")
	cmd.Stderr = testWriter{t}
	startChild(t, cmd)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	alive := func(what string) {
		t.Helper()
		select {
		case err := <-exited:
			t.Fatalf("lorekeeper up exited %s: %v", what, err)
		default:
		}
	}
	readyz := func() string {
		resp, err := http.Get("http://" + metrics + "/readyz")
		if err != nil {
			return err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	waitUntilFor(t, 5*time.Minute, "the first entities stored", func() bool {
		alive("during the first load")
		addr := ownerAddr(dir)
		if addr == "" {
			return false
		}
		s, ok := queryStatus(t, addr, dir)
		return ok && s.GetEntities() >= 100
	})
	fill := storetest.Fill(t, mnt)
	waitUntilFor(t, time.Minute, `/readyz saying "disk full"`, func() bool {
		alive("after the disk filled")
		return strings.Contains(readyz(), "disk full")
	})
	homebrew, err := filepath.Abs("../../ingest/edn/testdata/orcbrew/lorekeeper-mcp_sample.orcbrew")
	if err != nil {
		t.Fatal(err)
	}
	importIt := func() (string, error) {
		out, err := exec.Command(bin, "import", "--data-dir", dir, homebrew).CombinedOutput()
		return string(out), err
	}
	if out, err := importIt(); err == nil {
		t.Errorf("an import onto the full disk passed: %s", out)
	}
	cs := connectSession(t, &mcp.StreamableClientTransport{Endpoint: "http://" + mcpAddr + "/mcp"}, nil)
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "list_documents", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res.StructuredContent)
	if !strings.Contains(string(b), `"import_problems"`) || !strings.Contains(string(b), "disk full") {
		t.Errorf("list_documents on the full disk: import_problems %s, want the full disk", clipMsg(string(b)))
	}
	status, err := exec.Command(bin, "status", "--data-dir", dir).CombinedOutput()
	if !strings.Contains(string(status), "NATS store: disk full") {
		t.Errorf("status on the full disk says nothing of it (%v):\n%s", err, status)
	}
	alive("with the disk full")

	if err := os.Remove(fill); err != nil {
		t.Fatal(err)
	}
	want := uint64(snapshotSpells(t))
	waitUntilFor(t, 5*time.Minute, "every spell stored and /readyz passing once space is freed", func() bool {
		alive("once space was freed")
		s, ok := queryStatus(t, ownerAddr(dir), dir)
		return ok && s.GetEntities() == want && s.GetVectors() == want && !strings.Contains(readyz(), "disk full")
	})
	if out, err := importIt(); err != nil {
		t.Errorf("an import once space is freed: %v\n%s", err, out)
	}
	imported := regexp.MustCompile(`lorekeeper-mcp_sample\.orcbrew\s+ok\s`)
	waitUntilFor(t, time.Minute, "the import stored", func() bool {
		out, _ := exec.Command(bin, "status", "--data-dir", dir).CombinedOutput()
		return imported.Match(out)
	})
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := <-exited; err != nil {
		t.Errorf("graceful stop: %v", err)
	}
}

// ownerAddr is the gRPC address the owner of dir wrote in its lock file.
func ownerAddr(dir string) string {
	info, _ := readLock(dir)
	return info.GRPCAddr
}

// TestNATSDisk_RecoversAfterAFullDisk (issue 49, row 4): a JetStream stream
// of the embedded NATS that failed a write on a full disk (a real tmpfs)
// keeps failing every write after space is freed; once there is room,
// natsDisk restarts JetStream in process, and a homebrew put passes again
// on the same connection. Meanwhile problem says so.
func TestNATSDisk_RecoversAfterAFullDisk(t *testing.T) {
	mnt := storetest.Tmpfs(t, "64m")
	ns, disk, err := embeddedNATSWatched(mnt, "", "", testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ns.Shutdown)
	disk.minFree = 1 << 20
	nc, err := nats.Connect("", nats.InProcessServer(ns))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if err := ingest.EnsureResources(t.Context(), js, 1); err != nil {
		t.Fatal(err)
	}
	obs, err := js.ObjectStore(t.Context(), ingest.OrcBrewBucket)
	if err != nil {
		t.Fatal(err)
	}
	put := func(name string) error {
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
		defer cancel()
		_, err := obs.PutBytes(ctx, name, make([]byte, 2<<20))
		return err
	}
	if err := put("before.orcbrew"); err != nil {
		t.Fatal(err)
	}
	fill := storetest.Fill(t, mnt)
	if err := put("full.orcbrew"); err == nil {
		t.Fatal("a put onto the full disk passed")
	}
	if err := disk.problem(); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("problem on the full disk: %v, want it to say so", err)
	}
	if err := os.Remove(fill); err != nil {
		t.Fatal(err)
	}
	if err := put("freed.orcbrew"); err == nil {
		t.Log("the stream took a write after space was freed without a restart: NATS no longer keeps its write error")
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() { _ = disk.run(ctx, 50*time.Millisecond) }()
	waitUntilFor(t, 30*time.Second, "a put after JetStream is restarted", func() bool { return put("after.orcbrew") == nil })
	if err := disk.problem(); err != nil {
		t.Errorf("problem once recovered: %v", err)
	}
	if _, err := obs.GetInfo(t.Context(), "before.orcbrew"); err != nil {
		t.Errorf("the object put before the full disk: %v", err)
	}
}
