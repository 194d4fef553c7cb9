package mcpserver_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// fakeQuery is a small, faithful stand-in for the query service: it holds a
// handful of real SRD entities (testdata/entities, converted from the Open5e
// snapshot), answers the lookups with the contract's name matching, kind,
// document and limit semantics and a few typed filters, and records every
// request so that tests can assert what the MCP server sent.
type fakeQuery struct {
	lkv1.UnimplementedQueryServiceServer

	entities  []*lkv1.Entity
	documents []*lkv1.Document

	mu   sync.Mutex
	reqs []proto.Message
	// err, when set, is returned by every RPC.
	err error
	// semanticDown makes semantic requests fall back to keyword ranking.
	semanticDown bool
	// alternates are folded into the result of the entity with that key.
	alternates map[string][]*lkv1.Alternate
	// gate, when set, holds every RPC until it is closed: calls in flight.
	gate chan struct{}
}

// loadEntities reads testdata/entities, sorted by name.
func loadEntities() ([]*lkv1.Entity, error) {
	files, err := filepath.Glob("testdata/entities/*.json")
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no entity fixtures: %v", err)
	}
	var out []*lkv1.Entity
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		e := &lkv1.Entity{}
		if err := protojson.Unmarshal(b, e); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b *lkv1.Entity) int { return strings.Compare(a.GetName(), b.GetName()) })
	return out, nil
}

func newFakeQuery(t testing.TB) *fakeQuery {
	t.Helper()
	f, err := newFake()
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func newFake() (*fakeQuery, error) {
	entities, err := loadEntities()
	if err != nil {
		return nil, err
	}
	f := &fakeQuery{entities: entities}
	seen := map[string]bool{}
	for _, e := range f.entities {
		if d := e.GetDocument(); !seen[d.GetKey()] {
			seen[d.GetKey()] = true
			f.documents = append(f.documents, d)
		}
	}
	return f, nil
}

func (f *fakeQuery) record(m proto.Message) error {
	f.mu.Lock()
	f.reqs = append(f.reqs, proto.Clone(m))
	gate, err := f.gate, f.err
	f.mu.Unlock()
	if gate != nil {
		<-gate
	}
	return err
}

// hold makes every RPC wait until the returned release is called.
func (f *fakeQuery) hold() (release func()) {
	gate := make(chan struct{})
	f.mu.Lock()
	f.gate = gate
	f.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			f.mu.Lock()
			f.gate = nil
			f.mu.Unlock()
			close(gate)
		})
	}
}

// requests counts the requests received.
func (f *fakeQuery) requests() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.reqs)
}

// last returns the last request received, or nil.
func (f *fakeQuery) last() proto.Message {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.reqs) == 0 {
		return nil
	}
	return f.reqs[len(f.reqs)-1]
}

// at returns the i-th request received (from 0), or nil.
func (f *fakeQuery) at(i int) proto.Message {
	f.mu.Lock()
	defer f.mu.Unlock()
	if i < 0 || i >= len(f.reqs) {
		return nil
	}
	return f.reqs[i]
}

func (f *fakeQuery) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.reqs)
}

func (f *fakeQuery) setErr(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.err = err
}

var docAliases = map[string]string{"srd-5e": "srd-2014", "srd": "srd-2014", "wotc-srd": "srd-2014", "srd-5.1": "srd-2014", "srd-5.2": "srd-2024"}

func docMatch(filter *lkv1.DocumentFilter, d *lkv1.Document) bool {
	if filter == nil {
		return true
	}
	for _, k := range filter.GetDocuments() {
		k = strings.ToLower(k)
		if a, ok := docAliases[k]; ok {
			k = a
		}
		if k == strings.ToLower(d.GetKey()) || k == strings.ToLower(d.GetName()) {
			return true
		}
	}
	return false
}

func namePattern(name string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("(?i)^")
	for _, r := range name {
		if r == '*' || r == '%' {
			b.WriteString(".*")
			continue
		}
		b.WriteString(regexp.QuoteMeta(string(r)))
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}

// lookup applies the common semantics to the entities that pass keep.
func (f *fakeQuery) lookup(c *lkv1.Common, kinds []lkv1.Kind, keep func(*lkv1.Entity) bool) *lkv1.LookupResponse {
	resp := &lkv1.LookupResponse{Ranking: lkv1.Ranking_RANKING_STRUCTURED}
	if c.GetDocuments() != nil && len(c.GetDocuments().GetDocuments()) == 0 {
		return resp
	}
	var cands []*lkv1.Entity
	for _, e := range f.entities {
		if len(kinds) > 0 && !slices.Contains(kinds, e.GetKind()) {
			continue
		}
		if !docMatch(c.GetDocuments(), e.GetDocument()) || (keep != nil && !keep(e)) {
			continue
		}
		cands = append(cands, e)
	}
	if n := c.GetName(); n != "" {
		re := namePattern(n)
		var hits []*lkv1.Entity
		for _, e := range cands {
			if re.MatchString(e.GetName()) {
				hits = append(hits, e)
			}
		}
		resp.NameMatch = "exact"
		if strings.ContainsAny(n, "*%") {
			resp.NameMatch = "pattern"
		}
		if len(hits) == 0 {
			for _, e := range cands {
				if strings.EqualFold(e.GetSlug(), n) || e.GetKey() == n || e.GetSourceKey() == n {
					hits = append(hits, e)
					resp.NameMatch = "slug"
				}
			}
		}
		if len(hits) == 0 && strings.EqualFold(n, "beholder") {
			// A name outside open content: said so, with open content near
			// it by meaning.
			resp.NotOpenContent = "Beholder"
			for _, e := range cands {
				resp.Suggestions = append(resp.Suggestions, &lkv1.NameSuggestion{Name: e.GetName(), Key: e.GetKey(),
					Uri: lkv1.EntityURI(e.GetKey()), DocumentKey: e.GetDocument().GetKey(), Score: 0.4, Via: "meaning"})
			}
		}
		if len(hits) == 0 {
			// Did-you-mean, roughly: the candidates sharing the first four
			// letters.
			resp.NameMatch = ""
			for _, e := range cands {
				if len(n) >= 4 && strings.HasPrefix(strings.ToLower(e.GetName()), strings.ToLower(n[:4])) {
					resp.Suggestions = append(resp.Suggestions, &lkv1.NameSuggestion{Name: e.GetName(), Key: e.GetKey(),
						Uri: lkv1.EntityURI(e.GetKey()), DocumentKey: e.GetDocument().GetKey(), DocumentName: e.GetDocument().GetName(), Score: 0.875, Via: "name"})
				}
			}
		}
		cands = hits
	}
	limit := int(c.GetLimit())
	if limit == 0 {
		limit = 20
	}
	if len(cands) > limit {
		cands = cands[:limit]
	}
	semantic := c.GetSemanticQuery() != ""
	if len(c.GetSemanticQuery()) > 512 {
		resp.Warnings = append(resp.Warnings, "semantic_query is longer than 512 characters and was truncated")
	}
	if semantic && f.semanticDown {
		resp.Ranking = lkv1.Ranking_RANKING_KEYWORD
		resp.FallbackReason = "embedding model unavailable"
		semantic = false
	} else if semantic {
		resp.Ranking = lkv1.Ranking_RANKING_HYBRID
	}
	for i, e := range cands {
		r := &lkv1.Result{Entity: e, Uri: lkv1.EntityURI(e.GetKey()), Alternates: f.alternates[e.GetKey()]}
		if semantic {
			r.SimilarityScore = proto.Float64(0.9 - 0.1*float64(i))
		}
		resp.Results = append(resp.Results, r)
	}
	return resp
}

func (f *fakeQuery) LookupSpells(_ context.Context, r *lkv1.LookupSpellsRequest) (*lkv1.LookupResponse, error) {
	if err := f.record(r); err != nil {
		return nil, err
	}
	return f.lookup(r.GetCommon(), []lkv1.Kind{lkv1.Kind_KIND_SPELL}, func(e *lkv1.Entity) bool {
		s := e.GetSpell()
		switch {
		case len(r.GetLevels()) > 0 && !slices.Contains(r.GetLevels(), s.GetLevel()):
			return false
		case len(r.GetSchools()) > 0 && !slices.Contains(r.GetSchools(), s.GetSchool()):
			return false
		case r.Concentration != nil && r.GetConcentration() != s.GetConcentration():
			return false
		case len(r.GetClasses()) > 0 && !slices.ContainsFunc(r.GetClasses(), func(c string) bool { return slices.Contains(s.GetClasses(), c) }):
			return false
		}
		return true
	}), nil
}

func (f *fakeQuery) LookupCreatures(_ context.Context, r *lkv1.LookupCreaturesRequest) (*lkv1.LookupResponse, error) {
	if err := f.record(r); err != nil {
		return nil, err
	}
	return f.lookup(r.GetCommon(), []lkv1.Kind{lkv1.Kind_KIND_CREATURE}, func(e *lkv1.Entity) bool {
		c := e.GetCreature()
		switch {
		case r.Cr != nil && r.GetCr() != c.GetChallengeRating():
			return false
		case r.GetCrRange() != nil && r.GetCrRange().Min != nil && c.GetChallengeRating() < r.GetCrRange().GetMin():
			return false
		case r.GetCrRange() != nil && r.GetCrRange().Max != nil && c.GetChallengeRating() > r.GetCrRange().GetMax():
			return false
		case len(r.GetTypes()) > 0 && !slices.Contains(r.GetTypes(), c.GetType()):
			return false
		}
		return true
	}), nil
}

var equipmentKinds = []lkv1.Kind{lkv1.Kind_KIND_WEAPON, lkv1.Kind_KIND_ARMOR, lkv1.Kind_KIND_MAGIC_ITEM, lkv1.Kind_KIND_ITEM}

func (f *fakeQuery) LookupEquipment(_ context.Context, r *lkv1.LookupEquipmentRequest) (*lkv1.LookupResponse, error) {
	if err := f.record(r); err != nil {
		return nil, err
	}
	kinds := r.GetKinds()
	if len(kinds) == 0 {
		kinds = equipmentKinds
	}
	return f.lookup(r.GetCommon(), kinds, func(e *lkv1.Entity) bool {
		it := e.GetItem()
		return len(r.GetRarities()) == 0 || slices.Contains(r.GetRarities(), it.GetRarity())
	}), nil
}

var optionKinds = []lkv1.Kind{lkv1.Kind_KIND_CLASS, lkv1.Kind_KIND_SUBCLASS, lkv1.Kind_KIND_RACE, lkv1.Kind_KIND_SUBRACE, lkv1.Kind_KIND_BACKGROUND, lkv1.Kind_KIND_FEAT, lkv1.Kind_KIND_INVOCATION, lkv1.Kind_KIND_BOON, lkv1.Kind_KIND_SELECTION}

func (f *fakeQuery) LookupCharacterOptions(_ context.Context, r *lkv1.LookupCharacterOptionsRequest) (*lkv1.LookupResponse, error) {
	if err := f.record(r); err != nil {
		return nil, err
	}
	kinds := r.GetKinds()
	if len(kinds) == 0 {
		kinds = optionKinds
	}
	return f.lookup(r.GetCommon(), kinds, nil), nil
}

var ruleKinds = []lkv1.Kind{lkv1.Kind_KIND_RULE, lkv1.Kind_KIND_RULE_SECTION, lkv1.Kind_KIND_CONDITION, lkv1.Kind_KIND_DAMAGE_TYPE, lkv1.Kind_KIND_WEAPON_PROPERTY, lkv1.Kind_KIND_SKILL, lkv1.Kind_KIND_ABILITY_SCORE, lkv1.Kind_KIND_MAGIC_SCHOOL, lkv1.Kind_KIND_LANGUAGE, lkv1.Kind_KIND_PROFICIENCY, lkv1.Kind_KIND_ALIGNMENT}

func (f *fakeQuery) LookupRules(_ context.Context, r *lkv1.LookupRulesRequest) (*lkv1.LookupResponse, error) {
	if err := f.record(r); err != nil {
		return nil, err
	}
	kinds := r.GetKinds()
	if len(kinds) == 0 {
		kinds = ruleKinds
	}
	return f.lookup(r.GetCommon(), kinds, nil), nil
}

// Search matches the query against names and descriptions, word by word.
func (f *fakeQuery) Search(_ context.Context, r *lkv1.SearchRequest) (*lkv1.SearchResponse, error) {
	if err := f.record(r); err != nil {
		return nil, err
	}
	resp := &lkv1.SearchResponse{Ranking: lkv1.Ranking_RANKING_HYBRID}
	if r.Semantic != nil && !r.GetSemantic() {
		resp.Ranking = lkv1.Ranking_RANKING_KEYWORD
	} else if f.semanticDown {
		resp.Ranking = lkv1.Ranking_RANKING_KEYWORD
		resp.FallbackReason = "vector index unavailable"
	}
	if r.GetDocuments() != nil && len(r.GetDocuments().GetDocuments()) == 0 {
		return resp, nil
	}
	if strings.EqualFold(r.GetQuery(), "beholder") {
		resp.NotOpenContent = "Beholder"
	}
	words := strings.Fields(strings.ToLower(r.GetQuery()))
	groups := map[lkv1.Kind]*lkv1.ResultGroup{}
	var order []lkv1.Kind
	for _, e := range f.entities {
		if len(r.GetKinds()) > 0 && !slices.Contains(r.GetKinds(), e.GetKind()) {
			continue
		}
		if !docMatch(r.GetDocuments(), e.GetDocument()) {
			continue
		}
		text := strings.ToLower(e.GetName() + " " + e.GetDescription())
		if !slices.ContainsFunc(words, func(w string) bool { return strings.Contains(text, w) }) {
			continue
		}
		g, ok := groups[e.GetKind()]
		if !ok {
			g = &lkv1.ResultGroup{Kind: e.GetKind()}
			groups[e.GetKind()] = g
			order = append(order, e.GetKind())
		}
		limit := int(r.GetLimit())
		if limit == 0 {
			limit = 20
		}
		if len(g.Results) >= limit {
			continue
		}
		res := &lkv1.Result{Entity: e, Uri: lkv1.EntityURI(e.GetKey())}
		if resp.Ranking == lkv1.Ranking_RANKING_HYBRID {
			res.SimilarityScore = proto.Float64(0.8)
		}
		g.Results = append(g.Results, res)
	}
	for _, k := range order {
		groups[k].Total = uint64(len(groups[k].Results))
		resp.Groups = append(resp.Groups, groups[k])
		resp.Total += groups[k].Total
	}
	return resp, nil
}

func (f *fakeQuery) GetEntity(_ context.Context, r *lkv1.GetEntityRequest) (*lkv1.GetEntityResponse, error) {
	if err := f.record(r); err != nil {
		return nil, err
	}
	key := lkv1.KeyFromURI(r.GetKey())
	for _, e := range f.entities {
		if e.GetKey() == key {
			return &lkv1.GetEntityResponse{Entity: e, Uri: lkv1.EntityURI(key)}, nil
		}
	}
	return nil, status.Errorf(codes.NotFound, "no entity %q", key)
}

// addEntity adds e (and its document), as an import would.
func (f *fakeQuery) addEntity(e *lkv1.Entity) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.entities = append(f.entities, e)
	if !slices.ContainsFunc(f.documents, func(d *lkv1.Document) bool { return d.GetKey() == e.GetDocument().GetKey() }) {
		f.documents = append(f.documents, e.GetDocument())
	}
}

// removeDocument drops a document and its entities, as deleting an import
// would.
func (f *fakeQuery) removeDocument(key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.entities = slices.DeleteFunc(f.entities, func(e *lkv1.Entity) bool { return e.GetDocument().GetKey() == key })
	f.documents = slices.DeleteFunc(f.documents, func(d *lkv1.Document) bool { return d.GetKey() == key })
}

// CompleteValues completes by prefix over the fixtures' names, keys,
// document keys, creature types and environments (no ranking beyond
// alphabetical: the real ranking is the query service's, tested there).
func (f *fakeQuery) CompleteValues(_ context.Context, r *lkv1.CompleteValuesRequest) (*lkv1.CompleteValuesResponse, error) {
	if err := f.record(r); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	prefix := strings.ToLower(r.GetPrefix())
	var vals []string
	add := func(v string) {
		if v != "" && strings.HasPrefix(strings.ToLower(v), prefix) && !slices.Contains(vals, v) {
			vals = append(vals, v)
		}
	}
	for _, e := range f.entities {
		if len(r.GetKinds()) > 0 && !slices.Contains(r.GetKinds(), e.GetKind()) {
			continue
		}
		switch r.GetField() {
		case lkv1.CompletionField_COMPLETION_FIELD_ENTITY_NAME:
			add(e.GetName())
		case lkv1.CompletionField_COMPLETION_FIELD_ENTITY_KEY:
			if strings.Contains(prefix, ":") {
				add(e.GetKey())
			} else if strings.HasPrefix(strings.ToLower(e.GetName()), prefix) {
				vals = append(vals, e.GetKey())
			}
		case lkv1.CompletionField_COMPLETION_FIELD_DOCUMENT:
			add(e.GetDocument().GetKey())
		case lkv1.CompletionField_COMPLETION_FIELD_CREATURE_TYPE:
			add(e.GetCreature().GetType())
		case lkv1.CompletionField_COMPLETION_FIELD_ENVIRONMENT:
			for _, env := range e.GetCreature().GetEnvironments() {
				add(env)
			}
		default:
			return nil, status.Error(codes.InvalidArgument, "field: unknown")
		}
	}
	slices.Sort(vals)
	return &lkv1.CompleteValuesResponse{Values: vals, Total: uint32(len(vals))}, nil
}

func (f *fakeQuery) ListDocuments(_ context.Context, r *lkv1.ListDocumentsRequest) (*lkv1.ListDocumentsResponse, error) {
	if err := f.record(r); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	resp := &lkv1.ListDocumentsResponse{}
	for _, d := range f.documents {
		if len(r.GetSources()) > 0 && !slices.Contains(r.GetSources(), d.GetSource()) {
			continue
		}
		s := &lkv1.DocumentSummary{Document: d, Counts: map[string]uint64{}}
		for _, e := range f.entities {
			if e.GetDocument().GetKey() == d.GetKey() {
				s.EntityCount++
				s.Counts[e.GetKind().Slug()]++
			}
		}
		resp.Documents = append(resp.Documents, s)
	}
	slices.SortStableFunc(resp.Documents, func(a, b *lkv1.DocumentSummary) int { return int(b.EntityCount) - int(a.EntityCount) })
	return resp, nil
}

// startQuery serves f over bufconn and returns a real gRPC client for it.
func startQuery(t testing.TB, f lkv1.QueryServiceServer) lkv1.QueryServiceClient {
	t.Helper()
	client, stop, err := serveBufconn(f)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return client
}

func serveBufconn(f lkv1.QueryServiceServer) (lkv1.QueryServiceClient, func(), error) {
	lis := bufconn.Listen(1 << 20)
	gs := grpc.NewServer()
	lkv1.RegisterQueryServiceServer(gs, f)
	go gs.Serve(lis)
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		gs.Stop()
		return nil, nil, err
	}
	return lkv1.NewQueryServiceClient(conn), func() { conn.Close(); gs.Stop() }, nil
}
