package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// CodeResourceNotFound is the JSON-RPC error code of a resources/read whose
// URI names nothing, as the MCP specification suggests (-32002). The SDK's
// own not-found error uses -32602, which a client cannot tell from a
// malformed request.
const CodeResourceNotFound = -32002

// resourceNotFoundMiddleware answers a resources/read of a URI that names
// nothing with -32002, the URI as the client sent it (not percent-encoded
// on the way), and the entity nearest to what it names, so that a client
// holding a stale or mistyped URI can go on.
func (s *Server) resourceNotFoundMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		rr, ok := req.(*mcp.ReadResourceRequest)
		if method != "resources/read" || !ok || rr.Params == nil {
			return next(ctx, method, req)
		}
		uri := rr.Params.URI
		res, err := next(ctx, method, req)
		var je *jsonrpc.Error
		//nolint:staticcheck // the SDK's own code for it, which its compatibility setting changes
		if err == nil || !errors.As(err, &je) || je.Code != mcp.CodeResourceNotFound || !strings.HasPrefix(je.Message, "Resource not found") {
			return res, err
		}
		msg := fmt.Sprintf("Resource not found: %s.", uri)
		data := map[string]string{"uri": uri}
		if e := s.nearestEntity(ctx, uri); e != nil {
			msg += fmt.Sprintf(" The nearest entity is %s (%s, %s): %s.", e.Name, e.Kind, e.DocumentKey, e.URI)
			data["nearest"] = e.URI
		} else {
			msg += " Resource URIs come from tool results (lorekeeper://entity/<key>) and resources/list (lorekeeper://document/<source>/<key>)."
		}
		raw, _ := json.Marshal(data) // strings only: cannot fail
		return nil, &jsonrpc.Error{Code: CodeResourceNotFound, Message: msg, Data: raw}
	}
}

// nearestEntity is the entity whose name is nearest to what an entity uri
// names: for a key, the entity of its kind named by its slug, else the
// lookup's first did-you-mean; for another entity URI, the first search
// result for its last segment. nil for a URI that names no entity, when
// nothing is near, or when the query service cannot say.
func (s *Server) nearestEntity(ctx context.Context, uri string) *Entity {
	if !strings.HasPrefix(uri, lkv1.URIPrefix) {
		// A document (resources/list lists them), or no URI of ours
		// (file:///etc/passwd): nothing is near it.
		return nil
	}
	rest, _ := strings.CutPrefix(uri, lkv1.URIPrefix)
	if r, err := url.PathUnescape(rest); err == nil {
		rest = r
	}
	var kinds []lkv1.Kind
	name := rest
	if p, ok := lkv1.ParseEntityKey(rest); ok {
		name, kinds = p.Slug, []lkv1.Kind{p.Kind}
	} else if i := strings.LastIndexAny(rest, ":/"); i >= 0 {
		name = rest[i+1:]
	}
	name = strings.TrimSpace(strings.NewReplacer("-", " ", "_", " ").Replace(name))
	if name == "" || len(name) > 100 {
		return nil
	}
	ctx, cancel := s.callContext(ctx)
	defer cancel()
	if len(kinds) == 1 {
		// The name as a lookup reads it: the entity of that name, else the
		// first of its did-you-mean suggestions.
		resp, err := s.lookupKinds(ctx, &lkv1.Common{Name: name, Limit: 1}, kinds...)
		if err != nil {
			s.log.Debug("nearest entity for a missing resource", "uri", uri, "err", err)
			return nil
		}
		if rs := resp.GetResults(); len(rs) > 0 {
			e := entityFromResult(rs[0])
			return &e
		}
		for _, sg := range resp.GetSuggestions() {
			if sg.GetKey() == "" {
				continue
			}
			r, err := s.client.GetEntity(ctx, &lkv1.GetEntityRequest{Key: sg.GetKey()})
			if err != nil {
				return nil
			}
			e := entityFromProto(r.GetEntity(), r.GetUri())
			return &e
		}
		return nil
	}
	f := false
	resp, err := s.client.Search(ctx, &lkv1.SearchRequest{Query: name, Semantic: &f, Limit: 1})
	if err != nil {
		s.log.Debug("nearest entity for a missing resource", "uri", uri, "err", err)
		return nil
	}
	for _, g := range resp.GetGroups() {
		for _, r := range g.GetResults() {
			e := entityFromResult(r)
			return &e
		}
	}
	return nil
}
