package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// maxLine bounds one stdin line, as the SDK bounds one frame
// (mcp.DefaultMaxLineLength).
const maxLine = 16 << 20

// guardLines passes r's lines on to the SDK only when they are JSON-RPC
// messages it can decode, and answers every other line itself on w: -32700
// for a line that is not JSON, -32600 for JSON that is not a JSON-RPC 2.0
// message (a wrong "jsonrpc" version, no method and no id, a line over
// maxLine) or is a batch. The SDK ends the whole session on a line it cannot decode, and
// a desktop client's server would exit with it; one bad line must cost
// that line only. Writes to w go through one lock, each message in one
// Write, as the SDK's own do.
func guardLines(r io.Reader, w io.Writer, log *slog.Logger) (*io.PipeReader, io.Writer) {
	pr, pw := io.Pipe()
	lw := &lockedWriter{w: w}
	go func() {
		br := bufio.NewReaderSize(r, 64<<10)
		for {
			line, tooLong, err := readLine(br)
			if len(bytes.TrimSpace(line)) > 0 || tooLong {
				if reply := check(line, tooLong); reply != nil {
					log.Warn("MCP over stdio: a line that is not a JSON-RPC message was answered with an error and skipped",
						"code", reply.Error.Code, "line", clip(line))
					if b, merr := json.Marshal(reply); merr == nil {
						_, _ = lw.Write(append(b, '\n'))
					}
				} else if _, werr := pw.Write(append(line, '\n')); werr != nil {
					return // the session has ended
				}
			}
			if err != nil {
				pw.CloseWithError(err) // io.EOF: the client hung up
				return
			}
		}
	}()
	return pr, lw
}

// readLine reads one line without its end; a line over maxLine is read to
// its end and dropped (tooLong).
func readLine(br *bufio.Reader) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > maxLine {
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimRight(line, "\r\n"), tooLong, err
	}
}

// errorReply is a JSON-RPC error response; ID is null when the request's
// could not be read, as JSON-RPC 2.0 requires.
type errorReply struct {
	JSONRPC string `json:"jsonrpc"`
	ID      any    `json:"id"`
	Error   struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// check returns the error response for a line the SDK could not decode,
// nil for a line to pass on.
func check(line []byte, tooLong bool) *errorReply {
	fail := func(id any, code int64, msg string) *errorReply {
		r := &errorReply{JSONRPC: "2.0", ID: id}
		r.Error.Code, r.Error.Message = code, msg
		return r
	}
	switch {
	case tooLong:
		return fail(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("Invalid Request: a message over %d MiB was dropped", maxLine>>20))
	case !json.Valid(line):
		return fail(nil, jsonrpc.CodeParseError, "Parse error: the line is not JSON; send one JSON-RPC 2.0 message per line")
	}
	if bytes.HasPrefix(bytes.TrimSpace(line), []byte("[")) {
		// A batch: the protocol has none since 2025-06-18, and the SDK's
		// stdio transport ends the session on one (or never answers it).
		// Refused as a whole; the session goes on.
		var msgs []json.RawMessage
		if err := json.Unmarshal(line, &msgs); err != nil || len(msgs) == 0 {
			return fail(nil, jsonrpc.CodeInvalidRequest, "Invalid Request: an empty or malformed batch")
		}
		return fail(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("Invalid Request: a JSON-RPC batch (%d messages): batches are not supported; send one JSON-RPC message per line", len(msgs)))
	}
	if _, err := jsonrpc.DecodeMessage(line); err != nil {
		var head struct {
			JSONRPC any `json:"jsonrpc"`
			ID      any `json:"id"`
		}
		_ = json.Unmarshal(line, &head)
		id := head.ID
		if _, idErr := jsonrpc.MakeID(id); idErr != nil {
			id = nil
		}
		if head.JSONRPC != "2.0" {
			return fail(id, jsonrpc.CodeInvalidRequest, fmt.Sprintf(`Invalid Request: "jsonrpc" must be "2.0" (got %v)`, head.JSONRPC))
		}
		return fail(id, jsonrpc.CodeInvalidRequest, "Invalid Request: "+err.Error())
	}
	return nil
}

// clip shortens a line for the log.
func clip(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "..."
	}
	return string(b)
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
