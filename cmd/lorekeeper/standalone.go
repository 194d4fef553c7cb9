package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"lorekeeper.dev/embedder/modelfile"
	"lorekeeper.dev/ingest"
	"lorekeeper.dev/mcpserver"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

const standaloneUsage = `Usage: lorekeeper mcp --standalone [flags]

Runs all of LoreKeeper in this one process and speaks MCP on stdin and
stdout: what a desktop AI client (Claude Desktop, Claude Code, Cursor,
VS Code) starts. Nothing else is needed: on first start it fetches the
embedding model when it is missing, loads the bundled Open5e snapshot, and
imports OrcBrew files dropped into the orcbrew folder of the data directory.

It answers at once with what is stored; while the first load embeds (a minute
or a few, once) it tells the client through MCP log messages. stdout carries only
MCP; logs go to stderr and to lorekeeper.log in the data directory. NATS runs
embedded without a network listener; the query service listens on a free
loopback port, which lorekeeper status finds through the data directory.

A second start on the same data directory (a second client) shares the
first one's service instead of opening the data again.`

// standaloneCommand names this mode in the data directory's lock file.
const standaloneCommand = "mcp --standalone"

type standaloneConfig struct {
	dataDir string
	logFile string
	log     logFlags
	node    nodeFlags
	ingest  ingestFlags
}

func (c *standaloneConfig) register(fs *flagSet) {
	var standalone bool
	fs.Bool(&standalone, "standalone", true, "run everything in this process (this mode)")
	fs.String(&c.dataDir, "data-dir", defaultDataDir(), "where NATS and Badger keep their files, and the orcbrew folder")
	fs.String(&c.logFile, "log-file", "", "also write logs to this file (default: lorekeeper.log in --data-dir; \"none\": stderr only)")
	c.log.register(fs)
	c.node.register(fs)
	c.ingest.register(fs)
	// Any free loopback port: the lock file tells other processes which.
	if _, ok := fs.env("grpc-addr"); !ok {
		f := fs.Lookup("grpc-addr")
		_ = f.Value.Set("127.0.0.1:0")
		f.DefValue = "127.0.0.1:0"
	}
}

// isStandalone reports whether the mcp command line asks for standalone
// mode (--standalone or LOREKEEPER_STANDALONE), before the flags are parsed:
// the two modes take different flags.
func isStandalone(args []string) bool {
	v, ok := os.LookupEnv(envName("standalone"))
	on, _ := strconv.ParseBool(v)
	on = ok && on
	for _, a := range args {
		if a == "--" {
			break
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || name != "standalone" {
			continue
		}
		on = true
		if hasVal {
			on, _ = strconv.ParseBool(val)
		}
	}
	return on
}

func runStandalone(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("mcp", standaloneUsage, stderr)
	var cfg standaloneConfig
	cfg.register(fs)
	if err := fs.parse(args); err != nil {
		return err
	}
	if !fs.isSet("orcbrew-dir") {
		cfg.ingest.orcbrewDir = filepath.Join(cfg.dataDir, "orcbrew")
	}
	if cfg.node.tls.cert != "" || cfg.node.tls.key != "" {
		return errors.New("--grpc-tls-cert and --grpc-tls-key are not for standalone mode: its query service is for this machine's processes only")
	}
	if err := os.MkdirAll(cfg.dataDir, 0o755); err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	logOut := stderr
	if cfg.logFile == "" {
		cfg.logFile = filepath.Join(cfg.dataDir, "lorekeeper.log")
	}
	if cfg.logFile != "none" {
		f, err := openLogFile(cfg.logFile)
		if err != nil {
			return err
		}
		defer f.Close()
		logOut = io.MultiWriter(stderr, f)
	}
	log, err := cfg.log.logger(logOut)
	if err != nil {
		return err
	}

	lock, err := lockDataDir(cfg.dataDir, standaloneCommand)
	if errors.Is(err, errLocked) {
		return runShared(ctx, cfg.dataDir, stdin, stdout, log)
	}
	if err != nil {
		return err
	}
	defer lock.release()
	log.Info("LoreKeeper standalone", "version", version, "data", cfg.dataDir, "model", cfg.node.modelDir, "log", cfg.logFile)

	// MCP answers at once; the query service comes up behind it. Until it
	// has, calls wait for it (within the tool's timeout).
	nodeUp := newLatch[grpc.ClientConnInterface]()
	notice := &loadNotice{}
	notice.set("LoreKeeper is starting: results may be incomplete.")
	// The query service is in this process: MCP calls it there, not over
	// loopback gRPC (query.NewInProcessConn).
	client := lkv1.NewQueryServiceClient(&pendingConn{up: nodeUp, intercept: notice.intercept})
	srv := mcpserver.New(client, &mcpserver.Options{Logger: log, Version: version})
	tell := &sessionLog{srv: srv.MCP(), log: log}

	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	mcpDone := make(chan error, 1)
	go func() { mcpDone <- srv.RunIO(runCtx, stdin, stdout) }()
	go func() { _ = srv.WatchDocuments(runCtx, 0) }() // imports reach the session's resource list

	// stackDone reports a failed start at once, a good one when runCtx ends.
	stackDone := make(chan error, 1)
	var st *standaloneStack
	go func() {
		var err error
		st, err = startStandalone(runCtx, &cfg, lock, stderr, log, tell)
		if err == nil {
			nodeUp.open(st.local)
			go st.watchLoad(st.sup.Context(), client, tell, notice)
			<-st.sup.Context().Done()
			if runCtx.Err() == nil {
				// A role failed: stop, and say why.
				err = context.Cause(st.sup.Context())
			}
		}
		stackDone <- err
	}()

	var runErr error
	stackErr, stackEnded := error(nil), false
	select {
	case runErr = <-mcpDone: // the client hung up: stdin closed
		log.Info("the MCP client disconnected; shutting down")
	case <-ctx.Done():
		log.Info("shutting down")
	case stackErr = <-stackDone:
		stackEnded = true
		log.Error("LoreKeeper could not start", "err", stackErr)
		tell.send(context.Background(), "error", "LoreKeeper could not start: "+stackErr.Error())
		runErr = stackErr
	}
	stop()
	if !stackEnded {
		if err := <-stackDone; err != nil && !errors.Is(err, context.Canceled) {
			log.Warn("start interrupted", "err", err)
		}
	}
	if st != nil {
		if err := st.close(); err != nil {
			log.Error("shutdown", "err", err)
		}
	}
	if errors.Is(runErr, context.Canceled) {
		runErr = nil
	}
	return runErr
}

// runShared serves MCP against the query service of the process that owns
// dir: a second desktop client on the same data shares the first's service
// and opens no data itself.
func runShared(ctx context.Context, dir string, stdin io.Reader, stdout io.Writer, log *slog.Logger) error {
	info, _ := readLock(dir)
	log.Info("another LoreKeeper process owns the data directory: sharing its query service", "data", dir, "pid", info.PID, "command", info.Command)
	conn, err := grpc.NewClient("passthrough:///lorekeeper",
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
			// Read the address at each dial: the owner writes it once its
			// query service listens, which may be after we started.
			for {
				info, held := readLock(dir)
				switch {
				case !held:
					return nil, fmt.Errorf("the LoreKeeper process that owned %s has exited; restart this MCP server to take over", dir)
				case info.GRPCAddr != "":
					return (&net.Dialer{}).DialContext(ctx, "tcp", info.GRPCAddr)
				}
				select {
				case <-ctx.Done():
					return nil, ctx.Err()
				case <-time.After(200 * time.Millisecond):
				}
			}
		}))
	if err != nil {
		return fmt.Errorf("query client: %w", err)
	}
	defer conn.Close()
	srv := mcpserver.New(lkv1.NewQueryServiceClient(conn), &mcpserver.Options{Logger: log, Version: version})
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() { _ = srv.WatchDocuments(wctx, 0) }()
	return srv.RunIO(ctx, stdin, stdout)
}

// standaloneStack is everything but MCP: in-process NATS, the node, ingest.
type standaloneStack struct {
	local grpc.ClientConnInterface // the query service, in process
	node  *runningNode
	// catalogue is up's catalogue check: the first resync has reached
	// every endpoint and the node has stored what it published.
	catalogue func(context.Context) error
	js        jetstream.JetStream
	sup       *supervisor
	closers   closers
}

func (s *standaloneStack) close() error {
	return s.sup.Shutdown(&s.closers, defaultShutdownTimeout)
}

func startStandalone(ctx context.Context, cfg *standaloneConfig, lock *dataLock, stderr io.Writer, log *slog.Logger, tell *sessionLog) (_ *standaloneStack, err error) {
	st := &standaloneStack{sup: newSupervisor(ctx, log)}
	ctx = st.sup.Context()
	defer func() {
		if err != nil {
			if cerr := st.close(); cerr != nil {
				log.Error("cleanup after a failed start", "err", cerr)
			}
		}
	}()
	if !modelfile.Installed(cfg.node.modelDir) {
		tell.send(ctx, "info", "LoreKeeper is fetching its embedding model (about 110 MB, once).")
	}
	if err := ensureModel(ctx, cfg.node.modelDir, stderr, log); err != nil {
		return nil, err
	}
	ns, err := embeddedNATS(cfg.dataDir, "", log)
	if err != nil {
		return nil, err
	}
	st.closers.push(func(context.Context) error { ns.Shutdown(); ns.WaitForShutdown(); return nil })
	nc, err := nats.Connect("", nats.InProcessServer(ns), nats.Name("lorekeeper standalone"))
	if err != nil {
		return nil, fmt.Errorf("connect to embedded NATS: %w", err)
	}
	st.closers.push(func(context.Context) error { drain(nc); return nil })
	if st.js, err = newJetStream(nc); err != nil {
		return nil, err
	}
	if err := ingest.EnsureResources(ctx, st.js, 1); err != nil {
		return nil, err
	}
	reg := newRegistry()
	node, err := startNode(ctx, st.sup, st.js, filepath.Join(cfg.dataDir, "badger"), &cfg.node, reg, &readiness{}, nil, log)
	if err != nil {
		return nil, err
	}
	st.closers.push(node.close)
	st.local, st.node = node.local, node
	if err := lock.setGRPCAddr(node.grpcAddr); err != nil {
		return nil, err
	}
	// As in up: this process owns the data directory, so host and
	// directory name it in the resync lease across restarts.
	host, _ := os.Hostname()
	absData, _ := filepath.Abs(cfg.dataDir)
	cfg.ingest.node = host + ":" + absData
	ing, err := startIngest(ctx, st.sup, st.js, &cfg.ingest, reg, log)
	if err != nil {
		return nil, err
	}
	st.closers.push(ing.close)
	st.catalogue = (&catalogueCheck{js: st.js, fetcher: ing.fetcher, durable: cfg.node.durable}).check
	return st, nil
}

// watchLoad tells the client how the load goes until it is complete: the
// first resync has finished publishing and the node has stored everything.
// Later starts are complete at once, unless the node rebuilds its store
// from the stream (a damaged or lost store, or a lost stream): the client
// hears of that, and of its end, whenever it happens.
func (s *standaloneStack) watchLoad(ctx context.Context, client lkv1.QueryServiceClient, tell *sessionLog, notice *loadNotice) {
	start := time.Now()
	var last string
	complete := false
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		status, err := client.Status(ctx, &lkv1.StatusRequest{})
		if err == nil {
			// Not the consumer's lag alone: read before the resync
			// published, it would say there is nothing to store.
			published := s.catalogue(ctx) == nil
			rebuilding := s.node.rebuilding()
			switch {
			case rebuilding != "":
				complete = false
				msg := fmt.Sprintf("LoreKeeper is rebuilding its store from the stream (%s): %d entities stored, %d waiting. Answers are incomplete until it finishes.",
					rebuilding, status.GetEntities(), status.GetPending())
				notice.set(fmt.Sprintf("LoreKeeper is rebuilding its store (%d entities stored, %d waiting): results may be incomplete until it finishes.",
					status.GetEntities(), status.GetPending()))
				if msg != last {
					last = msg
					tell.send(ctx, "warning", msg)
				}
			case complete:
			case published && status.GetPending() == 0 && s.node.ready(ctx) == nil:
				complete, last = true, ""
				notice.set("")
				tell.send(ctx, "info", fmt.Sprintf("LoreKeeper is ready: %d entities stored and searchable.", status.GetEntities()))
				tell.log.Info("load complete", "entities", status.GetEntities(), "took", time.Since(start).Round(time.Millisecond))
			default:
				msg := fmt.Sprintf("LoreKeeper is loading its content: %d entities stored, %d waiting to be embedded. Answers are incomplete until it finishes (first start only).",
					status.GetEntities(), status.GetPending())
				notice.set(fmt.Sprintf("LoreKeeper is still loading its content (%d entities stored, %d waiting): results may be incomplete until it finishes, in a minute or a few.",
					status.GetEntities(), status.GetPending()))
				if msg != last {
					last = msg
					tell.send(ctx, "info", msg)
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// sessionLog sends log messages to every connected MCP client (those that
// asked for them with logging/setLevel) and to the process log.
//
// MCP logging is deprecated as of protocol version 2026-07-28 (SEP-2577),
// which points stdio servers at stderr instead; it stays functional for at
// least a year and is what today's clients show. The same messages go to
// stderr and the log file, and answers carry a loading warning (loadNotice),
// so nothing depends on it alone.
type sessionLog struct {
	srv *mcp.Server
	log *slog.Logger
	mu  sync.Mutex
}

func (t *sessionLog) send(ctx context.Context, level mcp.LoggingLevel, msg string) { //nolint:staticcheck // see the type's comment
	t.mu.Lock()
	defer t.mu.Unlock()
	t.log.Info(msg)
	for ss := range t.srv.Sessions() {
		_ = ss.Log(ctx, &mcp.LoggingMessageParams{Level: level, Logger: "lorekeeper", Data: msg}) //nolint:staticcheck // see the type's comment
	}
}

// latch hands one value to every waiter once it is opened.
type latch[T any] struct {
	once sync.Once
	ch   chan struct{}
	val  T
}

func newLatch[T any]() *latch[T] { return &latch[T]{ch: make(chan struct{})} }

func (l *latch[T]) open(v T) {
	l.once.Do(func() { l.val = v; close(l.ch) })
}

func (l *latch[T]) wait(ctx context.Context) (T, error) {
	select {
	case <-l.ch:
		return l.val, nil
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

// pendingConn reaches a query service that may still be starting: a call
// waits for it (within the call's context), as a gRPC call waits for its
// connection, and goes through intercept.
type pendingConn struct {
	up        *latch[grpc.ClientConnInterface]
	intercept grpc.UnaryClientInterceptor
}

func (p *pendingConn) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	return p.intercept(ctx, method, args, reply, nil, func(ctx context.Context, method string, args, reply any, _ *grpc.ClientConn, opts ...grpc.CallOption) error {
		cc, err := p.up.wait(ctx)
		if err != nil {
			return status.FromContextError(err).Err()
		}
		return cc.Invoke(ctx, method, args, reply, opts...)
	}, opts...)
}

func (p *pendingConn) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	cc, err := p.up.wait(ctx)
	if err != nil {
		return nil, status.FromContextError(err).Err()
	}
	return cc.NewStream(ctx, desc, method, opts...)
}

// openLogFile opens path for appending; a log over 10 MB is moved to
// path.1 first, so it never grows without bound.
func openLogFile(path string) (*os.File, error) {
	if st, err := os.Stat(path); err == nil && st.Size() > 10<<20 {
		_ = os.Rename(path, path+".1")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("--log-file: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("--log-file: %w", err)
	}
	return f, nil
}

// loadNotice adds a warning to every lookup and search answer while the
// content is still loading, so that an assistant knows a miss may not be
// final (clients show MCP log messages to people, rarely to the model).
type loadNotice struct {
	msg atomic.Pointer[string]
}

// set replaces the warning; "" removes it.
func (n *loadNotice) set(msg string) {
	if msg == "" {
		n.msg.Store(nil)
		return
	}
	n.msg.Store(&msg)
}

func (n *loadNotice) intercept(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	if err := invoker(ctx, method, req, reply, cc, opts...); err != nil {
		return err
	}
	msg := n.msg.Load()
	if msg == nil {
		return nil
	}
	switch r := reply.(type) {
	case *lkv1.LookupResponse:
		r.Warnings = append(r.Warnings, *msg)
	case *lkv1.SearchResponse:
		r.Warnings = append(r.Warnings, *msg)
	}
	return nil
}
