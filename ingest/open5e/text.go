// The run's use of a book's own text (Options.Text): it completes the v2
// endpoints' entities of the book, then syncs its own entities, those
// Open5e lacks, as the last endpoint.

package open5e

import (
	"context"
	"fmt"
	"slices"

	"google.golang.org/protobuf/types/known/timestamppb"

	"lorekeeper.dev/ingest"
	"lorekeeper.dev/ingest/srd52"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// openText reads Options.Text once per run; nil, nil without one.
func (r *run) openText() (*srd52.Book, error) {
	if r.f.opts.Text == nil {
		return nil, nil
	}
	if !r.textRead {
		r.textRead = true
		r.text, r.textErr = r.f.opts.Text.Open()
		if r.textErr != nil {
			r.f.log.Error("the SRD 5.2 text could not be read: its entities keep what was published, and Open5e's records are not completed from it", "err", r.textErr)
		}
	}
	return r.text, r.textErr
}

// completeFromText gives the book's entities among es what the text
// states and they lack (srd52.Book.Complete) and hashes them again. keys
// are the v2 entity keys known so far, for the text's links. A text that
// cannot be read is no error of the endpoint (openText says so once).
func (r *run) completeFromText(_ context.Context, es []*lkv1.Entity, keys []string) error {
	book, err := r.openText()
	if book == nil || err != nil {
		return nil
	}
	return completeWith(book, es, keys)
}

// completeWith completes es from book and hashes the changed entities
// again; keys are v2 entity keys besides es's.
func completeWith(book *srd52.Book, es []*lkv1.Entity, keys []string) error {
	for _, e := range es {
		keys = append(keys, e.GetKey())
	}
	for _, e := range book.Complete(es, hasFrom(keys)) {
		// The text may say more than the record did (Conjure
		// Celestial's radiant damage and Dexterity save): read it again.
		fillTextFacts(e)
		h, err := ingest.ContentHash(e)
		if err != nil {
			return fmt.Errorf("complete %s from the SRD 5.2 text: %w", e.GetKey(), err)
		}
		e.ContentHash = h
	}
	return nil
}

// hasFrom tells, of a slug, the key of the v2 entity of the text's book
// with that slug among keys, in the rule kinds (the first kind in
// lkv1.RuleKinds' order when several have it); "" when none.
func hasFrom(keys []string) srd52.Has {
	bySlug := map[string]string{}
	rank := map[string]int{}
	for _, k := range keys {
		p, ok := lkv1.ParseEntityKey(k)
		if !ok || p.Source != lkv1.Source_SOURCE_OPEN5E_V2 || p.Document != srd52.DocumentKey {
			continue
		}
		i := slices.Index(lkv1.RuleKinds(), p.Kind)
		if i < 0 {
			continue
		}
		if had, ok := rank[p.Slug]; !ok || i < had {
			bySlug[p.Slug], rank[p.Slug] = k, i
		}
	}
	return func(slug string) string { return bySlug[slug] }
}

// textEntities are the text's entities that the v2 entities of keys do
// not have, in the book's document as the catalog knows it.
func textEntities(book *srd52.Book, cat *Catalog, keys []string) ([]*lkv1.Entity, error) {
	doc := book.Document(cat.Document(lkv1.Source_SOURCE_OPEN5E_V2, srd52.DocumentKey))
	es, err := book.Entities(doc, hasFrom(keys))
	if err != nil {
		return nil, err
	}
	now := timestamppb.Now()
	for _, e := range es {
		e.FetchedAt = now
	}
	return es, nil
}

// syncText syncs the text's own entities as the endpoint ep
// (TextEndpoint), after the Open5e endpoints: v2Keys are what they list
// (or listed last, for those not in this run), so that nothing the text
// publishes has a name Open5e gives the book's rules.
func (r *run) syncText(ctx context.Context, ep Endpoint, cat *Catalog, st *lkv1.EndpointState, v2Keys []string, es *EndpointSummary) {
	res := EndpointResult{Endpoint: ep, Pages: 1}
	var entities []*lkv1.Entity
	book, err := r.openText()
	if err == nil {
		entities, err = textEntities(book, cat, v2Keys)
	}
	res.Err = err
	res.Records = len(entities)
	r.publishEndpoint(ctx, ep, res, entities, st, es)
}
