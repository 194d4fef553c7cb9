package mcpserver

import (
	"crypto/subtle"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
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
	// SessionTimeout closes idle stateful sessions. Default 30 minutes.
	SessionTimeout time.Duration
	// JSONResponse answers with application/json instead of an SSE stream.
	JSONResponse bool
}

// DefaultMaxRequestBytes is HTTPOptions.MaxRequestBytes's default.
const DefaultMaxRequestBytes = 1 << 20

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
		o.SessionTimeout = 30 * time.Minute
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
	return &guard{next: h, opts: o}
}

// guard enforces DNS-rebinding protection, the bearer token and the body
// limit before the SDK sees a request.
type guard struct {
	next http.Handler
	opts HTTPOptions
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
	g.next.ServeHTTP(w, r)
}

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

func (g *guard) hostAllowed(hostport string) bool {
	if hostport == "" {
		return false
	}
	host := splitHost(hostport)
	if isLoopbackHost(host) {
		return true
	}
	for _, a := range g.opts.AllowedHosts {
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
