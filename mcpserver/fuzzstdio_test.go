package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"testing"
	"time"
)

// FuzzStdioFraming writes any bytes to a stdio session, then a ping: the
// ping must be answered, so whatever came before was answered or refused
// and the session went on (issue 49, row 9: a batch line ended the
// process).
func FuzzStdioFraming(f *testing.F) {
	for _, s := range []string{
		`[{"jsonrpc":"2.0","id":6,"method":"ping"}]`,
		`[]`, `[1,2]`, `{}`, `null`, `"x"`, `{"jsonrpc":"2.0","id":2,"method":"tools/list"`,
		`{"jsonrpc":"2.0","id":3,"result":{}}`, `{"jsonrpc":"2.0","id":4,"error":{"code":1,"message":"m"}}`,
		"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"}{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"ping\"}",
		"\x00\xff\r\n\r\n", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`,
		`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"lookup_spell","arguments":{"name":"fireball"}}}`,
	} {
		f.Add([]byte(s))
	}
	h := newServer(f)
	f.Fuzz(func(t *testing.T, in []byte) {
		cr, sw := io.Pipe()
		sr, cw := io.Pipe()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := make(chan error, 1)
		go func() { done <- h.srv.RunIO(ctx, sr, sw) }()
		defer func() { _ = cw.Close(); _ = cr.Close() }()
		go func() {
			_, _ = io.WriteString(cw, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}}}`+"\n"+
				`{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
			_, _ = cw.Write(append(in, '\n'))
			_, _ = io.WriteString(cw, `{"jsonrpc":"2.0","id":"last-ping","method":"ping"}`+"\n")
		}()
		answered := make(chan struct{})
		go func() {
			lines := bufio.NewScanner(cr)
			lines.Buffer(make([]byte, 1<<20), 32<<20)
			for lines.Scan() {
				var r struct {
					ID json.RawMessage `json:"id"`
				}
				if json.Unmarshal(lines.Bytes(), &r) == nil && string(r.ID) == `"last-ping"` {
					close(answered)
					break
				}
			}
			_, _ = io.Copy(io.Discard, cr)
		}()
		select {
		case <-answered:
		case err := <-done:
			t.Fatalf("the session ended on %q: %v", in, err)
		case <-time.After(20 * time.Second):
			t.Fatalf("no answer to a ping after %q", in)
		}
	})
}
