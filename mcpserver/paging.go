package mcpserver

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// Paging is what every lookup and search_dnd_content take besides their
// filters: a page cursor and how much of each entity to return.
type Paging struct {
	Cursor string `json:"cursor,omitempty" jsonschema:"next_cursor of the previous page (same arguments)."`
	Detail string `json:"detail,omitempty" jsonschema:"auto (default: up to 3 cards, then a line each), full or summary (a line each)."`
}

// paging exposes Paging to the generic tool handler.
func (p Paging) paging() Paging { return p }

// detail is how much of each result an answer carries.
type detail int

const (
	// detailAuto, the default, keeps an answer in a size an assistant can
	// hold: the first fullCards results as cards (their structured
	// entities without the texts the cards already carry), the rest as
	// one-line summaries.
	detailAuto detail = iota
	// detailFull is every result in full, texts in the structured
	// result too.
	detailFull
	// detailSummary is one line per result.
	detailSummary
)

// A default answer gives at most fullCards results in full, and no more
// than cardBytes of cards (at least one card): a lookup by name rarely has
// more than three (one per book); a filtered list (every dragon) gets its
// first two or three stat blocks in full and the rest to choose from, in
// about 10 KB of text an assistant can hold.
const (
	fullCards = 3
	cardBytes = 8 << 10
)

// cardsWithin is how many of es a default answer gives in full.
func cardsWithin(es []Entity, part string) int {
	n, size := 0, 0
	for i := range es {
		if n == fullCards {
			break
		}
		size += len(lookupCard(&es[i], part))
		if n > 0 && size > cardBytes {
			break
		}
		n++
	}
	return n
}

// detailArg reads in's detail argument, or returns an argument error.
func detailArg(in any) (detail, error) {
	p, ok := in.(interface{ paging() Paging })
	if !ok {
		return detailAuto, nil
	}
	switch strings.ToLower(strings.TrimSpace(p.paging().Detail)) {
	case "", "auto":
		return detailAuto, nil
	case "full":
		return detailFull, nil
	case "summary":
		return detailSummary, nil
	}
	return detailAuto, argErr("detail", fmt.Sprintf("unknown value %q", p.paging().Detail), "auto", "full", "summary")
}

// withoutTexts is e without the texts its card carries (description,
// higher levels, the blocks' text), for the structured result beside the
// card: each fact once. The blocks keep their names and stat lines.
// attributed says which documents' attribution the answer gave already.
func withoutTexts(e Entity, attributed map[string]bool) Entity {
	e.Description, e.HigherLevel = "", ""
	if len(e.Blocks) > 0 {
		bs := make([]Block, len(e.Blocks))
		for i, b := range e.Blocks {
			b.Text = ""
			bs[i] = b
		}
		e.Blocks = bs
	}
	if attributed[e.DocumentKey] {
		e.Attribution = ""
	}
	attributed[e.DocumentKey] = true
	return e
}

// summaries keeps each entity's identity and document and puts its key
// facts on one line.
func summaries(es []Entity) []Entity {
	out := make([]Entity, len(es))
	for i := range es {
		e := &es[i]
		out[i] = Entity{
			URI: e.URI, Key: e.Key, Slug: e.Slug, Kind: e.Kind, Name: e.Name, SimilarityScore: e.SimilarityScore,
			Document: e.Document, DocumentKey: e.DocumentKey, DocumentName: e.DocumentName,
			DocumentSource: e.DocumentSource, GameSystem: e.GameSystem, Summary: keyFacts(e),
			// The other books' copies, by their documents: their URIs
			// would grow a summary's structured result by half.
			AlsoIn: alsoDocuments(e.DocumentKey, e.Alternates),
			also:   alsoIn(e.DocumentKey, e.Alternates),
		}
	}
	return out
}

// briefs are es as a group the question did not ask for gives them when an
// answer is too long: what names and cites each, nothing more.
func briefs(es []Entity) []Entity {
	out := make([]Entity, len(es))
	for i := range es {
		e := &es[i]
		out[i] = Entity{URI: e.URI, Key: e.Key, Kind: e.Kind, Name: e.Name, DocumentKey: e.DocumentKey}
	}
	return out
}

// keyFacts is an entity's one-line summary: what a player checks first.
func keyFacts(e *Entity) string {
	var facts []string
	add := func(f string, args ...any) { facts = append(facts, fmt.Sprintf(f, args...)) }
	switch {
	case e.Spell != nil:
		sp := e.Spell
		facts = append(facts, summary(e))
		dur := sp.Duration
		if strings.EqualFold(dur, castingTime(sp.CastingTime)) {
			// Cast in 10 minutes, lasting 10 minutes: said once each.
			dur = "duration " + dur
		}
		for _, f := range []string{castingTime(sp.CastingTime), sp.Range, sp.Components, dur} {
			if f != "" {
				facts = append(facts, f)
			}
		}
		if sp.Concentration {
			facts = append(facts, "concentration")
		}
		if sp.Ritual {
			facts = append(facts, "ritual")
		}
		if sp.DamageRoll != "" {
			facts = append(facts, strings.TrimSpace(sp.DamageRoll+" "+strings.Join(sp.DamageTypes, "/")))
		}
		if sp.HealingRoll != "" {
			add("heals %s", healing(sp.HealingRoll, e.Description))
		}
		if sp.SavingThrowAbility != "" {
			add("%s save", title(sp.SavingThrowAbility))
		}
	case e.Creature != nil:
		c := e.Creature
		facts = append(facts, summary(e))
		if c.ArmorClass > 0 { // unknown otherwise (a homebrew monster)
			add("AC %d", c.ArmorClass)
		}
		if c.HitPoints > 0 {
			add("HP %d", c.HitPoints)
		}
		if sp := speed(c); sp != "" {
			add("speed %s", sp)
		}
		if c.ExperiencePoints > 0 {
			add("%s XP", thousands(c.ExperiencePoints))
		}
	case e.Item != nil:
		// The summary has the rarity, damage, AC and cost already.
		it := e.Item
		facts = append(facts, summary(e))
		if it.RequiresAttunement {
			facts = append(facts, "requires attunement")
		}
		if w := it.Weapon; w != nil && w.Mastery != "" {
			add("mastery %s", w.Mastery)
		}
		if it.WeightLb != nil && *it.WeightLb > 0 {
			add("%s lb.", num(*it.WeightLb))
		}
	default:
		facts = append(facts, summary(e))
	}
	return strings.Join(facts, " · ")
}

// renderSummaries renders a lookup as one line per entity.
func renderSummaries(noun string, out *LookupOutput) string {
	var b strings.Builder
	if out.Count == 0 {
		b.WriteString(out.Message + "\n")
	} else {
		fmt.Fprintf(&b, "Found %d %s (%s ranking; summaries: read a URI for the full entry).\n", out.Count, plural(noun, out.Count), out.Ranking)
	}
	renderNotes(&b, out.FallbackReason, out.Warnings)
	renderPartNote(&b, noun, out)
	renderUnderstood(&b, out.understood)
	b.WriteString("\n")
	for i := range out.Results {
		e := &out.Results[i]
		fmt.Fprintf(&b, "- **%s** — %s *%s (%s)* · %s%s\n", e.Name, sentence(e.Summary), e.DocumentName, e.DocumentKey, e.URI, e.also)
	}
	renderVariants(&b, out.Variants)
	b.WriteString(pageNote(out.NextCursor, out.Total, out.Count))
	return b.String()
}

// sentence ends s with a full stop, unless it has one ("6 lb.") or an
// ellipsis ("Thief's…"): a summary line printed "6 lb.." and "…." before.
func sentence(s string) string {
	if strings.HasSuffix(s, ".") || strings.HasSuffix(s, "…") || strings.HasSuffix(s, "!") || strings.HasSuffix(s, "?") {
		return s
	}
	return s + "."
}

// alsoIn names a summary's copies in other books, by document key (and
// name, when theirs is another): " · also in srd-2024, bfrd (as Hyena,
// Giant)". Their URIs are in the structured result.
func alsoIn(doc string, alts []Alternate) string {
	var keys, same []string
	for _, a := range alts {
		switch {
		case a.DocumentKey == doc:
			// Another entry of that name in the same book (its section
			// in its name), not a copy.
			same = append(same, a.Name)
		case a.Name != "":
			keys = append(keys, a.DocumentKey+" (as "+a.Name+")")
		default:
			keys = append(keys, a.DocumentKey)
		}
	}
	var out string
	if len(keys) > 0 {
		out += " · also in " + strings.Join(keys, ", ")
	}
	if len(same) > 0 {
		out += " · see also " + strings.Join(same, ", ")
	}
	return out
}

// alsoDocuments are the documents of alts other than doc, once each.
func alsoDocuments(doc string, alts []Alternate) []string {
	var out []string
	for _, a := range alts {
		if a.DocumentKey != doc && !slices.Contains(out, a.DocumentKey) {
			out = append(out, a.DocumentKey)
		}
	}
	return out
}

// pageNote tells the reader how to get the next page, if there is one.
func pageNote(next string, total uint64, count int) string {
	if next == "" {
		return ""
	}
	if total > 0 {
		return fmt.Sprintf("\n%d of %d shown. Next page: repeat the call with cursor=%q.\n", count, total, next)
	}
	return fmt.Sprintf("\nMore results follow. Next page: repeat the call with cursor=%q.\n", next)
}

// resourceLinks are resource_link content items for entities, so that a
// client can fetch each in full with resources/read. They carry no
// description: the text beside them has each entity's facts already.
func resourceLinks(es []Entity) []mcp.Content {
	out := make([]mcp.Content, 0, len(es))
	for i := range es {
		e := &es[i]
		out = append(out, &mcp.ResourceLink{
			URI:      e.URI,
			Name:     e.Key,
			Title:    e.Name + " (" + e.DocumentName + ")",
			MIMEType: "text/markdown",
		})
	}
	return out
}

// seeAlsoLinks are resource_link content items for the entities the
// rules among es name in their See also, each once and none of es itself.
func seeAlsoLinks(es []Entity) []mcp.Content {
	seen := map[string]bool{}
	for i := range es {
		seen[es[i].URI] = true
	}
	var out []mcp.Content
	for i := range es {
		if es[i].Rule == nil {
			continue
		}
		for _, l := range es[i].Rule.SeeAlso {
			if l.URI == "" || seen[l.URI] {
				continue
			}
			seen[l.URI] = true
			out = append(out, &mcp.ResourceLink{
				URI:      l.URI,
				Name:     lkv1.KeyFromURI(l.URI),
				Title:    l.Name + " (see also of " + es[i].Name + ")",
				MIMEType: "text/markdown",
			})
		}
	}
	return out
}

func withLinks(res *mcp.CallToolResult, links []mcp.Content) *mcp.CallToolResult {
	res.Content = append(res.Content, links...)
	return res
}

// DocumentURIPrefix starts the URI of a document resource:
// lorekeeper://document/<source>/<key>.
const DocumentURIPrefix = "lorekeeper://document/"

// DocumentURITemplate is the resource template for one document, and
// DocumentPageURITemplate for a later page of its entities.
const (
	DocumentURITemplate     = "lorekeeper://document/{source}/{key}"
	DocumentPageURITemplate = "lorekeeper://document/{source}/{key}/{page}"
)

// documentURI is a document's resource URI. The source is part of it since
// one key can name documents of two sources.
func documentURI(d *lkv1.Document) string {
	return DocumentURIPrefix + d.GetSource().Slug() + "/" + url.PathEscape(d.GetKey())
}

func documentLink(d *lkv1.DocumentSummary) mcp.Content {
	doc := d.GetDocument()
	return &mcp.ResourceLink{
		URI:         documentURI(doc),
		Name:        doc.GetKey(),
		Title:       doc.GetName(),
		Description: fmt.Sprintf("%s: %d entities", doc.GetName(), d.GetEntityCount()),
		MIMEType:    "text/markdown",
	}
}
