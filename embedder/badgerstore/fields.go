package badgerstore

import (
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"lorekeeper.dev/embedder/relevance"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// Filter fields: the names of the secondary indexes, the in-memory posting
// lists and the vector index payload. Keyword fields hold lower-case
// values; bool fields hold "true" or "false"; number fields are columns.
const (
	FieldKind       = "kind"        // Kind slug
	FieldDocument   = "document"    // lower-case document key
	FieldSource     = "source"      // Source slug
	FieldGameSystem = "game_system" // "5e-2014", "5e-2024", "a5e"
	FieldName       = "name"        // lower-case name
	FieldSlug       = "slug"
	FieldKey        = "key"        // lower-case entity key
	FieldSourceKey  = "source_key" // lower-case source key ("srd_fireball")

	// Spells.
	FieldLevel         = "level" // number
	FieldSchool        = "school"
	FieldClass         = "class"
	FieldConcentration = "concentration" // bool
	FieldRitual        = "ritual"        // bool
	FieldCastingTime   = "casting_time"
	FieldDamageType    = "damage_type"  // spells and weapons
	FieldDamageDealt   = "damage_dealt" // items: the types their text rolls ("an extra 2d6 fire damage"); creatures: their actions' typed ones
	FieldVerbal        = "verbal"       // bool
	FieldSomatic       = "somatic"      // bool
	FieldMaterial      = "material"     // bool
	FieldSavingThrow   = "saving_throw"

	// Creatures.
	FieldCR                  = "cr" // number
	FieldCreatureType        = "creature_type"
	FieldEnvironment         = "environment"
	FieldSize                = "size"
	FieldArmorClass          = "armor_class" // number: creatures, and armor's base AC
	FieldHitPoints           = "hit_points"  // number
	FieldAbilityPrefix       = "ability_"    // number: ability_strength ...
	FieldLegendary           = "legendary"   // bool
	FieldDamageImmunity      = "damage_immunity"
	FieldDamageResistance    = "damage_resistance"
	FieldDamageVulnerability = "damage_vulnerability"
	FieldRarity              = "rarity"
	FieldAttunement          = "attunement" // bool
	FieldMagic               = "magic"      // bool
	FieldSimple              = "simple"     // bool
	FieldDamageDice          = "damage_dice"
	FieldProperty            = "property"
	FieldRanged              = "ranged" // bool: a ranged weapon
	FieldArmorCategory       = "armor_category"
	FieldCost                = "cost_gp"   // number
	FieldWeight              = "weight_lb" // number
	FieldStealthDisadvantage = "stealth_disadvantage"
	FieldCategory            = "category"
	FieldParent              = "parent"  // parent key, name and slug, lower-case
	FieldSection             = "section" // rule section slug and name, lower-case
	// FieldRuleCategory is the family a glossary tags a rule with,
	// lower-case ("condition", "action", "area of effect"), matched in
	// memory: "grappled condition" and "Dash [Action]" name the rule of
	// that name and family.
	FieldRuleCategory = "rule_category"
	// FieldFeature is the names of a class's, subclass's or background's
	// features and of the headed parts of a rule's text (lkv1.TextParts),
	// lower-case ("sneak attack", "surprise"), matched in memory (not a
	// vector payload): "how does sneak attack work" names the rogue, and
	// lookup_rule(name="surprise") The Order of Combat.
	FieldFeature = "feature"
	// FieldHealing is a bool: the spell restores hit points (it has a
	// healing roll, or its text says it restores them: Heal's 70, Power
	// Word Heal's all; not Defile Healing's "restores no hit points"),
	// matched in memory: "healing spells" ranks the healers first.
	FieldHealing = "healing"
	// FieldMovement is a creature's ways of moving besides walking, its
	// speed's modes ("fly", "swim", "climb", "burrow", "hover"), matched
	// in memory: "a flying monster" ranks the fliers first.
	FieldMovement            = "movement"
	fieldAbilityStrength     = FieldAbilityPrefix + "strength"
	fieldAbilityDexterity    = FieldAbilityPrefix + "dexterity"
	fieldAbilityConstitution = FieldAbilityPrefix + "constitution"
	fieldAbilityIntelligence = FieldAbilityPrefix + "intelligence"
	fieldAbilityWisdom       = FieldAbilityPrefix + "wisdom"
	fieldAbilityCharisma     = FieldAbilityPrefix + "charisma"
)

// Fields are an entity's filterable values.
type Fields struct {
	Keywords map[string][]string
	Numbers  map[string]float64
	Bools    map[string]bool
}

func (f *Fields) kw(field string, values ...string) {
	for _, v := range values {
		v = strings.ToLower(strings.TrimSpace(v))
		if v == "" {
			continue
		}
		if f.Keywords == nil {
			f.Keywords = map[string][]string{}
		}
		dup := false
		for _, have := range f.Keywords[field] {
			if have == v {
				dup = true
				break
			}
		}
		if !dup {
			f.Keywords[field] = append(f.Keywords[field], v)
		}
	}
}

func (f *Fields) num(field string, v float64) {
	if f.Numbers == nil {
		f.Numbers = map[string]float64{}
	}
	f.Numbers[field] = v
}

func (f *Fields) bool(field string, v bool) {
	if f.Bools == nil {
		f.Bools = map[string]bool{}
	}
	f.Bools[field] = v
}

// EntityFields returns the values every secondary index holds for e: the
// one definition of what is filterable.
func EntityFields(e *lkv1.Entity) Fields {
	var f Fields
	doc := e.GetDocument()
	f.kw(FieldKind, e.GetKind().Slug())
	// A v1 book is found under its v2 twin too: Level Up's magic items
	// ("a5e") when asked for the Adventurer's Guide ("a5e-ag").
	f.kw(FieldDocument, doc.GetKey(), doc.GetTwin())
	f.kw(FieldSource, doc.GetSource().Slug())
	f.kw(FieldGameSystem, doc.GetGameSystem())
	// A name written head first ("Crossbow, light") is found in reading
	// order too ("light crossbow").
	read := relevance.ReadingOrder(e.GetName())
	f.kw(FieldName, e.GetName(), read)
	f.kw(FieldSlug, e.GetSlug(), lkv1.Slugify(e.GetName()), lkv1.Slugify(read))
	f.kw(FieldKey, e.GetKey())
	f.kw(FieldSourceKey, e.GetSourceKey())

	switch d := e.GetDetails().(type) {
	case *lkv1.Entity_Spell:
		sp := d.Spell
		f.num(FieldLevel, float64(sp.GetLevel()))
		f.kw(FieldSchool, sp.GetSchool())
		f.kw(FieldClass, sp.GetClasses()...)
		f.bool(FieldConcentration, sp.GetConcentration())
		f.bool(FieldRitual, sp.GetRitual())
		f.kw(FieldCastingTime, sp.GetCastingTimeKey())
		f.kw(FieldDamageType, sp.GetDamageTypes()...)
		f.bool(FieldVerbal, sp.GetVerbal())
		f.bool(FieldSomatic, sp.GetSomatic())
		f.bool(FieldMaterial, sp.GetMaterial())
		f.kw(FieldSavingThrow, sp.GetSavingThrowAbility())
		f.bool(FieldHealing, sp.GetHealingRoll() != "" || restoresHitPoints(e.GetDescription()))
	case *lkv1.Entity_Creature:
		c := d.Creature
		f.num(FieldCR, c.GetChallengeRating())
		f.kw(FieldCreatureType, c.GetType())
		f.kw(FieldEnvironment, c.GetEnvironments()...)
		f.kw(FieldSize, c.GetSize())
		f.num(FieldArmorClass, float64(c.GetArmorClass()))
		f.num(FieldHitPoints, float64(c.GetHitPoints()))
		if a := c.GetAbilityScores(); a != nil {
			f.num(fieldAbilityStrength, float64(a.GetStrength()))
			f.num(fieldAbilityDexterity, float64(a.GetDexterity()))
			f.num(fieldAbilityConstitution, float64(a.GetConstitution()))
			f.num(fieldAbilityIntelligence, float64(a.GetIntelligence()))
			f.num(fieldAbilityWisdom, float64(a.GetWisdom()))
			f.num(fieldAbilityCharisma, float64(a.GetCharisma()))
		}
		f.bool(FieldLegendary, c.GetHasLegendaryActions())
		for _, mode := range slices.Sorted(maps.Keys(c.GetSpeed())) {
			if mode != "walk" && c.GetSpeed()[mode] > 0 {
				f.kw(FieldMovement, mode)
			}
		}
		f.kw(FieldDamageImmunity, defenseKeys(c.GetDamageImmunities(), c.GetDamageImmunityEntries())...)
		f.kw(FieldDamageResistance, defenseKeys(c.GetDamageResistances(), c.GetDamageResistanceEntries())...)
		f.kw(FieldDamageVulnerability, defenseKeys(c.GetDamageVulnerabilities(), c.GetDamageVulnerabilityEntries())...)
	case *lkv1.Entity_Item:
		it := d.Item
		f.kw(FieldRarity, it.GetRarity())
		f.bool(FieldAttunement, it.GetRequiresAttunement())
		f.bool(FieldMagic, it.GetIsMagic())
		f.kw(FieldCategory, it.GetCategory())
		if it.CostGp != nil {
			f.num(FieldCost, it.GetCostGp())
		}
		if it.WeightLb != nil {
			f.num(FieldWeight, it.GetWeightLb())
		}
		if w := it.GetWeapon(); w != nil {
			f.bool(FieldSimple, w.GetIsSimple())
			f.kw(FieldDamageDice, w.GetDamageDice())
			f.kw(FieldDamageType, w.GetDamageType())
			f.kw(FieldProperty, w.GetProperties()...)
			f.bool(FieldRanged, w.GetIsRanged())
		}
		f.kw(FieldDamageDealt, dealtDamageTypes(e.GetDescription())...)
		if a := it.GetArmor(); a != nil {
			f.kw(FieldArmorCategory, a.GetCategory())
			if a.GetAcBase() > 0 {
				f.num(FieldArmorClass, float64(a.GetAcBase()))
			}
			f.bool(FieldStealthDisadvantage, a.GetStealthDisadvantage())
		}
	case *lkv1.Entity_CharacterOption:
		co := d.CharacterOption
		f.kw(FieldParent, co.GetParentKey(), co.GetParentName(), lkv1.Slugify(co.GetParentName()))
		for _, b := range e.GetBlocks() {
			if b.GetType() == "feature" {
				f.kw(FieldFeature, b.GetName())
			}
		}
	case *lkv1.Entity_Rule:
		r := d.Rule
		f.kw(FieldSection, r.GetSection(), r.GetSectionName(), lkv1.Slugify(r.GetSectionName()))
		f.kw(FieldRuleCategory, r.GetCategory())
		for _, p := range lkv1.TextParts(e.GetDescription()) {
			f.kw(FieldFeature, p.Name)
		}
		for _, b := range e.GetBlocks() { // a section's rules
			f.kw(FieldFeature, b.GetName())
			for _, p := range lkv1.TextParts(b.GetText()) {
				f.kw(FieldFeature, p.Name)
			}
		}
	}
	effectFields(&f, e)
	return f
}

// restoresHitPoints reports whether text says its subject restores hit
// points: "regains 2d8 hit points", "restore up to 700 Hit Points",
// "regain all their hit points", but not after a negation ("can't regain
// hit points", Chill Touch).
func restoresHitPoints(text string) bool {
	// The regexp reads a spell's text in ~45 µs; most say no hit points
	// (a store of 50,000 entities opens with thousands of spells).
	if !strings.Contains(text, "it point") && !strings.Contains(text, "it Point") && !strings.Contains(text, "IT POINT") {
		return false
	}
	for _, m := range healingWords.FindAllStringIndex(text, -1) {
		if !negation.MatchString(text[max(0, m[0]-40):m[0]]) {
			return true
		}
	}
	return false
}

var (
	healingWords = regexp.MustCompile(`(?i)\b(?:regains?|restores?|heals?|recovers?)\s+(?:(?:up to|a number of|all(?:\s+of)?\s+(?:its|their|your|his|her|the)(?:\s+lost)?|the maximum number of|\d+d\d+(?:\s*\+\s*\d+)?|\d+|extra)\s+){0,3}hit points?\b`)
	// negation ends the words before a healing phrase that undo it.
	negation = regexp.MustCompile(`(?i)(?:n['’]t|\bnot|\bno|\bcannot|\bunable|\bprevents?)\b[^.;]{0,25}$`)
)

// dealtDamageTypes are the damage types text says are dealt with a roll:
// "an extra 2d6 fire damage", "takes 4d6 lightning damage", "7 (2d6) cold
// damage". A type named without one ("resistance to fire damage") is not
// dealt.
func dealtDamageTypes(text string) []string {
	if !strings.Contains(text, "amage") {
		return nil
	}
	var out []string
	for _, m := range dealtDamage.FindAllStringSubmatch(text, -1) {
		if t := strings.ToLower(m[1]); !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

var dealtDamage = regexp.MustCompile(`(?i)\b\d+\s*d\s*\d+(?:\s*[+−-]\s*\d+)?\)?\s+(` + strings.Join(lkv1.DamageTypes(), "|") + `)\s+damage\b`)

// defenseKeys indexes a creature's damage line by the types it covers,
// so that a filter tells "immune to fire" from "immune to nonmagical
// slashing": a type it always covers as the type ("fire"); a type a
// qualifier limits as "nonmagical slashing" when the qualifier speaks of
// nonmagical attacks or weapons (the werewolf's), else as "qualified
// slashing" ("while in ethereal form"). A source with keys and no entries
// (OrcBrew) gives the keys. DefenseValues says which keys a filter value
// matches.
func defenseKeys(list []string, entries []*lkv1.Defense) []string {
	if len(entries) == 0 {
		return list
	}
	var out []string
	for _, d := range entries {
		for _, t := range d.GetTypes() {
			switch q := d.GetQualifier(); {
			case q == "":
				out = append(out, t)
			case nonmagical.MatchString(q):
				out = append(out, "nonmagical "+t)
			default:
				out = append(out, "qualified "+t)
			}
		}
	}
	return out
}

// nonmagical is a qualifier limiting a defense to nonmagical attacks or
// weapons: "from nonmagical attacks not made with silvered weapons",
// "nonmagic B/P/S attacks", "weapons that are nonmagical".
var nonmagical = regexp.MustCompile(`(?i)\bnon[- ]?magic`)

// DefenseValues are the index keys (see defenseKeys) a damage filter value
// matches: a type ("fire") the creatures that always have the defense;
// "nonmagical slashing" those too and those that have it against
// nonmagical attacks; "any slashing" every creature whose line names the
// type, whatever limits it.
func DefenseValues(v string) []string {
	v = strings.ToLower(strings.TrimSpace(v))
	if t, ok := strings.CutPrefix(v, "nonmagical "); ok {
		return []string{t, v}
	}
	if t, ok := strings.CutPrefix(v, "any "); ok {
		return []string{t, "nonmagical " + t, "qualified " + t}
	}
	return []string{v}
}

// boolValue is how a bool field is written in posting lists.
func boolValue(v bool) string { return strconv.FormatBool(v) }
