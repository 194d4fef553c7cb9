package srd52

import (
	"regexp"
	"slices"
	"strings"

	"lorekeeper.dev/ingest"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// Complete gives another source's entities of the book (Open5e's records
// of SRD 5.2) what the text states and they lack or state otherwise, and
// returns those it changed; the caller hashes them again. Entities of
// other books are left alone. has knows the document's rule entities of
// the other source, for the "See also" links (Entities' keys for the
// rest).
//
//   - A rule, rule section or condition of a glossary entry's name gets
//     the entry's tag as its category, its "See also" links, and the
//     entry's paragraphs its text lacks as a glossary block; one of a
//     rules chapter's headings gets its heading path.
//   - A spell gets the text's casting time where the two disagree, the
//     condition of a bonus action or reaction it lacks, its "Up to"
//     duration, its material, its higher-level paragraph and the
//     paragraphs of its description it lacks, each with a Correction
//     naming the text (SourceName) as its source.
//   - A magic item gets what it is made from ("Weapon (Warhammer)") where
//     its record does not say, with a Correction likewise.
func (b *Book) Complete(es []*lkv1.Entity, has Has) []*lkv1.Entity {
	if has == nil {
		has = func(string) string { return "" }
	}
	entries := map[string]*Entry{}
	for _, g := range b.Glossary {
		entries[lkv1.Slugify(g.Name)] = g
	}
	paths := b.headingPaths()
	spells := map[string]*Spell{}
	for _, s := range b.Spells {
		spells[strings.ToLower(s.Name)] = s
	}
	items := map[string]*MagicItem{}
	for _, it := range b.MagicItems {
		items[strings.ToLower(it.Name)] = it
	}
	var key func(string) string
	var changed []*lkv1.Entity
	for _, e := range es {
		if e.GetDocument().GetKey() != DocumentKey || e.GetDocument().GetSource() == lkv1.Source_SOURCE_SRD_TEXT {
			continue
		}
		did := false
		switch {
		case e.GetRule() != nil && slices.Contains(lkv1.RuleKinds(), e.GetKind()):
			if key == nil {
				key = b.keys(has)
			}
			did = b.completeRule(e, entries[e.GetSlug()], paths[e.GetSlug()], key)
		case e.GetSpell() != nil:
			if s := spells[strings.ToLower(e.GetName())]; s != nil {
				did = b.completeSpell(e, s)
			}
		case e.GetItem().GetIsMagic():
			if it := items[strings.ToLower(e.GetName())]; it != nil {
				did = b.completeItem(e, it)
			}
		}
		if did {
			changed = append(changed, e)
		}
	}
	return changed
}

// keys resolves a slug to its entity's key: has's, else the text's own
// (the key Entities gives it).
func (b *Book) keys(has Has) func(string) string {
	own := map[string]string{}
	doc := &lkv1.Document{Key: DocumentKey}
	if es, err := b.Entities(doc, has); err == nil {
		for _, e := range es {
			own[e.Slug] = e.Key
		}
	}
	return func(slug string) string {
		if k := has(slug); k != "" {
			return k
		}
		return own[slug]
	}
}

// headingPaths are the heading paths of the rules chapters' sections and
// rules, by slug (the first of a name).
func (b *Book) headingPaths() map[string][]string {
	out := map[string][]string{}
	for _, c := range b.Rules {
		for _, s := range c.Sections {
			if _, ok := out[lkv1.Slugify(s.Name)]; !ok {
				out[lkv1.Slugify(s.Name)] = []string{c.Title}
			}
			for _, r := range s.Sections {
				if _, ok := out[lkv1.Slugify(r.Name)]; !ok {
					out[lkv1.Slugify(r.Name)] = []string{c.Title, s.Name}
				}
			}
		}
	}
	return out
}

func (b *Book) completeRule(e *lkv1.Entity, g *Entry, path []string, key func(string) string) bool {
	r := e.GetRule()
	changed := false
	if len(path) > 0 && len(r.HeadingPath) == 0 {
		r.HeadingPath, changed = path, true
	}
	if g == nil {
		return changed
	}
	if len(r.HeadingPath) == 0 {
		r.HeadingPath, changed = []string{glossaryName}, true
	}
	n := len(r.SeeAlso)
	r.SeeAlso = appendLinks(r.SeeAlso, g.SeeAlso, key, e.GetKey())
	changed = len(r.SeeAlso) != n || changed
	if b.joinEntry(e, g) {
		changed = true
		if slices.ContainsFunc(e.Blocks, func(bl *lkv1.TextBlock) bool { return bl.Type == glossaryBlock }) {
			b.correct(e, "", "glossary", "", g.Name)
		}
	}
	return changed
}

// completeItem gives e what the text says it is made from, where its
// record does not say: Open5e's SRD 5.2 Dwarven Thrower has no weapon.
func (b *Book) completeItem(e *lkv1.Entity, it *MagicItem) bool {
	if e.GetItem().GetBase() != "" || it.Base == "" {
		return false
	}
	e.GetItem().Base = strings.ToLower(it.Base)
	b.correct(e, "", "base", "", e.GetItem().Base)
	return true
}

// correct records a field the text corrected or filled.
func (b *Book) correct(e *lkv1.Entity, subject, field, was, now string) {
	b.metrics.complete(e, field)
	for _, c := range e.Corrections {
		if c.Field == field && c.Subject == subject && c.Source == SourceName {
			c.SourceValue, c.CorrectedValue = was, now
			return
		}
	}
	e.Corrections = append(e.Corrections, &lkv1.Correction{Subject: subject, Field: field, SourceValue: was, CorrectedValue: now, Source: SourceName})
}

// plain is s without markdown emphasis and with one space between words,
// for comparing a stat line with another source's copy.
func plain(s string) string {
	return strings.Join(strings.Fields(strings.NewReplacer("*", "", "_", "").Replace(s)), " ")
}

// castingTimeOf splits a Casting Time line into the time and what a bonus
// action or reaction is taken in response to: "Reaction, which you take
// when ..." -> "Reaction", "which you take when ...".
func castingTimeOf(s string) (time, condition string) {
	s = plain(s)
	if t, c, ok := strings.Cut(s, ", which"); ok {
		return t, "which" + c
	}
	return s, ""
}

// concentrationUpTo opens a Duration that Open5e gives without its
// "Concentration, up to" (its concentration flag carries that).
var concentrationUpTo = regexp.MustCompile(`(?i)^concentration,? up to `)

// materialOf is what a Components line says of the material: "a feather"
// for "V, S, M (a feather)".
var materialOf = regexp.MustCompile(`\bM \((.+)\)\s*$`)

// higherLevelLabel opens a spell's paragraph on casting it with a higher
// slot, or on a cantrip's growth.
var higherLevelLabel = regexp.MustCompile(`^[*_]+(?:Using a Higher-Level Spell Slot|Cantrip Upgrade)[.*_]+\s*`)

func (b *Book) completeSpell(e *lkv1.Entity, sp *Spell) bool {
	s := e.GetSpell()
	changed := false
	set := func(field, was, now string, to *string) {
		*to = now
		b.correct(e, "", field, was, now)
		changed = true
	}
	time, cond := castingTimeOf(sp.CastingTime)
	if lkv1.CastingTimeKey(time) != lkv1.CastingTimeKey(s.CastingTime) {
		was := s.CastingTime
		s.CastingTimeKey = lkv1.CastingTimeKey(time)
		set("casting_time", was, time, &s.CastingTime)
	}
	if cond != "" && !strings.EqualFold(plain(s.ReactionCondition), cond) {
		set("reaction_condition", s.ReactionCondition, cond, &s.ReactionCondition)
	}
	dur := plain(sp.Duration)
	if !concentrationUpTo.MatchString(dur) && !strings.EqualFold(dur, plain(s.Duration)) && strings.EqualFold(plain(s.Duration), strings.TrimPrefix(strings.ToLower(dur), "up to ")) {
		set("duration", s.Duration, dur, &s.Duration)
	}
	if m := materialOf.FindStringSubmatch(plain(sp.Components)); m != nil && s.Material && s.MaterialSpecified == "" {
		set("material", "", m[1], &s.MaterialSpecified)
	}
	desc, higher := spellText(sp.Text)
	if strings.TrimSpace(e.Description) == "" && desc != "" {
		e.Description = desc
		b.correct(e, "", "description", "", "the text's description")
		changed = true
	} else if merged, added := insertLacking(e.Description, desc, entityWords(e)); len(added) > 0 {
		e.Description = merged
		b.correct(e, "", "description", "", "what the text adds: "+strings.Join(added, "; "))
		changed = true
	}
	if strings.TrimSpace(e.HigherLevel) == "" && higher != "" {
		e.HigherLevel = higher
		b.correct(e, "", "higher_level", "", higher)
		changed = true
	}
	return changed
}

// spellText parts a spell's text into its description (its table captions
// left out: Open5e prints tables without them) and its higher-level
// paragraph, without the paragraph's label.
func spellText(text string) (desc, higher string) {
	var keep []string
	for _, p := range paragraphs(text) {
		switch {
		case higherLevelLabel.MatchString(p):
			higher = strings.TrimSpace(higherLevelLabel.ReplaceAllString(p, ""))
		case strings.HasPrefix(p, "Table:") && !strings.Contains(p, "\n"):
		default:
			keep = append(keep, p)
		}
	}
	return strings.Join(keep, "\n\n"), higher
}

// firstWords is the first n words of s, with "..." when there are more.
func firstWords(s string, n int) string {
	f := strings.Fields(strings.NewReplacer(">", " ", "#", " ").Replace(plain(s)))
	if len(f) <= n {
		return strings.Join(f, " ")
	}
	return strings.Join(f[:n], " ") + " ..."
}

// insertLacking puts into have the paragraphs of text whose opening words
// all (every text of the entity, as ingest.Words) does not hold, each
// after the paragraph of have holding the text's paragraph before it (at
// the start when none does), and returns the result with the first words
// of each paragraph added.
func insertLacking(have, text, all string) (string, []string) {
	out := paragraphs(have)
	at := 0 // where the next lacking paragraph goes
	var added []string
	for _, p := range paragraphs(text) {
		opening := openingWords(p)
		if opening == "" {
			continue
		}
		if strings.Contains(all, opening) {
			if i := slices.IndexFunc(out, func(q string) bool { return strings.Contains(ingest.Words(q), opening) }); i >= 0 {
				at = i + 1
			}
			continue
		}
		out = slices.Insert(out, at, p)
		at++
		added = append(added, firstWords(p, 6))
	}
	return strings.Join(out, "\n\n"), added
}
