package open5e

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"lorekeeper.dev/ingest"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// Open5e's v2 records of SRD 5.1 content lack some of what the v1 records
// of the same book carry (v1's records are otherwise left out as
// duplicates, see Coverage.V1Fill). A supplement completes a v2 endpoint's
// entities from a v1 endpoint's.
type supplement struct {
	// v2 is the endpoint completed; v1 the one that completes it: a v1
	// endpoint, or v2 items for weapons and armor (twins.go).
	v2, v1 Endpoint
	// merge completes v2 from v1 (a v1 entity completes its v2 twins,
	// found by v2Twins) and returns the entities it changed.
	merge func(v2, v1 []*lkv1.Entity, cat *Catalog) []*lkv1.Entity
}

var supplements = []supplement{
	// Class table columns (classtable.go).
	{Endpoint{"v2", "classes", lkv1.Kind_KIND_CLASS}, Endpoint{"v1", "classes", lkv1.Kind_KIND_CLASS}, mergeV1Tables},
	// Creature subtypes: v2 has none ("fiend (devil)", "humanoid (any
	// race)"), only the book's grouping; nor the paragraph before the
	// legendary actions ("can take 3 legendary actions").
	{Endpoint{"v2", "creatures", lkv1.Kind_KIND_CREATURE}, Endpoint{"v1", "monsters", lkv1.Kind_KIND_CREATURE}, mergeV1Creatures},
	// Spell classes: the v2 records of SRD 5.1 name no paladin spell, and
	// those of Deep Magic, the Adventurer's Guide, Tome of Heroes and the
	// other Kobold Press books miss most of the classes their v1 records'
	// "Classes:" line names.
	{Endpoint{"v2", "spells", lkv1.Kind_KIND_SPELL}, Endpoint{"v1", "spells", lkv1.Kind_KIND_SPELL}, mergeV1SpellClasses},
	// SRD weapons' and armor's cost, weight and text, from their item
	// twins (twins.go).
	// Rule sections' missing parts: v2's SRD 5.1 Damage and Healing has
	// no Healing, Dropping to 0 Hit Points (death saving throws), Knocking
	// a Creature Out or Temporary Hit Points, which v1's section text has.
	{Endpoint{"v2", "rulesets", lkv1.Kind_KIND_RULE_SECTION}, Endpoint{"v1", "sections", lkv1.Kind_KIND_RULE_SECTION}, mergeV1Sections},
	{Endpoint{"v2", "weapons", lkv1.Kind_KIND_WEAPON}, Endpoint{"v2", "items", lkv1.Kind_KIND_ITEM}, mergeItemTwins},
	{Endpoint{"v2", "armor", lkv1.Kind_KIND_ARMOR}, Endpoint{"v2", "items", lkv1.Kind_KIND_ITEM}, mergeItemTwins},
}

// supplementOf returns the supplement that completes the v2 endpoint ep.
func supplementOf(ep Endpoint) (supplement, bool) {
	for _, s := range supplements {
		if s.v2 == ep {
			return s, true
		}
	}
	return supplement{}, false
}

// apply completes v2 from v1 and gives the changed entities their new
// content hash.
func (s supplement) apply(v2, v1 []*lkv1.Entity, cat *Catalog) error {
	for _, e := range s.merge(v2, v1, cat) {
		h, err := ingest.ContentHash(e)
		if err != nil {
			return fmt.Errorf("complete %s: %w", e.GetKey(), err)
		}
		e.ContentHash = h
	}
	return nil
}

// v2Twins are the keys (see twinKey) under which a v1 entity's v2 twins
// are found: same kind and name, in a v2 document of the same book.
func v2Twins(cat *Catalog, e *lkv1.Entity) []string {
	var out []string
	for _, doc := range cat.V2Twins(e.GetDocument().GetKey()) {
		out = append(out, twinKey(doc, e))
	}
	return out
}

func twinKey(doc string, e *lkv1.Entity) string {
	return doc + "\x00" + e.GetKind().String() + "\x00" + strings.ToLower(e.GetName())
}

// mergeV1Creatures gives each v2 creature the subtype, the legendary
// actions' paragraph and the actions (bonus actions, reactions, legendary
// actions) of the v1 record of the same creature in the same book that it
// lacks: Tome of Beasts 3's v2 records give 1,363 fewer actions than its
// v1 records, a third of its creatures none at all. It returns the
// creatures it changed.
func mergeV1Creatures(v2, v1 []*lkv1.Entity, cat *Catalog) []*lkv1.Entity {
	twins := map[string]*lkv1.Entity{}
	for _, e := range v1 {
		if e.GetCreature() != nil {
			for _, k := range v2Twins(cat, e) {
				twins[k] = e
			}
		}
	}
	var changed []*lkv1.Entity
	for _, e := range v2 {
		tw := twins[twinKey(e.GetDocument().GetKey(), e)]
		c, t := e.GetCreature(), tw.GetCreature()
		if c == nil || t == nil {
			continue
		}
		change := fillActions(e, tw)
		if t.Subtype != "" && c.Subtype != t.Subtype {
			c.Subtype, change = t.Subtype, true
		}
		if c.HasLegendaryActions && t.LegendaryIntro != "" && c.LegendaryIntro == "" {
			c.LegendaryIntro, c.LegendaryActionsPerRound, change = t.LegendaryIntro, t.LegendaryActionsPerRound, true
		}
		if change {
			changed = append(changed, e)
		}
	}
	return changed
}

// filledTypes are the blocks fillActions takes from a v1 record.
var filledTypes = []string{"action", "bonus_action", "reaction", "legendary_action"}

// fillActions adds to e the actions of its v1 twin tw that it does not
// hold, by name (without what follows it in brackets: "Eyebeam (Recharge
// 5-6)" is v2's "Eyebeam") or by the opening words of its text, found in
// a block's (Tome of Beasts' "Variant: Demon Summoning" is "Summon
// Demon"). Each type's blocks then follow the v1 record's order, v2's own
// in place of their twins (they carry the structured attacks). A v1
// "action" of more than eight words is a sentence filed as one, and "The
// vampire can take 1 legendary action" the legendary actions' opening:
// both left out. It reports whether it added any.
func fillActions(e, tw *lkv1.Entity) bool {
	held := func(b *lkv1.TextBlock) *lkv1.TextBlock {
		name := actionName(b.GetName())
		opening, n := openingWords(b.GetText())
		for _, have := range e.GetBlocks() {
			if actionName(have.GetName()) == name && (have.GetType() == b.GetType() || !namesItself(have)) ||
				n == 12 && strings.Contains(words(have.GetText()), opening) {
				return have
			}
		}
		return nil
	}
	added := false
	for _, typ := range filledTypes {
		var merged []*lkv1.TextBlock
		taken := map[*lkv1.TextBlock]bool{}
		more := false
		for _, b := range tw.GetBlocks() {
			if b.GetType() != typ || len(strings.Fields(b.GetName())) > 8 || legendaryIntroName.MatchString(b.GetName()) {
				continue
			}
			if have := held(b); have != nil {
				if usageFromV1(have, b) {
					added = true
				}
				if have.GetType() == typ && !taken[have] {
					merged, taken[have] = append(merged, have), true
				}
				continue
			}
			merged, more = append(merged, fromV1(b)), true
			givenNow(e, b.GetName())
		}
		if !more {
			continue
		}
		added = true
		at := len(e.Blocks)
		if i := slices.IndexFunc(e.Blocks, func(b *lkv1.TextBlock) bool { return b.GetType() == typ }); i >= 0 {
			at = i
		} else if i := slices.IndexFunc(e.Blocks, func(b *lkv1.TextBlock) bool {
			return slices.Index(filledTypes, b.GetType()) > slices.Index(filledTypes, typ)
		}); i >= 0 {
			at = i
		}
		for _, b := range e.Blocks {
			if b.GetType() == typ && !taken[b] {
				merged = append(merged, b) // v2's own the v1 record lacks
			}
		}
		rest := slices.DeleteFunc(slices.Clone(e.Blocks), func(b *lkv1.TextBlock) bool { return b.GetType() == typ })
		at = min(at, len(rest))
		e.Blocks = slices.Concat(rest[:at], merged, rest[at:])
		if typ == "legendary_action" {
			e.GetCreature().HasLegendaryActions = true
		}
	}
	return added
}

// namesItself reports whether a block's text only names the block's own
// action: Tome of Beasts 2's Herald of the Void has a legendary "Void
// Claw: The herald makes one void claw attack." and no Void Claw action,
// which its v1 record gives. Such a block holds no v1 action of another
// type.
func namesItself(b *lkv1.TextBlock) bool {
	named, ok := NamedAction(b.GetText())
	return ok && strings.EqualFold(named, actionName(b.GetName()))
}

// givenNow drops the corrections that left out the structured attack of
// a block of e only naming the action name, which the source did not give
// (namesUnlisted) and v1 now does: the action's own text says the attack,
// and nothing is missing.
func givenNow(e *lkv1.Entity, name string) {
	naming := func(b *lkv1.TextBlock) bool { return namesItself(b) && actionName(b.GetName()) == actionName(name) }
	e.Corrections = slices.DeleteFunc(e.Corrections, func(c *lkv1.Correction) bool {
		return c.GetField() == "attack" && c.GetCorrectedValue() == "" &&
			slices.ContainsFunc(e.GetBlocks(), func(b *lkv1.TextBlock) bool { return b.GetName() == c.GetSubject() && naming(b) })
	})
}

// usageFromV1 gives a v2 action the usage its v1 twin's name carries and
// its record lacks (Creature Codex's Alnaar: "Flare (Recharge Special)"),
// and reports whether it did.
func usageFromV1(have, v1 *lkv1.TextBlock) bool {
	if have.GetUsage() != nil || strings.Contains(have.GetName(), "(") || !usageName.MatchString(v1.GetName()) {
		return false
	}
	have.Name = v1.GetName()
	have.Usage = fromV1(v1).GetUsage()
	return true
}

// usageName is a v1 action name carrying its usage: "Flare (Recharge
// Special)", "Eyebeam (Recharge 5-6)", "Teleport (2/Day)".
var usageName = regexp.MustCompile(`(?i)\((?:[^()]*\b)?(?:recharges?|/day|per day|uses)\b[^()]*\)`)

// fromV1 is a v1 action as v2 gives one: its usage ("Recharge 5-6",
// "2/Day"), legendary cost (v1's "Cast a Spell (2)") and form ("Fiend Form
// Only") read from its name, which keeps them but the cost.
func fromV1(b *lkv1.TextBlock) *lkv1.TextBlock {
	out := &lkv1.TextBlock{Type: b.GetType(), Name: b.GetName(), Text: b.GetText()}
	if m := rechargeName.FindStringSubmatch(out.Name); m != nil {
		n, _ := strconv.Atoi(m[1])
		out.Usage = &lkv1.Usage{Type: "RECHARGE_ON_ROLL", Param: int32(n)}
	} else if m := perDayName.FindStringSubmatch(out.Name); m != nil {
		n, _ := strconv.Atoi(m[1])
		out.Usage = &lkv1.Usage{Type: "PER_DAY", Param: int32(n)}
	}
	if m := v1Cost.FindStringSubmatch(out.Name); m != nil && out.Type == "legendary_action" {
		n, _ := strconv.Atoi(m[2])
		out.Name = m[1]
		if n > 1 {
			out.LegendaryCost = int32(n)
		}
	}
	if m := v1Form.FindStringSubmatch(out.Name); m != nil {
		out.Form = m[1]
	}
	fillBlockFacts(out)
	return out
}

var (
	// v1Cost is a legendary action's cost as v1 writes it: "Cast a Spell
	// (2)".
	v1Cost = regexp.MustCompile(`^(.+?)\s*\((\d)\)$`)
	v1Form = regexp.MustCompile(`(?i)\(([^()]*\bForm Only)\)`)
)

// actionName is an action's name lower-cased without what follows it in
// brackets ("Eyebeam (Recharge 5-6)", "Sacred Flame (Cantrip; V, S)").
func actionName(name string) string {
	if i := strings.Index(name, "("); i > 0 {
		name = name[:i]
	}
	return strings.TrimSpace(strings.ToLower(name))
}

// openingWords are the first words of text, at most twelve, between
// spaces (as words writes them), and how many there are.
func openingWords(text string) (string, int) {
	f := strings.Fields(words(text))
	f = f[:min(len(f), 12)]
	return " " + strings.Join(f, " ") + " ", len(f)
}

// mergeV1SpellClasses gives each v2 spell the classes its v1 record in the
// same book names and it lacks, and the subclasses that record names. A
// v1 class is the class v2 spells name within one letter ("Sorceror"), or
// a class of its own (Level Up's Herald) unless it is no class at all
// (notClasses: the feat Ritual Caster). It returns the spells it changed.
func mergeV1SpellClasses(v2, v1 []*lkv1.Entity, cat *Catalog) []*lkv1.Entity {
	known := map[string]bool{}
	for _, e := range v2 {
		for _, c := range e.GetSpell().GetClasses() {
			known[c] = true
		}
	}
	class := func(c string) string {
		if known[c] {
			return c
		}
		near := ""
		for k := range known {
			if oneEdit(c, k) {
				if near != "" {
					return "" // two classes as near: neither
				}
				near = k
			}
		}
		if near == "" && !notClasses[c] {
			// A class of the book that no v2 spell names: Level Up's
			// Artificer (93 spells) and Herald (48).
			return c
		}
		return near
	}
	twins := map[string]*lkv1.SpellDetails{}
	for _, e := range v1 {
		if s := e.GetSpell(); s != nil {
			for _, k := range v2Twins(cat, e) {
				twins[k] = s
			}
		}
	}
	var changed []*lkv1.Entity
	for _, e := range v2 {
		s := e.GetSpell()
		if s == nil {
			continue
		}
		t := twins[twinKey(e.GetDocument().GetKey(), e)]
		more := false
		for _, c := range t.GetClasses() {
			if c = class(c); c != "" && !slices.Contains(s.Classes, c) {
				s.Classes, more = append(s.Classes, c), true
			}
		}
		if more {
			slices.Sort(s.Classes)
		}
		if s.Subclasses == "" && t.GetSubclasses() != "" {
			// The subclasses that have it ("Paladin: Ancients"), which
			// the classes above leave out.
			s.Subclasses, more = t.GetSubclasses(), true
		}
		if more {
			changed = append(changed, e)
		}
	}
	return changed
}

// notClasses are the names v1's "Classes:" lines give that are no
// class: SRD 5.1's 28 ritual spells name the feat Ritual Caster.
var notClasses = map[string]bool{"ritual-caster": true}

// oneEdit reports whether a and b differ by one letter changed, added or
// removed.
func oneEdit(a, b string) bool {
	if len(a) < len(b) {
		a, b = b, a
	}
	if len(a)-len(b) > 1 || a == b {
		return false
	}
	i := 0
	for i < len(b) && a[i] == b[i] {
		i++
	}
	if len(a) == len(b) {
		return a[i+1:] == b[i+1:]
	}
	return a[i+1:] == b[i:]
}

// mergeV1Sections gives each v2 rule section the parts of its v1 twin's
// text (its headings of the highest level, lkv1.TextParts) that no rule of
// the v2 book holds, as rule blocks placed after the part before them. A
// part is held when a rule of the book (a block of any of its sections) is
// named as the part or as a part under it (v1's Types of Actions holds the
// Attack, Dash ... rules), or when its opening words are in a rule's text
// (v2's "Rnged Attacks" is v1's Ranged Attacks). It returns the sections
// it changed.
func mergeV1Sections(v2, v1 []*lkv1.Entity, cat *Catalog) []*lkv1.Entity {
	type book struct {
		names map[string]bool // slugs of the rules and sections
		text  strings.Builder // their texts' words
	}
	books := map[string]*book{}
	for _, e := range v2 {
		doc := e.GetDocument().GetKey()
		b := books[doc]
		if b == nil {
			b = &book{names: map[string]bool{}}
			books[doc] = b
		}
		b.names[lkv1.Slugify(e.GetName())] = true
		b.text.WriteString(words(e.GetDescription()))
		for _, bl := range e.GetBlocks() {
			b.names[lkv1.Slugify(bl.GetName())] = true
			b.text.WriteString(words(bl.GetText()))
		}
	}
	twins := map[string]*lkv1.Entity{}
	for _, e := range v1 {
		if e.GetKind() == lkv1.Kind_KIND_RULE_SECTION {
			for _, k := range v2Twins(cat, e) {
				twins[k] = e
			}
		}
	}
	var changed []*lkv1.Entity
	for _, e := range v2 {
		t := twins[twinKey(e.GetDocument().GetKey(), e)]
		if t == nil {
			continue
		}
		b := books[e.GetDocument().GetKey()]
		parts := lkv1.TextParts(t.GetDescription())
		top := lkv1.BoldLevel
		for _, p := range parts {
			top = min(top, p.Level)
		}
		if top == lkv1.BoldLevel {
			continue // bold lead-ins are a rule's paragraphs, not its parts
		}
		at, more := 0, false
		for i, p := range parts {
			if p.Level != top {
				continue
			}
			if j := slices.IndexFunc(e.Blocks, func(bl *lkv1.TextBlock) bool {
				return lkv1.Slugify(bl.GetName()) == lkv1.Slugify(p.Name)
			}); j >= 0 {
				at = j + 1
				continue
			}
			_, body, _ := strings.Cut(p.Text, "\n")
			body = strings.TrimSpace(body)
			if held(p, parts[i+1:], body, b.names, b.text.String()) {
				continue
			}
			e.Blocks = slices.Insert(e.Blocks, at, &lkv1.TextBlock{Type: "rule", Name: p.Name, Text: body})
			at, more = at+1, true
		}
		if more {
			changed = append(changed, e)
		}
	}
	return changed
}

// held reports whether the book holds part p already (see
// mergeV1Sections); after are the parts following p in its text.
func held(p lkv1.TextPart, after []lkv1.TextPart, body string, names map[string]bool, text string) bool {
	if names[lkv1.Slugify(p.Name)] || body == "" {
		return true
	}
	for _, sub := range after {
		if sub.Level <= p.Level {
			break
		}
		// Headed parts only: a bold lead-in is a paragraph's, and may
		// share a rule's name elsewhere in the book (Rolling 1 or 20).
		if sub.Level < lkv1.BoldLevel && names[lkv1.Slugify(sub.Name)] {
			return true
		}
	}
	opening, _ := openingWords(body)
	return strings.Contains(text, opening)
}

// words is s lower-cased with every run of other characters than letters
// and digits one space, between spaces: " a b c ".
func words(s string) string {
	var b strings.Builder
	b.WriteByte(' ')
	space := true
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
			space = false
		} else if !space {
			b.WriteByte(' ')
			space = true
		}
	}
	if !space {
		b.WriteByte(' ')
	}
	return b.String()
}
