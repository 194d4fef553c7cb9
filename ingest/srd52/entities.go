package srd52

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"

	"lorekeeper.dev/ingest"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// Glossary entries are filed under this section, as the rules chapters'
// rules are under theirs.
const (
	glossaryName = "Rules Glossary"
	glossarySlug = "rules-glossary"
)

// glossaryBlock is the type of the block that carries a glossary entry's
// text on the card of a rule of the same name from elsewhere (the
// chapters, or Open5e).
const glossaryBlock = "glossary"

// Has tells whether the book's document already has an entity, of any of
// the rule kinds, with slug from another source (Open5e), and its key;
// "" when not.
type Has func(slug string) string

// Document is the text's document: base's metadata (Open5e's record of
// SRD 5.2: its name, publisher and game system) where base is given, with
// the text as its source and the licence and attribution the text states.
func (b *Book) Document(base *lkv1.Document) *lkv1.Document {
	d := &lkv1.Document{
		Key: DocumentKey, Name: "System Reference Document 5.2", DisplayName: "5e 2024 Rules",
		Publisher: "Wizards of the Coast", PublisherKey: "wizards-of-the-coast",
		GameSystem: "5e-2024", GameSystemName: "5th Edition 2024",
	}
	if base != nil {
		d = proto.Clone(base).(*lkv1.Document)
	}
	d.Source = lkv1.Source_SOURCE_SRD_TEXT
	d.Licenses = []string{"CC-BY-4.0"}
	d.Attribution = b.Attribution
	d.Permalink = "https://www.dndbeyond.com/srd"
	d.LicenseNote = ""
	return d
}

// Entities returns the text's entities that the document lacks: the
// glossary's entries and the rules chapters' sections ("##", rule
// sections) and rules ("###") whose slug has does not know. An entry and a
// section of the same name are one entity: the section's, with the entry's
// text as a block. Each "See also" names the entity it points to, the
// text's or has's. doc is the document they carry (Document).
func (b *Book) Entities(doc *lkv1.Document, has Has) ([]*lkv1.Entity, error) {
	if has == nil {
		has = func(string) string { return "" }
	}
	var out []*lkv1.Entity
	bySlug := map[string]*lkv1.Entity{}
	add := func(e *lkv1.Entity) *lkv1.Entity {
		if had := bySlug[e.Slug]; had != nil {
			return had
		}
		if has(e.Slug) != "" {
			return nil
		}
		e.Document = doc
		e.Key = lkv1.EntityKey(lkv1.Source_SOURCE_SRD_TEXT, doc.GetKey(), e.Kind, e.Slug)
		bySlug[e.Slug] = e
		out = append(out, e)
		return e
	}
	for _, c := range b.Rules {
		for i, s := range c.Sections {
			for _, e := range sectionEntities(c, s, i) {
				if had := add(e); had != nil && had != e {
					fold(had, e.Name+" ("+strings.Join(e.GetRule().GetHeadingPath(), " › ")+")", e.Description)
				}
			}
		}
	}
	for i, g := range b.Glossary {
		e := glossaryEntity(g, i)
		if had := add(e); had != nil && had != e {
			b.joinEntry(had, g)
		}
	}
	key := func(slug string) string {
		if e := bySlug[slug]; e != nil {
			return e.Key
		}
		return has(slug)
	}
	for _, g := range b.Glossary {
		if e := bySlug[lkv1.Slugify(g.Name)]; e != nil {
			r := e.GetRule()
			r.SeeAlso = appendLinks(r.SeeAlso, g.SeeAlso, key, e.Key)
		}
	}
	for _, e := range out {
		if err := seal(e); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// seal sets e's content hash, once e is whole.
func seal(e *lkv1.Entity) error {
	h, err := ingest.ContentHash(e)
	if err != nil {
		return fmt.Errorf("SRD 5.2 text: %w", err)
	}
	e.ContentHash = h
	return nil
}

// sectionEntities are a "##" section of a rules chapter as a rule section
// (its own text, its "###" rules as blocks, as Open5e gives a ruleset) and
// its "###" sections as rules. i is its place in the chapter.
func sectionEntities(c *Chapter, s *Section, i int) []*lkv1.Entity {
	sec := &lkv1.Entity{
		Kind: lkv1.Kind_KIND_RULE_SECTION, Name: s.Name, Slug: lkv1.Slugify(s.Name),
		SourceKey: s.Name, SourceUrl: sourceURL(c.File, s.Line), SourceRecord: record(c.File, s.Line, s.Name),
		Description: s.Text,
		Details: &lkv1.Entity_Rule{Rule: &lkv1.RuleDetails{
			Section: lkv1.Slugify(s.Name), SectionName: s.Name, Index: int32(i + 1), HeadingPath: []string{c.Title},
		}},
	}
	if !hasRules(s) {
		sec.Description = s.Markdown(3)
		return []*lkv1.Entity{sec}
	}
	out := []*lkv1.Entity{sec}
	for j, r := range s.Sections {
		text := r.Markdown(3)
		sec.Blocks = append(sec.Blocks, &lkv1.TextBlock{Type: "rule", Name: r.Name, Text: text})
		out = append(out, &lkv1.Entity{
			Kind: lkv1.Kind_KIND_RULE, Name: r.Name, Slug: lkv1.Slugify(r.Name),
			SourceKey: r.Name, SourceUrl: sourceURL(c.File, r.Line), SourceRecord: record(c.File, r.Line, r.Name),
			Description: text,
			Details: &lkv1.Entity_Rule{Rule: &lkv1.RuleDetails{
				Section: lkv1.Slugify(s.Name), SectionName: s.Name, Index: int32(j + 1), HeadingPath: []string{c.Title, s.Name},
			}},
		})
	}
	return out
}

// hasRules reports whether s's subsections are "###" rules, not deeper
// parts standing directly under it.
func hasRules(s *Section) bool {
	return slices.ContainsFunc(s.Sections, func(r *Section) bool { return r.Level == s.Level+1 })
}

// glossaryEntity is a glossary entry as a rule, or as a condition when the
// glossary tags it so. i is its place in the glossary.
func glossaryEntity(g *Entry, i int) *lkv1.Entity {
	kind := lkv1.Kind_KIND_RULE
	if g.Tag == "Condition" {
		kind = lkv1.Kind_KIND_CONDITION
	}
	heading := g.Name
	if g.Tag != "" {
		heading += " [" + g.Tag + "]"
	}
	return &lkv1.Entity{
		Kind: kind, Name: g.Name, Slug: lkv1.Slugify(g.Name),
		SourceKey: heading, SourceUrl: sourceURL(glossaryFile, g.Line), SourceRecord: record(glossaryFile, g.Line, heading),
		Description: g.Text,
		Details: &lkv1.Entity_Rule{Rule: &lkv1.RuleDetails{
			Section: glossarySlug, SectionName: glossaryName, Index: int32(i + 1),
			Category: g.Tag, HeadingPath: []string{glossaryName},
		}},
	}
}

// joinEntry gives e, a rule of g's name from elsewhere, what g says that
// e's text does not: g's paragraphs it lacks, as a glossary block, and g's
// tag as its category. It reports whether e changed.
func (b *Book) joinEntry(e *lkv1.Entity, g *Entry) bool {
	changed := false
	if r := e.GetRule(); r != nil && g.Tag != "" && r.Category != g.Tag {
		r.Category, changed = g.Tag, true
	}
	if missing := lacking(entityWords(e), g.Text); missing != "" {
		fold(e, glossaryName, missing)
		e.Blocks[len(e.Blocks)-1].Type = glossaryBlock
		changed = true
	}
	return changed
}

// fold adds text to e as a block named name, unless e holds a block of
// that name already.
func fold(e *lkv1.Entity, name, text string) {
	if slices.ContainsFunc(e.Blocks, func(b *lkv1.TextBlock) bool { return b.Name == name }) {
		return
	}
	e.Blocks = append(e.Blocks, &lkv1.TextBlock{Type: "rule", Name: name, Text: text})
}

// entityWords is every text of e, as ingest.Words.
func entityWords(e *lkv1.Entity) string {
	var b strings.Builder
	b.WriteString(ingest.Words(e.GetDescription()))
	b.WriteString(ingest.Words(e.GetHigherLevel()))
	for _, bl := range e.GetBlocks() {
		b.WriteString(ingest.Words(bl.GetText()))
	}
	return b.String()
}

// lacking returns the paragraphs of text whose words have (ingest.Words)
// does not hold, joined; "" when it holds them all. A paragraph is held
// when its first dozen words are: two copies of one text differ in markup
// and in the odd word, not in how a paragraph opens.
func lacking(have, text string) string {
	var out []string
	for _, p := range paragraphs(text) {
		if o := openingWords(p); o != "" && !strings.Contains(have, o) {
			out = append(out, p)
		}
	}
	return strings.Join(out, "\n\n")
}

// openingWords is the first dozen words of p as ingest.Words gives them,
// or "" when p has none.
func openingWords(p string) string {
	w := strings.Fields(ingest.Words(p))
	if len(w) == 0 {
		return ""
	}
	return " " + strings.Join(w[:min(len(w), 12)], " ") + " "
}

// paragraphs splits markdown at blank lines, keeping a table or a list
// whole.
func paragraphs(text string) []string {
	var out []string
	for _, p := range strings.Split(text, "\n\n") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// appendLinks adds the links refs name to have, each once, resolving
// names by slug (key); a chapter's sections each become a link of their
// own, and a chapter named alone a link without a key. A link to self, the
// entity linking, is left out (the glossary's Proficiency points to the
// chapters' Proficiency, which is the same entity).
func appendLinks(have []*lkv1.RuleLink, refs []Ref, key func(slug string) string, self string) []*lkv1.RuleLink {
	add := func(name string) {
		k := key(lkv1.Slugify(name))
		if k == self || slices.ContainsFunc(have, func(l *lkv1.RuleLink) bool { return l.Name == name }) {
			return
		}
		have = append(have, &lkv1.RuleLink{Name: name, Key: k})
	}
	for _, r := range refs {
		if len(r.Sections) == 0 {
			add(r.Name)
			continue
		}
		for _, s := range r.Sections {
			add(s)
		}
	}
	return have
}

// sourceURL is where a heading stands in the text: its file and line.
func sourceURL(file string, line int) string {
	return fmt.Sprintf("srd-5.2-markdown/%s#L%d", file, line)
}

// record is the source record of a heading of the text: where it is and
// how the text prints it.
func record(file string, line int, heading string) []byte {
	b, _ := json.Marshal(struct {
		File    string `json:"file"`
		Line    int    `json:"line"`
		Heading string `json:"heading"`
	}{file, line, heading}) // strings and an int: cannot fail
	return b
}

// FieldMap is the field map (ingest.FieldMap) of the text's entities'
// source record: where a heading of the text is and how it prints it. The
// entity's text is the text under the heading, not a field of the record.
var FieldMap = ingest.FieldMap{
	Mapped: map[string]string{"heading": "source_key"},
	Excluded: map[string]string{
		"file": "where the heading is: the source URL names the file and line",
		"line": "where the heading is: the source URL names the file and line",
	},
}
