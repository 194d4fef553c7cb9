package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lorekeeper.dev/mcpserver"
)

// initAs is an initialize request from the client named name.
func initAs(name, version string) string {
	return `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + version + `","capabilities":{},"clientInfo":{"name":"` + name + `","version":"1"}}}`
}

// TestHTTPHandler_SessionFlood (issue 49, row 5): one client opening
// sessions without end (initialize, never close) kept every other client
// out with 503 until its sessions expired. Its sessions are bounded (it
// closes its own oldest as it goes on), a client connected before goes on
// being answered, and a new one gets in.
func TestHTTPHandler_SessionFlood(t *testing.T) {
	const max, perClient, flood = 20, 5, 200
	h := newServer(t)
	ts := httptest.NewServer(h.srv.HTTPHandler(&mcpserver.HTTPOptions{MaxSessions: max, MaxSessionsPerClient: perClient}))
	t.Cleanup(ts.Close)
	url := ts.URL + "/mcp"
	before := connect(t, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1})
	mustOK(t, callTool(t, before, "list_documents", nil))
	refused := 0
	for range flood {
		if code, _ := post(t, url, initAs("flooder", "2025-06-18"), nil); code != http.StatusOK {
			refused++
		}
	}
	if refused != 0 {
		t.Errorf("%d of the flood's initializations refused: a client at its bound closes its own session unused longest", refused)
	}
	if n := countSessions(h.srv); n > max || n > perClient+1 {
		t.Errorf("%d sessions open after a flood of %d from one client: want at most its %d and the other client's", n, flood, perClient)
	}
	mustOK(t, callTool(t, before, "list_documents", nil))
	after := connect(t, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1})
	mustOK(t, callTool(t, after, "list_documents", nil))
	t.Logf("flood of %d initializations: %d refused; %d sessions open", flood, refused, countSessions(h.srv))
}

// TestHTTPHandler_DribbledBodies (issue 49, row 6): requests whose body is
// still coming (a byte a second, or never) hold no session slot: twenty
// of them against a bound of three, and a client still gets in at once.
func TestHTTPHandler_DribbledBodies(t *testing.T) {
	h := newServer(t)
	ts := httptest.NewServer(h.srv.HTTPHandler(&mcpserver.HTTPOptions{MaxSessions: 3}))
	t.Cleanup(ts.Close)
	body := initBody
	for range 20 {
		c, err := net.Dial("tcp", ts.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n%s",
			ts.Listener.Addr(), len(body), body[:1])
	}
	time.Sleep(100 * time.Millisecond) // the handlers are reading them
	cs := connect(t, &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp", MaxRetries: -1})
	mustOK(t, callTool(t, cs, "list_documents", nil))
	if n := countSessions(h.srv); n != 1 {
		t.Errorf("%d sessions open, want the one client's", n)
	}
}

// TestHTTPHandler_BatchBound (issue 49, row 8): a batch over MaxBatch (a
// protocol version that allows batches) is refused whole with -32600
// saying the bound, before any of it is worked on; one within it is
// answered.
func TestHTTPHandler_BatchBound(t *testing.T) {
	h := newServer(t)
	ts := httptest.NewServer(h.srv.HTTPHandler(&mcpserver.HTTPOptions{Stateless: true, JSONResponse: true}))
	t.Cleanup(ts.Close)
	batch := func(n int) string {
		msgs := make([]string, n)
		for i := range msgs {
			msgs[i] = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"lookup_spell","arguments":{"name":"fireball"}}}`, i+1)
		}
		return "[" + strings.Join(msgs, ",") + "]"
	}
	before := h.fake.requests()
	code, body := post(t, ts.URL, batch(2000), map[string]string{"Mcp-Protocol-Version": "2025-03-26"})
	var reply struct {
		Error struct {
			Code    int
			Message string
		}
	}
	if err := json.Unmarshal([]byte(body), &reply); err != nil || code != http.StatusBadRequest || reply.Error.Code != -32600 || !strings.Contains(reply.Error.Message, fmt.Sprintf("at most %d", mcpserver.DefaultMaxBatch)) {
		t.Errorf("a batch of 2,000: %d %q, want 400 with -32600 saying the bound", code, body)
	}
	if n := h.fake.requests() - before; n != 0 {
		t.Errorf("%d queries made for a refused batch, want none", n)
	}
	req, _ := http.NewRequest(http.MethodPost, ts.URL, strings.NewReader(batch(3)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-03-26")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var answers []struct {
		ID     int
		Result struct{ IsError bool }
	}
	if err := json.NewDecoder(resp.Body).Decode(&answers); err != nil || resp.StatusCode != http.StatusOK || len(answers) != 3 {
		t.Errorf("a batch of 3: %s, %d answers (%v), want three", resp.Status, len(answers), err)
	}
}

// TestServer_MaxAnswerBytes (issue 49, row 8): a tool answer over the bound
// is an error result saying how to ask for less, not the answer.
func TestServer_MaxAnswerBytes(t *testing.T) {
	f := newFakeQuery(t)
	small := mcpserver.New(startQuery(t, f), &mcpserver.Options{Version: "test", MaxAnswerBytes: 2000})
	cs := connectHTTP(t, small.HTTPHandler(nil), "")
	res := callTool(t, cs, "lookup_spell", map[string]any{"name": "fireball"})
	if !res.IsError || !strings.Contains(text(res), "more than the") || !strings.Contains(text(res), "limit") || res.StructuredContent != nil {
		t.Errorf("an answer over 2,000 bytes: error %v, %q", res.IsError, text(res))
	}
	big := newServer(t)
	mustOK(t, callTool(t, connectHTTP(t, big.srv.HTTPHandler(nil), ""), "lookup_spell", map[string]any{"name": "fireball"}))
}

// TestHTTPHandler_Shutdown (issue 49, row 10): calls in flight when the
// server stops are answered (they got an empty 200, or their stream
// closed unanswered); a request meanwhile is told it is shutting down;
// then every session is closed.
func TestHTTPHandler_Shutdown(t *testing.T) {
	h := newServer(t)
	handler := h.srv.HTTPHandler(nil)
	ts := httptest.NewServer(handler)
	t.Cleanup(ts.Close)
	url := ts.URL + "/mcp"
	const n = 8
	var sessions []*mcp.ClientSession
	for range n {
		sessions = append(sessions, connect(t, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}))
	}
	before := h.fake.requests()
	release := h.fake.hold()
	type answer struct {
		res *mcp.CallToolResult
		err error
	}
	answers := make(chan answer, n)
	for _, cs := range sessions {
		go func() {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "lookup_spell", Arguments: map[string]any{"name": "fireball"}})
			answers <- answer{res, err}
		}()
	}
	waitFor(t, func() bool { return h.fake.requests() >= before+n })
	stopped := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		stopped <- handler.Shutdown(ctx)
	}()
	waitFor(t, func() bool {
		code, body := post(t, url, initBody, nil)
		return code == http.StatusServiceUnavailable && strings.Contains(body, "shutting down")
	})
	release()
	for range n {
		a := <-answers
		if a.err != nil || a.res.IsError || !strings.Contains(text(a.res), "## Fireball") {
			t.Errorf("a call in flight at shutdown: %v %+v, want its answer", a.err, a.res)
		}
	}
	if err := <-stopped; err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	if c := countSessions(h.srv); c != 0 {
		t.Errorf("%d sessions open after Shutdown", c)
	}
}

// TestHTTPHandler_InFlightPerSession (issue 49, row 7): a session's
// requests answered at once are bounded, so that a client asking without
// reading its answers cannot pile them up: one more is 429, saying why.
func TestHTTPHandler_InFlightPerSession(t *testing.T) {
	h := newServer(t)
	ts := httptest.NewServer(h.srv.HTTPHandler(&mcpserver.HTTPOptions{MaxInFlightPerSession: 3}))
	t.Cleanup(ts.Close)
	url := ts.URL + "/mcp"
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(initBody))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	sid := map[string]string{"Mcp-Session-Id": resp.Header.Get("Mcp-Session-Id"), "Mcp-Protocol-Version": "2025-06-18"}
	post(t, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, sid)
	call := func(id int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"lookup_spell","arguments":{"name":"fireball"}}}`, id)
	}
	before := h.fake.requests()
	release := h.fake.hold()
	codes := make(chan int, 3)
	for i := range 3 {
		go func() {
			code, _ := post(t, url, call(i), sid)
			codes <- code
		}()
	}
	// Held at the query service, or waiting for the one that is (the
	// documents are read once for all): in flight either way.
	waitFor(t, func() bool { return h.fake.requests() > before })
	time.Sleep(200 * time.Millisecond)
	code, body := post(t, url, call(3), sid)
	if code != http.StatusTooManyRequests || !strings.Contains(body, "read their answers") {
		t.Errorf("a fourth request in flight: %d %q, want 429 saying why", code, body)
	}
	release()
	for range 3 {
		if code := <-codes; code != http.StatusOK {
			t.Errorf("a request in flight: %d", code)
		}
	}
	if code, _ := post(t, url, call(4), sid); code != http.StatusOK {
		t.Errorf("a request once the others are answered: %d", code)
	}
}
