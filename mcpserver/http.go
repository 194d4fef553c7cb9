package mcpserver

import (
	"crypto/subtle"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

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
	// MaxSessions bounds the stateful sessions open at once: an initialize
	// request beyond it is answered 503 Service Unavailable with a
	// Retry-After, and no session is made. Default DefaultMaxSessions;
	// negative: no bound.
	MaxSessions int
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
)

// HTTPHandler returns the MCP streamable HTTP endpoint. Serve it at any
// path, e.g. /mcp.
func (s *Server) HTTPHandler(opts *HTTPOptions) http.Handler {
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
	return &guard{next: h, opts: o, sessions: s.openSessions}
}

// openSessions counts the sessions the MCP server has open: initialized
// ones. A client's stateless probe (server/discover, which newer clients
// send before initialize) gets a session of its own that lives only until
// it is answered; counting it refused the initialize right behind it.
func (s *Server) openSessions() int {
	n := 0
	for ss := range s.mcp.Sessions() {
		if ss.InitializeParams() != nil {
			n++
		}
	}
	return n
}

// guard enforces DNS-rebinding protection, the bearer token, the body
// limit and the session bound before the SDK sees a request.
type guard struct {
	next     http.Handler
	opts     HTTPOptions
	sessions func() int

	mu           sync.Mutex
	initializing int // new-session requests being served
}

func (g *guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
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
	r.Body = http.MaxBytesReader(w, r.Body, g.opts.MaxRequestBytes)
	if g.opts.Stateless || g.opts.MaxSessions < 0 || r.Method != http.MethodPost || r.Header.Get("Mcp-Session-Id") != "" {
		g.next.ServeHTTP(w, r)
		return
	}
	// A POST without a session ID makes a session. Requests making one
	// count as open sessions until they are answered, so that concurrent
	// ones cannot overshoot the bound together.
	g.mu.Lock()
	if g.sessions()+g.initializing >= g.opts.MaxSessions {
		g.mu.Unlock()
		w.Header().Set("Retry-After", strconv.Itoa(retryAfterSeconds))
		http.Error(w, fmt.Sprintf("Service Unavailable: %d MCP sessions are open, the most this server keeps (--mcp-max-sessions); retry later or close idle sessions", g.opts.MaxSessions), http.StatusServiceUnavailable)
		return
	}
	g.initializing++
	g.mu.Unlock()
	// The request stops counting once its answer starts: by then the SDK
	// holds its session (counted by sessions), and the client may send its
	// next request before this handler returns.
	var once sync.Once
	done := func() {
		once.Do(func() {
			g.mu.Lock()
			g.initializing--
			g.mu.Unlock()
		})
	}
	defer done()
	g.next.ServeHTTP(&answerStart{ResponseWriter: w, start: done}, r)
}

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

func (g *guard) hostAllowed(hostport string) bool { return HostAllowed(hostport, g.opts.AllowedHosts) }

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

func (g *guard) originAllowed(origin string) bool {
	if slices.ContainsFunc(g.opts.AllowedOrigins, func(a string) bool { return a == "*" || strings.EqualFold(strings.TrimSuffix(a, "/"), origin) }) {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	return isLoopbackHost(u.Hostname())
}
