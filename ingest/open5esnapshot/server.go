package open5esnapshot

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Server is the snapshot served on a loopback listener: the offline
// default upstream of `lorekeeper up`.
type Server struct {
	// URL is the base URL to fetch from, e.g. "http://127.0.0.1:40123".
	URL string

	srv  *http.Server
	done chan error
}

// IdleRelease is how long a started server keeps its unpacked pages
// without requests: a resync fetches every page within seconds, one
// after the other, then the server idles until the next one. The pages
// (about 47 MB) were live through most of a first load at 30 s, while
// the embedder worked under the load's soft memory limit.
const IdleRelease = 2 * time.Second

// Start serves the snapshot on 127.0.0.1 on a free port until Close. It
// releases its pages after IdleRelease without requests.
func Start() (*Server, error) {
	h, err := NewHandler()
	if err != nil {
		return nil, err
	}
	h.ReleaseWhenIdle(IdleRelease)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen for open5e snapshot: %w", err)
	}
	s := &Server{
		URL: "http://" + ln.Addr().String(),
		srv: &http.Server{
			Handler:           &guard{next: h, slots: make(chan struct{}, MaxInFlight)},
			ReadHeaderTimeout: 10 * time.Second,
			ReadTimeout:       10 * time.Second,
			WriteTimeout:      time.Minute,
			IdleTimeout:       time.Minute,
			MaxHeaderBytes:    16 << 10,
		},
		done: make(chan error, 1),
	}
	go func() { s.done <- s.srv.Serve(ln) }()
	return s, nil
}

// Close stops the server, letting requests in flight finish within ctx.
func (s *Server) Close(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	if serr := <-s.done; serr != nil && !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	if err != nil {
		return fmt.Errorf("close open5e snapshot server: %w", err)
	}
	return nil
}

// Serve is Start for callers that want only the base URL and a stop
// function: the offline default upstream of `lorekeeper up`. stop waits up
// to five seconds for requests in flight.
func Serve() (baseURL string, stop func(), err error) {
	s, err := Start()
	if err != nil {
		return "", nil, err
	}
	return s.URL, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.Close(ctx)
	}, nil
}

// Bounds of the listener Start opens: any process on the machine can
// reach it, and twenty requests for every record at once took a node from
// 343 to 749 MB.
const (
	// MaxPageSize is the largest page served: a larger limit is served as
	// this one (the fetcher asks for 100).
	MaxPageSize = 1000
	// MaxInFlight is how many requests are answered at once; others wait
	// their turn.
	MaxInFlight = 4
)

// guard bounds the listener's requests and refuses a Host header that is
// not loopback (a web page's DNS-rebinding attack), as every LoreKeeper
// listener does.
type guard struct {
	next  http.Handler
	slots chan struct{}
}

func (g *guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !loopbackHost(r.Host) {
		http.Error(w, "Forbidden: Host header not allowed", http.StatusForbidden)
		return
	}
	select {
	case g.slots <- struct{}{}:
		defer func() { <-g.slots }()
	case <-r.Context().Done():
		return
	}
	q := r.URL.Query()
	if n, err := strconv.Atoi(q.Get("limit")); err == nil && n > MaxPageSize {
		q.Set("limit", strconv.Itoa(MaxPageSize))
		r.URL.RawQuery = q.Encode()
	}
	g.next.ServeHTTP(w, r)
}

// loopbackHost reports whether hostport names this machine: localhost, or
// a loopback address.
func loopbackHost(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}
