package main

import (
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
)

// freePort returns a loopback port nothing listens on (yet).
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startNATSOn starts an in-process JetStream server on port.
func startNATSOn(t *testing.T, port int) *natsserver.Server {
	t.Helper()
	ns, err := natsserver.NewServer(&natsserver.Options{
		Host: "127.0.0.1", Port: port, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server not ready")
	}
	t.Cleanup(ns.Shutdown)
	return ns
}

func readyz(t *testing.T, addr string) (int, string) {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/readyz")
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestRoleProcess_WaitsForNATS: a role started before NATS waits for it,
// says so on /readyz, and carries on once NATS is there.
func TestRoleProcess_WaitsForNATS(t *testing.T) {
	natsPort := freePort(t)
	metricsAddr := net.JoinHostPort("127.0.0.1", strconv.Itoa(freePort(t)))
	p := &roleProcess{metrics: metricsAddr}
	p.nats.url = "nats://127.0.0.1:" + strconv.Itoa(natsPort)
	p.nats.replicas = 1
	p.log.level, p.log.format = "warn", "text"
	started := make(chan error, 1)
	go func() { started <- p.start(t.Context(), "test", testWriter{t}) }()

	waitUntil(t, "/readyz to say it waits for NATS", func() bool {
		code, body := readyz(t, metricsAddr)
		return code == http.StatusServiceUnavailable && strings.Contains(body, "waiting for NATS at")
	})
	select {
	case err := <-started:
		t.Fatalf("start returned before NATS was there: %v", err)
	default:
	}

	startNATSOn(t, natsPort)
	select {
	case err := <-started:
		if err != nil {
			t.Fatalf("start: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("start still waiting a minute after NATS came up")
	}
	defer p.close()
	if code, body := readyz(t, metricsAddr); code != http.StatusOK {
		t.Errorf("/readyz after the wait: %d %s", code, body)
	}
}

// TestRoleProcess_ConfigErrorExitsAtOnce: what no wait can fix (three
// replicas on a server that is not clustered) is an error at once.
func TestRoleProcess_ConfigErrorExitsAtOnce(t *testing.T) {
	ns := startNATSOn(t, freePort(t))
	p := &roleProcess{metrics: "127.0.0.1:0"}
	p.nats.url = ns.ClientURL()
	p.nats.replicas = 3
	p.log.level, p.log.format = "warn", "text"
	err := p.start(t.Context(), "test", testWriter{t})
	if !errors.Is(err, errConfig) {
		t.Fatalf("start with 3 replicas on one server: %v, want a configuration error", err)
	}
}
