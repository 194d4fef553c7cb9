package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// typedHandler adapts a typed tool handler to the SDK's raw one. For the
// arguments it does what mcp.AddTool does: validate them against the input
// schema (with its defaults) and decode them into In, with the SDK's error
// messages. For the output it differs: mcp.AddTool encodes the output,
// decodes it again into maps, validates those against the output schema and
// encodes them a second time, on every call, which for ten stat blocks took
// longer than the query itself. Our outputs are our own Go types whose
// schemas are inferred from them, so the output is encoded once; the tests
// validate every tool's output against the schema it advertises.
func typedHandler[In, Out any](input *jsonschema.Resolved, h mcp.ToolHandlerFor[In, Out]) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args, err := validateArguments(req.Params.Arguments, input)
		if err != nil {
			return errorResult(fmt.Errorf("validating \"arguments\": %v", err)), nil
		}
		var in In
		if err := json.Unmarshal(args, &in); err != nil {
			return errorResult(err), nil
		}
		res, out, err := h(ctx, req, in)
		if err != nil {
			return errorResult(err), nil
		}
		if res == nil {
			res = &mcp.CallToolResult{}
		}
		if res.IsError {
			return res, nil // an error result has no structured content
		}
		js, err := json.Marshal(out)
		if err != nil {
			return nil, fmt.Errorf("encoding the output: %w", err)
		}
		if string(js) == "null" { // a nil output: an empty object, as the SDK sends
			js = []byte("{}")
		}
		res.StructuredContent = json.RawMessage(js)
		if res.Content == nil {
			// As the SDK does: clients that do not read structured
			// content get it as text.
			res.Content = []mcp.Content{&mcp.TextContent{Text: string(js)}}
		}
		return res, nil
	}
}

// validateArguments checks the arguments against the input schema, applies
// its defaults, and returns them encoded again (absent arguments are {}).
func validateArguments(data json.RawMessage, schema *jsonschema.Resolved) (json.RawMessage, error) {
	m := map[string]any{}
	if len(data) > 0 {
		if err := json.Unmarshal(data, &m); err != nil {
			return nil, fmt.Errorf("unmarshaling arguments: %w", err)
		}
	}
	var v any = m
	if err := schema.ApplyDefaults(&v); err != nil {
		return nil, fmt.Errorf("applying schema defaults:\n%w", err)
	}
	if err := schema.Validate(&v); err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

func errorResult(err error) *mcp.CallToolResult {
	var res mcp.CallToolResult
	res.SetError(err)
	return &res
}
