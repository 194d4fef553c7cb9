package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"lorekeeper.dev/mcpserver"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

const defaultGRPCAddr = "127.0.0.1:7411"

// clientFlags are the flags of every command that asks a query node.
type clientFlags struct {
	addr    string
	timeout time.Duration
	json    bool
	tls     clientTLSFlags
	// dataDir, for the commands that take --data-dir: without
	// --grpc-addr, the process that owns it is asked (see target).
	dataDir string
	// tokenFile holds the query service's token; without it, the token
	// of the data directory whose owner is asked (ownerDir).
	tokenFile, ownerDir string
	// via says how addr was chosen, for messages.
	via string
	// fs tells which flags were given.
	fs *flagSet
}

func (c *clientFlags) register(fs *flagSet) {
	c.fs = fs
	fs.String(&c.addr, "grpc-addr", defaultGRPCAddr, "query service address (host:port); several, comma-separated, or dns:///name:port for every address of a name, spread calls over query nodes")
	fs.Duration(&c.timeout, "timeout", 10*time.Second, "how long to wait for an answer")
	fs.Bool(&c.json, "json", false, "print JSON instead of text")
	fs.String(&c.tokenFile, "grpc-token-file", "", "file holding the query service's token (default: the one in the data directory of the LoreKeeper asked, "+filepath.Join("<data-dir>", credentialsDir, grpcToken)+")")
	c.tls.register(fs)
}

// makeRunDataDir is make run's data directory, relative to where it runs.
const makeRunDataDir = "data"

// registerDataDir adds --data-dir, for the commands people run against a
// local LoreKeeper.
func (c *clientFlags) registerDataDir(fs *flagSet) {
	fs.String(&c.dataDir, "data-dir", defaultDataDir(), "without --grpc-addr, ask the LoreKeeper process that owns this data directory (a standalone MCP server or lorekeeper up; its lock file names its address)")
}

// target decides which query service to ask: --grpc-addr when given;
// else the process owning --data-dir, at the address its lock file names.
// An owner that is still starting is an error that says what it is doing,
// never a reason to ask another address; with no owner at all the default
// address is asked only when --data-dir was not given, and via says so.
// It returns the owner, if any.
func (c *clientFlags) target() (lockInfo, error) {
	c.via = "--grpc-addr"
	if c.fs == nil || c.fs.isSet("grpc-addr") || c.dataDir == "" {
		return lockInfo{}, nil
	}
	info, held := readLock(c.dataDir)
	if !held && !c.fs.isSet("data-dir") {
		// make run's LoreKeeper, asked from the repository.
		if mr, ok := readLock(makeRunDataDir); ok && mr.GRPCAddr != "" {
			c.addr, c.via, c.ownerDir = mr.GRPCAddr, "the lock file of ./"+makeRunDataDir+" (make run's), as no LoreKeeper process owns the default data directory "+c.dataDir, makeRunDataDir
			return mr, nil
		}
	}
	switch {
	case held && info.GRPCAddr != "":
		c.addr, c.via, c.ownerDir = info.GRPCAddr, "the lock file of "+c.dataDir, c.dataDir
		return info, nil
	case held:
		state := info.State
		if state == "" {
			state = "its query service is not listening yet"
		}
		return info, fmt.Errorf("LoreKeeper process %d (lorekeeper %s) owns %s and is starting: %s.\nAsk again in a moment; no other server was asked", info.PID, info.Command, c.dataDir, state)
	}
	gone := ""
	if info.PID != 0 {
		gone = fmt.Sprintf(" (process %d, which did, has exited)", info.PID)
	}
	if c.fs.isSet("data-dir") {
		return info, fmt.Errorf("no LoreKeeper process owns %s%s: start one on it (lorekeeper mcp --standalone or lorekeeper up, with --data-dir %s), or give --grpc-addr", c.dataDir, gone, c.dataDir)
	}
	c.via = fmt.Sprintf("the default address, as no LoreKeeper process owns the default data directory %s%s", c.dataDir, gone)
	return info, nil
}

// token is the query service's token: --grpc-token-file's, else that of
// the data directory whose owner is asked, else none.
func (c *clientFlags) token() (string, error) {
	if c.tokenFile != "" {
		tok, err := readToken(c.tokenFile)
		if err != nil {
			return "", fmt.Errorf("--grpc-token-file: %w", err)
		}
		return tok, nil
	}
	dir := c.ownerDir
	if dir == "" && c.fs != nil && c.fs.isSet("data-dir") {
		dir = c.dataDir // --grpc-addr and the --data-dir of what serves it
	}
	if dir != "" {
		if tok, err := readToken(tokenPath(dir, grpcToken)); err == nil {
			return tok, nil
		}
	}
	return "", nil
}

func (c *clientFlags) dial() (lkv1.QueryServiceClient, func(), error) {
	tok, err := c.token()
	if err != nil {
		return nil, nil, err
	}
	conn, client, err := dialQuery(c.addr, &c.tls, tok)
	if err != nil {
		return nil, nil, err
	}
	return client, func() { conn.Close() }, nil
}

// unreachable turns a failed call into what a person can act on: advice
// when the service cannot be reached, the service's own message otherwise.
func (c *clientFlags) unreachable(err error) error {
	st, ok := status.FromError(err)
	switch {
	case !ok:
		return err
	case st.Code() == codes.Unavailable || st.Code() == codes.DeadlineExceeded:
		return fmt.Errorf("the query service at %s (%s) does not answer: %s\n(is LoreKeeper running? start it with `make run` or `lorekeeper up`, or point --grpc-addr at a node)", c.addr, c.via, st.Message())
	default:
		return errors.New(st.Message())
	}
}

// server names the server that answers at the target: its process, data
// directory and address.
func (c *clientFlags) server(s *lkv1.StatusResponse) string {
	out := fmt.Sprintf("LoreKeeper %s at %s (%s)", s.GetVersion(), c.addr, c.via)
	if s.GetPid() != 0 {
		out += fmt.Sprintf(", process %d", s.GetPid())
	}
	if s.GetDataDir() != "" {
		out += ", data in " + s.GetDataDir()
	}
	return out
}

var jsonOut = protojson.MarshalOptions{Multiline: true, Indent: "  ", EmitUnpopulated: false}

// ask makes one call to the query service within --timeout, and says on
// stderr which server answered. With --json it prints the answer itself
// and reports done; otherwise the caller prints.
func ask[T proto.Message](ctx context.Context, cf *clientFlags, stdout, stderr io.Writer, call func(context.Context, lkv1.QueryServiceClient) (T, error)) (resp T, done bool, err error) {
	if _, err := cf.target(); err != nil {
		return resp, false, err
	}
	client, closeConn, err := cf.dial()
	if err != nil {
		return resp, false, err
	}
	defer closeConn()
	ctx, cancel := context.WithTimeout(ctx, cf.timeout)
	defer cancel()
	if resp, err = call(ctx, client); err != nil {
		return resp, false, cf.unreachable(err)
	}
	if s, err := client.Status(ctx, &lkv1.StatusRequest{}); err == nil {
		fmt.Fprintln(stderr, "Answered by", cf.server(s))
	}
	if !cf.json {
		return resp, false, nil
	}
	b, err := jsonOut.Marshal(resp)
	if err != nil {
		return resp, false, err
	}
	fmt.Fprintln(stdout, string(b))
	return resp, true, nil
}

func runSearch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("search", `Usage: lorekeeper search [flags] QUERY

Searches every kind of content (spells, creatures, items, rules, ...) by
meaning, keywords and typo-tolerant names, and prints the best results per kind.`, stderr)
	var cf clientFlags
	cf.register(fs)
	cf.registerDataDir(fs)
	var limit int
	var kinds, docs string
	var keyword bool
	fs.Int(&limit, "limit", 5, "results per kind")
	fs.String(&kinds, "kinds", "", "comma-separated kinds to search, e.g. spell,creature (default all)")
	fs.String(&docs, "documents", "", "comma-separated document keys, e.g. srd-2014 (default all)")
	fs.Bool(&keyword, "keyword", false, "keyword and name matching only, no semantic ranking")
	if err := fs.parse(args); err != nil {
		return err
	}
	query := strings.Join(fs.Args(), " ")
	if query == "" {
		fs.Usage()
		return errUsage
	}
	req := &lkv1.SearchRequest{Query: query, Limit: uint32(max(limit, 0))}
	for _, k := range splitList(kinds) {
		kind, ok := lkv1.KindFromSlug(k)
		if !ok {
			return fmt.Errorf("--kinds: unknown kind %q", k)
		}
		req.Kinds = append(req.Kinds, kind)
	}
	if docs != "" {
		req.Documents = &lkv1.DocumentFilter{Documents: splitList(docs)}
	}
	if keyword {
		f := false
		req.Semantic = &f
	}
	resp, done, err := ask(ctx, &cf, stdout, stderr, func(ctx context.Context, c lkv1.QueryServiceClient) (*lkv1.SearchResponse, error) {
		return c.Search(ctx, req)
	})
	if done || err != nil {
		return err
	}
	for _, w := range resp.GetWarnings() {
		fmt.Fprintln(stderr, "warning:", w)
	}
	if r := resp.GetFallbackReason(); r != "" {
		fmt.Fprintln(stderr, "note: keyword ranking only:", r)
	}
	if len(resp.GetGroups()) == 0 {
		fmt.Fprintln(stdout, "No results.")
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	for _, g := range resp.GetGroups() {
		fmt.Fprintf(tw, "%s\n", strings.ToUpper(g.GetKind().Slug()))
		for _, r := range g.GetResults() {
			e := r.GetEntity()
			score := ""
			if r.SimilarityScore != nil {
				score = fmt.Sprintf("%.3f", r.GetSimilarityScore())
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", e.GetName(), e.GetDocument().GetKey(), score, e.GetKey())
		}
	}
	return tw.Flush()
}

func runGet(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("get", `Usage: lorekeeper get [flags] KEY|URI

Prints one entity, by key (open5e_v2:srd-2014:spell:fireball) or by URI
(lorekeeper://entity/...). Keys are shown by search.`, stderr)
	var cf clientFlags
	cf.register(fs)
	cf.registerDataDir(fs)
	if err := fs.parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errUsage
	}
	resp, done, err := ask(ctx, &cf, stdout, stderr, func(ctx context.Context, c lkv1.QueryServiceClient) (*lkv1.GetEntityResponse, error) {
		return c.GetEntity(ctx, &lkv1.GetEntityRequest{Key: fs.Arg(0)})
	})
	if done || err != nil {
		return err
	}
	// The card MCP shows: stat line, blocks, corrections and citation.
	_, err = io.WriteString(stdout, mcpserver.Card(resp.GetEntity(), resp.GetUri()))
	return err
}

func runDocs(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("docs", `Usage: lorekeeper docs [flags]

Lists the source documents LoreKeeper holds, largest first.`, stderr)
	var cf clientFlags
	cf.register(fs)
	cf.registerDataDir(fs)
	var source string
	fs.String(&source, "source", "", "only this source: open5e_v1, open5e_v2, orcbrew or srd_text")
	if err := fs.parse(args); err != nil {
		return err
	}
	req := &lkv1.ListDocumentsRequest{}
	if source != "" {
		s, ok := lkv1.SourceFromSlug(source)
		if !ok {
			return fmt.Errorf("--source: %q is not one of open5e_v1, open5e_v2, orcbrew, srd_text", source)
		}
		req.Sources = []lkv1.Source{s}
	}
	resp, done, err := ask(ctx, &cf, stdout, stderr, func(ctx context.Context, c lkv1.QueryServiceClient) (*lkv1.ListDocumentsResponse, error) {
		return c.ListDocuments(ctx, req)
	})
	if done || err != nil {
		return err
	}
	if len(resp.GetDocuments()) == 0 {
		fmt.Fprintln(stdout, "No documents yet: the first sync may still be running (see lorekeeper status).")
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tNAME\tSOURCE\tSYSTEM\tENTITIES\tLICENSE")
	for _, d := range resp.GetDocuments() {
		doc := d.GetDocument()
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\n", doc.GetKey(), doc.GetName(), doc.GetSource().Slug(),
			doc.GetGameSystem(), d.GetEntityCount(), strings.Join(doc.GetLicenses(), ", "))
	}
	return tw.Flush()
}

// statusReport is what `lorekeeper status --json` prints.
type statusReport struct {
	Node    json.RawMessage   `json:"node,omitempty"`
	Syncs   []json.RawMessage `json:"syncs,omitempty"`
	Imports []json.RawMessage `json:"imports,omitempty"`
}

func runStatus(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("status", `Usage: lorekeeper status [flags]

Shows what the query node holds (entities, vectors, model, lag) and, from
NATS, the state of each Open5e endpoint's sync and each OrcBrew import.`, stderr)
	var cf clientFlags
	cf.register(fs)
	cf.registerDataDir(fs)
	var nf natsFlags
	nf.register(fs)
	if err := fs.parse(args); err != nil {
		return err
	}
	owner, err := cf.target()
	if err != nil {
		return err
	}
	standalone := owner.GRPCAddr != "" && owner.Command == standaloneCommand && !fs.isSet("grpc-addr")
	client, closeConn, err := cf.dial()
	if err != nil {
		return err
	}
	defer closeConn()
	ctx, cancel := context.WithTimeout(ctx, cf.timeout)
	defer cancel()
	var report statusReport
	node, nodeErr := client.Status(ctx, &lkv1.StatusRequest{})
	var syncs []*lkv1.EndpointState
	var imports []*lkv1.ImportState
	var stateErr error
	// The state comes from the node itself, which knows its NATS, or from
	// the NATS named here; never from a default NATS that may be another
	// instance's.
	switch is := node.GetIngestState(); {
	case fs.isSet("nats-url"):
		syncs, imports, stateErr = readState(ctx, &nf)
	case is != nil:
		syncs, imports = is.GetOpen5E(), is.GetOrcbrew()
		switch is.GetError() {
		case "":
		case errNotConnected:
			stateErr = fmt.Errorf("NATS: not connected (the query node's NATS at %s is down; the node answers from what it has stored and reconnects by itself)", is.GetNatsUrl())
		default:
			stateErr = fmt.Errorf("the query node could not read it from NATS at %s: %s", is.GetNatsUrl(), is.GetError())
		}
	case standalone:
		stateErr = fmt.Errorf("NATS runs inside the standalone process %d, without a listener; its log is %s", owner.PID, filepath.Join(cf.dataDir, "lorekeeper.log"))
	case !fs.isSet("grpc-addr"):
		// Both defaults name the same local instance.
		nf.useOwner(fs, cf.ownerDir)
		syncs, imports, stateErr = readState(ctx, &nf)
	default:
		stateErr = errors.New("the query node did not report it; give --nats-url (the NATS that node consumes from) to read it there")
	}
	if cf.json {
		if nodeErr == nil {
			report.Node, _ = protojson.Marshal(node)
		}
		for _, s := range syncs {
			s.Entities, s.Generations = nil, nil // thousands of hashes; not for people
			b, _ := protojson.Marshal(s)
			report.Syncs = append(report.Syncs, b)
		}
		for _, s := range imports {
			s.EntityKeys = nil
			b, _ := protojson.Marshal(s)
			report.Imports = append(report.Imports, b)
		}
		b, _ := json.MarshalIndent(report, "", "  ")
		fmt.Fprintln(stdout, string(b))
	} else {
		if nodeErr == nil {
			fmt.Fprintln(stdout, "Answered by", cf.server(node))
		}
		printStatus(stdout, node, nodeErr, syncs, imports, stateErr)
		if p := node.GetIngestState().GetStoreProblem(); p != "" {
			fmt.Fprintf(stdout, "\nNATS store: %s\n", p)
		}
		if nodeErr != nil {
			fmt.Fprintf(stdout, "\nThe default data directory is %s (used by lorekeeper mcp --standalone and lorekeeper up without --data-dir).\n", defaultDataDir())
		}
	}
	if nodeErr != nil {
		return cf.unreachable(nodeErr)
	}
	return nil
}

func printStatus(w io.Writer, node *lkv1.StatusResponse, nodeErr error, syncs []*lkv1.EndpointState, imports []*lkv1.ImportState, stateErr error) {
	if nodeErr != nil {
		fmt.Fprintf(w, "Query node: unreachable: %v\n", nodeErr)
	} else {
		fmt.Fprintf(w, "Query node (%s)\n  entities %d, vectors %d, pending %d\n  model %s (%d dimensions), vector index %s, semantic search %s\n",
			node.GetVersion(), node.GetEntities(), node.GetVectors(), node.GetPending(),
			node.GetEmbeddingModel(), node.GetEmbeddingDimensions(), node.GetVectorBackend(),
			map[bool]string{true: "available", false: "unavailable"}[node.GetSemanticAvailable()])
		if node.GetDataDir() != "" {
			fmt.Fprintf(w, "  data in %s (homebrew: drop .orcbrew files into its orcbrew folder)\n  model files in %s\n", node.GetDataDir(), node.GetModelDir())
		}
		kinds := make([]string, 0, len(node.GetCounts()))
		for k := range node.GetCounts() {
			kinds = append(kinds, k)
		}
		sort.Strings(kinds)
		for _, k := range kinds {
			fmt.Fprintf(w, "    %-16s %d\n", k, node.GetCounts()[k])
		}
	}
	if stateErr != nil {
		fmt.Fprintf(w, "Sync and import state: unavailable: %v\n", stateErr)
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if len(syncs) > 0 {
		fmt.Fprintln(tw, "\nOpen5e endpoint\tlast success\tentities\tlast error")
		for _, s := range syncs {
			last := "never"
			if s.GetLastSuccess() != nil {
				last = s.GetLastSuccess().AsTime().Local().Format(time.DateTime)
			}
			n := uint64(len(s.GetEntities()))
			if n == 0 {
				n = s.GetEntityCount()
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", s.GetEndpoint(), last, n, s.GetLastError())
		}
	}
	if len(imports) > 0 {
		fmt.Fprintln(tw, "\nOrcBrew object\tstatus\tentities\tbooks\terror")
		for _, s := range imports {
			var n uint64
			for _, c := range s.GetCounts() {
				n += c
			}
			status := strings.ToLower(strings.TrimPrefix(s.GetStatus().String(), "STATUS_"))
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", s.GetObject(), status, n, strings.Join(s.GetBooks(), ", "), s.GetError())
		}
	}
	tw.Flush()
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
