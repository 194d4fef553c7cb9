package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"

	"lorekeeper.dev/ingest"
	"lorekeeper.dev/ingest/open5e"
	"lorekeeper.dev/ingest/orcbrew"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

const defaultNATSURL = "nats://127.0.0.1:4222"

// natsFlags are the flags of every command that talks to NATS.
type natsFlags struct {
	url       string
	tokenFile string
	creds     string
	tlsCA     string
	tlsCert   string
	tlsKey    string
	replicas  int
}

func (n *natsFlags) register(fs *flagSet) {
	fs.String(&n.url, "nats-url", defaultNATSURL, "NATS server URL(s), comma-separated")
	fs.String(&n.tokenFile, "nats-token-file", "", "file holding the token the NATS server requires (lorekeeper up's: "+filepath.Join("<data-dir>", credentialsDir, natsToken)+")")
	fs.String(&n.creds, "nats-creds", "", "NATS credentials file (user JWT and nkey seed)")
	fs.String(&n.tlsCA, "nats-tls-ca", "", "trust this CA for NATS over TLS (PEM file)")
	fs.String(&n.tlsCert, "nats-tls-cert", "", "client certificate for NATS (PEM file)")
	fs.String(&n.tlsKey, "nats-tls-key", "", "the NATS client certificate's private key (PEM file)")
	fs.Int(&n.replicas, "nats-replicas", 1, "JetStream replicas for the stream and buckets (3 on a cluster)")
}

// useOwner points a person's command (sync, import, status) at the NATS
// of the lorekeeper up owning dataDir, else make run's, with its token,
// unless --nats-url or --nats-token-file says otherwise. dataDir is ""
// when --data-dir was not given.
func (n *natsFlags) useOwner(fs *flagSet, dataDir string) {
	if fs.isSet("nats-url") || fs.isSet("nats-token-file") {
		return
	}
	dirs := []string{dataDir}
	if dataDir == "" {
		dirs = []string{defaultDataDir(), makeRunDataDir}
	}
	for _, dir := range dirs {
		if info, held := readLock(dir); held && info.NATSURL != "" {
			n.url, n.tokenFile = info.NATSURL, tokenPath(dir, natsToken)
			return
		}
	}
}

// connect dials NATS, failing at once when no server answers (what client
// commands want); the caller drains the connection.
func (n *natsFlags) connect(name string, log *slog.Logger) (*nats.Conn, jetstream.JetStream, error) {
	return n.dial(name, log)
}

// connectRetrying returns a connection that keeps trying in the background
// until a server answers (what roles want: they may start before NATS);
// see waitConnected. The caller drains the connection.
func (n *natsFlags) connectRetrying(name string, log *slog.Logger) (*nats.Conn, jetstream.JetStream, error) {
	return n.dial(name, log, nats.RetryOnFailedConnect(true))
}

func (n *natsFlags) dial(name string, log *slog.Logger, extra ...nats.Option) (*nats.Conn, jetstream.JetStream, error) {
	opts := []nats.Option{
		nats.Name("lorekeeper " + name),
		nats.MaxReconnects(-1),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				log.Warn("disconnected from NATS", "err", err)
			}
		}),
		nats.ReconnectHandler(func(c *nats.Conn) { log.Info("reconnected to NATS", "url", c.ConnectedUrl()) }),
	}
	if n.tokenFile != "" {
		tok, err := readToken(n.tokenFile)
		if err != nil {
			return nil, nil, fmt.Errorf("--nats-token-file: %w", err)
		}
		opts = append(opts, nats.Token(tok))
	}
	if n.creds != "" {
		opts = append(opts, nats.UserCredentials(n.creds))
	}
	if n.tlsCA != "" {
		opts = append(opts, nats.RootCAs(n.tlsCA))
	}
	if n.tlsCert != "" || n.tlsKey != "" {
		opts = append(opts, nats.ClientCert(n.tlsCert, n.tlsKey))
	}
	opts = append(opts, extra...)
	nc, err := nats.Connect(n.url, opts...)
	if errors.Is(err, nats.ErrAuthorization) {
		return nil, nil, fmt.Errorf("connect to NATS at %s: %w (lorekeeper up's NATS requires the token in %s of its data directory: give --data-dir, or --nats-token-file)", n.url, err, filepath.Join(credentialsDir, natsToken))
	}
	if err != nil {
		return nil, nil, fmt.Errorf("connect to NATS at %s: %w (is `lorekeeper up` or a NATS server running? set --nats-url)", n.url, err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, fmt.Errorf("jetstream: %w", err)
	}
	return nc, js, nil
}

// embeddedNATS starts a NATS server with JetStream storing under dir,
// listening on listen ("host:port"; port 0 picks a free one), where other
// processes (lorekeeper import, sync, status) reach it with token, which
// every client must give ("": none). An empty listen starts it with no
// network listener: only this process connects.
func embeddedNATS(dir, listen, token string, log *slog.Logger) (*natsserver.Server, error) {
	ns, _, err := embeddedNATSWatched(dir, listen, token, log)
	return ns, err
}

// embeddedNATSWatched is embeddedNATS, and what watches its store for a
// full disk (its run is the caller's to start).
func embeddedNATSWatched(dir, listen, token string, log *slog.Logger) (*natsserver.Server, *natsDisk, error) {
	opts := &natsserver.Options{
		ServerName:    "lorekeeper",
		JetStream:     true,
		StoreDir:      filepath.Join(dir, "nats"),
		NoSigs:        true,
		NoLog:         true,
		MaxPayload:    8 << 20,
		DontListen:    listen == "",
		Authorization: token,
	}
	where, hint := "in process, no listener", ""
	if listen != "" {
		host, portStr, err := net.SplitHostPort(listen)
		if err != nil {
			return nil, nil, fmt.Errorf("--nats-listen %q: %w", listen, err)
		}
		port, err := strconv.Atoi(portStr)
		if err != nil {
			return nil, nil, fmt.Errorf("--nats-listen %q: bad port", listen)
		}
		if port == 0 {
			port = natsserver.RANDOM_PORT
		}
		opts.Host, opts.Port, where, hint = host, port, "on "+listen, " (set --nats-listen to a free port)"
	}
	for _, d := range []string{opts.StoreDir, filepath.Join(opts.StoreDir, "jetstream")} {
		if err := checkStoreDir(d); err != nil {
			return nil, nil, fmt.Errorf("embedded NATS store: %w", err)
		}
	}
	ns, err := natsserver.NewServer(opts)
	if err != nil {
		return nil, nil, fmt.Errorf("embedded NATS: %w", err)
	}
	disk := &natsDisk{ns: ns, dir: opts.StoreDir, log: log.With("component", "nats")}
	// The server reports what stops it (a taken port, an unusable store)
	// through its logger, then keeps silent: catch that, instead of
	// waiting for a listener that will never come.
	nl := &natsLogger{log: log.With("component", "nats"), fatal: make(chan string, 1), onError: disk.noteWriteError}
	ns.SetLogger(nl, false, false)
	ns.Start()
	for deadline := time.Now().Add(30 * time.Second); !ns.ReadyForConnections(100 * time.Millisecond); {
		select {
		case msg := <-nl.fatal:
			ns.Shutdown()
			if !strings.Contains(strings.ToLower(msg), "listen") {
				hint = "" // not the port: the store, most likely
			}
			return nil, nil, fmt.Errorf("embedded NATS %s: %s%s", where, msg, hint)
		default:
		}
		if time.Now().After(deadline) {
			ns.Shutdown()
			return nil, nil, fmt.Errorf("embedded NATS %s did not start within 30s%s", where, hint)
		}
	}
	log.Info("embedded NATS ready", "where", where, "store", filepath.Join(dir, "nats"))
	return ns, disk, nil
}

// natsLogger passes the embedded server's warnings and errors to slog and
// hands its fatal error to whoever is starting it; its chatter (notices,
// debug, trace) is dropped.
type natsLogger struct {
	log   *slog.Logger
	fatal chan string
	// onError, if set, sees every error message.
	onError func(string)
}

func (l *natsLogger) Noticef(string, ...any) {}
func (l *natsLogger) Debugf(string, ...any)  {}
func (l *natsLogger) Tracef(string, ...any)  {}

func (l *natsLogger) Warnf(format string, v ...any) { l.log.Warn(fmt.Sprintf(format, v...)) }

func (l *natsLogger) Errorf(format string, v ...any) {
	msg := fmt.Sprintf(format, v...)
	l.log.Error(msg)
	if l.onError != nil {
		l.onError(msg)
	}
}

func (l *natsLogger) Fatalf(format string, v ...any) {
	msg := fmt.Sprintf(format, v...)
	l.log.Error(msg)
	select {
	case l.fatal <- msg:
	default:
	}
}

// readState reads ingest's sync and import state from the KV bucket.
func readState(ctx context.Context, nf *natsFlags) ([]*lkv1.EndpointState, []*lkv1.ImportState, error) {
	nc, js, err := nf.connect("status", slog.New(slog.DiscardHandler))
	if err != nil {
		return nil, nil, err
	}
	defer nc.Close()
	return readIngestState(ctx, js)
}

// ingestStateReader is what a query node reports of ingest's state
// (Status), read from the NATS it consumes from; the per-entity hashes and
// keys are left out. A read decodes every endpoint's and import's state,
// hashes and keys included (megabytes with the whole catalogue and
// homebrew), to count them, and list_documents asks on each first page: so
// the reader keeps its last answer and reads again only when the state
// bucket has changed (its stream's last sequence, or the stream made anew).
//
// With NATS down it answers at once that it is not connected: a request
// would wait for the reconnection until the caller's deadline, and the
// node's own state would be lost with it (status said the node was
// unreachable). A read is bounded by ingestStateTimeout for the same reason.
type ingestStateReader struct {
	js jetstream.JetStream
	// problem, if set, says why that NATS cannot store writes now.
	problem func() error

	mu      sync.Mutex
	created time.Time // the bucket's stream at the last read
	seq     uint64
	last    *lkv1.NodeIngestState // nil: none kept
	reads   int                   // reads of the whole bucket, for tests
}

func newIngestStateReader(js jetstream.JetStream) *ingestStateReader {
	return &ingestStateReader{js: js}
}

// state returns the node's report of ingest's state.
func (r *ingestStateReader) state(ctx context.Context) *lkv1.NodeIngestState {
	out := r.read(ctx)
	if r.problem != nil {
		if err := r.problem(); err != nil {
			out.StoreProblem = err.Error()
		}
	}
	return out
}

// read reads ingest's state, or returns the last read while the bucket is
// as it was then.
func (r *ingestStateReader) read(ctx context.Context) *lkv1.NodeIngestState {
	nc := r.js.Conn()
	if !nc.IsConnected() {
		return &lkv1.NodeIngestState{NatsUrl: serversWithoutUserinfo(nc.Servers()), Error: errNotConnected}
	}
	ctx, cancel := context.WithTimeout(ctx, ingestStateTimeout)
	defer cancel()
	r.mu.Lock()
	defer r.mu.Unlock()
	// The bucket's position before the read: a write during the read makes
	// the next call read again, never keeps a stale answer.
	var created time.Time
	var seq uint64
	if st, err := r.js.Stream(ctx, "KV_"+ingest.StateBucket); err == nil {
		info := st.CachedInfo()
		created, seq = info.Created, info.State.LastSeq
		if r.last != nil && created.Equal(r.created) && seq == r.seq {
			out := proto.CloneOf(r.last)
			out.NatsUrl = nc.ConnectedUrlRedacted()
			return out
		}
	}
	r.last = nil
	r.reads++
	out := &lkv1.NodeIngestState{NatsUrl: nc.ConnectedUrlRedacted()}
	syncs, imports, err := readIngestState(ctx, r.js)
	if err != nil {
		out.Error = err.Error()
	}
	for _, s := range syncs {
		s.EntityCount, s.Entities, s.Generations = uint64(len(s.GetEntities())), nil, nil
	}
	for _, s := range imports {
		s.EntityKeys = nil
	}
	out.Open5E, out.Orcbrew = syncs, imports
	if err == nil && !created.IsZero() {
		r.last, r.created, r.seq = proto.CloneOf(out), created, seq
	}
	return out
}

// errNotConnected is NodeIngestState.Error while the node's NATS
// connection is down.
const errNotConnected = "not connected"

// ingestStateTimeout bounds the node's read of ingest's state for Status.
const ingestStateTimeout = 2 * time.Second

// serversWithoutUserinfo lists server URLs without their credentials.
func serversWithoutUserinfo(servers []string) string {
	out := make([]string, 0, len(servers))
	for _, s := range servers {
		if u, err := url.Parse(s); err == nil {
			u.User = nil
			out = append(out, u.String())
		}
	}
	return strings.Join(out, ",")
}

func readIngestState(ctx context.Context, js jetstream.JetStream) ([]*lkv1.EndpointState, []*lkv1.ImportState, error) {
	kv, err := js.KeyValue(ctx, ingest.StateBucket)
	if err != nil {
		return nil, nil, fmt.Errorf("open state bucket: %w", err)
	}
	keys, err := kv.Keys(ctx)
	if errors.Is(err, jetstream.ErrNoKeysFound) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("list state: %w", err)
	}
	sort.Strings(keys)
	var syncs []*lkv1.EndpointState
	var imports []*lkv1.ImportState
	for _, k := range keys {
		var msg proto.Message
		switch {
		case strings.HasPrefix(k, open5e.StatePrefix):
			s := &lkv1.EndpointState{}
			syncs, msg = append(syncs, s), s
		case strings.HasPrefix(k, orcbrew.StatePrefix):
			s := &lkv1.ImportState{}
			imports, msg = append(imports, s), s
		default:
			continue
		}
		e, err := kv.Get(ctx, k)
		if err != nil {
			return nil, nil, fmt.Errorf("read state %s: %w", k, err)
		}
		if err := proto.Unmarshal(e.Value(), msg); err != nil {
			return nil, nil, fmt.Errorf("decode state %s: %w", k, err)
		}
	}
	return syncs, imports, nil
}

// registerOwnerDir adds --data-dir to a person's command that talks to
// NATS: without --nats-url it reaches the lorekeeper up owning it.
func registerOwnerDir(fs *flagSet, dataDir *string) {
	fs.String(dataDir, "data-dir", "", "without --nats-url, reach the NATS of the lorekeeper up owning this data directory, with its token (default: the user data directory's, else ./"+makeRunDataDir+", make run's)")
}
