package open5e

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// normalizeV1 fills the kind-specific fields of a v1 record. Only the v1
// kinds that v2 lacks for some document are kept (Coverage.V1Fill), but
// every v1 kind is normalised so that a future v1-only book is served.
func normalizeV1(ep Endpoint, o obj, e *lkv1.Entity) string {
	switch ep.Name {
	case "spells":
		e.HigherLevel = normalizeNewlines(o.str("higher_level"))
		e.Details = &lkv1.Entity_Spell{Spell: spellV1(o)}
	case "monsters":
		e.Details = &lkv1.Entity_Creature{Creature: creatureV1(o, e)}
	case "weapons":
		it := &lkv1.ItemDetails{Category: "weapon", Weapon: weaponV1(o)}
		costWeightV1(o, it)
		e.Details = &lkv1.Entity_Item{Item: it}
	case "armor":
		cat := strings.ToLower(strings.TrimSpace(strings.TrimSuffix(o.str("category"), "Armor")))
		if strings.Contains(cat, "shield") {
			cat = "shield"
		}
		it := &lkv1.ItemDetails{Category: "armor", Armor: &lkv1.ArmorStats{
			Category:            cat,
			AcBase:              o.int32("base_ac"),
			AcAddDex:            o.boolean("plus_dex_mod"),
			AcMaxDex:            o.int32("plus_max"),
			AcDisplay:           o.str("ac_string"),
			StealthDisadvantage: o.boolean("stealth_disadvantage"),
			StrengthRequired:    o.int32("strength_requirement"),
		}}
		if a := it.Armor; cat == "shield" && o.int32("plus_flat_mod") > 0 && a.AcDisplay != fmt.Sprintf("+%d", o.int32("plus_flat_mod")) {
			// v1 shields carry their bonus in plus_flat_mod and a base AC
			// that is not theirs ("11 + Dex modifier +2", "0 +2"): a
			// shield adds its bonus to whatever AC its bearer has.
			bonus := o.int32("plus_flat_mod")
			e.Corrections = append(e.Corrections, &lkv1.Correction{Field: "ac", SourceValue: a.AcDisplay, CorrectedValue: fmt.Sprintf("+%d", bonus)})
			a.AcBase, a.AcAddDex, a.AcMaxDex, a.AcDisplay = bonus, false, 0, fmt.Sprintf("+%d", bonus)
		}
		costWeightV1(o, it)
		e.Details = &lkv1.Entity_Item{Item: it}
	case "magicitems":
		att := o.str("requires_attunement")
		typ, base := magicItemType(o.str("type"))
		e.Details = &lkv1.Entity_Item{Item: &lkv1.ItemDetails{
			Category:           lkv1.Slugify(typ),
			Base:               base,
			IsMagic:            true,
			Rarity:             strings.ToLower(o.str("rarity")),
			RequiresAttunement: att != "",
			AttunementDetail:   att,
		}}
	case "classes":
		e.Details = &lkv1.Entity_CharacterOption{CharacterOption: &lkv1.CharacterOptionDetails{
			HitDice:      strings.ToLower(strings.TrimPrefix(o.str("hit_dice"), "1")),
			SavingThrows: splitList(o.str("prof_saving_throws"), lkv1.AbilityName),
		}}
	case "races":
		co := &lkv1.CharacterOptionDetails{Size: sizeIn(o.str("size_raw") + " " + o.str("size"))}
		if s := o.obj("speed"); s != nil {
			co.Speed = s.int32("walk")
		}
		for _, f := range []string{"asi_desc", "age", "alignment", "size", "speed_desc", "languages", "vision", "traits"} {
			if t := normalizeNewlines(o.str(f)); t != "" {
				e.Blocks = append(e.Blocks, &lkv1.TextBlock{Type: "trait", Name: f, Text: t})
			}
		}
		e.Details = &lkv1.Entity_CharacterOption{CharacterOption: co}
	case "backgrounds":
		for _, f := range []string{"skill_proficiencies", "tool_proficiencies", "languages", "equipment", "feature_desc", "suggested_characteristics"} {
			if t := normalizeNewlines(o.str(f)); t != "" && t != "None" {
				name := strings.ReplaceAll(f, "_", " ")
				if f == "feature_desc" {
					name = o.str("feature")
				}
				e.Blocks = append(e.Blocks, &lkv1.TextBlock{Type: "benefit", Name: name, Text: t})
			}
		}
		e.Details = &lkv1.Entity_CharacterOption{CharacterOption: &lkv1.CharacterOptionDetails{}}
	case "feats":
		for _, b := range o.strs("effects_desc") {
			e.Blocks = append(e.Blocks, &lkv1.TextBlock{Type: "benefit", Text: b})
		}
		e.Details = &lkv1.Entity_CharacterOption{CharacterOption: &lkv1.CharacterOptionDetails{Prerequisite: o.str("prerequisite")}}
	case "sections":
		e.Details = &lkv1.Entity_Rule{Rule: &lkv1.RuleDetails{Section: lkv1.Slugify(o.str("parent")), SectionName: o.str("parent")}}
	default:
		e.Details = &lkv1.Entity_Rule{Rule: &lkv1.RuleDetails{}}
	}
	return ""
}

// subclassesV1 writes the subclasses a v1 record names (archetype:
// "Cleric: Nature, Druid: Underdark") with the druid circles it names apart
// (circles: "Underdark") that the archetype does not name already.
func subclassesV1(archetype, circles string) string {
	var more []string
	for _, c := range splitList(circles, strings.TrimSpace) {
		if !strings.Contains(strings.ToLower(archetype), strings.ToLower(c)) {
			more = append(more, c)
		}
	}
	if len(more) == 0 {
		return archetype
	}
	return strings.Join(nonEmpty(archetype, "Druid: Circle of the Land ("+strings.Join(more, ", ")+")"), "; ")
}

func splitList(s string, f func(string) string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(p), "and "))
		if p != "" {
			out = append(out, f(p))
		}
	}
	return out
}

func spellV1(o obj) *lkv1.SpellDetails {
	s := &lkv1.SpellDetails{
		Level:             o.int32("level_int"),
		School:            strings.ToLower(o.str("school")),
		Concentration:     o.boolean("requires_concentration") || o.boolean("concentration"),
		Ritual:            o.boolean("can_be_cast_as_ritual") || o.boolean("ritual"),
		CastingTime:       o.str("casting_time"),
		CastingTimeKey:    lkv1.CastingTimeKey(o.str("casting_time")),
		Range:             o.str("range"),
		Duration:          o.str("duration"),
		Verbal:            o.boolean("requires_verbal_components"),
		Somatic:           o.boolean("requires_somatic_components"),
		Material:          o.boolean("requires_material_components"),
		MaterialSpecified: o.str("material"),
		Subclasses:        subclassesV1(o.str("archetype"), o.str("circles")),
	}
	// Open5e's spell_lists miss classes the book's own line (dnd_class)
	// names: no SRD 5.1 spell is on the paladin's list. That line also
	// names the classes whose subclasses grant the spell (archetype
	// "Paladin: Ancients", a druid's circles): those have it through the
	// subclass (Subclasses), not on their list.
	for _, l := range o.strs("spell_lists") {
		s.Classes = append(s.Classes, lkv1.Slugify(l))
	}
	archetype := strings.ToLower(o.str("archetype"))
	for _, c := range splitList(o.str("dnd_class"), lkv1.Slugify) {
		viaSubclass := strings.Contains(archetype, c+":") || (c == "druid" && o.str("circles") != "")
		if !viaSubclass && !slices.Contains(s.Classes, c) {
			s.Classes = append(s.Classes, c)
		}
	}
	if m := gpIn.FindStringSubmatch(s.MaterialSpecified); m != nil {
		if f, ok := parseAmount(m[1]); ok {
			s.MaterialCostGp = &f
		}
	}
	s.MaterialConsumed = strings.Contains(strings.ToLower(s.MaterialSpecified), "consume")
	return s
}

var gpIn = regexp.MustCompile(`(?i)(\d[\d,]*)\s*gp`)

func costWeightV1(o obj, it *lkv1.ItemDetails) {
	if f, ok := costGP(o.str("cost")); ok {
		it.CostGp = &f
	}
	w := o.str("weight")
	if f, ok := parseAmount(w); ok {
		unit := strings.TrimSpace(strings.TrimPrefix(w, leadingNumber.FindString(w)))
		if lb, ok := weightLB(f, unit); ok {
			it.WeightLb = &lb
		}
	}
}

// magicItemType splits a magic item's type as v1 gives it, the book's
// first line: "Weapon (any sword)" is a weapon made from any sword.
func magicItemType(s string) (typ, base string) {
	if m := propertyDetail.FindStringSubmatch(strings.TrimSpace(s)); m != nil {
		return m[1], strings.ToLower(strings.TrimSpace(m[2]))
	}
	return s, ""
}

var propertyDetail = regexp.MustCompile(`^([^(]+?)\s*\((.*)\)$`)
var rangePair = regexp.MustCompile(`(\d+)\s*/\s*(\d+)`)

func weaponV1(o obj) *lkv1.WeaponStats {
	cat := strings.ToLower(o.str("category"))
	w := &lkv1.WeaponStats{
		DamageDice: o.str("damage_dice"),
		DamageType: strings.ToLower(o.str("damage_type")),
		IsSimple:   strings.Contains(cat, "simple"),
		IsRanged:   strings.Contains(cat, "ranged"),
	}
	for _, p := range o.strs("properties") {
		name, detail := p, ""
		if m := propertyDetail.FindStringSubmatch(p); m != nil {
			name, detail = m[1], m[2]
		}
		k := lkv1.Slugify(name)
		if k == "" {
			continue
		}
		w.Properties = append(w.Properties, k)
		if k == "versatile" {
			w.VersatileDice = detail
		}
		if m := rangePair.FindStringSubmatch(detail); m != nil {
			n, _ := parseAmount(m[1])
			l, _ := parseAmount(m[2])
			w.RangeNormal, w.RangeLong = clampInt32(n), clampInt32(l)
		}
	}
	return w
}

func creatureV1(o obj, e *lkv1.Entity) *lkv1.CreatureDetails {
	c := &lkv1.CreatureDetails{
		Type:        strings.ToLower(o.str("type")),
		Subtype:     o.str("subtype"),
		Size:        strings.ToLower(o.str("size")),
		Alignment:   o.str("alignment"),
		ArmorClass:  o.int32("armor_class"),
		ArmorDetail: o.str("armor_desc"),
		HitPoints:   o.int32("hit_points"),
		HitDice:     o.str("hit_dice"),
		Senses:      o.str("senses"),
		Languages:   o.str("languages"),
		AbilityScores: &lkv1.AbilityScores{
			Strength: o.int32("strength"), Dexterity: o.int32("dexterity"),
			Constitution: o.int32("constitution"), Intelligence: o.int32("intelligence"),
			Wisdom: o.int32("wisdom"), Charisma: o.int32("charisma"),
		},
		Skills: intMap(o.obj("skills")),
	}
	if cr, ok := lkv1.ParseChallengeRating(o.str("challenge_rating")); ok {
		c.ChallengeRating = cr
		c.ChallengeRatingText = lkv1.ChallengeRatingText(cr)
	} else if cr, ok := o.num("cr"); ok {
		c.ChallengeRating = cr
		c.ChallengeRatingText = lkv1.ChallengeRatingText(cr)
	}
	c.Speed, c.SpeedText = speeds(o.obj("speed"))
	setDefenses(c, o.str, nil)
	saves := map[string]int32{}
	for _, a := range lkv1.Abilities() {
		if f, ok := o.num(a + "_save"); ok {
			saves[a] = clampInt32(f)
		}
	}
	if len(saves) > 0 {
		c.SavingThrows = saves
	}
	if m := passive.FindStringSubmatch(c.Senses); m != nil {
		f, _ := parseAmount(m[1])
		c.PassivePerception = clampInt32(f)
	}
	for _, env := range o.strs("environments") {
		c.Environments = append(c.Environments, strings.ToLower(env))
	}
	c.LegendaryIntro = normalizeNewlines(o.str("legendary_desc"))
	c.LegendaryActionsPerRound = legendaryPerRound(c.LegendaryIntro)
	for _, set := range []struct{ field, typ string }{
		{"special_abilities", "trait"}, {"actions", "action"}, {"bonus_actions", "bonus_action"},
		{"reactions", "reaction"}, {"legendary_actions", "legendary_action"},
	} {
		for _, a := range o.objs(set.field) {
			e.Blocks = append(e.Blocks, &lkv1.TextBlock{Type: set.typ, Name: a.str("name"), Text: normalizeNewlines(a.str("desc"))})
			if set.typ == "legendary_action" {
				c.HasLegendaryActions = true
			}
		}
	}
	return c
}

var (
	passive          = regexp.MustCompile(`(?i)passive perception\s+(\d+)`)
	legendaryPerTurn = regexp.MustCompile(`(?i)\bcan take (\d+|one|two|three|four|five) legendary actions?\b`)
)

// legendaryPerRound reads "can take 3 legendary actions" from the
// paragraph before a creature's legendary actions.
func legendaryPerRound(intro string) int32 {
	m := legendaryPerTurn.FindStringSubmatch(intro)
	if m == nil {
		return 0
	}
	if i := slices.Index([]string{"one", "two", "three", "four", "five"}, strings.ToLower(m[1])); i >= 0 {
		return int32(i + 1)
	}
	f, _ := parseAmount(m[1])
	return clampInt32(f)
}
