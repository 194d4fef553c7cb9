package query_test

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"lorekeeper.dev/embedder/usetoonnx"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// facetTexts are the extra texts an entity could be embedded as, besides
// its one embedding text: its name alone, each block (trait, action,
// feature) with the entity's name, and its description in windows of
// about 60 words past the first (the model reads only ~128 tokens).
func facetTexts(e *lkv1.Entity) []string {
	out := []string{strings.ToLower(e.GetName())}
	for _, b := range e.GetBlocks() {
		words := strings.Fields(b.GetName() + ". " + b.GetText())
		out = append(out, strings.ToLower(e.GetName()+": "+strings.Join(words[:min(60, len(words))], " ")))
	}
	words := strings.Fields(e.GetDescription())
	for i := 60; i < len(words); i += 60 {
		out = append(out, strings.ToLower(e.GetName()+": "+strings.Join(words[i:min(i+60, len(words))], " ")))
	}
	return out
}

// TestFacets measures whether several vectors per entity (facetTexts,
// max-pooled with the entity's own vector) rank better by the model alone
// than the one vector the index holds, on the relevance queries over the
// 2014 SRD. It embeds a few thousand short texts the first time (cached
// like the snapshot's vectors), so it runs only with LOREKEEPER_FACETS=1.
func TestFacets(t *testing.T) {
	if os.Getenv("LOREKEEPER_FACETS") == "" {
		t.Skip("set LOREKEEPER_FACETS=1 to measure multi-vector ranking")
	}
	st := snapshotStore(t)
	if snap.emb == nil {
		t.Fatal("no embedding model")
	}
	ctx := context.Background()
	info := st.Model()
	dir, _ := os.UserCacheDir()
	cachePath := filepath.Join(dir, "lorekeeper-test", "facets-"+info.Name+"-"+usetoonnx.ConverterID()[:12]+".gob")
	cache := readVectorCache(cachePath)
	vec := func(texts []string) [][]float32 {
		var todo []string
		for _, x := range texts {
			if _, ok := cache[textKey(x)]; !ok && !slices.Contains(todo, x) {
				todo = append(todo, x)
			}
		}
		for i := 0; i < len(todo); i += 64 {
			part := todo[i:min(i+64, len(todo))]
			got, err := snap.emb.Embed(ctx, part)
			if err != nil {
				t.Fatal(err)
			}
			for j, x := range part {
				cache[textKey(x)] = got[j]
			}
		}
		out := make([][]float32, len(texts))
		for i, x := range texts {
			out[i] = cache[textKey(x)]
		}
		return out
	}
	var ents []*lkv1.Entity
	main := map[string][]float32{}
	facets := map[string][][]float32{}
	for _, e := range snap.entities {
		if e.GetDocument().GetKey() != "srd-2014" {
			continue
		}
		v, _, err := st.CachedVector(ctx, info.Name, e.GetContentHash())
		if err != nil || v == nil {
			t.Fatalf("no vector for %s: %v", e.GetKey(), err)
		}
		ents = append(ents, e)
		main[e.GetKey()] = v
	}
	for i := 0; i < len(ents); i += 200 {
		part := ents[i:min(i+200, len(ents))]
		var texts []string
		for _, e := range part {
			texts = append(texts, facetTexts(e)...)
		}
		vs := vec(texts)
		k := 0
		for _, e := range part {
			n := len(facetTexts(e))
			facets[e.GetKey()] = vs[k : k+n]
			k += n
		}
		writeVectorCache(cachePath, cache)
	}
	dot := func(a, b []float32) float64 {
		s := 0.0
		for i := range a {
			s += float64(a[i]) * float64(b[i])
		}
		return s
	}
	type tally struct {
		n, top5 int
		rr      float64
	}
	var single, pooled, blend tally
	for _, file := range relevanceFiles {
		for _, c := range readRelevance(t, file) {
			if c.Tool == "search_dnd_content" || !slices.Equal(c.Filters.Documents, []string{"srd-2014"}) {
				continue
			}
			q := vec([]string{strings.ToLower(c.Semantic)})[0]
			var cand []*lkv1.Entity
			for _, e := range ents {
				if c.passes(e) {
					cand = append(cand, e)
				}
			}
			for _, m := range []struct {
				t     *tally
				score func(e *lkv1.Entity) float64
			}{
				{&single, func(e *lkv1.Entity) float64 { return dot(q, main[e.GetKey()]) }},
				{&pooled, func(e *lkv1.Entity) float64 {
					s := dot(q, main[e.GetKey()])
					for _, f := range facets[e.GetKey()] {
						s = max(s, dot(q, f))
					}
					return s
				}},
				{&blend, func(e *lkv1.Entity) float64 {
					s, best := dot(q, main[e.GetKey()]), math.Inf(-1)
					for _, f := range facets[e.GetKey()] {
						best = max(best, dot(q, f))
					}
					if math.IsInf(best, -1) {
						return s
					}
					return (s + best) / 2
				}},
			} {
				sorted := slices.Clone(cand)
				slices.SortStableFunc(sorted, func(a, b *lkv1.Entity) int {
					sa, sb := m.score(a), m.score(b)
					switch {
					case sa > sb:
						return -1
					case sa < sb:
						return 1
					}
					return 0
				})
				var got []string
				for _, e := range sorted[:min(10, len(sorted))] {
					got = append(got, e.GetName())
				}
				ok, rr := c.score(got)
				m.t.n++
				m.t.rr += rr
				if ok {
					m.t.top5++
				}
			}
		}
	}
	for _, r := range []struct {
		name string
		t    tally
	}{{"one vector", single}, {"max-pooled facets", pooled}, {"mean of one vector and best facet", blend}} {
		t.Logf("model alone, %-34s %d queries  top5 %5.1f%%  MRR %.3f", r.name, r.t.n, 100*float64(r.t.top5)/float64(r.t.n), r.t.rr/float64(r.t.n))
	}
}

// passes applies a relevance case's tool and filters to e, by brute force.
func (c relevanceCase) passes(e *lkv1.Entity) bool {
	f := c.Filters
	k := e.GetKind()
	kindIs := func(s string) bool { return s == "" || s == k.Slug() }
	switch c.Tool {
	case "lookup_spell":
		sp := e.GetSpell()
		return k == lkv1.Kind_KIND_SPELL && (f.Level == nil || sp.GetLevel() == *f.Level) &&
			(f.School == "" || strings.EqualFold(sp.GetSchool(), f.School)) && (f.Ritual == nil || sp.GetRitual() == *f.Ritual)
	case "lookup_creature":
		cr := e.GetCreature()
		return k == lkv1.Kind_KIND_CREATURE && (f.Type == "" || strings.EqualFold(cr.GetType(), f.Type)) &&
			(f.CRMax == nil || cr.GetChallengeRating() <= *f.CRMax)
	case "lookup_equipment":
		return slices.Contains(lkv1.EquipmentKinds(), k) && kindIs(f.Type)
	case "lookup_character_option":
		return slices.Contains(lkv1.CharacterOptionKinds(), k) && kindIs(f.Type)
	case "lookup_rule":
		return slices.Contains(lkv1.RuleKinds(), k) && kindIs(f.RuleType)
	}
	return false
}
