package main

import (
	"encoding/json"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lorekeeper.dev/mcpserver"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// The prompts, completions and resource list over every document of the
// whole catalogue (issue 25): what each is checked against is derived from
// the snapshot's entities, never a list of books.

// catalogueDoc is one stored document as the snapshot's entities make it.
type catalogueDoc struct {
	source, key, system string
	counts              map[string]int             // by kind slug
	names               map[string]map[string]bool // kind slug → lower-case names
}

func (d *catalogueDoc) uri() string {
	return mcpserver.DocumentURIPrefix + d.source + "/" + url.PathEscape(d.key)
}

// catalogueDocuments are the snapshot's documents by "source/key".
func catalogueDocuments(t *testing.T) map[string]*catalogueDoc {
	t.Helper()
	es, err := snapshotEntities()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*catalogueDoc{}
	for _, e := range es {
		doc := e.GetDocument()
		id := doc.GetSource().Slug() + "/" + doc.GetKey()
		d := out[id]
		if d == nil {
			d = &catalogueDoc{source: doc.GetSource().Slug(), key: doc.GetKey(), system: doc.GetGameSystem(), counts: map[string]int{}, names: map[string]map[string]bool{}}
			out[id] = d
		}
		kind := e.GetKind().Slug()
		d.counts[kind]++
		if d.names[kind] == nil {
			d.names[kind] = map[string]bool{}
		}
		d.names[kind][strings.ToLower(e.GetName())] = true
	}
	return out
}

// entityDocument is the document key of an entity URI.
func entityDocument(t *testing.T, uri string) string {
	t.Helper()
	k, ok := lkv1.ParseEntityKey(strings.TrimPrefix(uri, lkv1.URIPrefix))
	if !ok {
		t.Fatalf("%s is not an entity URI", uri)
	}
	return k.Document
}

// checkEveryDocument runs in TestMCP_editionsPromptsErrors, over its
// session: storing the whole catalogue again would cost more than all of
// these calls.
func checkEveryDocument(t *testing.T, cs *mcp.ClientSession) {
	docs := catalogueDocuments(t)
	keys := map[string]bool{}
	for _, d := range docs {
		keys[d.key] = true
	}
	if len(docs) < 20 {
		t.Fatalf("the snapshot has %d documents; the whole pack has more than 20", len(docs))
	}

	t.Run("resources/list lists every document", func(t *testing.T) {
		want := map[string]bool{}
		for _, d := range docs {
			want[d.uri()] = true
		}
		got := map[string]bool{}
		for r, err := range cs.Resources(t.Context(), nil) {
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(r.URI, mcpserver.DocumentURIPrefix) {
				continue
			}
			if got[r.URI] {
				t.Errorf("%s listed twice", r.URI)
			}
			got[r.URI] = true
			if d := docs[strings.TrimPrefix(r.URI, mcpserver.DocumentURIPrefix)]; d != nil && (r.Name != d.key || r.Title == "") {
				t.Errorf("%s: name %q, title %q; want the key %q and the book's title", r.URI, r.Name, r.Title, d.key)
			}
		}
		for _, u := range slices.Sorted(maps.Keys(want)) {
			if !got[u] {
				t.Errorf("resources/list lacks %s", u)
			}
		}
		for _, u := range slices.Sorted(maps.Keys(got)) {
			if !want[u] {
				t.Errorf("resources/list lists %s, which no entity is in", u)
			}
		}
	})

	t.Run("completions offer every document", func(t *testing.T) {
		for _, ref := range []struct {
			ref *mcp.CompleteReference
			arg string
		}{
			{&mcp.CompleteReference{Type: "ref/prompt", Name: "homebrew_overview"}, "document"},
			{&mcp.CompleteReference{Type: "ref/prompt", Name: "plan_encounter"}, "documents"},
			{&mcp.CompleteReference{Type: "ref/resource", URI: mcpserver.DocumentURITemplate}, "key"},
		} {
			complete := func(value string) mcp.CompletionResultDetails {
				t.Helper()
				res, err := cs.Complete(t.Context(), &mcp.CompleteParams{Ref: ref.ref, Argument: mcp.CompleteParamsArgument{Name: ref.arg, Value: value}})
				if err != nil {
					t.Fatalf("complete %s %s=%q: %v", ref.ref.Name+ref.ref.URI, ref.arg, value, err)
				}
				return res.Completion
			}
			all := complete("")
			if got := slices.Sorted(slices.Values(all.Values)); !slices.Equal(got, slices.Sorted(maps.Keys(keys))) || all.HasMore || all.Total != len(keys) {
				t.Errorf("complete %s %s=\"\": %v (total %d, has more %v); want the catalogue's %d documents %v",
					ref.ref.Name+ref.ref.URI, ref.arg, got, all.Total, all.HasMore, len(keys), slices.Sorted(maps.Keys(keys)))
			}
			// Each by the start of its key, and as the last of a list.
			for k := range keys {
				prefix := k[:min(3, len(k))]
				if got := complete(prefix).Values; !slices.Contains(got, k) {
					t.Errorf("complete %s %s=%q: %v, want %s", ref.ref.Name+ref.ref.URI, ref.arg, prefix, got, k)
				}
				if ref.arg == "documents" {
					if got := complete("srd-2014," + prefix).Values; !slices.Contains(got, "srd-2014,"+k) {
						t.Errorf("complete plan_encounter documents=%q: %v, want srd-2014,%s", "srd-2014,"+prefix, got, k)
					}
				}
			}
		}
	})

	t.Run("homebrew_overview of each document gives its entries", func(t *testing.T) {
		for _, key := range slices.Sorted(maps.Keys(keys)) {
			text, emb := getPrompt(t, cs, "homebrew_overview", map[string]string{"document": key})
			var cards []string
			for _, r := range emb {
				cards = append(cards, r.URI)
			}
			// A key two sources share (a v1 supplement of its v2 book) is
			// one overview per source, each naming the resource that lists
			// all its entries.
			for _, d := range docs {
				if d.key == key {
					if !strings.Contains(text, d.uri()) {
						t.Errorf("homebrew_overview(%s) does not name %s", key, d.uri())
					}
					checkDocument(t, cs, d)
				}
			}
			if !strings.Contains(text, key) || len(cards) == 0 {
				t.Errorf("homebrew_overview(%s): %d cards, text:\n%s", key, len(cards), text)
			}
			for _, u := range cards {
				if doc := entityDocument(t, u); doc != key {
					t.Errorf("homebrew_overview(%s) embeds %s, from %s", key, u, doc)
				}
			}
		}
	})

	t.Run("plan_encounter draws from each monster book", func(t *testing.T) {
		books := map[string]int{}
		for _, d := range docs {
			books[d.key] += d.counts["creature"]
		}
		maps.DeleteFunc(books, func(_ string, n int) bool { return n == 0 })
		if len(books) < 5 {
			t.Fatalf("%d documents with creatures: %v", len(books), books)
		}
		line := regexp.MustCompile(`(?m)^- (.+) \(CR [^,]+, [\d,]+ XP, ([^)]+)\): up to \d+ within the budget · (\S+)$`)
		// Parties from the weakest to the strongest: each book has
		// creatures some of them can fight.
		parties := []string{"5,5,5,5", "1,1", "3,3,3,3", "10,10,10,10", "17,17,17,17,17"}
		for _, book := range slices.Sorted(maps.Keys(books)) {
			drawn := 0
			for _, party := range parties {
				text, emb := getPrompt(t, cs, "plan_encounter", map[string]string{"party_levels": party, "documents": book})
				for _, m := range line.FindAllStringSubmatch(text, -1) {
					if m[2] != book {
						t.Errorf("plan_encounter(%s, documents=%s) proposes %s from %s", party, book, m[1], m[2])
					}
				}
				for _, u := range uris(emb) {
					if doc := entityDocument(t, u); doc != book {
						t.Errorf("plan_encounter(%s, documents=%s) embeds %s", party, book, u)
					}
					drawn++
				}
				if len(emb) > 0 {
					break
				}
			}
			if drawn == 0 {
				t.Errorf("plan_encounter draws no creature from %s (%d creatures) for any of the parties %q", book, books[book], parties)
			}
		}
	})

	t.Run("compare_editions pairs the SRDs, and A5E only when asked", func(t *testing.T) {
		// Names the two SRDs and a Level Up book share, per kind.
		a5e := map[string]map[string]bool{}
		for _, d := range docs {
			if d.system == "a5e" {
				for kind, names := range d.names {
					if a5e[kind] == nil {
						a5e[kind] = map[string]bool{}
					}
					maps.Copy(a5e[kind], names)
				}
			}
		}
		old, new := docs["open5e_v2/srd-2014"], docs["open5e_v2/srd-2024"]
		// Up to perKind names of each kind, spread over the alphabet: every
		// one would be 1,600 prompts.
		const perKind = 40
		checked := map[string]int{}
		for _, kind := range slices.Sorted(maps.Keys(old.names)) {
			var shared []string
			for _, name := range slices.Sorted(maps.Keys(old.names[kind])) {
				if new.names[kind][name] && a5e[kind][name] {
					shared = append(shared, name)
				}
			}
			for i := range min(len(shared), perKind) {
				name := shared[i*len(shared)/min(len(shared), perKind)]
				checked[kind]++
				_, emb := getPrompt(t, cs, "compare_editions", map[string]string{"name": name, "kind": kind})
				if got := docsOf(t, emb); !slices.Equal(got, []string{"srd-2014", "srd-2024"}) {
					t.Errorf("compare_editions(%s, %s) embeds %v, want SRD 5.1's and SRD 5.2's", name, kind, got)
				}
				_, emb = getPrompt(t, cs, "compare_editions", map[string]string{"name": name, "kind": kind, "edition": "a5e"})
				if got := docsOf(t, emb); len(got) != 2 || got[0] != "srd-2014" || !isA5E(docs, got[1]) {
					t.Errorf("compare_editions(%s, %s, a5e) embeds from %v, want SRD 5.1's and a Level Up book's", name, kind, got)
				}
			}
		}
		if checked["creature"] == 0 || checked["spell"] == 0 {
			t.Fatalf("names in both SRDs and a Level Up book, by kind: %v; want creatures and spells among them", checked)
		}
		t.Logf("compared names in both SRDs and a Level Up book, by kind: %v", checked)
		// The names completion offers follow: a creature only Level Up's
		// books have is offered for edition a5e, and not by default.
		var only string
		for _, name := range slices.Sorted(maps.Keys(a5e["creature"])) {
			if !old.names["creature"][name] && !new.names["creature"][name] && len(name) > 8 {
				only = name
				break
			}
		}
		if only == "" {
			t.Fatal("no creature name is Level Up's alone")
		}
		for edition, want := range map[string]bool{"a5e": true, "": false} {
			res, err := cs.Complete(t.Context(), &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "compare_editions"},
				Argument: mcp.CompleteParamsArgument{Name: "name", Value: only}, Context: &mcp.CompleteContext{Arguments: map[string]string{"edition": edition}}})
			if err != nil {
				t.Fatal(err)
			}
			got := slices.ContainsFunc(res.Completion.Values, func(v string) bool { return strings.EqualFold(v, only) })
			if got != want {
				t.Errorf("complete compare_editions name=%q with edition %q: %v; want it offered: %v", only, edition, res.Completion.Values, want)
			}
		}
	})
}

// checkDocument reads every page of d's resource: together they list each
// of its entities once, as many of each kind as the catalogue holds, in
// the markdown as in the JSON.
func checkDocument(t *testing.T, cs *mcp.ClientSession, d *catalogueDoc) {
	t.Helper()
	counts := map[string]int{}
	seen := map[string]bool{}
	uri := d.uri()
	for pages := 0; uri != ""; pages++ {
		if pages > 20 {
			t.Fatalf("%s: over 20 pages", d.uri())
		}
		res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
		if err != nil || len(res.Contents) != 2 {
			t.Fatalf("read %s: %v", uri, err)
		}
		var page struct {
			Entities []struct{ Name, Kind, URI string }
			Next     string
		}
		if err := json.Unmarshal([]byte(res.Contents[1].Text), &page); err != nil {
			t.Fatalf("%s JSON: %v", uri, err)
		}
		for _, e := range page.Entities {
			if seen[e.URI] || !strings.Contains(res.Contents[0].Text, e.URI) || entityDocument(t, e.URI) != d.key {
				t.Errorf("%s lists %s twice, from another document, or not in its markdown", uri, e.URI)
			}
			seen[e.URI] = true
			counts[e.Kind]++
		}
		uri = page.Next
	}
	if !maps.Equal(counts, d.counts) {
		t.Errorf("%s: lists %v; want the catalogue's %v", d.uri(), counts, d.counts)
	}
}

func docsOf(t *testing.T, emb []*mcp.ResourceContents) []string {
	t.Helper()
	var out []string
	for _, u := range uris(emb) {
		out = append(out, entityDocument(t, u))
	}
	return out
}

func isA5E(docs map[string]*catalogueDoc, key string) bool {
	for _, d := range docs {
		if d.key == key {
			return d.system == "a5e"
		}
	}
	return false
}
