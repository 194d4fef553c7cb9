package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"reflect"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// Options configure a Server. A nil *Options, and every zero field, means
// the default.
type Options struct {
	// Logger receives tool failures with their detail. Default: discard.
	Logger *slog.Logger
	// Metrics records tool calls; see NewMetrics. Default: none.
	Metrics *Metrics
	// Version is reported to clients in serverInfo. Default "dev".
	Version string
	// CallTimeout bounds one query service call when the caller's context
	// has no deadline. Default 10s.
	CallTimeout time.Duration
	// MaxAnswerBytes bounds one tool call's answer (its text and its
	// structured content): a larger one is replaced by an error result
	// saying how to ask for less. Default DefaultMaxAnswerBytes.
	MaxAnswerBytes int
}

// DefaultMaxAnswerBytes is several times the largest answer the tools give
// within their limits (100 creatures' stat blocks in full: about 1 MB).
const DefaultMaxAnswerBytes = 4 << 20

// Server is the LoreKeeper MCP server: the seven tools and the entity
// resource template, answered through the query service. One Server serves
// any number of sessions and transports at once.
type Server struct {
	client  lkv1.QueryServiceClient
	log     *slog.Logger
	metrics *Metrics
	timeout time.Duration
	// maxAnswer is Options.MaxAnswerBytes.
	maxAnswer int
	mcp       *mcp.Server
	// params lists each tool's parameters, in schema order, for error
	// messages.
	params map[string][]string
	// numbers are each tool's numeric parameters (true: whole numbers),
	// checked before the SDK decodes them.
	numbers map[string]map[string]bool
	// promptArgs lists each prompt's arguments, for completion.
	promptArgs map[string][]string
	docs       documents
}

// PageSize is how many items resources/list (and the other MCP lists)
// return per page; the rest follow with MCP cursors.
const PageSize = 25

// EntityURITemplate is the resource template for one entity.
const EntityURITemplate = "lorekeeper://entity/{key}"

const instructions = `LoreKeeper answers questions about D&D 5e content (Open5e SRD and published books, plus imported OrcBrew homebrew) with citations.
Pick the narrowest tool: lookup_spell, lookup_creature, lookup_equipment, lookup_character_option, lookup_rule when you know the kind of thing; search_dnd_content for anything else or across kinds; list_documents to see which books are loaded and their keys for the documents filter.
Names match case-insensitively; use * as a wildcard for partial names. Names are matched as typed, then as slugs, then as the names players know from the books ("Tasha's Hideous Laughter" finds the SRD's Hideous Laughter; spells renamed between SRD 5.1 and 5.2 find each other), in the singular or the plural alike. When nothing matches, the result is empty with suggestions: the closest names (typo-tolerant, "firebal" -> Fireball) among the entities passing the other filters, and for well-known names outside open content ("beholder") a plain statement of that with the nearest open content. A name found in several books gives one result, the SRD 5.1's (else the SRD 5.2's, else the first book's), with the other books' copies as alternates (each with a URI); documents=[...] or game_system picks another book's. Use semantic_query to find things by meaning.
Answers are sized to hold: by default the first results (up to 3) come as full cards and the rest one line each; read a URI, or pass detail="full", for all of them in full. Cite results by their document_name and lorekeeper:// URI; read a URI as a resource for the full entity.`

// New returns a Server that answers through client.
func New(client lkv1.QueryServiceClient, opts *Options) *Server {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = 10 * time.Second
	}
	if o.MaxAnswerBytes <= 0 {
		o.MaxAnswerBytes = DefaultMaxAnswerBytes
	}
	s := &Server{client: client, log: o.Logger, metrics: o.Metrics, timeout: o.CallTimeout, maxAnswer: o.MaxAnswerBytes, params: map[string][]string{}, numbers: map[string]map[string]bool{}, promptArgs: map[string][]string{}}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "lorekeeper", Title: "LoreKeeper", Version: o.Version}, &mcp.ServerOptions{
		Instructions: instructions,
		Logger:       sdkLogger(o.Logger),
		SchemaCache:  mcp.NewSchemaCache(),
		PageSize:     PageSize,
		CompletionHandler: func(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			return s.complete(ctx, req)
		},
	})
	s.mcp.AddReceivingMiddleware(s.recoverMiddleware, uriMiddleware, setLevelMiddleware, s.toolMiddleware, s.resourceNotFoundMiddleware, entityURIMiddleware, s.documentsMiddleware)
	s.addTools()
	s.addPrompts()
	tools := make([]string, 0, len(s.params))
	for name := range s.params {
		tools = append(tools, name)
	}
	s.metrics.initTools(tools)
	s.mcp.AddResourceTemplate(&mcp.ResourceTemplate{
		Name:        "entity",
		Title:       "LoreKeeper entity",
		URITemplate: EntityURITemplate,
		Description: "One D&D entity (spell, creature, item, rule, ...) by key, as a markdown card and as JSON. Keys and URIs come from tool results, e.g. lorekeeper://entity/open5e_v2:srd-2014:spell:fireball.",
	}, s.readEntity)
	s.mcp.AddResourceTemplate(&mcp.ResourceTemplate{
		Name:        "document",
		Title:       "LoreKeeper document",
		URITemplate: DocumentURITemplate,
		MIMEType:    "text/markdown",
		Description: "One source document (book or OrcBrew import) by source and key: every entity it holds, by kind in name order, with a URI each, as markdown and JSON, a page of up to 250 (the next page's URI ends in /2, /3, ...). resources/list lists them, e.g. lorekeeper://document/open5e_v2/srd-2014.",
	}, s.readDocument)
	s.mcp.AddResourceTemplate(&mcp.ResourceTemplate{
		Name:        "document-page",
		Title:       "LoreKeeper document, a page",
		URITemplate: DocumentPageURITemplate,
		MIMEType:    "text/markdown",
		Description: "A later page of a document's entities: lorekeeper://document/open5e_v2/srd-2014/2.",
	}, s.readDocument)
	return s
}

// sdkLogger is the logger the SDK gets: its INFO lines are per session
// ("server session connected", "session initialized", ...), one or more
// for every client connection, so they go to debug; warnings and errors
// keep their level, except its failures to notify a session (a client that
// went away without closing its session, until the session expires), one
// warning per dead session per change: at most one of those a minute is
// logged, with how many were left out.
func sdkLogger(log *slog.Logger) *slog.Logger {
	return slog.New(demoteInfo{log.Handler(), &notifyFailures{now: time.Now}})
}

// notifyFailureEvery is how often a failure to notify a session is logged.
const notifyFailureEvery = time.Minute

// notifyFailures rate-limits the SDK's "calling notifications/...: err"
// warnings.
type notifyFailures struct {
	mu      sync.Mutex
	now     func() time.Time
	last    time.Time
	dropped int
}

// admit reports whether to log a notify failure now, and how many were
// left out since the last one logged.
func (n *notifyFailures) admit() (ok bool, dropped int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if now := n.now(); n.last.IsZero() || now.Sub(n.last) >= notifyFailureEvery {
		n.last, dropped, n.dropped = now, n.dropped, 0
		return true, dropped
	}
	n.dropped++
	return false, 0
}

// demoteInfo logs INFO records at DEBUG, and notify failures sparingly.
type demoteInfo struct {
	slog.Handler
	notify *notifyFailures
}

func (h demoteInfo) Enabled(ctx context.Context, l slog.Level) bool {
	if l == slog.LevelInfo {
		l = slog.LevelDebug
	}
	return h.Handler.Enabled(ctx, l)
}

func (h demoteInfo) Handle(ctx context.Context, r slog.Record) error {
	if r.Level == slog.LevelInfo {
		r.Level = slog.LevelDebug
	}
	if strings.HasPrefix(r.Message, "calling notifications/") {
		ok, dropped := h.notify.admit()
		if !ok {
			return nil
		}
		r = r.Clone()
		r.AddAttrs(slog.Int("like_this_not_logged", dropped),
			slog.String("why", "a client left without closing its session; the session expires after the MCP session timeout"))
	}
	return h.Handler.Handle(ctx, r)
}

func (h demoteInfo) WithAttrs(as []slog.Attr) slog.Handler {
	return demoteInfo{h.Handler.WithAttrs(as), h.notify}
}

func (h demoteInfo) WithGroup(name string) slog.Handler {
	return demoteInfo{h.Handler.WithGroup(name), h.notify}
}

// MCP returns the underlying SDK server, for transports New does not wire.
func (s *Server) MCP() *mcp.Server { return s.mcp }

// RunStdio serves one session over stdin/stdout until ctx is done or the
// client disconnects.
func (s *Server) RunStdio(ctx context.Context) error {
	return s.RunIO(ctx, os.Stdin, os.Stdout)
}

// RunIO serves one session over r and w (newline-delimited JSON-RPC, as
// stdio) until ctx is done or r reaches EOF. It closes neither. A line
// that is not a JSON-RPC message gets an error response and the session
// goes on (guardLines).
func (s *Server) RunIO(ctx context.Context, r io.Reader, w io.Writer) error {
	gr, gw := guardLines(r, w, s.log)
	defer func() { _ = gr.Close() }() // unblocks the guard once the session is over
	err := s.mcp.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(gr), Writer: nopWriteCloser{gw}})
	if err != nil && ctx.Err() != nil {
		return nil
	}
	return err
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// readOnly are the annotations of every tool: they only read.
func readOnly(title string) *mcp.ToolAnnotations {
	f := false
	return &mcp.ToolAnnotations{Title: title, ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: &f}
}

// inputSchema infers T's schema, widening the types that accept more than
// one JSON type and describing the shared parameters.
func inputSchema[T any]() *jsonschema.Schema {
	s, err := jsonschema.For[T](&jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[ChallengeRating](): {Types: []string{"number", "string"}},
		reflect.TypeFor[Attunement]():      {Types: []string{"boolean", "string"}},
	}})
	if err != nil {
		panic(fmt.Sprintf("mcpserver: schema of %T: %v", *new(T), err))
	}
	for name, p := range s.Properties {
		if p.Description == "" {
			p.Description = sharedParams[name]
		}
	}
	return s
}

// addTool adds a typed tool with the input schema inferred from In and
// records its parameters for error messages.
func addTool[In, Out any](s *Server, t *mcp.Tool, h mcp.ToolHandlerFor[In, Out]) {
	sch := inputSchema[In]()
	t.InputSchema = sch
	if t.Title == "" && t.Annotations != nil {
		t.Title = t.Annotations.Title
	}
	t.OutputSchema = outputSchema[Out]()
	s.params[t.Name] = sch.PropertyOrder
	s.numbers[t.Name] = numericParams(sch)
	resolved, err := sch.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
	if err != nil {
		panic(fmt.Sprintf("mcpserver: input schema of %s: %v", t.Name, err))
	}
	s.mcp.AddTool(t, typedHandler(resolved, h))
}

// outputSchema infers Out's schema (Out is a pointer to a struct) and
// shortens it: arrays of objects keep their description but not their items'
// properties, which would repeat the whole entity schema in every tool
// (tens of kilobytes an assistant would read with each tools/list). The
// entity fields are documented by the Entity type and its JSON resource.
func outputSchema[Out any]() *jsonschema.Schema {
	sch, err := jsonschema.For[Out](nil)
	if err != nil {
		panic(fmt.Sprintf("mcpserver: output schema of %T: %v", *new(Out), err))
	}
	// For a pointer type the schema allows null; a tool's output is an object.
	sch.Types, sch.Type = nil, "object"
	for _, p := range sch.Properties {
		if p.Items != nil && (p.Items.Type == "object" || len(p.Items.Properties) > 0) {
			p.Items = &jsonschema.Schema{Type: "object"}
		}
	}
	return sch
}

// nameHelp tells every lookup tool's caller what a name that matches
// nothing gets back; the server's instructions say it at length, once.
const nameHelp = `Names also match the books' names ("Tasha's Hideous Laughter" finds Hideous Laughter); no match returns did-you-mean suggestions.`

func (s *Server) addTools() {
	addTool(s, &mcp.Tool{
		Name:        "lookup_spell",
		Annotations: readOnly("Look up spells"),
		Description: `Find D&D 5e spells and return full spell cards: level, school, casting time, range, components, duration, concentration, ritual, classes, damage and save, description and "At Higher Levels".
Use it for "What does Fireball do?" (name="fireball"), "3rd-level wizard evocation spells" (level=3, class_key="wizard", school="evocation"), "concentration spells" (concentration=true), or by meaning: semantic_query="stop enemies from moving".
Every filter is optional and they combine (AND). Results cite their source document.
` + nameHelp,
	}, tool(s, "lookup_spell", "spell", func(ctx context.Context, in SpellInput) (*lkv1.LookupResponse, error) {
		req, err := in.request()
		if err != nil {
			return nil, err
		}
		req.Common.Cursor = in.Cursor
		return s.client.LookupSpells(ctx, req)
	}))
	addTool(s, &mcp.Tool{
		Name:        "lookup_creature",
		Annotations: readOnly("Look up creatures"),
		Description: `Find D&D 5e monsters and creatures and return full stat blocks: AC, HP, speed, ability scores with modifiers, saves, skills, resistances and immunities, senses, languages, challenge rating, traits, actions, reactions, legendary and lair actions.
Use it for "Show me the Ancient Red Dragon" (name="ancient red dragon"), "CR 5 undead" (cr=5, type="undead"), "Medium beasts CR 1 or less" (cr_max=1, type="beast", size="medium"), or by meaning: semantic_query="stealthy hunters that attack by surprise".
Filters combine (AND). One stat block per name; other books' copies are alternates.
` + nameHelp,
	}, tool(s, "lookup_creature", "creature", func(ctx context.Context, in CreatureInput) (*lkv1.LookupResponse, error) {
		req, err := in.request()
		if err != nil {
			return nil, err
		}
		req.Common.Cursor = in.Cursor
		return s.client.LookupCreatures(ctx, req)
	}))
	addTool(s, &mcp.Tool{
		Name:        "lookup_equipment",
		Annotations: readOnly("Look up equipment"),
		Description: `Find weapons, armor, magic items and adventuring gear, returned as item cards: damage and properties, AC and Strength/Stealth, rarity and attunement, cost and weight, description.
Use it for "Longsword damage" (type="weapon", name="longsword"), "rare magic items" (type="magic-item", rarity="rare"), "light armor" (type="armor", armor_category="light"), "What does a Bag of Holding do?" (name="bag of holding"), "finesse light weapons" (is_finesse=true, is_light=true), or semantic_query="magic items for exploration".
type is weapon, armor, magic-item, item or all (default). Every filter is optional and they combine (AND).
` + nameHelp,
	}, tool(s, "lookup_equipment", "item", func(ctx context.Context, in EquipmentInput) (*lkv1.LookupResponse, error) {
		req, err := in.request()
		if err != nil {
			return nil, err
		}
		req.Common.Cursor = in.Cursor
		return s.client.LookupEquipment(ctx, req)
	}, func(ctx context.Context, in EquipmentInput, out *LookupOutput) {
		if req, err := in.request(); err == nil && in.Cursor == "" {
			out.Variants = s.variants(ctx, req, out.Results)
		}
	}))
	addTool(s, &mcp.Tool{
		Name:        "lookup_character_option",
		Annotations: readOnly("Look up character options"),
		Description: `Find character creation and advancement options: classes (features, hit dice, proficiencies), subclasses, races/species and subraces (traits), backgrounds, feats (prerequisites, benefits), and homebrew invocations, boons and selections.
Use it for "What features does a Paladin get?" (type="class", name="paladin"), "Eldritch Knight" (type="subclass", name="eldritch knight"), "Half-Elf traits" (type="race", name="half-elf"), "the Sharpshooter feat" (type="feat", name="sharpshooter"), or semantic_query="divine warrior". type is optional: omit it to search every kind of option.
` + nameHelp,
	}, tool(s, "lookup_character_option", "character option", func(ctx context.Context, in CharacterOptionInput) (*lkv1.LookupResponse, error) {
		req, err := in.request()
		if err != nil {
			return nil, err
		}
		req.Common.Cursor = in.Cursor
		return s.client.LookupCharacterOptions(ctx, req)
	}))
	addTool(s, &mcp.Tool{
		Name:        "lookup_rule",
		Annotations: readOnly("Look up rules"),
		Description: `Find game rules and reference entries: rules and rule sections, conditions, damage types, weapon properties, skills, ability scores, magic schools, languages, proficiencies, alignments.
Use it for "What does Grappled do?" (rule_type="condition", name="grappled"), "opportunity attacks" (rule_type="rule", name="opportunity attack*"), "radiant damage" (rule_type="damage-type", name="radiant"), "the Stealth skill" (rule_type="skill", name="stealth"), or semantic_query="what happens when I fall". rule_type is optional: omit it to search every kind.
Conditions and skills exist per edition: game_system picks one (SRD 5.1's first by default).
` + nameHelp,
	}, tool(s, "lookup_rule", "rule", func(ctx context.Context, in RuleInput) (*lkv1.LookupResponse, error) {
		req, err := in.request()
		if err != nil {
			return nil, err
		}
		req.Common.Cursor = in.Cursor
		return s.client.LookupRules(ctx, req)
	}, s.otherEditions))
	addTool(s, &mcp.Tool{
		Name:        "search_dnd_content",
		Annotations: readOnly("Search all D&D content"),
		Description: `Search every kind of D&D content at once (spells, creatures, equipment, character options, rules, ...) by meaning, keyword and typo-tolerant name, with results grouped by type and a lorekeeper:// URI for each.
Use it when the kind is unknown or mixed: "fire damage", "bigbys hand" (names from the books find the SRD's; a well-known name no open book carries, like "beholder", is said to be so), "healing magic" with entity_types=["spells","magicitems"], "dragon breath" with documents=["srd-2014"], or a misspelt name ("firbal"); filter words ("CR 5 undead from the SRD", "monsters with legendary actions CR 10 or lower") rank matches first (see understood). semantic=false gives keyword/name matching only. limit is per type. Follow up with a lookup_* tool or read the URI for full details.`,
	}, s.search)
	addTool(s, &mcp.Tool{
		Name:        "list_documents",
		Annotations: readOnly("List source documents"),
		Description: `List the source documents (books) LoreKeeper holds, with their key, name, source (open5e_v1, open5e_v2, orcbrew, srd_text), publisher, licence, game system and entity counts by type, largest first. Only documents already loaded are listed.
Use it to find the keys for the documents filter of the other tools, e.g. to restrict to the SRD (srd-2014) or to homebrew (source="orcbrew"). format="json": the JSON as text too.`,
	}, s.listDocuments)
}

// lookupFunc calls one lookup RPC with validated arguments.
type lookupFunc[In any] func(ctx context.Context, in In) (*lkv1.LookupResponse, error)

// tool wraps a lookup RPC into a typed tool handler: validation, the call,
// the structured result and its markdown, errors, metrics.
//
// after, if given, completes the output before it is rendered.
func tool[In any](s *Server, name, noun string, call lookupFunc[In], after ...func(context.Context, In, *LookupOutput)) mcp.ToolHandlerFor[In, *LookupOutput] {
	return func(ctx context.Context, _ *mcp.CallToolRequest, in In) (*mcp.CallToolResult, *LookupOutput, error) {
		mode, err := detailArg(any(in))
		if err != nil {
			return fail[LookupOutput](s, name, err)
		}
		ctx, cancel := s.callContext(ctx)
		defer cancel()
		resp, err := call(ctx, in)
		if err != nil {
			return fail[LookupOutput](s, name, err)
		}
		out := &LookupOutput{
			Results:        make([]Entity, 0, len(resp.GetResults())),
			Ranking:        rankingName(resp.GetRanking()),
			FallbackReason: resp.GetFallbackReason(),
			Warnings:       resp.GetWarnings(),
			NameMatch:      resp.GetNameMatch(),
			MatchedAlias:   resp.GetMatchedAlias(),
			NotOpenContent: resp.GetNotOpenContent(),
			Understood:     understoodOf(resp.GetUnderstood()),
			understood:     resp.GetUnderstood(),
			NextCursor:     resp.GetNextCursor(),
			Total:          resp.GetTotal(),
		}
		for _, r := range resp.GetResults() {
			out.Results = append(out.Results, entityFromResult(r))
		}
		for _, sg := range resp.GetSuggestions() {
			out.Suggestions = append(out.Suggestions, Suggestion{Name: sg.GetName(), Key: sg.GetKey(), URI: sg.GetUri(),
				Document: sg.GetDocumentKey(), DocumentName: sg.GetDocumentName(), Score: sg.GetScore(), Via: sg.GetVia()})
		}
		out.Count = len(out.Results)
		if out.NameMatch == "part" {
			out.Part = nameArgument(any(in))
		}
		for _, f := range after {
			f(ctx, in, out)
		}
		links := resourceLinks(out.Results)
		if out.Count == 0 {
			out.Message = noMatchMessage(noun, nameArgument(any(in)), out)
		}
		s.logNotes(name, out.FallbackReason, out.Warnings)
		switch mode {
		case detailSummary:
			out.Results = summaries(out.Results)
			return withLinks(textResult(renderSummaries(noun, out)), links), out, nil
		case detailFull:
			return withLinks(textResult(renderLookup(noun, out, -1)+pageNote(out.NextCursor, out.Total, out.Count)), links), out, nil
		}
		cards := cardsWithin(out.Results, out.Part)
		links = append(links[:cards:cards], seeAlsoLinks(out.Results[:cards])...)
		md := renderLookup(noun, out, cards) + pageNote(out.NextCursor, out.Total, out.Count)
		attributed := map[string]bool{}
		for i := range out.Results {
			if i < cards {
				out.Results[i] = withoutTexts(out.Results[i], attributed)
			} else {
				out.Results[i] = summaries(out.Results[i : i+1])[0]
			}
		}
		// The cards' links and their See also's; the other results' URIs
		// are on their lines.
		return withLinks(textResult(md), links), out, nil
	}
}

func (s *Server) search(ctx context.Context, _ *mcp.CallToolRequest, in SearchInput) (*mcp.CallToolResult, *SearchOutput, error) {
	const name = "search_dnd_content"
	req, err := in.request()
	if err != nil {
		return fail[SearchOutput](s, name, err)
	}
	mode, err := detailArg(in)
	if err != nil {
		return fail[SearchOutput](s, name, err)
	}
	req.Cursor = in.Cursor
	ctx, cancel := s.callContext(ctx)
	defer cancel()
	resp, err := s.client.Search(ctx, req)
	if err != nil {
		return fail[SearchOutput](s, name, err)
	}
	a := searchAnswer(resp, req, mode, nil, "")
	if in.Limit == nil && mode != detailFull {
		// Sized for an assistant to hold (searchBudget): the groups the
		// question did not ask for shrink to a line per result first, then
		// every group to fewer results a page (paging stays whole).
		if a.size() > searchBudget {
			a = searchAnswer(resp, req, mode, notAsked(req, resp), "")
		}
		for a.size() > searchBudget && req.GetLimit() != 1 {
			req.Limit = smallerLimit(req.GetLimit(), len(resp.GetGroups()))
			if resp, err = s.client.Search(ctx, req); err != nil {
				return fail[SearchOutput](s, name, err)
			}
			note := fmt.Sprintf("%d %s per content type on this page, to keep the answer short; pass limit for more, or entity_types for one type.", req.GetLimit(), plural("result", int(req.GetLimit())))
			a = searchAnswer(resp, req, mode, notAsked(req, resp), note)
		}
	}
	s.logNotes(name, a.out.FallbackReason, a.out.Warnings)
	return withLinks(textResult(a.md), a.links), a.out, nil
}

// searchBudget is the most a default search answers with, text and
// structured content together, in bytes.
const searchBudget = 32 << 10

// answer is a search's answer as it goes out.
type answer struct {
	out   *SearchOutput
	md    string
	links []mcp.Content
}

// size is the answer's bytes: its text, resource links and structured
// content, as JSON on the wire.
func (a answer) size() int {
	n := len(a.md)
	for _, l := range a.links {
		b, _ := json.Marshal(l)
		n += len(b)
	}
	b, _ := json.Marshal(a.out)
	return n + len(b)
}

// searchAnswer renders resp: groups of the kinds in brief (not nil) in a
// line per result, name, book and URI, without resource links; note, if
// any, is one more warning.
func searchAnswer(resp *lkv1.SearchResponse, req *lkv1.SearchRequest, mode detail, brief map[lkv1.Kind]bool, note string) answer {
	out := &SearchOutput{
		Query:          req.GetQuery(),
		Groups:         []SearchGroup{},
		Ranking:        rankingName(resp.GetRanking()),
		FallbackReason: resp.GetFallbackReason(),
		Warnings:       resp.GetWarnings(),
		NextCursor:     resp.GetNextCursor(),
		NotOpenContent: resp.GetNotOpenContent(),
		Understood:     understoodOf(resp.GetUnderstood()),
		understood:     resp.GetUnderstood(),
		Total:          resp.GetTotal(),
	}
	if note != "" {
		out.Warnings = append(slices.Clip(out.Warnings), note)
	}
	var links []mcp.Content
	for _, g := range resp.GetGroups() {
		sg := SearchGroup{EntityType: g.GetKind().Slug(), Results: make([]Entity, 0, len(g.GetResults())), Available: g.GetTotal(), brief: brief[g.GetKind()]}
		for _, r := range g.GetResults() {
			sg.Results = append(sg.Results, entityFromResult(r))
		}
		if !sg.brief {
			links = append(links, resourceLinks(sg.Results)...)
		}
		sg.Count = len(sg.Results)
		if sg.Count == 0 {
			continue
		}
		out.Count += sg.Count
		out.Groups = append(out.Groups, sg)
	}
	if out.Count == 0 {
		out.Message = fmt.Sprintf("Nothing matched %q with these filters. Try other words, fewer entity_types or documents, or list_documents to check what is loaded.", out.Query)
	}
	md := renderSearch(out) + pageNote(out.NextCursor, out.Total, out.Count)
	if mode != detailFull {
		// The text lists every result in a line: the structured result
		// says the same, each entity read in full by its URI.
		for i := range out.Groups {
			if out.Groups[i].brief {
				out.Groups[i].Results = briefs(out.Groups[i].Results)
			} else {
				out.Groups[i].Results = summaries(out.Groups[i].Results)
			}
		}
	}
	return answer{out: out, md: md, links: links}
}

// notAsked are the kinds of resp's groups a question did not ask for:
// all but its entity_types, or the kinds its words name (understood), or
// else the best group's.
func notAsked(req *lkv1.SearchRequest, resp *lkv1.SearchResponse) map[lkv1.Kind]bool {
	asked := map[lkv1.Kind]bool{}
	for _, k := range req.GetKinds() {
		asked[k] = true
	}
	if len(asked) == 0 {
		for _, f := range resp.GetUnderstood().GetFilters() {
			if f.GetField() != "entity_type" {
				continue
			}
			for _, v := range f.GetValues() {
				if k, ok := lkv1.KindFromSlug(v); ok {
					asked[k] = true
				}
			}
		}
	}
	if len(asked) == 0 && len(resp.GetGroups()) > 0 {
		asked[resp.GetGroups()[0].GetKind()] = true
	}
	out := map[lkv1.Kind]bool{}
	for _, g := range resp.GetGroups() {
		if !asked[g.GetKind()] {
			out[g.GetKind()] = true
		}
	}
	return out
}

// smallerLimit is the next per-type limit to try for an answer too long:
// one that would bring the page's results to about half, at least 1.
func smallerLimit(limit uint32, groups int) uint32 {
	if limit == 0 {
		limit = defaultSearchLimit
	}
	return max(1, min(limit/2, uint32(2*searchBudgetResults/max(groups, 1))))
}

// defaultSearchLimit is the query service's default limit per type;
// searchBudgetResults about the results a budget holds in summaries.
const (
	defaultSearchLimit  = 20
	searchBudgetResults = 30
)

func (s *Server) listDocuments(ctx context.Context, _ *mcp.CallToolRequest, in DocumentsInput) (*mcp.CallToolResult, *DocumentsOutput, error) {
	const name = "list_documents"
	req, format, err := in.request()
	if err != nil {
		return fail[DocumentsOutput](s, name, err)
	}
	ctx, cancel := s.callContext(ctx)
	defer cancel()
	resp, err := s.client.ListDocuments(ctx, req)
	if err != nil {
		return fail[DocumentsOutput](s, name, err)
	}
	out := &DocumentsOutput{Documents: make([]DocumentInfo, 0, len(resp.GetDocuments())), NextCursor: resp.GetNextCursor(), Total: resp.GetTotal(), Warnings: resp.GetWarnings()}
	var links []mcp.Content
	for _, d := range resp.GetDocuments() {
		out.Documents = append(out.Documents, documentInfo(d))
		links = append(links, documentLink(d))
	}
	out.Count = len(out.Documents)
	if out.Count == 0 {
		out.Message = "No documents are loaded."
	}
	if in.Cursor == "" {
		out.ImportProblems = s.importProblems(ctx)
	}
	if format == "text" || out.Count == 0 {
		return withLinks(textResult(renderDocuments(out)+pageNote(out.NextCursor, out.Total, out.Count)+renderImportProblems(out.ImportProblems)), links), out, nil
	}
	// format=json: the structured result as JSON text, then the links.
	js, err := json.Marshal(out)
	if err != nil {
		return fail[DocumentsOutput](s, name, fmt.Errorf("encoding documents: %w", err))
	}
	return withLinks(textResult(string(js)), links), out, nil
}

func textResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

func (s *Server) callContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, s.timeout)
}

func (s *Server) logNotes(tool, fallback string, warnings []string) {
	if fallback != "" {
		s.log.Warn("semantic ranking fell back to keyword", "tool", tool, "reason", fallback)
	}
	for _, w := range warnings {
		s.log.Warn("query warning", "tool", tool, "warning", w)
	}
}

// fail turns an error into a tool error result the assistant can read and
// act on; the detail goes to the log, never to the client.
// The zero output keeps the SDK's output validation happy; the middleware
// drops it from error results.
func fail[Out any](s *Server, tool string, err error) (*mcp.CallToolResult, *Out, error) {
	msg := s.report(tool, err)
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
	res.SetError(err)
	return res, new(Out), nil
}

// errClass is what a tool error means to the client, the log and the
// metrics: classOf is the one table of them.
type errClass struct {
	outcome string // metrics label
	message string // what the client reads
	level   slog.Level
	log     string // what the log says
	code    codes.Code
	// sdk marks errors that are neither ours nor the query service's: the
	// SDK's schema validation or decoding of the arguments.
	sdk bool
}

const (
	msgUnavailable = "The LoreKeeper content service is temporarily unavailable, so this could not be answered. Please try again in a moment."
	msgCanceled    = "The request was canceled before it finished."
	msgInternal    = "LoreKeeper hit an internal error answering this request; it has been logged. Try different arguments or try again later."
)

// errUnclassified stands for an error result that carries no error.
var errUnclassified = errors.New("tool error")

// NotReadyError is what a query client returns when it knows why the
// query service cannot answer yet (it is starting, downloading its model,
// taking over a data directory): the client reads Reason, the true state,
// instead of the generic "temporarily unavailable".
type NotReadyError struct{ Reason string }

func (e *NotReadyError) Error() string { return e.Reason }

// classOf classifies err (nil: success).
func classOf(err error) errClass {
	if err == nil {
		return errClass{outcome: OutcomeOK}
	}
	var nr *NotReadyError
	if errors.As(err, &nr) {
		return errClass{outcome: OutcomeUnavailable, message: nr.Reason, level: slog.LevelInfo, log: "query service not ready", code: codes.Unavailable}
	}
	var ae *ArgumentError
	if errors.As(err, &ae) {
		return errClass{outcome: OutcomeInvalid, message: ae.Error(), level: slog.LevelDebug, log: "invalid tool arguments"}
	}
	st, ok := status.FromError(err)
	switch {
	case ok:
	case errors.Is(err, context.DeadlineExceeded):
		st = status.New(codes.DeadlineExceeded, err.Error())
	case errors.Is(err, context.Canceled):
		st = status.New(codes.Canceled, err.Error())
	case errors.Is(err, errUnclassified):
		st = status.New(codes.Unknown, err.Error())
	default:
		return errClass{outcome: OutcomeInvalid, message: err.Error(), level: slog.LevelDebug, log: "invalid tool arguments", sdk: true}
	}
	c := errClass{code: st.Code()}
	switch st.Code() {
	case codes.InvalidArgument:
		c.outcome, c.message, c.level, c.log = OutcomeInvalid, "invalid argument: "+st.Message(), slog.LevelDebug, "query service rejected arguments"
	case codes.Unavailable, codes.DeadlineExceeded, codes.ResourceExhausted, codes.Aborted:
		c.outcome, c.message, c.level, c.log = OutcomeUnavailable, msgUnavailable, slog.LevelError, "query service unavailable"
		if hasReason(st, lkv1.ReasonIndexLoading) {
			// The message says how far the load is, for the user.
			c.message = "LoreKeeper has just restarted: " + strings.TrimPrefix(st.Message(), "badgerstore: ") + "."
			c.level, c.log = slog.LevelInfo, "query service loading its index"
		}
	case codes.Canceled:
		c.outcome, c.message, c.level, c.log = OutcomeError, msgCanceled, slog.LevelDebug, "tool call canceled"
	default:
		c.outcome, c.message, c.level, c.log = OutcomeError, msgInternal, slog.LevelError, "query service failed"
	}
	return c
}

// hasReason reports whether st carries the query service's ErrorInfo with
// reason.
func hasReason(st *status.Status, reason string) bool {
	for _, d := range st.Details() {
		if ei, ok := d.(*errdetails.ErrorInfo); ok && ei.GetDomain() == lkv1.ErrorDomain && ei.GetReason() == reason {
			return true
		}
	}
	return false
}

// report logs err as its class says and returns the message the client
// reads; the detail goes to the log, never to the client.
func (s *Server) report(op string, err error) string {
	c := classOf(err)
	attrs := []any{"tool", op, "err", err}
	if c.code != codes.OK { // the query service's, or a context's
		attrs = append(attrs, "code", c.code.String())
	}
	s.log.Log(context.Background(), c.level, c.log, attrs...)
	return c.message
}

// recoverMiddleware turns a panic in any request's handling into an
// internal error for that request, logged with its stack and counted
// (lorekeeper_mcp_panics_total): a bug costs one request, not the process
// and every session it serves. It is the outermost middleware, so it
// covers ours and the SDK's handlers alike.
func (s *Server) recoverMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
		defer func() {
			if p := recover(); p != nil {
				s.log.Error("MCP request handler panicked; answered with an internal error", "method", method,
					"panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				s.metrics.panicked(method)
				res, err = nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
					Message: "internal error: the server failed to answer this request and logged why; other requests are unaffected"}
			}
		}()
		return next(ctx, method, req)
	}
}

// toolMiddleware records every tool call (argument validation by the SDK
// included) and drops the structured content of error results, which would
// otherwise be an empty output a client could take for "no results".
func (s *Server) toolMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "tools/call" {
			return next(ctx, method, req)
		}
		start := time.Now()
		name := ""
		var args json.RawMessage
		if ctr, ok := req.(*mcp.CallToolRequest); ok && ctr.Params != nil {
			ctr.Params.Arguments = withoutBidiControls(ctr.Params.Arguments)
			name, args = ctr.Params.Name, ctr.Params.Arguments
		}
		params, known := s.params[name]
		if !known {
			return next(ctx, method, req)
		}
		// A number the SDK cannot even decode (beyond int or float64)
		// would come back as a Go decoding error: answer with the
		// parameter's range instead.
		if ae := checkNumbers(s.numbers[name], args); ae != nil {
			s.log.Debug("invalid tool arguments", "tool", name, "err", ae)
			s.metrics.observe(name, OutcomeInvalid, time.Since(start))
			res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: ae.Error()}}}
			res.SetError(ae)
			return res, nil
		}
		res, err := next(ctx, method, req)
		callErr := err
		if r, ok := res.(*mcp.CallToolResult); ok && r != nil && !r.IsError {
			if ae := s.boundAnswer(r); ae != nil {
				callErr = ae
			}
		}
		if r, ok := res.(*mcp.CallToolResult); ok && r != nil && r.IsError {
			r.StructuredContent = nil
			callErr = r.GetError()
			if callErr == nil {
				callErr = errUnclassified
			}
			if classOf(callErr).sdk {
				// The SDK's schema validation or decoding: say which
				// parameters the tool takes.
				r.Content = []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("invalid arguments for %s: %v. Parameters: %s.", name, callErr, strings.Join(params, ", "))}}
			}
		}
		s.metrics.observe(name, classOf(callErr).outcome, time.Since(start))
		return res, err
	}
}

// boundAnswer replaces a tool answer over maxAnswer bytes with an error
// result saying how to ask for less, and returns that error (nil for an
// answer within the bound). The structured content is encoded once here,
// and passed on encoded.
func (s *Server) boundAnswer(r *mcp.CallToolResult) error {
	n := 0
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			n += len(tc.Text)
		}
	}
	if r.StructuredContent != nil {
		b, err := json.Marshal(r.StructuredContent)
		if err != nil {
			return nil // the SDK reports it
		}
		r.StructuredContent = json.RawMessage(b)
		n += len(b)
	}
	if n <= s.maxAnswer {
		return nil
	}
	ae := argErr("limit", fmt.Sprintf("the answer is %.1f MB, more than the %.1f MB one call may return: ask for fewer results (limit), detail=\"summary\", or fewer kinds or books",
		float64(n)/(1<<20), float64(s.maxAnswer)/(1<<20)))
	r.Content = []mcp.Content{&mcp.TextContent{Text: ae.Error()}}
	r.StructuredContent = nil
	r.SetError(ae)
	return ae
}

// readEntity serves lorekeeper://entity/{key}: the entity as a markdown
// card and as the same JSON the tools return.
func (s *Server) readEntity(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	key := lkv1.KeyFromURI(uri)
	if k, err := url.PathUnescape(key); err == nil {
		key = k
	}
	if key == "" || key == uri {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	ctx, cancel := s.callContext(ctx)
	defer cancel()
	resp, err := s.client.GetEntity(ctx, &lkv1.GetEntityRequest{Key: key})
	if err != nil {
		switch status.Code(err) {
		case codes.NotFound:
			return nil, mcp.ResourceNotFoundError(uri)
		case codes.InvalidArgument:
			// A key too long, or not UTF-8: the request's fault.
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: s.report("resources/read", err)}
		}
		return nil, errors.New(s.report("resources/read", err))
	}
	e := entityFromProto(resp.GetEntity(), resp.GetUri())
	js, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encoding entity: %w", err)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
		{URI: uri, MIMEType: "text/markdown", Text: Card(resp.GetEntity(), resp.GetUri())},
		{URI: uri, MIMEType: "application/json", Text: string(js)},
	}}, nil
}

// entityURIMiddleware lets resources/read take entity URIs as the tools
// return them. Keys hold colons ("open5e_v2:srd-2014:spell:fireball"),
// which the {key} template matches only percent-encoded, as a client
// expanding the template would send them; a raw URI is encoded before the
// lookup and reported back as given.
// uriMiddleware refuses, with invalid params, a resources/read URI that
// Go's %q does not quote as valid JSON (control characters, among others):
// the SDK's "resource not found" error carries the URI quoted that way, and
// failing to encode it the SDK closed the session (with stdio, the whole
// process) instead of answering. A URI holds no such characters; a client
// percent-encodes them.
func uriMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if rr, ok := req.(*mcp.ReadResourceRequest); ok && method == "resources/read" && rr.Params != nil &&
			!json.Valid([]byte(strconv.Quote(rr.Params.URI))) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
				Message: "invalid params: the URI holds control characters; percent-encode them"}
		}
		return next(ctx, method, req)
	}
}

func entityURIMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		rr, ok := req.(*mcp.ReadResourceRequest)
		if method != "resources/read" || !ok || rr.Params == nil {
			return next(ctx, method, req)
		}
		orig := rr.Params.URI
		key, isEntity := strings.CutPrefix(orig, lkv1.URIPrefix)
		if !isEntity || escapeUnreserved(key) == key {
			return next(ctx, method, req)
		}
		if k, err := url.PathUnescape(key); err == nil {
			key = k
		}
		rr.Params.URI = lkv1.URIPrefix + escapeUnreserved(key)
		res, err := next(ctx, method, req)
		rr.Params.URI = orig
		if r, ok := res.(*mcp.ReadResourceResult); ok && r != nil {
			for _, c := range r.Contents {
				c.URI = orig
			}
		}
		return res, err
	}
}

// escapeUnreserved percent-encodes every byte outside RFC 3986's unreserved
// set, as RFC 6570 simple expansion does.
func escapeUnreserved(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// CloseSessions closes every open session, whatever its transport. Call
// it when an HTTP server starts shutting down (http.Server.RegisterOnShutdown):
// a connected client holds a standalone SSE stream open for as long as its
// session lives, and Shutdown would otherwise wait for it until its
// deadline. A session's call in flight is answered first.
func (s *Server) CloseSessions() {
	// Close outside the iteration: a closing session removes itself.
	var open []*mcp.ServerSession
	for ss := range s.mcp.Sessions() {
		open = append(open, ss)
	}
	for _, ss := range open {
		_ = ss.Close() // the client is gone or going; nothing to tell it
	}
}
