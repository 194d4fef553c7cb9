package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"lorekeeper.dev/ingest"
	"lorekeeper.dev/ingest/open5e"
	"lorekeeper.dev/ingest/orcbrew"
	"lorekeeper.dev/ingest/srd52"
	"lorekeeper.dev/mcpserver"
)

// roleProcess is what a process running one role against a NATS server
// sets up first: its logger, the connection, the stream resources, and the
// metrics and health listener.
type roleProcess struct {
	nats    natsFlags
	log     logFlags
	metrics string
	ops     opsFlags

	logger *slog.Logger
	js     jetstream.JetStream
	reg    *prometheus.Registry
	ready  *readiness
	// expect are the checks the role adds once started (see
	// readiness.expect).
	expect []string
	waits  *waits
	close  func()

	shutdown shutdownFlags
}

func (p *roleProcess) register(fs *flagSet, metricsAddr string) {
	p.nats.register(fs)
	p.log.register(fs)
	fs.String(&p.metrics, "metrics-addr", metricsAddr, "address of /metrics, /healthz and /readyz")
	p.shutdown.register(fs)
	p.ops.register(fs)
}

// start sets the process up; close undoes it. The metrics and health
// listener comes first, so that /readyz says what the process waits for:
// NATS, then the stream and buckets (a role may start before NATS, or
// before the cluster can hold an R3 stream). Only configuration errors and
// ctx's end stop the wait.
func (p *roleProcess) start(ctx context.Context, name string, stderr io.Writer) error {
	var err error
	if p.logger, err = p.log.logger(stderr); err != nil {
		return err
	}
	p.reg, p.ready, p.waits = newRegistry(), &readiness{}, &waits{}
	p.ready.add("waiting", p.waits.check)
	p.ready.expect(p.expect...)
	ops, err := startOps(p.metrics, p.ops, p.reg, p.ready, p.logger)
	if err != nil {
		return err
	}
	closeOps := func() {
		if err := ops.close(context.Background()); err != nil {
			p.logger.Warn("metrics listener shutdown", "err", err)
		}
	}
	nc, js, err := p.nats.connectRetrying(name, p.logger)
	if err != nil {
		closeOps()
		return err
	}
	p.ready.add("nats", func(context.Context) error {
		if !nc.IsConnected() {
			return errors.New("not connected")
		}
		return nil
	})
	p.close = func() {
		closeOps()
		drain(nc)
	}
	if err := waitConnected(ctx, p.logger, p.waits, nc, p.nats.url); err != nil {
		p.close()
		return err
	}
	what := fmt.Sprintf("the stream %s and the buckets %s and %s", ingest.StreamName, ingest.StateBucket, ingest.OrcBrewBucket)
	if err := waitFor(ctx, p.logger, p.waits, what, func(ctx context.Context) error {
		return ingest.EnsureResources(ctx, js, p.nats.replicas)
	}); err != nil {
		p.close()
		return err
	}
	p.js = js
	return nil
}

func runNode(ctx context.Context, args []string, stderr io.Writer) error {
	fs := newFlagSet("node", `Usage: lorekeeper node [flags]

Runs a query node: a durable consumer of the ENTITIES stream that embeds and
stores every entity in its own Badger directory, and the gRPC query service
over it. Run one per replica, each with its own --data-dir and --consumer.`, stderr)
	var p roleProcess
	var node nodeFlags
	var dataDir string
	p.register(fs, "127.0.0.1:7410")
	node.register(fs)
	fs.String(&dataDir, "data-dir", defaultDataDir(), "where Badger keeps this node's files")
	if err := fs.parse(args); err != nil {
		return err
	}
	lock, err := ownDataDir(dataDir, "node")
	if err != nil {
		return err
	}
	defer lock.release()
	p.expect = []string{"replica", "grpc"}
	if err := p.start(ctx, "node", stderr); err != nil {
		return err
	}
	sup := newSupervisor(ctx, p.logger)
	var cl closers
	cl.push(func(context.Context) error { p.close(); return nil })
	err = func() error {
		if err := ensureModel(ctx, node.modelDir, node.registry, stderr, p.logger, nil); err != nil {
			return err
		}
		node.replicas = p.nats.replicas
		n, err := startNode(sup.Context(), sup, p.js, filepath.Join(dataDir, "badger"), &node, p.reg, p.ready, p.waits, p.logger)
		if err != nil {
			return err
		}
		cl.push(n.close)
		return lock.setGRPCAddr(n.grpcAddr)
	}()
	if err == nil {
		<-sup.Context().Done()
		p.logger.Info("shutting down")
	}
	return errors.Join(err, sup.Shutdown(&cl, p.shutdown.timeout))
}

func runIngest(ctx context.Context, args []string, stderr io.Writer) error {
	fs := newFlagSet("ingest", `Usage: lorekeeper ingest [flags]

Runs ingestion against a NATS server: the scheduled Open5e resync and the
OrcBrew bucket watcher. Several may run; a lease in the state bucket keeps
two resyncs from running at once.`, stderr)
	var p roleProcess
	var ing ingestFlags
	p.register(fs, "127.0.0.1:7413")
	ing.register(fs)
	if err := fs.parse(args); err != nil {
		return err
	}
	if err := p.start(ctx, "ingest", stderr); err != nil {
		return err
	}
	sup := newSupervisor(ctx, p.logger)
	var cl closers
	cl.push(func(context.Context) error { p.close(); return nil })
	ing.replicas = p.nats.replicas
	ri, err := startIngest(sup.Context(), sup, p.js, &ing, p.reg, p.logger)
	if err == nil {
		cl.push(ri.close)
		p.ready.add("stream", ri.stream)
		<-sup.Context().Done()
		p.logger.Info("shutting down")
	}
	return errors.Join(err, sup.Shutdown(&cl, p.shutdown.timeout))
}

func runMCP(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if isStandalone(args) {
		return runStandalone(ctx, args, stdin, stdout, stderr)
	}
	fs := newFlagSet("mcp", `Usage: lorekeeper mcp [flags]

Serves the MCP tools to an AI assistant. By default it speaks MCP on stdin and
stdout (what desktop clients start); --http serves streamable HTTP instead.
Either way it answers from the query service at --grpc-addr, else from the
LoreKeeper owning --data-dir (started by make run / lorekeeper up, or
lorekeeper node), with the token that data directory keeps.`, stderr)
	var cf clientFlags
	var mf mcpHTTPFlags
	var lf logFlags
	var httpMode bool
	var metricsAddr string
	var of opsFlags
	var sf shutdownFlags
	cf.register(fs)
	cf.registerDataDir(fs)
	mf.register(fs)
	lf.register(fs)
	sf.register(fs)
	fs.Bool(&httpMode, "http", false, "serve streamable HTTP on --mcp-addr instead of stdio")
	var standalone bool
	fs.Bool(&standalone, "standalone", false, "run all of LoreKeeper in this process, MCP on stdio: the desktop setup (lorekeeper mcp --standalone --help)")
	fs.String(&metricsAddr, "metrics-addr", "", "address of /metrics and health (HTTP mode; empty: none)")
	of.register(fs)
	if err := fs.parse(args); err != nil {
		return err
	}
	// stdout belongs to the protocol in stdio mode: logs go to stderr.
	log, err := lf.logger(stderr)
	if err != nil {
		return err
	}
	if _, err := cf.target(); err != nil {
		return err
	}
	tok, err := cf.token()
	if err != nil {
		return err
	}
	reg, ready := newRegistry(), &readiness{}
	if httpMode {
		if _, err := mf.bearer(); err != nil {
			return err
		}
		ready.expect("mcp")
		sup := newSupervisor(ctx, log)
		var cl closers
		if metricsAddr != "" {
			ops, err := startOps(metricsAddr, of, reg, ready, log)
			if err != nil {
				return err
			}
			cl.push(ops.close)
		}
		m, err := startMCPHTTP(sup.Context(), sup, cf.addr, &cf.tls, tok, &mf, reg, ready, log)
		if err == nil {
			cl.push(m.close)
			fmt.Fprintf(stderr, "MCP (streamable HTTP): %s\n", m.url)
			<-sup.Context().Done()
			log.Info("shutting down")
		}
		return errors.Join(err, sup.Shutdown(&cl, sf.timeout))
	}
	conn, client, err := dialQuery(cf.addr, &cf.tls, tok)
	if err != nil {
		return err
	}
	defer conn.Close()
	srv := mcpserver.New(client, &mcpserver.Options{Logger: log, Metrics: mcpserver.NewMetrics(reg), Version: version})
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() { _ = srv.WatchDocuments(wctx, 0) }()
	return srv.RunIO(ctx, stdin, stdout)
}

func runSync(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("sync", `Usage: lorekeeper sync [flags]

Resyncs Open5e now: fetches every endpoint, publishes what is new or changed
and tombstones what is gone, then prints a line per endpoint. If another
resync holds the lease it does nothing and fails at once, naming the holder.`, stderr)
	var nf natsFlags
	var ing ingestFlags
	var lf logFlags
	var dataDir string
	nf.register(fs)
	ing.register(fs)
	lf.register(fs)
	registerOwnerDir(fs, &dataDir)
	if err := fs.parse(args); err != nil {
		return err
	}
	log, err := lf.logger(stderr)
	if err != nil {
		return err
	}
	nf.useOwner(fs, dataDir)
	nc, js, err := nf.connect("sync", log)
	if err != nil {
		return err
	}
	defer drain(nc)
	if err := ingest.EnsureResources(ctx, js, nf.replicas); err != nil {
		return err
	}
	endpoints, err := ing.selectedEndpoints()
	if err != nil {
		return err
	}
	base, stopSnapshot, err := open5eBase(ing.open5eURL)
	if err != nil {
		return err
	}
	defer stopSnapshot()
	bar := newProgressBar(stderr)
	f, err := open5e.NewFetcher(js, base, &open5e.Options{Endpoints: endpoints, Text: srd52.NewSource(nil), Logger: log, Progress: func(p open5e.Progress) {
		bar.set(p.Endpoint, p.Done, p.Total)
	}})
	if err != nil {
		return fmt.Errorf("--open5e-url: %w", err)
	}
	sum, err := f.Sync(ctx)
	bar.finish()
	for _, line := range sum.Lines() {
		fmt.Fprintln(stdout, line)
	}
	return err
}

func runImport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("import", `Usage: lorekeeper import [flags] FILE|DIR ...

Puts OrcBrew files (.orcbrew) into the watched bucket; the ingest role
imports them and lorekeeper status shows how each went. A directory puts
every .orcbrew file in it.`, stderr)
	var nf natsFlags
	var maxSize int64
	var dataDir string
	nf.register(fs)
	registerOwnerDir(fs, &dataDir)
	fs.ByteSize(&maxSize, "orcbrew-max-size", orcbrew.DefaultMaxSize, "largest OrcBrew file accepted (e.g. 16MiB); larger ones are refused before they are stored")
	if err := fs.parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return errUsage
	}
	put := &orcbrew.PutOptions{MaxSize: maxSize}
	nf.useOwner(fs, dataDir)
	nc, js, err := nf.connect("import", slog.New(slog.NewTextHandler(stderr, nil)))
	if err != nil {
		return err
	}
	defer drain(nc)
	if err := ingest.EnsureResources(ctx, js, nf.replicas); err != nil {
		return err
	}
	for _, path := range fs.Args() {
		st, err := os.Stat(path)
		if err != nil {
			return err
		}
		var names []string
		if st.IsDir() {
			names, err = orcbrew.PutDir(ctx, js, path, put)
		} else {
			var name string
			name, err = orcbrew.PutFile(ctx, js, path, put)
			names = []string{name}
		}
		if errors.Is(err, orcbrew.ErrTooLarge) {
			return fmt.Errorf("%w; nothing stored (--orcbrew-max-size sets the limit)", err)
		}
		if err != nil {
			return err
		}
		for _, n := range names {
			fmt.Fprintf(stdout, "queued %s\n", n)
		}
	}
	fmt.Fprintln(stdout, "Run `lorekeeper status` to see how the import went.")
	return nil
}
