package open5e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"lorekeeper.dev/ingest"
	"lorekeeper.dev/ingest/open5esnapshot"
	"lorekeeper.dev/ingest/srd52"
	"lorekeeper.dev/ingest/srddb"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// FetchCatalog reads the document metadata endpoints.
func FetchCatalog(ctx context.Context, c *Client) (*Catalog, error) {
	lists := make([][]json.RawMessage, len(MetadataEndpoints))
	for i, ep := range MetadataEndpoints {
		recs, err := c.List(ctx, ep.Path(), nil)
		if err != nil {
			return nil, fmt.Errorf("fetch open5e catalog: %w", err)
		}
		lists[i] = recs
	}
	cat, err := NewCatalog(lists[0], lists[1], lists[2], lists[3], lists[4])
	if err != nil {
		return nil, fmt.Errorf("fetch open5e catalog: %w", err)
	}
	cat.LearnEnvironments(lists[5])
	return cat, nil
}

// EndpointResult is what one endpoint's fetch produced.
type EndpointResult struct {
	Endpoint Endpoint
	// Entities are the normalised records, in list order, with fetched_at
	// set. After an error they are those read before it.
	Entities []*lkv1.Entity
	// Records is the number of records read.
	Records int
	Pages   int
	// Invalid lists the records that could not be normalised
	// (*RecordError); they are left out of Entities.
	Invalid []error
	// Err is why the list could not be read completely, or nil.
	Err error
}

// Complete reports whether the endpoint was read entirely and every record
// normalised: only then may anything be concluded from a missing entity.
func (r EndpointResult) Complete() bool { return r.Err == nil && len(r.Invalid) == 0 }

// FetchEndpoint reads and normalises one endpoint. onPage may be nil. A
// v2 rulesets fetch teaches cat the ruleset titles that rules use.
func FetchEndpoint(ctx context.Context, c *Client, ep Endpoint, cat *Catalog, onPage func(Page)) EndpointResult {
	res := EndpointResult{Endpoint: ep}
	recs, err := c.List(ctx, ep.Path(), func(p Page) {
		res.Pages = p.Number
		if onPage != nil {
			onPage(p)
		}
	})
	res.Records = len(recs)
	res.Err = err
	if ep.Version == "v2" && ep.Name == "rulesets" && cat != nil {
		cat.LearnRulesets(recs)
	}
	res.Entities, res.Invalid = NormalizeEndpoint(ep, recs, cat)
	now := timestamppb.Now()
	for _, e := range res.Entities {
		e.FetchedAt = now
	}
	return res
}

// CoverageFromKeys returns what the v2 entities of keys
// ("open5e_v2:<document>:<kind>:<slug>") cover; other keys are ignored.
func CoverageFromKeys(keys []string) Coverage {
	c := newCoverage()
	for _, k := range keys {
		if p, ok := lkv1.ParseEntityKey(k); ok && p.Source == lkv1.Source_SOURCE_OPEN5E_V2 {
			c.add(p.Kind, p.Document, p.Slug)
		}
	}
	return c
}

// FilterV1 keeps the v1 entities that fill a gap in v2 (Coverage.V1Fill),
// those filling a v2 book's gap moved into it (their keys keep the v1
// source: "open5e_v1:srd-2014:rule-section:rest"), each given what its
// text says (fillTextFacts; its duplicates of v2 are not worth the reading).
func FilterV1(es []*lkv1.Entity, cov Coverage, cat *Catalog) ([]*lkv1.Entity, error) {
	var out []*lkv1.Entity
	for _, e := range es {
		fill, into := cov.V1Fill(cat, e)
		if !fill {
			continue
		}
		fillTextFacts(e)
		if d := cat.Document(lkv1.Source_SOURCE_OPEN5E_V2, into); d != nil {
			e.Document = d
			e.Key = lkv1.EntityKey(lkv1.Source_SOURCE_OPEN5E_V1, into, e.GetKind(), e.GetSlug())
		}
		h, err := ingest.ContentHash(e)
		if err != nil {
			return nil, fmt.Errorf("serve %s: %w", e.GetSourceKey(), err)
		}
		e.ContentHash = h
		out = append(out, e)
	}
	return out, nil
}

// FetchAll reads the catalog and every endpoint from c, and returns every
// entity: all of v2, then the v1 fill-ins, then, with a text (nil for
// none), the text's own entities, Open5e's SRD 5.2 entities completed from
// it. It fails on the first endpoint that is not read completely.
func FetchAll(ctx context.Context, c *Client, text *srd52.Source) ([]*lkv1.Entity, error) {
	cat, err := FetchCatalog(ctx, c)
	if err != nil {
		return nil, err
	}
	var v2, v1 []*lkv1.Entity
	for _, ep := range Endpoints() {
		res := FetchEndpoint(ctx, c, ep, cat, nil)
		if res.Err != nil {
			return nil, fmt.Errorf("fetch open5e: %w", res.Err)
		}
		if len(res.Invalid) > 0 {
			return nil, fmt.Errorf("fetch open5e: %w", errors.Join(res.Invalid...))
		}
		if ep.Version == "v2" {
			v2 = append(v2, res.Entities...)
		} else {
			v1 = append(v1, res.Entities...)
		}
	}
	for _, s := range supplements {
		from := v1
		if s.v1.Version == "v2" {
			from = v2
		}
		if err := s.apply(v2, from, cat); err != nil {
			return nil, fmt.Errorf("fetch open5e: %w", err)
		}
	}
	v2 = withoutItemTwins(v2)
	db, err := srddb.Load()
	if err != nil {
		return nil, fmt.Errorf("fetch open5e: %w", err)
	}
	if err := crossCheckSRD(db, v2, v1); err != nil {
		return nil, fmt.Errorf("fetch open5e: %w", err)
	}
	fills, err := FilterV1(v1, CoverageOf(v2), cat)
	if err != nil {
		return nil, fmt.Errorf("fetch open5e: %w", err)
	}
	out := append(v2, fills...)
	if text == nil {
		return out, nil
	}
	book, err := text.Open()
	if err != nil {
		return nil, err
	}
	if err := completeWith(book, v2, nil); err != nil {
		return nil, err
	}
	keys := make([]string, len(v2))
	for i, e := range v2 {
		keys[i] = e.GetKey()
	}
	own, err := textEntities(book, cat, keys)
	if err != nil {
		return nil, err
	}
	return append(out, own...), nil
}

// SnapshotEntities is every entity of the bundled catalogue: the bundled
// Open5e snapshot (read through a local server) completed by the bundled
// SRD 5.2 text, and the text's own entities.
func SnapshotEntities(ctx context.Context) ([]*lkv1.Entity, error) {
	srv, err := open5esnapshot.Start()
	if err != nil {
		return nil, err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Close(cctx)
	}()
	c, err := NewClient(srv.URL, &ClientOptions{PageSize: 1000})
	if err != nil {
		return nil, err
	}
	return FetchAll(ctx, c, srd52.NewSource(nil))
}
