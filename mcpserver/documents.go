package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// Documents as resources: resources/list lists one resource per stored
// document (lorekeeper://document/<source>/<key>), paged with MCP cursors;
// reading one gives its contents by kind. The list follows the query
// service: WatchDocuments polls ListDocuments and adds or removes
// resources, and the SDK then sends notifications/resources/list_changed
// to every connected session.
//
// Why polling: the MCP server talks to the query service over gRPC only,
// may run as many stateless front ends behind a balancer, and the query
// nodes behind it each keep their own replica. A unary ListDocuments every
// few seconds costs one pass over the in-memory index on whichever node
// answers (well under a millisecond for the whole catalogue), needs no
// stream that pins a front end to one node and must be re-established
// when that node restarts, and documents change only when an OrcBrew
// import adds or removes a book, which people wait seconds for anyway.

// DefaultDocumentPoll is how often WatchDocuments asks for the documents.
const DefaultDocumentPoll = 2 * time.Second

// documents mirrors the stored documents into the MCP server's resources.
type documents struct {
	mu      sync.Mutex
	current map[string]bool // resource URIs registered
	synced  time.Time
	changed time.Time // when the list last changed
}

// syncDocuments registers a resource per stored document and removes those
// gone. The SDK notifies sessions of a change (debounced). Within hold of
// the list's last change it changes nothing (it reports whether it held
// back): while a first load stores document after document, sessions hear
// of them once every few seconds rather than at every poll (15 times in a
// minute, before the bundled vectors made the load seconds long).
func (s *Server) syncDocuments(ctx context.Context, hold time.Duration) error {
	ctx, cancel := s.callContext(ctx)
	defer cancel()
	resp, err := s.client.ListDocuments(ctx, &lkv1.ListDocumentsRequest{})
	if err != nil {
		return err
	}
	s.docs.mu.Lock()
	defer s.docs.mu.Unlock()
	seen := map[string]bool{}
	for _, d := range resp.GetDocuments() {
		seen[documentURI(d.GetDocument())] = true
	}
	if !maps.Equal(seen, s.docs.current) {
		if time.Since(s.docs.changed) < hold {
			return nil
		}
		s.docs.changed = time.Now()
	}
	for _, d := range resp.GetDocuments() {
		doc := d.GetDocument()
		uri := documentURI(doc)
		if s.docs.current[uri] {
			continue
		}
		s.mcp.AddResource(&mcp.Resource{
			URI:         uri,
			Name:        doc.GetKey(),
			Title:       doc.GetName(),
			Description: documentDescription(doc),
			MIMEType:    "text/markdown",
		}, s.readDocument)
	}
	var gone []string
	for uri := range s.docs.current {
		if !seen[uri] {
			gone = append(gone, uri)
		}
	}
	if len(gone) > 0 {
		slices.Sort(gone)
		s.mcp.RemoveResources(gone...)
	}
	s.docs.current = seen
	s.docs.synced = time.Now()
	return nil
}

func documentDescription(doc *lkv1.Document) string {
	var parts []string
	switch doc.GetSource() {
	case lkv1.Source_SOURCE_ORCBREW:
		parts = append(parts, "Homebrew imported from OrcBrew")
	case lkv1.Source_SOURCE_SRD_TEXT:
		parts = append(parts, "The book's own text, bundled with LoreKeeper (what Open5e's copy of it lacks)")
	default:
		parts = append(parts, "Open5e document")
	}
	if doc.GetGameSystem() != "" {
		parts = append(parts, "game system "+doc.GetGameSystem())
	}
	if doc.GetPublisher() != "" {
		parts = append(parts, "published by "+doc.GetPublisher())
	}
	return fmt.Sprintf("%s (%s): its contents by kind, with a URI per entity.", doc.GetName(), strings.Join(parts, ", "))
}

// WatchDocuments keeps the document resources in step with the query
// service until ctx ends, polling every poll (DefaultDocumentPoll when 0),
// and changing the list at most every two and a half polls (5 s by
// default). A failed poll is logged and retried at the next tick.
func (s *Server) WatchDocuments(ctx context.Context, poll time.Duration) error {
	if poll <= 0 {
		poll = DefaultDocumentPoll
	}
	t := time.NewTicker(poll)
	defer t.Stop()
	failing := false
	for {
		err := s.syncDocuments(ctx, poll*5/2)
		switch {
		case err != nil && ctx.Err() == nil && !failing:
			s.log.Warn("listing documents for the resource list failed; retrying", "err", err)
			failing = true
		case err == nil && failing:
			s.log.Info("listing documents works again")
			failing = false
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// documentsMiddleware fills the document resources before a resources/list
// when no watcher has done so recently, so that the list is right even
// where WatchDocuments does not run (a stdio server, tests).
func (s *Server) documentsMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "resources/list" {
			s.docs.mu.Lock()
			stale := time.Since(s.docs.synced) > DefaultDocumentPoll
			s.docs.mu.Unlock()
			if stale {
				if err := s.syncDocuments(ctx, 0); err != nil { // asked for: right now
					s.log.Warn("listing documents for the resource list failed", "err", err)
				}
			}
		}
		return next(ctx, method, req)
	}
}

// readDocument serves lorekeeper://document/<source>/<key>[/<page>]:
// every entity the document holds, by kind in name order, a page of
// documentPage at a time, as markdown and as JSON.
func (s *Server) readDocument(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	rest, ok := strings.CutPrefix(uri, DocumentURIPrefix)
	src, key, ok2 := strings.Cut(rest, "/")
	if !ok || !ok2 {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	page := 1
	if k, p, paged := strings.Cut(key, "/"); paged {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 {
			return nil, mcp.ResourceNotFoundError(uri)
		}
		key, page = k, n
	}
	if k, err := url.PathUnescape(key); err == nil {
		key = k
	}
	ctx, cancel := s.callContext(ctx)
	defer cancel()
	resp, err := s.client.ListDocuments(ctx, &lkv1.ListDocumentsRequest{})
	if err != nil {
		return nil, fmt.Errorf("%s", s.report("resources/read", err))
	}
	var d *lkv1.DocumentSummary
	for _, x := range resp.GetDocuments() {
		if x.GetDocument().GetKey() == key && x.GetDocument().GetSource().Slug() == src {
			d = x
		}
	}
	if d == nil {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	md, js, err := s.documentContents(ctx, d, page)
	if err != nil {
		return nil, fmt.Errorf("%s", s.report("resources/read", err))
	}
	if md == "" {
		return nil, mcp.ResourceNotFoundError(uri) // past the last page
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
		{URI: uri, MIMEType: "text/markdown", Text: md},
		{URI: uri, MIMEType: "application/json", Text: js},
	}}, nil
}

// documentPage is how many entities a page of a document resource lists.
const documentPage = 250

// documentContents is page (from 1) of every entity d holds, by kind in
// name order: its markdown and JSON, or "" past the last page.
func (s *Server) documentContents(ctx context.Context, d *lkv1.DocumentSummary, page int) (md, js string, err error) {
	doc := d.GetDocument()
	total := int(d.GetEntityCount())
	pages := max(1, (total+documentPage-1)/documentPage)
	if page > pages {
		return "", "", nil
	}
	type listed struct {
		Name string `json:"name"`
		Kind string `json:"kind"`
		URI  string `json:"uri"`
	}
	var all []listed
	from, to := (page-1)*documentPage, page*documentPage
	for _, k := range sortedKeys(d.GetCounts()) {
		n := int(d.GetCounts()[k])
		kind, ok := lkv1.KindFromSlug(k)
		if !ok {
			continue
		}
		at := len(all)
		if at >= to {
			break
		}
		if at+n <= from {
			// A kind before the page: counted, not read.
			all = append(all, make([]listed, n)...)
			continue
		}
		cursor := ""
		for {
			resp, err := s.lookupKinds(ctx, &lkv1.Common{Limit: 100, Cursor: cursor, Documents: &lkv1.DocumentFilter{Documents: []string{doc.GetKey()}}, Sources: []lkv1.Source{doc.GetSource()}}, kind)
			if err != nil {
				return "", "", err
			}
			for _, r := range resp.GetResults() {
				all = append(all, listed{Name: r.GetEntity().GetName(), Kind: k, URI: r.GetUri()})
			}
			if cursor = resp.GetNextCursor(); cursor == "" || len(all) >= to {
				break
			}
		}
	}
	items := all[min(from, len(all)):min(to, len(all))]
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", doc.GetName())
	fmt.Fprintf(&b, "Document `%s` (%s), %d entities", doc.GetKey(), doc.GetSource().Slug(), total)
	if doc.GetPublisher() != "" {
		fmt.Fprintf(&b, ", published by %s", doc.GetPublisher())
	}
	fmt.Fprintf(&b, ". Page %d of %d: entities %d to %d.\n", page, pages, from+1, from+len(items))
	kind := ""
	for _, e := range items {
		if e.Kind != kind {
			kind = e.Kind
			fmt.Fprintf(&b, "\n## %s (%d)\n\n", title(strings.ReplaceAll(plural(kind, 2), "-", " ")), d.GetCounts()[kind])
		}
		fmt.Fprintf(&b, "- %s · %s\n", e.Name, e.URI)
	}
	next := ""
	if page < pages {
		next = fmt.Sprintf("%s/%d", documentURI(doc), page+1)
		fmt.Fprintf(&b, "\nNext page: %s\n", next)
	}
	raw, err := json.MarshalIndent(struct {
		Document DocumentInfo `json:"document"`
		Page     int          `json:"page"`
		Pages    int          `json:"pages"`
		Entities []listed     `json:"entities"`
		Next     string       `json:"next,omitempty"`
	}{documentInfo(d), page, pages, items, next}, "", " ")
	if err != nil {
		return "", "", fmt.Errorf("encoding document contents: %w", err)
	}
	return b.String(), string(raw), nil
}

// complete answers completion/complete: the resource templates' arguments
// and every prompt argument, offering only values the prompt or resource
// then accepts. An unknown template, prompt or argument is an invalid
// params error naming what there is.
func (s *Server) complete(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	p := req.Params
	empty := &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{}}}
	var ctxArgs map[string]string
	if p.Context != nil {
		ctxArgs = p.Context.Arguments
	}
	value := p.Argument.Value
	if err := checkCompletionArgs(p.Argument.Name, value, ctxArgs); err != nil {
		return nil, err
	}
	var q *lkv1.CompleteValuesRequest
	accept := func(string) bool { return true }
	switch p.Ref.Type {
	case "ref/resource":
		switch p.Ref.URI + " " + p.Argument.Name {
		case EntityURITemplate + " key":
			if k, err := url.PathUnescape(value); err == nil {
				value = k
			}
			q = &lkv1.CompleteValuesRequest{Field: lkv1.CompletionField_COMPLETION_FIELD_ENTITY_KEY}
		case DocumentURITemplate + " source", DocumentPageURITemplate + " source":
			return staticCompletion(sourceNames, value), nil
		case DocumentURITemplate + " key", DocumentPageURITemplate + " key":
			q = &lkv1.CompleteValuesRequest{Field: lkv1.CompletionField_COMPLETION_FIELD_DOCUMENT}
		case DocumentPageURITemplate + " page":
			// A page's number is the document's to say (its first page
			// names the next).
			return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{}}}, nil
		case EntityURITemplate + " " + p.Argument.Name, DocumentURITemplate + " " + p.Argument.Name, DocumentPageURITemplate + " " + p.Argument.Name:
			return nil, invalidParams(fmt.Sprintf("resource template %s has no argument %q", p.Ref.URI, p.Argument.Name))
		default:
			return nil, invalidParams(fmt.Sprintf("unknown resource template %q; the templates are %s, %s and %s", p.Ref.URI, EntityURITemplate, DocumentURITemplate, DocumentPageURITemplate))
		}
	case "ref/prompt":
		args, ok := s.promptArgs[p.Ref.Name]
		if !ok {
			return nil, invalidParams(fmt.Sprintf("unknown prompt %q; the prompts are %s", p.Ref.Name, strings.Join(sortedKeys(s.promptArgs), ", ")))
		}
		if !slices.Contains(args, p.Argument.Name) {
			return nil, invalidParams(fmt.Sprintf("prompt %s has no argument %q; its arguments are %s", p.Ref.Name, p.Argument.Name, strings.Join(args, ", ")))
		}
		switch p.Ref.Name + "." + p.Argument.Name {
		case PromptCompareEditions + ".name":
			// The names the prompt finds: entities of the editions compared.
			eds := editions[:2]
			if asked, err := parseEditions("edition", ctxArgs["edition"]); err == nil && len(asked) > 0 {
				eds = append([]edition{editions[0]}, asked...)
			}
			docs, err := s.editionDocuments(ctx, eds)
			if err != nil {
				return nil, err
			}
			q = &lkv1.CompleteValuesRequest{Field: lkv1.CompletionField_COMPLETION_FIELD_ENTITY_NAME, Documents: docs}
			if k, ok := lkv1.KindFromSlug(lkv1.Slugify(ctxArgs["kind"])); ok {
				q.Kinds = []lkv1.Kind{k}
			}
		case PromptCompareEditions + ".kind":
			var kinds []string
			for _, k := range lkv1.Kinds() {
				kinds = append(kinds, k.Slug())
			}
			return staticCompletion(kinds, value), nil
		case PromptCompareEditions + ".edition", PromptExplainRule + ".edition":
			return staticCompletion(editionNames, value), nil
		case PromptPlanEncounter + ".difficulty":
			return staticCompletion(encounterDifficulties, value), nil
		case PromptPlanEncounter + ".creature_type":
			q = &lkv1.CompleteValuesRequest{Field: lkv1.CompletionField_COMPLETION_FIELD_CREATURE_TYPE}
			accept = func(v string) bool { return slices.Contains(creatureTypes, v) }
		case PromptPlanEncounter + ".environment":
			q = &lkv1.CompleteValuesRequest{Field: lkv1.CompletionField_COMPLETION_FIELD_ENVIRONMENT}
		case PromptPlanEncounter + ".documents", PromptHomebrewOverview + ".document":
			q = &lkv1.CompleteValuesRequest{Field: lkv1.CompletionField_COMPLETION_FIELD_DOCUMENT}
		case PromptExplainRule + ".topic":
			eds := editions[:2]
			if asked, err := parseEditions("edition", ctxArgs["edition"]); err == nil && len(asked) > 0 {
				eds = asked
			}
			docs, err := s.editionDocuments(ctx, eds)
			if err != nil {
				return nil, err
			}
			q = &lkv1.CompleteValuesRequest{Field: lkv1.CompletionField_COMPLETION_FIELD_ENTITY_NAME, Kinds: lkv1.RuleKinds(), Documents: docs}
		}
	default:
		return nil, invalidParams(fmt.Sprintf("unknown reference type %q; use ref/prompt or ref/resource", p.Ref.Type))
	}
	if q == nil {
		return empty, nil // a free value (party_levels): nothing to offer
	}
	// Lists ("srd-2014,tob"): complete the last item, keep the rest.
	head := ""
	if i := strings.LastIndexAny(value, ","); i >= 0 && q.Field != lkv1.CompletionField_COMPLETION_FIELD_ENTITY_NAME {
		head, value = value[:i+1], strings.TrimSpace(value[i+1:])
	}
	q.Prefix = value
	q.Limit = 100
	ctx, cancel := s.callContext(ctx)
	defer cancel()
	resp, err := s.client.CompleteValues(ctx, q)
	if err != nil {
		if status.Code(err) == codes.InvalidArgument {
			return nil, invalidParams(s.report("completion/complete", err))
		}
		return nil, fmt.Errorf("%s", s.report("completion/complete", err))
	}
	out := &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: make([]string, 0, len(resp.GetValues())), Total: int(resp.GetTotal()), HasMore: resp.GetHasMore()}}
	for _, v := range resp.GetValues() {
		if !accept(v) {
			out.Completion.Total--
			continue
		}
		out.Completion.Values = append(out.Completion.Values, head+v)
	}
	return out, nil
}

// editionDocuments is the document keys of eds' books, for completing the
// names a prompt finds in them.
func (s *Server) editionDocuments(ctx context.Context, eds []edition) ([]string, error) {
	ctx, cancel := s.callContext(ctx)
	defer cancel()
	books, err := s.editionBooks(ctx, eds)
	if err != nil {
		return nil, fmt.Errorf("%s", s.report("completion/complete", err))
	}
	var out []string
	for _, b := range books {
		for _, k := range b {
			if !slices.Contains(out, k) {
				out = append(out, k)
			}
		}
	}
	return out, nil
}

// MaxCompletionArgument is the longest value completion/complete accepts
// for any argument, in characters: the query service's limit on a name.
// A longer one (a list of documents included: every completion repeats
// the list's head) is refused before any work.
const MaxCompletionArgument = 200

// checkCompletionArgs refuses, with invalid params (-32602), an argument
// or context argument longer than MaxCompletionArgument.
func checkCompletionArgs(name, value string, ctxArgs map[string]string) error {
	tooLong := func(arg, v string) error {
		if n := utf8.RuneCountInString(v); n > MaxCompletionArgument {
			return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
				Message: fmt.Sprintf("invalid argument %q: %d characters, at most %d allowed", arg, n, MaxCompletionArgument)}
		}
		return nil
	}
	if err := tooLong(name, value); err != nil {
		return err
	}
	for k, v := range ctxArgs {
		if err := tooLong(k, v); err != nil {
			return err
		}
	}
	return nil
}

// editionNames are the editions completion offers.
var editionNames = []string{"2014", "2024", "a5e"}

// staticCompletion completes from a fixed list.
func staticCompletion(all []string, prefix string) *mcp.CompleteResult {
	prefix = strings.ToLower(strings.TrimSpace(prefix))
	out := &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{}}}
	for _, v := range all {
		if strings.HasPrefix(v, prefix) {
			out.Completion.Values = append(out.Completion.Values, v)
		}
	}
	out.Completion.Total = len(out.Completion.Values)
	return out
}
