package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// logLevels are the levels logging/setLevel takes (RFC 5424's, as MCP
// names them).
var logLevels = []mcp.LoggingLevel{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"} //nolint:staticcheck // logging/setLevel is answered while clients send it (deprecated by SEP-2577)

// setLevelMiddleware refuses logging/setLevel with a level MCP does not
// name, with invalid params: the SDK took any string, and a session set to
// "loud" got no log messages at all, without a word.
func setLevelMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if p, ok := req.GetParams().(*mcp.SetLoggingLevelParams); ok && method == "logging/setLevel" && p != nil && //nolint:staticcheck // as logLevels
			!slices.Contains(logLevels, p.Level) {
			levels := make([]string, len(logLevels))
			for i, l := range logLevels {
				levels[i] = string(l)
			}
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
				Message: fmt.Sprintf("invalid params: level %q is not a logging level; use one of %s", clip([]byte(p.Level)), strings.Join(levels, ", "))}
		}
		return next(ctx, method, req)
	}
}

// bidiControls are the characters that reorder how the text around them
// is displayed (embeddings, overrides, isolates): in an argument echoed
// back ("No spell named '...'") they make the answer read other than it
// is. Marks (U+200E, U+200F) only set a direction, and are kept.
const bidiControls = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"

// withoutBidiControls returns a tool call's arguments with the bidi
// controls taken out of every string in them; args itself when none holds
// one (raw or escaped).
func withoutBidiControls(args json.RawMessage) json.RawMessage {
	if !strings.ContainsAny(string(args), bidiControls) && !hasEscapedBidi(args) {
		return args
	}
	var v any
	d := json.NewDecoder(strings.NewReader(string(args)))
	d.UseNumber()
	if d.Decode(&v) != nil {
		return args // the SDK says what is wrong with it
	}
	out, err := json.Marshal(stripBidi(v))
	if err != nil {
		return args
	}
	return out
}

func hasEscapedBidi(b []byte) bool {
	s := strings.ToLower(string(b))
	return strings.Contains(s, `\u202`) || strings.Contains(s, `\u206`)
}

func stripBidi(v any) any {
	switch x := v.(type) {
	case string:
		return strings.Map(func(r rune) rune {
			if strings.ContainsRune(bidiControls, r) {
				return -1
			}
			return r
		}, x)
	case []any:
		for i := range x {
			x[i] = stripBidi(x[i])
		}
	case map[string]any:
		for k, e := range x {
			x[k] = stripBidi(e)
		}
	}
	return v
}
