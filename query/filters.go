package query

import (
	"fmt"
	"strings"

	"lorekeeper.dev/embedder/badgerstore"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// documentAliases are the decided aliases (spec/README.md): the examples'
// keys for the SRDs.
var documentAliases = map[string][]string{
	"srd-5e":   {"srd-2014"},
	"srd":      {"srd-2014"},
	"wotc-srd": {"srd-2014", "wotc-srd"},
	"srd-5.1":  {"srd-2014"},
	"srd-5.2":  {"srd-2024"},
}

// filter is one condition on the candidates, answered from the store's
// indexes inside a view.
type filter func(v *badgerstore.View, set *badgerstore.Set)

func keywords(field string, vals []string, norm func(string) string) filter {
	if len(vals) == 0 {
		return nil
	}
	out := make([]string, 0, len(vals))
	for _, x := range vals {
		x = strings.ToLower(strings.TrimSpace(x))
		if norm != nil {
			x = norm(x)
		}
		out = append(out, x)
	}
	return func(v *badgerstore.View, set *badgerstore.Set) { set.And(v.Postings(field, out...)) }
}

// environments keeps the creatures found in any of the environments said,
// by key or by a word ("swamp": swamp-or-marsh; environmentsSaid).
func environments(said []string) filter {
	if len(said) == 0 {
		return nil
	}
	return func(v *badgerstore.View, set *badgerstore.Set) {
		voc := vocabularyOf(v)
		var vals []string
		for _, s := range said {
			vals = append(vals, environmentsSaid(voc, s)...)
		}
		set.And(v.Postings(badgerstore.FieldEnvironment, vals...))
	}
}

// defenses keeps the creatures whose damage line (field) matches any of
// vals: "fire" those always immune (resistant, vulnerable) to fire,
// "nonmagical slashing" also those so against nonmagical attacks, "any
// slashing" every line naming slashing (badgerstore.DefenseValues).
func defenses(field string, vals []string) filter {
	if len(vals) == 0 {
		return nil
	}
	var out []string
	for _, v := range vals {
		out = append(out, badgerstore.DefenseValues(v)...)
	}
	return func(v *badgerstore.View, set *badgerstore.Set) { set.And(v.Postings(field, out...)) }
}

// allKeywords keeps the slots holding every one of vals.
func allKeywords(field string, vals []string) filter {
	if len(vals) == 0 {
		return nil
	}
	return func(v *badgerstore.View, set *badgerstore.Set) {
		for _, x := range vals {
			set.And(v.Postings(field, x))
		}
	}
}

func boolean(field string, b *bool) filter {
	if b == nil {
		return nil
	}
	val := "false"
	if *b {
		val = "true"
	}
	return func(v *badgerstore.View, set *badgerstore.Set) { set.And(v.Postings(field, val)) }
}

func intRange(name, field string, r *lkv1.IntRange) (filter, error) {
	if r == nil || r.Min == nil && r.Max == nil {
		return nil, nil
	}
	if r.Min != nil && r.Max != nil && *r.Min > *r.Max {
		return nil, invalid(name, "min %d is above max %d", *r.Min, *r.Max)
	}
	var lo, hi *float64
	if r.Min != nil {
		x := float64(*r.Min)
		lo = &x
	}
	if r.Max != nil {
		x := float64(*r.Max)
		hi = &x
	}
	return func(v *badgerstore.View, set *badgerstore.Set) { set.And(v.Range(field, lo, hi)) }, nil
}

func doubleRange(name, field string, r *lkv1.DoubleRange) (filter, error) {
	if r == nil || r.Min == nil && r.Max == nil {
		return nil, nil
	}
	if r.Min != nil && r.Max != nil && *r.Min > *r.Max {
		return nil, invalid(name, "min %g is above max %g", *r.Min, *r.Max)
	}
	return func(v *badgerstore.View, set *badgerstore.Set) { set.And(v.Range(field, r.Min, r.Max)) }, nil
}

// rarity accepts "very-rare" and "very_rare" for "very rare".
func rarity(s string) string {
	return strings.NewReplacer("-", " ", "_", " ").Replace(s)
}

func kindFilter(field string, kinds, allowed []lkv1.Kind) (filter, []lkv1.Kind, error) {
	if len(kinds) == 0 {
		kinds = allowed
	}
	slugs := make([]string, 0, len(kinds))
	for _, k := range kinds {
		ok := false
		for _, a := range allowed {
			ok = ok || a == k
		}
		if !ok {
			return nil, nil, invalid(field, "kind %s is not one this lookup serves", k)
		}
		slugs = append(slugs, k.Slug())
	}
	return func(v *badgerstore.View, set *badgerstore.Set) {
		set.And(v.Postings(badgerstore.FieldKind, slugs...))
	}, kinds, nil
}

// documentSet is the slots of the documents asked for: keys or names,
// case-insensitive, aliases accepted.
func documentSet(v *badgerstore.View, docs []string) badgerstore.Set {
	var keys []string
	for _, d := range docs {
		d = strings.ToLower(strings.TrimSpace(d))
		keys = append(keys, d)
		keys = append(keys, documentAliases[d]...)
		keys = append(keys, v.DocumentKeysNamed(d)...)
	}
	return v.Postings(badgerstore.FieldDocument, keys...)
}

// unknownDocuments are the documents asked for that name no stored
// document at all (key, name or alias): only those deserve a warning. A
// known document whose entities the other filters rule out is an ordinary
// empty answer.
func unknownDocuments(v *badgerstore.View, docs []string) []string {
	var out []string
	for _, d := range docs {
		if documentSet(v, []string{d}).Empty() {
			out = append(out, d)
		}
	}
	return out
}

// documentsWarning is the warning for the unknown documents, or "".
func documentsWarning(v *badgerstore.View, docs []string) string {
	unknown := unknownDocuments(v, docs)
	if len(unknown) == 0 {
		return ""
	}
	return fmt.Sprintf("no document matches %q; list_documents shows the document keys", unknown)
}
