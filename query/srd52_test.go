package query_test

import (
	"slices"
	"strings"
	"testing"

	lkingest "lorekeeper.dev/ingest"
	"lorekeeper.dev/ingest/srd52"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
	"lorekeeper.dev/query"
)

// TestLookupRules_srd52Glossary walks SRD 5.2's Rules Glossary: every
// entry is found by lookup_rule in the 2024 rules by its name, by its name
// with its tag as the glossary prints it ("Grappled [Condition]") and
// with the tag as words ("grappled condition"), first and with its whole
// text.
func TestLookupRules_srd52Glossary(t *testing.T) {
	svc := query.NewService(snapshotStore(t), nil, nil)
	b, err := srd52.Open()
	if err != nil {
		t.Fatal(err)
	}
	tagged := 0
	for _, g := range b.Glossary {
		names := []string{g.Name}
		if g.Tag != "" {
			tagged++
			names = append(names, g.Name+" ["+g.Tag+"]", strings.ToLower(g.Name+" "+g.Tag))
		}
		for _, name := range names {
			resp, err := svc.LookupRules(t.Context(), &lkv1.LookupRulesRequest{Common: &lkv1.Common{Name: name, GameSystems: []string{"5e-2024"}}})
			if err != nil {
				t.Fatal(err)
			}
			rs := resp.GetResults()
			if len(rs) == 0 || !strings.EqualFold(rs[0].GetEntity().GetName(), g.Name) || rs[0].GetEntity().GetDocument().GetKey() != srd52.DocumentKey {
				t.Errorf("lookup_rule %q (2024): %d results, first %q (%s); want %q of SRD 5.2", name, len(rs), firstName(rs), resp.GetNameMatch(), g.Name)
				continue
			}
			if p, ok := wholeText(rs[0].GetEntity(), g.Text); !ok {
				t.Errorf("lookup_rule %q (2024): %s lacks the glossary's %q", name, rs[0].GetUri(), p)
			}
		}
	}
	if tagged == 0 {
		t.Fatal("no tagged glossary entry")
	}
}

func firstName(rs []*lkv1.Result) string {
	if len(rs) == 0 {
		return ""
	}
	return rs[0].GetEntity().GetName()
}

// wholeText reports whether e holds every paragraph of text, by its
// opening words (Open5e's copies of the conditions word the odd sentence
// differently), and the first paragraph it lacks.
func wholeText(e *lkv1.Entity, text string) (string, bool) {
	var all strings.Builder
	all.WriteString(lkingest.Words(e.GetDescription()))
	for _, b := range e.GetBlocks() {
		all.WriteString(lkingest.Words(b.GetText()))
	}
	for _, p := range strings.Split(text, "\n\n") {
		w := strings.Fields(lkingest.Words(p))
		if len(w) > 0 && !strings.Contains(all.String(), " "+strings.Join(w[:min(len(w), 8)], " ")+" ") {
			return p, false
		}
	}
	return "", true
}

// TestLookupRules_tagged: a name asked with a glossary tag finds the rule
// of that name in that family only: "grappled condition" SRD 5.1's and SRD
// 5.2's Grappled, "dash action" the Dash action, "prone action" nothing.
func TestLookupRules_tagged(t *testing.T) {
	svc := query.NewService(snapshotStore(t), nil, nil)
	for _, tc := range []struct {
		name, match string
		want        []string // keys
	}{
		{"grappled condition", "tag", []string{"open5e_v2:srd-2014:condition:grappled", "open5e_v2:srd-2024:condition:grappled"}},
		{"Grappled [Condition]", "tag", []string{"open5e_v2:srd-2014:condition:grappled", "open5e_v2:srd-2024:condition:grappled"}},
		{"dash action", "tag", []string{"srd_text:srd-2024:rule:dash"}},
		{"Cone [Area of Effect]", "exact", nil}, // the text's source key, printed so
		{"prone action", "", nil},
	} {
		resp, err := svc.LookupRules(t.Context(), &lkv1.LookupRulesRequest{Common: &lkv1.Common{Name: tc.name, Documents: &lkv1.DocumentFilter{Documents: []string{"srd-2014", "srd-2024"}}}})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range resp.GetResults() {
			got = append(got, r.GetEntity().GetKey())
			for _, a := range r.GetAlternates() {
				got = append(got, a.GetKey())
			}
		}
		slices.Sort(got)
		if tc.match == "exact" {
			if len(got) != 1 || !strings.HasSuffix(got[0], ":cone") {
				t.Errorf("%q: %q", tc.name, got)
			}
			continue
		}
		if resp.GetNameMatch() != tc.match || !slices.Equal(got, tc.want) {
			t.Errorf("%q: %q (match %q), want %q (match %q)", tc.name, got, resp.GetNameMatch(), tc.want, tc.match)
		}
	}
}

// TestSRD52_questions: a DM's 2024 rules questions put the glossary entry
// that answers them, SRD 5.2's, in the top three, by search and by
// lookup_rule's semantic_query (in 2024). A question that names no
// edition may be answered by SRD 5.1's rule of that name.
func TestSRD52_questions(t *testing.T) {
	st := snapshotStore(t)
	if snap.emb == nil {
		t.Fatal("the embedding model is not available")
	}
	svc := query.NewService(st, snap.emb, nil)
	for _, tc := range []struct {
		question string
		want     []string // any of them in the top three
		anyBook  bool     // search may answer with SRD 5.1's
	}{
		{"how do I grapple someone in the 2024 rules", []string{"Grappling", "Unarmed Strike"}, false},
		{"how far can I jump in 2024", []string{"Jumping", "Long Jump", "High Jump"}, false},
		{"when can I make an opportunity attack", []string{"Opportunity Attacks"}, true},
	} {
		resp, err := svc.Search(t.Context(), &lkv1.SearchRequest{Query: tc.question, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		rules := group(resp, lkv1.Kind_KIND_RULE)
		top := srd52Names(rules)
		if tc.anyBook {
			top = names(rules)
		}
		if !anyIn(top[:min(3, len(top))], tc.want) {
			t.Errorf("search %q: rules %q, want one of %q in the top three of the rules", tc.question, top[:min(5, len(top))], tc.want)
		}
		lr, err := svc.LookupRules(t.Context(), &lkv1.LookupRulesRequest{Common: &lkv1.Common{SemanticQuery: tc.question, GameSystems: []string{"5e-2024"}, Limit: 3}})
		if err != nil {
			t.Fatal(err)
		}
		got := srd52Names(lr.GetResults())
		if !anyIn(got, tc.want) {
			t.Errorf("lookup_rule semantic_query %q (2024): %q, want one of %q", tc.question, got, tc.want)
		}
		t.Logf("%q: search's rules %q; lookup_rule (2024) %q", tc.question, top[:min(3, len(top))], got)
	}
}

// srd52Names is the names of rs, each not SRD 5.2's with its book: a
// glossary entry is SRD 5.2's, not SRD 5.1's rule of its name.
func srd52Names(rs []*lkv1.Result) []string {
	out := names(rs)
	for i, r := range rs {
		if d := r.GetEntity().GetDocument().GetKey(); d != srd52.DocumentKey {
			out[i] += " (" + d + ")"
		}
	}
	return out
}

func anyIn(got, want []string) bool {
	return slices.ContainsFunc(got, func(n string) bool { return slices.Contains(want, n) })
}
