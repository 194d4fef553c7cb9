package srd52_test

import (
	"strings"
	"testing"

	"lorekeeper.dev/ingest"
	"lorekeeper.dev/ingest/srd52"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// holds reports whether e's texts hold every paragraph of text, as
// ingest.Words compares them (markup aside).
func holds(e *lkv1.Entity, text string) (bool, string) {
	var all strings.Builder
	all.WriteString(ingest.Words(e.GetDescription()))
	for _, b := range e.GetBlocks() {
		all.WriteString(ingest.Words(b.GetText()))
	}
	for _, p := range strings.Split(text, "\n\n") {
		if w := strings.TrimSpace(ingest.Words(p)); w != "" && !strings.Contains(all.String(), " "+w+" ") {
			return false, p
		}
	}
	return true, ""
}

func TestBook_Entities(t *testing.T) {
	b := book(t)
	doc := b.Document(nil)
	if doc.GetSource() != lkv1.Source_SOURCE_SRD_TEXT || doc.GetKey() != srd52.DocumentKey || doc.GetGameSystem() != "5e-2024" ||
		!strings.Contains(doc.GetAttribution(), "System Reference Document 5.2") {
		t.Fatalf("document %+v", doc)
	}
	es, err := b.Entities(doc, nil)
	if err != nil {
		t.Fatal(err)
	}
	bySlug := map[string]*lkv1.Entity{}
	keys := map[string]bool{}
	for _, e := range es {
		if had := bySlug[e.GetSlug()]; had != nil {
			t.Errorf("two entities named %q: %s and %s", e.GetName(), had.GetKey(), e.GetKey())
		}
		bySlug[e.GetSlug()] = e
		keys[e.GetKey()] = true
		if want := lkv1.EntityKey(lkv1.Source_SOURCE_SRD_TEXT, srd52.DocumentKey, e.GetKind(), e.GetSlug()); e.GetKey() != want {
			t.Errorf("key %q, want %q", e.GetKey(), want)
		}
		if e.GetContentHash() == "" || e.GetDocument() != doc || e.GetRule() == nil || len(e.GetRule().GetHeadingPath()) == 0 {
			t.Errorf("%s: incomplete: hash %q, rule %v", e.GetKey(), e.GetContentHash(), e.GetRule())
		}
	}
	// Every glossary entry, whole: its own entity, or the rule of its
	// name from a chapter that holds its text as a block.
	for _, g := range b.Glossary {
		e := bySlug[lkv1.Slugify(g.Name)]
		if e == nil {
			t.Errorf("glossary entry %q: no entity", g.Name)
			continue
		}
		if ok, p := holds(e, g.Text); !ok {
			t.Errorf("%s: lacks the glossary's %q", e.GetKey(), p)
		}
		if g.Tag == "Condition" && e.GetKind() != lkv1.Kind_KIND_CONDITION {
			t.Errorf("%s: a condition filed as %s", g.Name, e.GetKind().Slug())
		}
		if e.GetRule().GetCategory() != g.Tag {
			t.Errorf("%s: category %q, want the tag %q", g.Name, e.GetRule().GetCategory(), g.Tag)
		}
	}
	// Every link names an entity of the text, or a chapter (no key).
	links := 0
	for _, e := range es {
		for _, l := range e.GetRule().GetSeeAlso() {
			links++
			if l.GetKey() == e.GetKey() {
				t.Errorf("%s: See also %q links itself", e.GetKey(), l.GetName())
			}
			if l.GetKey() != "" && !keys[l.GetKey()] {
				t.Errorf("%s: See also %q links %s, which is no entity", e.GetKey(), l.GetName(), l.GetKey())
			}
		}
	}
	if links == 0 {
		t.Error("no See also links")
	}
	// The rules chapters' "##" are rule sections holding their "###"
	// rules as blocks; each "###" is a rule of that section.
	actions := bySlug["actions"]
	if actions.GetKind() != lkv1.Kind_KIND_RULE_SECTION || len(actions.GetBlocks()) != 3 || actions.GetBlocks()[1].GetName() != "Bonus Actions" {
		t.Errorf("Actions: %s with blocks %v", actions.GetKind().Slug(), actions.GetBlocks())
	}
	ba := bySlug["bonus-actions"]
	if r := ba.GetRule(); ba.GetKind() != lkv1.Kind_KIND_RULE || r.GetSection() != "actions" || strings.Join(r.GetHeadingPath(), "/") != "Playing the Game/Actions" {
		t.Errorf("Bonus Actions: %s %v", ba.GetKind().Slug(), r)
	}
	g := bySlug["grappling"]
	if links := g.GetRule().GetSeeAlso(); len(links) != 2 || links[0].GetKey() != bySlug["unarmed-strike"].GetKey() || links[1].GetKey() != bySlug["grappled"].GetKey() {
		t.Errorf("Grappling's See also: %v", links)
	}
}

// TestBook_EntitiesCovered checks that what the other source has is not
// given twice, and that links to it are its keys.
func TestBook_EntitiesCovered(t *testing.T) {
	b := book(t)
	other := map[string]string{
		"grappled": "open5e_v2:srd-2024:condition:grappled",
		"cover":    "open5e_v2:srd-2024:rule:cover",
		"combat":   "open5e_v2:srd-2024:rule-section:combat",
	}
	es, err := b.Entities(b.Document(nil), func(slug string) string { return other[slug] })
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		if other[e.GetSlug()] != "" {
			t.Errorf("%s published though the other source has %s", e.GetKey(), other[e.GetSlug()])
		}
		for _, l := range e.GetRule().GetSeeAlso() {
			if k := other[lkv1.Slugify(l.GetName())]; k != "" && l.GetKey() != k {
				t.Errorf("%s: See also %q links %q, want the other source's %s", e.GetKey(), l.GetName(), l.GetKey(), k)
			}
		}
	}
}

// TestBook_Complete completes records of another source from the text:
// a condition gets its tag and See also, a rule the glossary's paragraphs
// it lacks as a block, a spell its casting time's condition, each field
// from the text with a correction naming it.
func TestBook_Complete(t *testing.T) {
	b := book(t)
	doc := &lkv1.Document{Key: srd52.DocumentKey, Source: lkv1.Source_SOURCE_OPEN5E_V2}
	grappled := &lkv1.Entity{Key: "open5e_v2:srd-2024:condition:grappled", Kind: lkv1.Kind_KIND_CONDITION, Name: "Grappled", Slug: "grappled", Document: doc,
		Description: "While you have the Grappled condition, you experience the following effects.\n* Speed 0. Your Speed is 0 and can’t increase.\n* Attacks Affected. You have Disadvantage on attack rolls against any target other than the grappler.\n* Movable. The grappler can drag or carry you when it moves, but every foot of movement costs it 1 extra foot unless you are Tiny or two or more sizes smaller than it.",
		Details:     &lkv1.Entity_Rule{Rule: &lkv1.RuleDetails{}}}
	cover := &lkv1.Entity{Key: "open5e_v2:srd-2024:rule:cover", Kind: lkv1.Kind_KIND_RULE, Name: "Cover", Slug: "cover", Document: doc,
		Description: "Walls, trees, creatures, and other obstacles can provide cover.", Details: &lkv1.Entity_Rule{Rule: &lkv1.RuleDetails{Section: "combat"}}}
	smite := &lkv1.Entity{Key: "open5e_v2:srd-2024:spell:divine-smite", Kind: lkv1.Kind_KIND_SPELL, Name: "Divine Smite", Document: doc,
		Description: "The target takes an extra 2d8 Radiant damage from the attack. The damage increases by 1d8 if the target is a Fiend or an Undead.",
		HigherLevel: "The damage increases by 1d8 for each spell slot level above 1.",
		Details:     &lkv1.Entity_Spell{Spell: &lkv1.SpellDetails{Level: 1, CastingTime: "1 bonus action", CastingTimeKey: "bonus-action", Duration: "instantaneous", Verbal: true}}}
	other := &lkv1.Entity{Key: "open5e_v2:srd-2014:spell:divine-smite", Kind: lkv1.Kind_KIND_SPELL, Name: "Divine Smite", Document: &lkv1.Document{Key: "srd-2014"},
		Details: &lkv1.Entity_Spell{Spell: &lkv1.SpellDetails{CastingTime: "1 bonus action"}}}
	thrower := &lkv1.Entity{Key: "open5e_v2:srd-2024:magic-item:dwarven-thrower", Kind: lkv1.Kind_KIND_MAGIC_ITEM, Name: "Dwarven Thrower", Document: doc,
		Details: &lkv1.Entity_Item{Item: &lkv1.ItemDetails{Category: "weapon", IsMagic: true, Rarity: "very rare"}}}
	based := &lkv1.Entity{Key: "open5e_v2:srd-2024:magic-item:dwarven-plate", Kind: lkv1.Kind_KIND_MAGIC_ITEM, Name: "Dwarven Plate", Document: doc,
		Details: &lkv1.Entity_Item{Item: &lkv1.ItemDetails{Category: "armor", IsMagic: true, Base: "plate"}}}
	changed := b.Complete([]*lkv1.Entity{grappled, cover, smite, other, thrower, based}, nil)
	if len(changed) != 4 {
		t.Fatalf("changed %d entities, want 4 (not SRD 5.1's, nor an item whose record names its base)", len(changed))
	}
	if c := thrower.GetCorrections(); thrower.GetItem().GetBase() != "warhammer" || len(c) != 1 || c[0].GetField() != "base" || c[0].GetSource() != srd52.SourceName {
		t.Errorf("Dwarven Thrower: base %q, corrections %v", thrower.GetItem().GetBase(), c)
	}
	if r := grappled.GetRule(); r.GetCategory() != "Condition" || len(grappled.GetBlocks()) != 0 {
		t.Errorf("Grappled: %v, blocks %v (its text holds the glossary's already)", r, grappled.GetBlocks())
	}
	if ok, p := holds(cover, glossaryEntry(t, b, "Cover").Text); !ok || cover.GetBlocks()[0].GetType() != "glossary" {
		t.Errorf("Cover lacks the glossary's %q: blocks %v", p, cover.GetBlocks())
	}
	if l := cover.GetRule().GetSeeAlso(); len(l) != 1 || l[0].GetName() != "Combat" || strings.Join(cover.GetRule().GetHeadingPath(), "/") != "Playing the Game/Combat" {
		t.Errorf("Cover: %v", cover.GetRule())
	}
	s := smite.GetSpell()
	if s.GetReactionCondition() != "which you take immediately after hitting a target with a Melee weapon or an Unarmed Strike" || s.GetCastingTimeKey() != "bonus-action" {
		t.Errorf("Divine Smite: %v", s)
	}
	if len(smite.GetCorrections()) != 1 || smite.GetCorrections()[0].GetSource() != srd52.SourceName || smite.GetCorrections()[0].GetField() != "reaction_condition" {
		t.Errorf("Divine Smite's corrections: %v", smite.GetCorrections())
	}
	if again := b.Complete([]*lkv1.Entity{smite}, nil); len(again) != 0 || len(smite.GetCorrections()) != 1 {
		t.Errorf("completing twice changed %d, corrections %v", len(again), smite.GetCorrections())
	}
}
