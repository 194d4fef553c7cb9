package mcpserver

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HTTPOptions configure the streamable HTTP handler. A nil *HTTPOptions,
// and every zero field, means the default.
type HTTPOptions struct {
	// Stateless serves every request on its own temporary session: no
	// Mcp-Session-Id, no server-to-client requests, any replica can answer
	// any request. Use it behind a load balancer.
	Stateless bool
	// BearerToken, when set, is required as "Authorization: Bearer <token>"
	// on every request.
	BearerToken string
	// MaxRequestBytes bounds a request body. Default 1 MiB.
	MaxRequestBytes int64
	// AllowedHosts are Host header values accepted besides loopback names
	// and addresses ("mcp.example.com" or "mcp.example.com:8080"). Empty:
	// only localhost, 127.0.0.0/8 and ::1, which stops DNS rebinding.
	// Subdomains of localhost (app.localhost) are not loopback names here;
	// list them to accept them.
	AllowedHosts []string
	// AllowedOrigins are Origin header values accepted besides loopback
	// origins ("https://app.example.com"). Requests without Origin (non-
	// browser clients) are always accepted.
	AllowedOrigins []string
	// SessionTimeout closes stateful sessions idle this long (no request
	// in flight). Default DefaultSessionTimeout.
	SessionTimeout time.Duration
	// MaxSessions bounds the stateful sessions open at once. A new one
	// beyond it closes an open session that is not in use: first one never
	// used since its initialize (the oldest), else the one idle longest.
	// Only when every session has a request in flight is an initialize
	// answered 503 Service Unavailable, with a Retry-After. Default
	// DefaultMaxSessions; negative: no bound.
	MaxSessions int
	// MaxSessionsPerClient bounds the sessions one client keeps: beyond
	// it, a new session of that client closes one of its own, as
	// MaxSessions does, so that a client opening sessions without end
	// cannot close everyone else's. A client is its address and the name
	// it gives in initialize's clientInfo (every program on this machine
	// shares the loopback address). Default DefaultMaxSessionsPerClient;
	// negative: no bound.
	MaxSessionsPerClient int
	// MaxBatch bounds the messages of one JSON-RPC batch (protocol
	// versions before 2025-06-18 allow batches). Default DefaultMaxBatch.
	MaxBatch int
	// MaxInFlightPerSession bounds a session's requests being answered at
	// once; one more is answered 429 Too Many Requests. With MaxBatch and
	// the server's bound on one answer, it bounds what the answers of a
	// session's client that does not read can hold. Default
	// DefaultMaxInFlightPerSession.
	MaxInFlightPerSession int
	// WriteTimeout bounds each write of an answer: a client that does not
	// read what it asked for is dropped, and what its answers held is
	// freed. Default DefaultWriteTimeout.
	WriteTimeout time.Duration
	// JSONResponse answers with application/json instead of an SSE stream.
	JSONResponse bool
}

// Defaults of HTTPOptions.
const (
	DefaultMaxRequestBytes = 1 << 20
	// DefaultSessionTimeout is short enough that sessions abandoned by
	// clients that never say goodbye do not pile up, long enough that an
	// assistant's conversation pausing for a while keeps its session.
	DefaultSessionTimeout = 10 * time.Minute
	// DefaultMaxSessions bounds what idle sessions can cost: about 5 KB of
	// live heap each (BenchmarkHTTPHandler_idleSessions), some 5 MB at the
	// bound.
	DefaultMaxSessions = 1000
	// DefaultMaxSessionsPerClient is far above what an assistant opens
	// (one session, a few while it reconnects) or a load test of 64.
	DefaultMaxSessionsPerClient = 100
	// DefaultMaxBatch: a batch of 2,000 searches took 27.5 s of work and
	// a 274 MB answer.
	DefaultMaxBatch = 10
	// DefaultWriteTimeout is far above what writing any answer takes.
	DefaultWriteTimeout = 30 * time.Second
	// DefaultMaxInFlightPerSession is far above what an assistant asks at
	// once.
	DefaultMaxInFlightPerSession = 16
)

// HTTPHandler is the MCP streamable HTTP endpoint (Server.HTTPHandler).
type HTTPHandler struct {
	next http.Handler
	opts HTTPOptions
	srv  *Server

	mu       sync.Mutex
	sessions map[string]*httpSession // by Mcp-Session-Id
	// initializing counts the requests making a session, until their
	// answer starts: concurrent ones cannot overshoot the bounds together.
	initializing map[string]int // by client
	inFlight     int            // POST and DELETE requests being served
	draining     bool
	drained      chan struct{} // closed when draining and inFlight is 0
}

// httpSession is what the handler knows of a session it made.
type httpSession struct {
	client   string
	last     time.Time // its last request's end
	used     bool      // a request since its initialize
	inFlight int       // its POST and DELETE requests being served
}

// HTTPHandler returns the MCP streamable HTTP endpoint. Serve it at any
// path, e.g. /mcp, and call its Shutdown before the HTTP server's.
func (s *Server) HTTPHandler(opts *HTTPOptions) *HTTPHandler {
	var o HTTPOptions
	if opts != nil {
		o = *opts
	}
	if o.MaxRequestBytes <= 0 {
		o.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if o.SessionTimeout <= 0 {
		o.SessionTimeout = DefaultSessionTimeout
	}
	if o.MaxSessions == 0 {
		o.MaxSessions = DefaultMaxSessions
	}
	if o.MaxSessionsPerClient == 0 {
		o.MaxSessionsPerClient = DefaultMaxSessionsPerClient
	}
	if o.MaxBatch <= 0 {
		o.MaxBatch = DefaultMaxBatch
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = DefaultWriteTimeout
	}
	if o.MaxInFlightPerSession <= 0 {
		o.MaxInFlightPerSession = DefaultMaxInFlightPerSession
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp }, &mcp.StreamableHTTPOptions{
		Stateless:      o.Stateless,
		JSONResponse:   o.JSONResponse,
		Logger:         sdkLogger(s.log),
		SessionTimeout: o.SessionTimeout,
		// Host and Origin are checked below, for every listener, not only
		// loopback ones, with the configured exceptions.
		DisableLocalhostProtection: true,
		MaxRequestBodyBytes:        o.MaxRequestBytes,
	})
	return &HTTPHandler{next: h, opts: o, srv: s, sessions: map[string]*httpSession{}, initializing: map[string]int{}}
}

// ServeHTTP checks a request (DNS-rebinding protection, the bearer token,
// the body and batch limits), makes room for a new session, and passes it
// to the SDK with every write of its answer bounded by WriteTimeout.
func (g *HTTPHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !g.hostAllowed(r.Host) {
		http.Error(w, "Forbidden: Host header not allowed", http.StatusForbidden)
		return
	}
	if origin := r.Header.Get("Origin"); origin != "" && !g.originAllowed(origin) {
		http.Error(w, "Forbidden: Origin not allowed", http.StatusForbidden)
		return
	}
	if g.opts.BearerToken != "" {
		scheme, got, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		if !strings.EqualFold(scheme, "Bearer") || subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(g.opts.BearerToken)) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="lorekeeper"`)
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
	}
	if r.ContentLength > g.opts.MaxRequestBytes {
		http.Error(w, "Request Entity Too Large", http.StatusRequestEntityTooLarge)
		return
	}
	w = &deadlineWriter{ResponseWriter: w, rc: http.NewResponseController(w), timeout: g.opts.WriteTimeout}
	var body []byte
	if r.Method == http.MethodPost {
		// The whole body first: a request still being sent (a client
		// dribbling it, or gone) holds no session and no slot meanwhile.
		var ok bool
		if body, ok = g.readBody(w, r); !ok {
			return
		}
	}
	if r.Method == http.MethodGet {
		g.next.ServeHTTP(w, r) // a session's stream: neither new nor a call
		return
	}
	id := r.Header.Get("Mcp-Session-Id")
	newSession := !g.opts.Stateless && r.Method == http.MethodPost && id == ""
	client := ""
	if newSession {
		client = clientOf(r, body)
	}
	if code, msg := g.begin(id, client, newSession); msg != "" {
		w.Header().Set("Retry-After", strconv.Itoa(retryAfterSeconds))
		if g.isDraining() {
			w.Header().Set("Connection", "close")
		}
		http.Error(w, msg, code)
		return
	}
	defer g.end(id)
	if !newSession {
		g.next.ServeHTTP(w, r)
		return
	}
	// The request stops counting as initializing once its answer starts:
	// by then the SDK holds its session, and the client may send its next
	// request before this handler returns.
	var once sync.Once
	started := func() {
		once.Do(func() { g.made(client, w.Header().Get("Mcp-Session-Id")) })
	}
	defer started()
	g.next.ServeHTTP(&answerStart{ResponseWriter: w, start: started}, r)
}

// readBody reads r's body whole, bounded by MaxRequestBytes, and refuses a
// batch of more than MaxBatch messages; on refusal it has answered.
func (g *HTTPHandler) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, g.opts.MaxRequestBytes))
	_ = r.Body.Close()
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		http.Error(w, "Request Entity Too Large", http.StatusRequestEntityTooLarge)
		return nil, false
	case err != nil:
		http.Error(w, "Bad Request: the body could not be read: "+err.Error(), http.StatusBadRequest)
		return nil, false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	if trimmed := bytes.TrimSpace(body); len(trimmed) > 0 && trimmed[0] == '[' {
		var batch []json.RawMessage
		if json.Unmarshal(trimmed, &batch) == nil && len(batch) > g.opts.MaxBatch {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			reply, _ := json.Marshal(batchError(len(batch), g.opts.MaxBatch))
			_, _ = w.Write(reply)
			return nil, false
		}
	}
	return body, true
}

// batchError is the JSON-RPC answer to a batch over the bound.
func batchError(n, limit int) *errorReply {
	r := &errorReply{JSONRPC: "2.0"}
	r.Error.Code = jsonrpc.CodeInvalidRequest
	r.Error.Message = fmt.Sprintf("Invalid Request: a batch of %d messages; at most %d are answered in one request: send the rest in others", n, limit)
	return r
}

// clientOf names the client making a session: its address, and the name
// its initialize gives (programs on one machine share the address).
func clientOf(r *http.Request, body []byte) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	var init struct {
		Params struct {
			ClientInfo struct {
				Name string `json:"name"`
			} `json:"clientInfo"`
		} `json:"params"`
	}
	_ = json.Unmarshal(body, &init)
	name := init.Params.ClientInfo.Name
	if len(name) > 100 {
		name = name[:100]
	}
	return host + " " + name
}

// begin counts a request in flight, and for a new session makes room for
// it (closing a session not in use when a bound is reached). It returns
// why the request is refused, and the status to answer it with; "" when it
// is not.
func (g *HTTPHandler) begin(id, client string, newSession bool) (int, string) {
	g.mu.Lock()
	if g.draining {
		g.mu.Unlock()
		return http.StatusServiceUnavailable, "Service Unavailable: LoreKeeper is shutting down; retry in a few seconds"
	}
	if !newSession || g.opts.MaxSessions < 0 {
		s := g.sessions[id]
		if s != nil && s.inFlight >= g.opts.MaxInFlightPerSession {
			g.mu.Unlock()
			return http.StatusTooManyRequests, fmt.Sprintf("Too Many Requests: %d requests of this session are being answered, the most at once; read their answers before you ask more", s.inFlight)
		}
		g.inFlight++
		if s != nil {
			s.used = true
			s.inFlight++
		}
		g.mu.Unlock()
		return 0, ""
	}
	g.forgetClosed()
	var victims []string
	refuse := ""
	if lim := g.opts.MaxSessionsPerClient; lim > 0 && g.countOf(client) >= lim {
		if v := g.victim(client, victims); v != "" {
			victims = append(victims, v)
		} else {
			refuse = fmt.Sprintf("Service Unavailable: this client (%s) has %d MCP sessions open and in use, the most one client keeps (--mcp-max-sessions-per-client); close those it no longer needs (HTTP DELETE with their Mcp-Session-Id), or retry in %d seconds",
				client, lim, retryAfterSeconds)
		}
	}
	if refuse == "" && g.countOf("")-len(victims) >= g.opts.MaxSessions {
		if v := g.victim("", victims); v != "" {
			victims = append(victims, v)
		} else {
			refuse = fmt.Sprintf("Service Unavailable: %d MCP sessions are open and every one is in use, the most this server keeps (--mcp-max-sessions); retry in %d seconds",
				g.opts.MaxSessions, retryAfterSeconds)
		}
	}
	if refuse != "" {
		g.mu.Unlock()
		return http.StatusServiceUnavailable, refuse
	}
	for _, v := range victims {
		delete(g.sessions, v)
	}
	g.initializing[client]++
	g.inFlight++
	g.mu.Unlock()
	for _, v := range victims {
		g.closeSession(v)
	}
	return 0, ""
}

// end counts a request out.
func (g *HTTPHandler) end(id string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.inFlight--
	if s := g.sessions[id]; s != nil {
		s.inFlight--
		s.last = time.Now()
	}
	if g.draining && g.inFlight == 0 {
		close(g.drained)
		g.drained = nil
	}
}

// made records the session a new-session request made (id "" when it
// made none), once its answer starts.
func (g *HTTPHandler) made(client, id string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.initializing[client]--; g.initializing[client] <= 0 {
		delete(g.initializing, client)
	}
	if id != "" {
		g.sessions[id] = &httpSession{client: client, last: time.Now()}
	}
}

// countOf counts client's sessions and new-session requests ("": every
// client's).
func (g *HTTPHandler) countOf(client string) int {
	n := 0
	for _, s := range g.sessions {
		if client == "" || s.client == client {
			n++
		}
	}
	for c, k := range g.initializing {
		if client == "" || c == client {
			n += k
		}
	}
	return n
}

// victim picks the session to close to make room, among client's ("":
// everyone's) with no request in flight and not in taken: the oldest
// never used since its initialize, else the one idle longest; "" when
// every one is in use.
func (g *HTTPHandler) victim(client string, taken []string) string {
	best, bestUsed, bestLast := "", true, time.Time{}
	for id, s := range g.sessions {
		if s.inFlight > 0 || client != "" && s.client != client || slices.Contains(taken, id) {
			continue
		}
		if best == "" || (!s.used && bestUsed) || (s.used == bestUsed && s.last.Before(bestLast)) {
			best, bestUsed, bestLast = id, s.used, s.last
		}
	}
	return best
}

// forgetClosed drops the sessions the SDK has closed (idle timeout, DELETE,
// a closed stream) or that never finished their initialize.
func (g *HTTPHandler) forgetClosed() {
	open := map[string]bool{}
	for ss := range g.srv.mcp.Sessions() {
		if ss.InitializeParams() != nil {
			open[ss.ID()] = true
		}
	}
	for id := range g.sessions {
		if !open[id] {
			delete(g.sessions, id)
		}
	}
}

// closeSession closes the session id, to make room for another.
func (g *HTTPHandler) closeSession(id string) {
	for ss := range g.srv.mcp.Sessions() {
		if ss.ID() == id {
			g.srv.log.Info("closed an MCP session not in use to make room for a new one", "session", id)
			_ = ss.Close()
			return
		}
	}
}

func (g *HTTPHandler) isDraining() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.draining
}

// Shutdown stops taking requests (each is answered 503, "shutting down"),
// waits until those in flight are answered or ctx ends, then closes every
// session, which ends their streams. Call it before the HTTP server's own
// Shutdown, which waits for those streams.
func (g *HTTPHandler) Shutdown(ctx context.Context) error {
	g.mu.Lock()
	var wait chan struct{}
	if !g.draining {
		g.draining = true
		if g.inFlight > 0 {
			g.drained = make(chan struct{})
			wait = g.drained
		}
	}
	g.mu.Unlock()
	var err error
	if wait != nil {
		select {
		case <-wait:
			// The answers are written; a client reads them a moment
			// later, and one that sees its session's stream end first
			// may fail the call it was answered.
			select {
			case <-time.After(drainGrace):
			case <-ctx.Done():
			}
		case <-ctx.Done():
			err = fmt.Errorf("MCP requests still in flight at shutdown: %w", ctx.Err())
		}
	}
	g.srv.CloseSessions()
	return err
}

// drainGrace is how long Shutdown lets clients read the last answers
// before it closes their sessions.
const drainGrace = 250 * time.Millisecond

// deadlineWriter bounds each write and flush of an answer by timeout.
type deadlineWriter struct {
	http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
}

func (d *deadlineWriter) Write(b []byte) (int, error) {
	_ = d.rc.SetWriteDeadline(time.Now().Add(d.timeout))
	return d.ResponseWriter.Write(b)
}

func (d *deadlineWriter) Flush() {
	_ = d.rc.SetWriteDeadline(time.Now().Add(d.timeout))
	_ = d.rc.Flush()
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (d *deadlineWriter) Unwrap() http.ResponseWriter { return d.ResponseWriter }

// answerStart calls start when the response starts: its header or first
// bytes are written, or it is flushed.
type answerStart struct {
	http.ResponseWriter
	start func()
}

func (a *answerStart) WriteHeader(code int) {
	a.start()
	a.ResponseWriter.WriteHeader(code)
}

func (a *answerStart) Write(b []byte) (int, error) {
	a.start()
	return a.ResponseWriter.Write(b)
}

func (a *answerStart) Flush() {
	a.start()
	if f, ok := a.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (a *answerStart) Unwrap() http.ResponseWriter { return a.ResponseWriter }

// retryAfterSeconds is what a client refused for lack of sessions is told
// to wait.
const retryAfterSeconds = 5

// isLoopbackHost reports whether host (no port) is a loopback name or address.
//
// Only "localhost" itself counts, not its subdomains (app.localhost):
// RFC 6761 asks resolvers to answer *.localhost with loopback, but that is
// a SHOULD, and a resolver that forwards such names (many stub resolvers,
// and browsers that do not special-case them) lets whoever answers DNS on
// the network point evil.localhost at their own server, then rebind it to
// 127.0.0.1, which is exactly the attack this guard stops. The MCP SDK's
// own guard accepts only "localhost" too. An operator who serves MCP under
// such a name lists it in AllowedHosts (--mcp-allowed-hosts).
func isLoopbackHost(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

func splitHost(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
}

func (g *HTTPHandler) hostAllowed(hostport string) bool {
	return HostAllowed(hostport, g.opts.AllowedHosts)
}

// HostAllowed is the MCP listener's DNS-rebinding check, for any listener:
// it reports whether a request's Host header (hostport) is a loopback name
// or address, or one of allowed ("name", "name:port", or "*" for any).
func HostAllowed(hostport string, allowed []string) bool {
	if hostport == "" {
		return false
	}
	host := splitHost(hostport)
	if isLoopbackHost(host) {
		return true
	}
	for _, a := range allowed {
		if a == "*" || strings.EqualFold(a, hostport) || strings.EqualFold(a, host) {
			return true
		}
	}
	return false
}

func (g *HTTPHandler) originAllowed(origin string) bool {
	if slices.ContainsFunc(g.opts.AllowedOrigins, func(a string) bool { return a == "*" || strings.EqualFold(strings.TrimSuffix(a, "/"), origin) }) {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	return isLoopbackHost(u.Hostname())
}
