package query

import (
	"context"
	"fmt"
	"strings"

	"lorekeeper.dev/embedder/badgerstore"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// ToStatus exposes toStatus to the black-box tests.
var ToStatus = toStatus

// DecodeCursor and EncodeNameCursor expose the cursor codec to the fuzz test.
var DecodeCursor = func(s, query string) (name, key, snapshot string, offset int, err error) {
	c, err := decodeCursor(s, query)
	if err != nil || c == nil {
		return "", "", "", 0, err
	}
	return c.Name, c.Key, c.Snapshot, c.Offset, nil
}

// EncodeNameCursor makes a name-order cursor, as a page does.
func EncodeNameCursor(query, name, key string) string {
	return (&cursor{Query: query, Name: name, Key: key}).encode()
}

// NameContains exposes nameContains to the black-box tests.
var NameContains = nameContains

// MaxSnapshots is how many ranked snapshots are kept at most.
const MaxSnapshots = maxSnapshots

// MaxCursorOffset is the highest offset a cursor may carry.
const MaxCursorOffset = maxCursorOffset

// PageOfThree pages a snapshot group of three keys from offset, without a
// view: only offsets outside the list may reach it.
func PageOfThree(offset, limit int) (items int, more bool) {
	g := snapGroup{total: 3, order: make([]scored, 3)}
	got, more := g.page(nil, offset, limit, badgerstore.Set{})
	return len(got), more
}

// BM25Text is what a lookup over kinds ranks by BM25 of the question q.
func BM25Text(s *Service, q string, kinds ...lkv1.Kind) (string, error) {
	var out string
	err := s.store.View(context.Background(), func(v *badgerstore.View) error {
		out = s.understand(v, q, kinds).bm25(q)
		return nil
	})
	return out, err
}

// SearchHits is what search's ranking keeps of q over every kind before
// its floor: each hit's slot and score, ranking every candidate (hitsOnly
// false) or only the hits, by meaning and keywords or (semantic false) by
// keywords alone. Scores are given to 9 places: BM25 sums a
// question's terms in map order, so the last bits of a score vary from
// call to call.
func SearchHits(ctx context.Context, s *Service, q string, hitsOnly, semantic bool) ([]string, error) {
	p, err := s.commonPlan(&lkv1.Common{})
	if err != nil {
		return nil, err
	}
	p.kinds = lkv1.Kinds()
	qvec, _ := s.embedQuery(ctx, q)
	sc := s.getScratch()
	defer s.putScratch(sc)
	vh, err := s.searchVectors(ctx, qvec, sc, p.candidates)
	if err != nil {
		return nil, err
	}
	var out []string
	err = s.store.View(ctx, func(v *badgerstore.View) error {
		cand := p.candidates(v)
		var cos *cosine
		if semantic {
			cos = vh.cosine(v, sc)
		}
		u := s.understand(v, q, p.kinds)
		ranks, _ := authoritative(v, cand, u, sayingAll(v, q))
		for _, x := range rank(v, ranks, q, q, cos, rankHow{fuzzy: true, hitsOnly: hitsOnly, cosineWeight: s.opts.CosineWeight, u: u}, sc) {
			if x.hit {
				out = append(out, fmt.Sprintf("%d %s %.9f %v %v", x.slot, v.Name(x.slot), x.score, x.tier, x.exact))
			}
		}
		return nil
	})
	return out, err
}

// Facets are the facets of the readers understand runs, in order.
func Facets() []string {
	var out []string
	for _, rd := range readers {
		out = append(out, rd.facet())
	}
	return out
}

// Reading is one thing a reader read: "field=value" ("!" before a negated
// value), "docs=a,b" or "order=field asc|desc", and the words it read it
// from.
type Reading struct{ Said, Words string }

// Readings reads q as a request over kinds would and returns what each
// reader read, by facet, without the view's memo.
func Readings(s *Service, q string, kinds []lkv1.Kind) (map[string][]Reading, error) {
	out := map[string][]Reading{}
	err := s.store.View(context.Background(), func(v *badgerstore.View) error {
		r := newReading(v, q, kinds)
		if r == nil {
			return nil
		}
		r.readAll()
		for _, f := range r.u.filters {
			field := f.report
			if field == "" {
				field = reported(f.field)
			}
			for _, val := range f.values {
				if f.negated {
					val = "!" + val
				}
				out[f.by] = append(out[f.by], Reading{field + "=" + val, f.words})
			}
		}
		for _, d := range r.docSets {
			out[d.by] = append(out[d.by], Reading{"docs=" + strings.Join(d.keys, ","), d.words})
		}
		if o := r.u.order; o != nil {
			dir := "asc"
			if o.desc {
				dir = "desc"
			}
			out[o.by] = append(out[o.by], Reading{"order=" + o.field + " " + dir, o.words})
		}
		return nil
	})
	return out, err
}
