package mcpserver

import (
	"context"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"

	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// A name often stands for a family of items that the books print under
// other names: "vorpal sword" is SRD 5.1's "Vorpal Sword (Longsword)" and
// SRD 5.2's "Vorpal Longsword"; "flame tongue" is "Flame Tongue (Rapier)"
// or "Flame Tongue Dagger"; "+1 longsword" is "Longsword (+1)";
// "studded leather" is "Studded Leather Armor". A lookup_equipment by
// plain name names the family's members it did not return, from every
// book, so that none is missed because its book words it differently.

// maxVariants bounds the names listed (Flame Tongue has 29 in SRD 5.2).
const maxVariants = 40

// Variant is an item of the family a looked-up name stands for.
type Variant struct {
	Name        string `json:"name"`
	URI         string `json:"uri"`
	DocumentKey string `json:"document_key"`
}

// familyPatterns are the name patterns of name's family: "<name> (*",
// "<name> *", "<first> *<last>". A bonus said first ("+1 longsword") has
// none: the lookup itself finds "Longsword (+1)", "Longsword, +1" and
// "Longsword +1", the names in reading order (relevance.ReadingOrder).
func familyPatterns(name string) []string {
	n := strings.Join(strings.Fields(strings.ToLower(name)), " ")
	if n == "" || strings.ContainsAny(n, "*%") || strings.HasPrefix(n, "+") {
		return nil
	}
	out := []string{n + " (*", n + " *"}
	if w := strings.Fields(n); len(w) >= 2 {
		out = append(out, strings.Join(w[:len(w)-1], " ")+" *"+w[len(w)-1])
	}
	return out
}

// variants looks up the family of req's name with req's other filters and
// returns its members that are not among the results already.
func (s *Server) variants(ctx context.Context, req *lkv1.LookupEquipmentRequest, results []Entity) []Variant {
	pats := familyPatterns(req.GetCommon().GetName())
	if len(pats) == 0 || req.GetCommon().GetSemanticQuery() != "" {
		return nil
	}
	seen := map[string]bool{}
	for _, e := range results {
		seen[e.Key] = true
		for _, a := range e.Alternates {
			seen[a.Key] = true // named already ("Also in")
		}
	}
	var out []Variant
	for _, p := range pats {
		r := proto.Clone(req).(*lkv1.LookupEquipmentRequest)
		r.Common.Name, r.Common.Limit, r.Common.Cursor = p, maxVariants, ""
		resp, err := s.client.LookupEquipment(ctx, r)
		if err != nil {
			// The family is a courtesy: the lookup itself succeeded.
			s.log.Debug("family lookup failed", "pattern", p, "err", err)
			continue
		}
		for _, res := range resp.GetResults() {
			e := res.GetEntity()
			if seen[e.GetKey()] || len(out) == maxVariants {
				continue
			}
			seen[e.GetKey()] = true
			out = append(out, Variant{Name: e.GetName(), URI: res.GetUri(), DocumentKey: e.GetDocument().GetKey()})
		}
	}
	slices.SortStableFunc(out, func(a, b Variant) int { return strings.Compare(a.DocumentKey, b.DocumentKey) })
	return out
}

// renderVariants names the family's other members, by document.
func renderVariants(b *strings.Builder, vs []Variant) {
	if len(vs) == 0 {
		return
	}
	b.WriteString("\nOf the same family (look one up by name, or read its URI):\n")
	for i := 0; i < len(vs); {
		j := i
		var names []string
		for ; j < len(vs) && vs[j].DocumentKey == vs[i].DocumentKey; j++ {
			names = append(names, vs[j].Name)
		}
		b.WriteString("- " + vs[i].DocumentKey + ": " + strings.Join(names, ", ") + "\n")
		i = j
	}
}
