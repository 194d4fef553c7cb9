package embedder

import (
	"strings"
	"unicode"

	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// Text is what an entity is embedded and keyword-indexed as: its name, a
// kind-specific type line and the prose a user would describe it by. The
// same text feeds the model and BM25, so the two rankings the query service
// mixes look at the same words.
//
// Bare mechanical numbers (armor class, hit points, ability scores, damage
// dice) are left out: they carry no meaning for the model and only add
// noise to BM25. Numbers that are words to players ("3rd-level") stay.
// The template is the one that measured best on the relevance set
// (query/testdata): "Vampire: Medium undead ... Traits: ... Actions: ...".
//
// lowercase is for models whose vocabulary is case-sensitive (USE-lite):
// lower-casing texts and queries alike retrieves better there.
func Text(e *lkv1.Entity, lowercase bool) string {
	var b textBuilder
	b.add(e.GetName())
	b.raw(": ")
	switch e.GetKind() {
	case lkv1.Kind_KIND_SPELL:
		spellText(&b, e)
	case lkv1.Kind_KIND_CREATURE:
		creatureText(&b, e)
	case lkv1.Kind_KIND_WEAPON, lkv1.Kind_KIND_ARMOR, lkv1.Kind_KIND_MAGIC_ITEM, lkv1.Kind_KIND_ITEM:
		itemText(&b, e)
	case lkv1.Kind_KIND_CLASS, lkv1.Kind_KIND_SUBCLASS:
		classText(&b, e)
	case lkv1.Kind_KIND_RULE, lkv1.Kind_KIND_RULE_SECTION:
		ruleText(&b, e)
	default:
		optionText(&b, e)
	}
	s := strings.TrimSpace(b.String())
	if lowercase {
		s = strings.ToLower(s)
	}
	return s
}

// Unread is the prose Text leaves out for the model, which reads only a
// text's start: a creature's actions and its traits' whole texts, a
// class's or subclass's features. BM25 indexes it apart, so that a word
// in an entity's text finds it ("petrified" finds the Cockatrice, whose
// bite petrifies) without the long stat blocks weighing on every other
// text's length.
func Unread(e *lkv1.Entity, lowercase bool) string {
	switch e.GetKind() {
	case lkv1.Kind_KIND_CREATURE, lkv1.Kind_KIND_CLASS, lkv1.Kind_KIND_SUBCLASS:
	default:
		return ""
	}
	var b textBuilder
	for _, bl := range e.GetBlocks() {
		b.sentence(bl.GetText())
	}
	s := strings.TrimSpace(b.String())
	if lowercase {
		s = strings.ToLower(s)
	}
	return s
}

func spellText(b *textBuilder, e *lkv1.Entity) {
	sp := e.GetSpell()
	b.sentence(spellLine(sp))
	if ct := castingTime(sp.GetCastingTimeKey()); ct != "" {
		b.sentence("Cast as " + ct + ".")
	}
	if sp.GetConcentration() {
		b.sentence("Concentration.")
	}
	if sp.GetRitual() {
		b.sentence("Ritual.")
	}
	b.sentence(e.GetDescription())
	if hl := e.GetHigherLevel(); hl != "" {
		b.sentence("At higher levels: " + hl)
	}
}

// spellLine is "3rd-level evocation spell" or "evocation cantrip".
func spellLine(sp *lkv1.SpellDetails) string {
	school := sp.GetSchool()
	if sp.GetLevel() == 0 {
		return strings.TrimSpace(school + " cantrip.")
	}
	return strings.TrimSpace(lkv1.Ordinal(sp.GetLevel())+"-level "+school) + " spell."
}

// castingTime is the casting time as words: "a bonus action", "a
// reaction", "1 minute"; empty for the common action.
func castingTime(key string) string {
	switch key {
	case "", "action":
		return ""
	case "bonus-action":
		return "a bonus action"
	case "reaction":
		return "a reaction"
	}
	return strings.ReplaceAll(key, "-", " ")
}

func creatureText(b *textBuilder, e *lkv1.Entity) {
	c := e.GetCreature()
	line := strings.TrimSpace(capitalise(c.GetSize()) + " " + c.GetType())
	var paren []string
	for _, s := range []string{c.GetSubtype(), c.GetGroup()} {
		if s != "" {
			paren = append(paren, s)
		}
	}
	if len(paren) > 0 {
		line += " (" + strings.Join(paren, "; ") + ")"
	}
	if line != "" {
		b.sentence(line + ".")
	}
	b.sentence(e.GetDescription())
	groups := []struct{ typ, title string }{
		{"trait", "Traits"},
		{"action", "Actions"},
		{"bonus_action", "Bonus actions"},
		{"reaction", "Reactions"},
		{"legendary_action", "Legendary actions"},
		{"lair_action", "Lair actions"},
		{"mythic_action", "Mythic actions"},
	}
	for _, g := range groups {
		var names []string
		for _, bl := range e.GetBlocks() {
			if bl.GetType() == g.typ && bl.GetName() != "" {
				names = append(names, bl.GetName())
			}
		}
		if len(names) > 0 {
			b.sentence(g.title + ": " + strings.Join(names, ", ") + ".")
		}
	}
	if dt := defenseLine(c.GetDamageImmunities(), c.GetDamageImmunityEntries()); dt != "" {
		b.sentence("Immune to " + dt + ".")
	}
	if dt := defenseLine(c.GetDamageResistances(), c.GetDamageResistanceEntries()); dt != "" {
		b.sentence("Resistant to " + dt + ".")
	}
	// Trait texts last: the model reads only the start of a text, BM25 all
	// of it ("regenerates unless damaged by fire or acid" is the troll's
	// Regeneration trait).
	for _, bl := range e.GetBlocks() {
		if bl.GetType() == "trait" && bl.GetText() != "" {
			b.sentence(firstWords(bl.GetText(), 24))
		}
	}
}

func itemText(b *textBuilder, e *lkv1.Entity) {
	it := e.GetItem()
	var line []string
	if r := it.GetRarity(); r != "" {
		line = append(line, r)
	}
	if w := it.GetWeapon(); w != nil {
		if w.GetIsSimple() {
			line = append(line, "simple")
		} else {
			line = append(line, "martial")
		}
		if w.GetIsRanged() {
			line = append(line, "ranged")
		} else {
			line = append(line, "melee")
		}
		line = append(line, "weapon")
	} else if a := it.GetArmor(); a != nil {
		if a.GetCategory() == "shield" {
			line = append(line, "shield")
		} else {
			line = append(line, a.GetCategory(), "armor")
		}
	} else if cat := it.GetCategory(); cat != "" {
		line = append(line, strings.ReplaceAll(cat, "-", " "))
	} else {
		line = append(line, e.GetKind().Slug())
	}
	s := strings.Join(line, " ")
	if it.GetIsMagic() && !strings.Contains(s, "magic") {
		s = "magic " + s
	}
	if base := it.GetBase(); base != "" {
		s += " (" + base + ")" // Dwarven Thrower's text never says warhammer
	}
	if it.GetRequiresAttunement() {
		s += ", requires attunement"
		if d := it.GetAttunementDetail(); d != "" && !strings.EqualFold(d, "requires attunement") {
			s += " (" + d + ")"
		}
	}
	b.sentence(capitalise(s) + ".")
	if w := it.GetWeapon(); w != nil {
		if dt := w.GetDamageType(); dt != "" {
			b.sentence("Deals " + dt + " damage.")
		}
		if p := w.GetProperties(); len(p) > 0 {
			b.sentence("Properties: " + strings.Join(p, ", ") + ".")
		}
	}
	if a := it.GetArmor(); a != nil && a.GetStealthDisadvantage() {
		b.sentence("Disadvantage on stealth.")
	}
	b.sentence(e.GetDescription())
}

func classText(b *textBuilder, e *lkv1.Entity) {
	co := e.GetCharacterOption()
	if e.GetKind() == lkv1.Kind_KIND_SUBCLASS && co.GetParentName() != "" {
		b.sentence(co.GetParentName() + " subclass.")
	} else {
		b.sentence(e.GetKind().Slug() + ".")
	}
	if d := e.GetDescription(); strings.TrimSpace(d) != "" {
		b.sentence(d)
		return
	}
	// A base class's description is empty in Open5e; its features say what
	// it is.
	var names []string
	for _, bl := range e.GetBlocks() {
		if bl.GetName() != "" {
			names = append(names, bl.GetName())
		}
	}
	if len(names) > 0 {
		b.sentence("Features: " + strings.Join(dedupe(names), ", ") + ".")
	}
}

func ruleText(b *textBuilder, e *lkv1.Entity) {
	if sec := e.GetRule().GetSectionName(); sec != "" && !strings.EqualFold(sec, e.GetName()) {
		b.sentence(sec + " rule.")
	} else {
		b.sentence("rule.")
	}
	b.sentence(e.GetDescription())
	for _, bl := range e.GetBlocks() {
		b.sentence(bl.GetName())
	}
}

// optionText serves races, backgrounds, feats and the reference kinds:
// the description, then the named benefits or traits with their text.
func optionText(b *textBuilder, e *lkv1.Entity) {
	kind := strings.ReplaceAll(e.GetKind().Slug(), "-", " ")
	if p := e.GetCharacterOption().GetParentName(); p != "" {
		kind = p + " " + kind
	}
	if pr := e.GetCharacterOption().GetPrerequisite(); pr != "" {
		kind += ", prerequisite: " + pr
	}
	b.sentence(kind + ".")
	b.sentence(e.GetDescription())
	for _, bl := range e.GetBlocks() {
		if bl.GetName() != "" {
			b.sentence(bl.GetName() + ": " + bl.GetText())
		} else {
			b.sentence(bl.GetText())
		}
	}
}

func dedupe(in []string) []string {
	seen := make(map[string]bool, len(in))
	out := in[:0:0]
	for _, s := range in {
		k := strings.ToLower(s)
		if !seen[k] {
			seen[k] = true
			out = append(out, s)
		}
	}
	return out
}

func capitalise(s string) string {
	for i, r := range s {
		return string(unicode.ToUpper(r)) + s[i+len(string(r)):]
	}
	return s
}

// textBuilder joins sentences with single spaces and strips markdown
// markup and bare numbers from them.
type textBuilder struct{ strings.Builder }

func (b *textBuilder) raw(s string) { b.WriteString(s) }

func (b *textBuilder) add(s string) { b.WriteString(strings.TrimSpace(s)) }

func (b *textBuilder) sentence(s string) {
	s = clean(s)
	if s == "" {
		return
	}
	if b.Len() > 0 {
		last := b.String()[b.Len()-1]
		if last != ' ' {
			b.WriteByte(' ')
		}
	}
	b.WriteString(s)
}

// clean drops markdown markup (emphasis, headings, table rules, links'
// brackets) and bare numbers ("14", "2d6+8", "+5"), and collapses space.
// Numbers inside words ("1st", "20-foot") are kept: they read as words.
func clean(s string) string {
	fields := strings.FieldsFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || r == '|' || r == '*' || r == '#' || r == '_' || r == '[' || r == ']' || r == '`'
	})
	out := fields[:0]
	for _, f := range fields {
		if isBareNumber(f) || !hasAlnum(f) {
			continue
		}
		out = append(out, f)
	}
	return strings.Join(out, " ")
}

// isBareNumber reports whether f is a number or dice expression with at
// most punctuation around it: "14", "(+5)", "2d6+8", "1/2", "-3,".
func isBareNumber(f string) bool {
	f = strings.Trim(f, "()[],.;:")
	if f == "" {
		return false
	}
	digits := 0
	for _, r := range f {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case r == '+' || r == '-' || r == '/' || r == 'd' || r == '.' || r == '×' || r == 'x':
		default:
			return false
		}
	}
	return digits > 0
}

func hasAlnum(f string) bool {
	for _, r := range f {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return true
		}
	}
	return false
}

// firstWords is s cut to its first n words.
func firstWords(s string, n int) string {
	f := strings.Fields(s)
	if len(f) > n {
		f = f[:n]
	}
	return strings.Join(f, " ")
}

// defenseLine is a damage line as the book prints it ("bludgeoning,
// piercing, and slashing from nonmagical attacks"), or its keys where the
// source gives no more.
func defenseLine(list []string, entries []*lkv1.Defense) string {
	if len(entries) == 0 {
		return strings.Join(list, ", ")
	}
	texts := make([]string, len(entries))
	for i, d := range entries {
		texts[i] = d.GetText()
	}
	return strings.Join(texts, "; ")
}
