package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/nats-io/nats.go"

	"lorekeeper.dev/ingest"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// upConfig is everything `lorekeeper up` is configured by.
type upConfig struct {
	dataDir    string
	natsListen string
	// natsTokenFile: the token the embedded NATS requires ("": the data
	// directory's).
	natsTokenFile string
	metricsAddr   string
	ops           opsFlags
	// shutdown bounds the graceful stop of every role together.
	shutdown shutdownFlags
	log      logFlags
	node     nodeFlags
	ingest   ingestFlags
	mcp      mcpHTTPFlags
}

const upUsage = `Usage: lorekeeper up [flags]

Starts all of LoreKeeper in one process, on the embedded defaults: NATS with
JetStream on the data directory, the Open5e sync (the bundled offline snapshot
unless --open5e-url names the live API), the OrcBrew folder, the embedder with
its Badger store and embedded vector index, the gRPC query service, MCP over
streamable HTTP, and /metrics, /healthz and /readyz.

Every listener binds loopback unless told otherwise. Stop it with Ctrl-C: the
batch in flight is stored and acknowledged, then everything closes in order.`

func (c *upConfig) register(fs *flagSet) {
	fs.String(&c.dataDir, "data-dir", defaultDataDir(), "where NATS and Badger keep their files")
	fs.String(&c.natsListen, "nats-listen", "127.0.0.1:4222", "the embedded NATS server's address (port 0: any free port)")
	fs.String(&c.natsTokenFile, "nats-token-file", "", "file holding the token the embedded NATS requires of every client (default: "+filepath.Join("<data-dir>", credentialsDir, natsToken)+", made on first start)")
	fs.String(&c.metricsAddr, "metrics-addr", "127.0.0.1:7410", "address of /metrics, /healthz and /readyz")
	c.ops.register(fs)
	c.shutdown.register(fs)
	c.log.register(fs)
	c.node.register(fs)
	c.ingest.register(fs)
	c.mcp.register(fs)
}

func runUp(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("up", upUsage, stderr)
	var cfg upConfig
	cfg.register(fs)
	if err := fs.parse(args); err != nil {
		return err
	}
	cfg.resolve(fs)
	// A bad token stops the start before anything is opened.
	if _, err := cfg.mcp.bearer(); err != nil {
		return err
	}
	log, err := cfg.log.logger(stderr)
	if err != nil {
		return err
	}
	if err := ensureModel(ctx, cfg.node.modelDir, cfg.node.registry, stderr, log, nil); err != nil {
		return err
	}
	st, err := startUp(ctx, &cfg, log)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "LoreKeeper is up.\n  MCP (streamable HTTP): %s\n  gRPC query service:   %s\n  NATS:                 %s\n  metrics and health:   http://%s/metrics\n  data:                 %s\nStop with Ctrl-C.\n",
		st.mcpURL, st.grpcAddr, st.natsURL, st.metricsAddr, cfg.dataDir)
	// Answers are partial until the catalogue is stored (a few minutes on
	// the first start): say when they no longer are, as /readyz does.
	go func() {
		if awaitReady(st.sup.Context(), st.ready, time.Second) == nil {
			fmt.Fprintf(stdout, "LoreKeeper is ready: the catalogue is stored and searchable (http://%s/readyz).\n", st.metricsAddr)
		}
	}()
	<-st.sup.Context().Done()
	log.Info("shutting down")
	return st.close()
}

// upStack is a running `lorekeeper up`: what tests start in process.
type upStack struct {
	log *slog.Logger

	natsURL, grpcAddr, mcpURL, metricsAddr string
	// dataDir keeps the credentials of the NATS and gRPC listeners.
	dataDir string

	sup             *supervisor
	ready           *readiness
	shutdownTimeout time.Duration
	closers         closers
}

func (s *upStack) onClose(f func(context.Context) error) { s.closers.push(f) }

// close stops everything in reverse order of starting, within the
// shutdown timeout. It returns the error of a role that failed, if one did.
func (s *upStack) close() error {
	return s.sup.Shutdown(&s.closers, s.shutdownTimeout)
}

// startUp starts every role. On error, whatever was started is closed.
// The roles stop when ctx is done or close is called.
func startUp(ctx context.Context, cfg *upConfig, log *slog.Logger) (_ *upStack, err error) {
	// Roles run under the supervisor's context: it ends on a signal or
	// when a role fails; close stops them in order either way.
	st := &upStack{log: log, sup: newSupervisor(ctx, log), shutdownTimeout: cfg.shutdown.timeout, dataDir: cfg.dataDir}
	runCtx := st.sup.Context()
	defer func() {
		if err != nil {
			if cerr := st.close(); cerr != nil {
				log.Error("cleanup after failed start", "err", cerr)
			}
		}
	}()

	lock, err := ownDataDir(cfg.dataDir, "up")
	if err != nil {
		return nil, err
	}
	st.onClose(func(context.Context) error { lock.release(); return nil })
	reg := newRegistry()
	ready := &readiness{}
	st.ready = ready
	// Not ready until every listener serves and the node has caught up.
	ready.expect("replica", "grpc", "mcp", "catalogue")

	natsTok, err := serviceToken(cfg.natsTokenFile, cfg.dataDir, natsToken)
	if err != nil {
		return nil, fmt.Errorf("--nats-token-file: %w", err)
	}
	ns, disk, err := embeddedNATSWatched(cfg.dataDir, cfg.natsListen, natsTok, log)
	if err != nil {
		return nil, err
	}
	disk.minFree = uint64(max(cfg.node.minFree, 0))
	diskCtx, stopDisk := context.WithCancel(runCtx)
	st.sup.Go("NATS store", func() error { return disk.run(diskCtx, natsDiskEvery) })
	cfg.node.storeProblem = disk.problem
	st.onClose(func(context.Context) error { stopDisk(); ns.Shutdown(); ns.WaitForShutdown(); return nil })
	st.natsURL = ns.ClientURL()
	if err := lock.setNATSURL(st.natsURL); err != nil {
		return nil, err
	}
	nc, err := nats.Connect(st.natsURL, nats.Name("lorekeeper up"), nats.MaxReconnects(-1), nats.Token(natsTok))
	if err != nil {
		return nil, fmt.Errorf("connect to embedded NATS: %w", err)
	}
	st.onClose(func(context.Context) error { drain(nc); return nil })
	js, err := newJetStream(nc)
	if err != nil {
		return nil, err
	}
	if err := ingest.EnsureResources(ctx, js, 1); err != nil {
		return nil, err
	}
	ready.add("nats", func(context.Context) error {
		if !nc.IsConnected() {
			return errors.New("not connected")
		}
		return disk.problem()
	})

	ops, err := startOps(cfg.metricsAddr, cfg.ops, reg, ready, log)
	if err != nil {
		return nil, err
	}
	st.onClose(ops.close)
	st.metricsAddr = ops.addr()

	node, err := startNode(runCtx, st.sup, js, filepath.Join(cfg.dataDir, "badger"), &cfg.node, reg, ready, nil, log)
	if err != nil {
		return nil, err
	}
	st.onClose(node.close)
	st.grpcAddr = node.grpcAddr
	if err := lock.setGRPCAddr(st.grpcAddr); err != nil {
		return nil, err
	}

	// One process at a time owns the data directory (NATS and Badger lock
	// it), so host and directory name this node across restarts.
	host, _ := os.Hostname()
	absData, _ := filepath.Abs(cfg.dataDir)
	cfg.ingest.node = host + ":" + absData
	ing, err := startIngest(runCtx, st.sup, js, &cfg.ingest, reg, log)
	if err != nil {
		return nil, err
	}
	st.onClose(ing.close)
	ready.add("catalogue", (&catalogueCheck{js: js, fetcher: ing.fetcher, durable: cfg.node.durable}).check)
	ready.add("stream", ing.stream)

	// MCP calls the query service in process: a loopback gRPC call would
	// cost more than most lookups (query.NewInProcessConn). The gRPC
	// listener still serves the command line and other front ends.
	mcp, err := serveMCPHTTP(runCtx, st.sup, lkv1.NewQueryServiceClient(node.local), &cfg.mcp, reg, ready, log)
	if err != nil {
		return nil, err
	}
	st.onClose(mcp.close)
	st.mcpURL = mcp.url
	return st, nil
}

// drain drains a NATS connection and waits until it is closed; a drain
// that cannot finish closes the connection, whose unacked messages are then
// redelivered.
func drain(nc *nats.Conn) {
	closed := make(chan struct{})
	nc.SetClosedHandler(func(*nats.Conn) { close(closed) })
	if err := nc.Drain(); err != nil {
		nc.Close()
		return
	}
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		nc.Close()
	}
}
