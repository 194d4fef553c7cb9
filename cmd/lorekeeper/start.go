package main

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"lorekeeper.dev/mcpserver"
)

// startState is what a standalone process is doing while its query
// service cannot answer yet: the answers, the MCP log and the lock file
// say it (one phrase, e.g. "downloading the embedding model: 40 of 112
// MB"); "" once the service answers.
type startState struct {
	mu          sync.Mutex
	msg         string
	long        bool      // a phase of minutes: calls answer at once
	done, total int64     // download progress in bytes (total 0: none)
	since       time.Time // when the download's first figures came
	changed     chan struct{}
	listeners   []func(msg string)
	told        time.Time // when listeners last heard of progress
	held        bool      // progress held back is to be told (tellHeld)
}

func newStartState() *startState { return &startState{changed: make(chan struct{})} }

// set enters a phase; long phases (a download) are answered at once,
// short ones (opening the data) are waited for a moment.
func (s *startState) set(msg string, long bool) {
	s.mu.Lock()
	s.msg, s.long, s.done, s.total = msg, long, 0, 0
	s.changedLocked()
	s.told = time.Now()
	fs := s.listeners
	s.mu.Unlock()
	for _, f := range fs {
		f(msg)
	}
}

// progress is the model download's: done of total bytes.
func (s *startState) progress(done, total int64) {
	s.mu.Lock()
	if megabytes(done) == megabytes(s.done) && total == s.total {
		s.mu.Unlock()
		return // the same whole MB
	}
	first := s.total == 0 // the download's first figures: a new phase
	if first {
		s.since = time.Now()
	}
	s.done, s.total, s.long = done, total, true
	s.msg = fmt.Sprintf("downloading the embedding model: %d of %d MB", megabytes(done), megabytes(total))
	if done >= total {
		s.msg = "converting the embedding model (once)"
	}
	s.changedLocked()
	// Listeners hear of progress once a second, of its start and end at
	// once (the lock file, which status reads, says "downloading" as soon
	// as the answers do); what was held back is told when the second is
	// over, so a download that stalls is told where it stalled.
	var fs []func(string)
	if wait := time.Second - time.Since(s.told); first || done >= total || wait <= 0 {
		s.told, fs = time.Now(), s.listeners
	} else if !s.held {
		s.held = true
		time.AfterFunc(wait, s.tellHeld)
	}
	msg := s.msg
	s.mu.Unlock()
	for _, f := range fs {
		f(msg)
	}
}

// tellHeld tells listeners the progress held back, unless a phase was told
// since.
func (s *startState) tellHeld() {
	s.mu.Lock()
	s.held = false
	if s.total == 0 || time.Since(s.told) < time.Second {
		s.mu.Unlock()
		return
	}
	s.told = time.Now()
	fs, msg := s.listeners, s.msg
	s.mu.Unlock()
	for _, f := range fs {
		f(msg)
	}
}

// megabytes rounds bytes to whole megabytes (10^6, as download sizes are
// given).
func megabytes(b int64) int64 { return (b + 500_000) / 1_000_000 }

func (s *startState) changedLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// listen calls f with each new phase, and with download progress once a
// second, in order.
func (s *startState) listen(f func(msg string)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.listeners = append(s.listeners, f)
}

type startSnapshot struct {
	msg         string
	long        bool
	done, total int64
	since       time.Time
	changed     <-chan struct{}
}

func (s *startState) now() startSnapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	return startSnapshot{s.msg, s.long, s.done, s.total, s.since, s.changed}
}

// reason is what a call answered while starting says: it is an error
// (the call got no answer), why, and when to ask again.
func (s startSnapshot) reason() string {
	return "LoreKeeper cannot answer yet: it is starting (" + s.msg + "). Ask again " + s.retryIn(time.Now()) + "; the first start fetches and loads everything once."
}

// retryIn says when an answer can be expected: a download's remaining
// time at its rate so far, else a phase's usual length.
func (s startSnapshot) retryIn(now time.Time) string {
	if s.total > 0 && s.done > 0 && s.done < s.total {
		rate := float64(s.done) / max(now.Sub(s.since).Seconds(), 0.1)
		return aboutSeconds(float64(s.total-s.done)/rate + loadSeconds)
	}
	if s.long {
		return aboutSeconds(loadSeconds + convertSeconds)
	}
	return "in a few seconds"
}

// Usual lengths, for retryIn: converting the model once it is fetched,
// and a first load of the bundled content after it (its vectors are
// bundled: 6-8 s on two cores).
const (
	convertSeconds = 10
	loadSeconds    = 10
)

// aboutSeconds is "in about 40 seconds", "in about 3 minutes".
func aboutSeconds(sec float64) string {
	switch {
	case sec < 90:
		return fmt.Sprintf("in about %d seconds", int(max(5, 5*math.Round(sec/5))))
	default:
		return fmt.Sprintf("in about %d minutes", int(math.Round(sec/60)))
	}
}

// startWait is how long a call waits for a short phase (opening the data,
// taking it over) to end before it answers with the state.
const startWait = 5 * time.Second

// backendConn is the query service a standalone process's MCP server
// asks: none while the process starts (calls answer with the start state),
// the owner's over loopback while another process owns the data directory,
// its own in process once it owns it. The MCP session stays up across
// every change.
type backendConn struct {
	state     *startState
	intercept grpc.UnaryClientInterceptor
	// why says why the owner's service does not answer (remote only), and
	// whether that lasts (the owner is downloading its model): then calls
	// answer at once.
	why func() (reason string, long bool)

	mu      sync.Mutex
	conn    grpc.ClientConnInterface
	remote  bool
	changed chan struct{}
}

func newBackendConn(state *startState, intercept grpc.UnaryClientInterceptor, why func() (string, bool)) *backendConn {
	return &backendConn{state: state, intercept: intercept, why: why, changed: make(chan struct{})}
}

// set switches to conn (nil: none), remote when it is another process's.
func (b *backendConn) set(conn grpc.ClientConnInterface, remote bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.conn, b.remote = conn, remote
	close(b.changed)
	b.changed = make(chan struct{})
}

func (b *backendConn) current() (grpc.ClientConnInterface, bool, <-chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.conn, b.remote, b.changed
}

func (b *backendConn) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	wait := time.NewTimer(startWait)
	defer wait.Stop()
	for {
		conn, remote, changed := b.current()
		var notReady string
		if conn != nil {
			err := b.intercept(ctx, method, args, reply, nil, func(ctx context.Context, method string, args, reply any, _ *grpc.ClientConn, opts ...grpc.CallOption) error {
				return conn.Invoke(ctx, method, args, reply, opts...)
			}, opts...)
			code := status.Code(err)
			if !remote || ctx.Err() != nil || (code != codes.Unavailable && code != codes.Canceled) {
				return err
			}
			// The owner does not answer: it is starting, or it exited
			// and this process is taking over. Wait a moment for that.
			var long bool
			if notReady, long = b.why(); long {
				return &mcpserver.NotReadyError{Reason: notReady}
			}
		} else {
			st := b.state.now()
			notReady = st.reason()
			if st.long {
				return &mcpserver.NotReadyError{Reason: notReady}
			}
			changed = mergeDone(changed, st.changed)
		}
		select {
		case <-changed:
		case <-wait.C:
			return &mcpserver.NotReadyError{Reason: notReady}
		case <-ctx.Done():
			return status.FromContextError(ctx.Err()).Err()
		}
	}
}

func (b *backendConn) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	conn, _, _ := b.current()
	if conn == nil {
		return nil, &mcpserver.NotReadyError{Reason: b.state.now().reason()}
	}
	return conn.NewStream(ctx, desc, method, opts...)
}

// mergeDone is closed when a or b is.
func mergeDone(a, b <-chan struct{}) <-chan struct{} {
	out := make(chan struct{})
	go func() {
		select {
		case <-a:
		case <-b:
		}
		close(out)
	}()
	return out
}

// tellStart makes the start state reach MCP clients as soon as each can
// receive it: a session that sets its log level gets the current phase at
// once (a message sent before it subscribed reached nobody), and a tool
// call that carries a progress token while the model downloads gets a
// progress notification with the figures before its answer.
func tellStart(srv *mcp.Server, state *startState) {
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			ss, _ := req.GetSession().(*mcp.ServerSession)
			st := state.now()
			if method == "tools/call" && ss != nil && st.msg != "" {
				if p, ok := req.GetParams().(interface{ GetProgressToken() any }); ok && p.GetProgressToken() != nil {
					n := &mcp.ProgressNotificationParams{ProgressToken: p.GetProgressToken(), Message: "LoreKeeper is starting: " + st.msg}
					if st.total > 0 {
						n.Progress, n.Total = float64(megabytes(st.done)), float64(megabytes(st.total))
					}
					_ = ss.NotifyProgress(ctx, n)
				}
			}
			res, err := next(ctx, method, req)
			if method == "logging/setLevel" && err == nil && ss != nil && st.msg != "" {
				_ = ss.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Logger: "lorekeeper", Data: "LoreKeeper is starting: " + st.msg + "."}) //nolint:staticcheck // see sessionLog
			}
			return res, err
		}
	})
}
