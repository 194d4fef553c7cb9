package mcpserver

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// Every mapped fact reaches the card: for each Entity field a field map
// maps a source field to, cardFacts says how the card shows it, and the
// field-map tests check it on every entity that carries the fact. A
// mapping to a field with no check here fails the tests, so a new mapping
// decides how its fact is shown.

// notCardFacts are Entity fields that identify or order rather than say
// something a card prints.
var notCardFacts = map[string]string{
	"source_key":                  "the record's key in its source; the card cites the entity's URI",
	"rule.section":                "the ruleset's key; the card names the section (section_name)",
	"rule.index":                  "the rule's place in its ruleset, which the order of results keeps",
	"character_option.parent_key": "the parent's entity key; the card names the parent (parent_name)",
	"blocks.type":                 "checked with the blocks: a creature's section heading (see blocks.name)",
	"blocks.level":                "checked with the blocks: the level after a feature's name (see blocks.name)",
	"blocks.levels":               "checked with the blocks: the levels after a feature's name (see blocks.name)",
}

// cardFact is how a card shows an Entity field: what of e's value for it
// the card lacks (nothing when the card shows it or e has no value).
type cardFact func(e *Entity, card, lower string) []string

// cardFacts by Entity field.
var cardFacts = map[string]cardFact{
	"name": func(e *Entity, card, _ string) []string { return need(card, "the name", "## "+e.Name) },
	"description": func(e *Entity, card, _ string) []string {
		return need(card, "the description", firstWords(e.Description, 8))
	},
	"higher_level": func(e *Entity, card, _ string) []string {
		return need(card, "the higher-level text", firstWords(e.HigherLevel, 8))
	},
	"document.name": func(e *Entity, card, _ string) []string {
		return need(card, "the document's name", "*Source: "+e.DocumentName)
	},
	"kind": func(e *Entity, _, lower string) []string {
		return need(lower, "the kind", strings.ReplaceAll(e.Kind, "-", " "))
	},

	"spell.level": func(e *Entity, card, _ string) []string {
		if e.Spell.Level == 0 {
			return need(card, "the level", "cantrip")
		}
		return need(card, "the level", lkv1.Ordinal(e.Spell.Level)+"-level")
	},
	"spell.school": func(e *Entity, _, lower string) []string {
		return need(lower, "the school", strings.ToLower(e.Spell.School))
	},
	"spell.classes": func(e *Entity, _, lower string) []string { return needAll(lower, "a class", lowerAll(e.Spell.Classes)) },
	"spell.concentration": func(e *Entity, _, lower string) []string {
		return needIf(e.Spell.Concentration, lower, "concentration", "concentration")
	},
	"spell.ritual": func(e *Entity, card, _ string) []string { return needIf(e.Spell.Ritual, card, "ritual", "(ritual)") },
	"spell.casting_time": func(e *Entity, card, _ string) []string {
		return needIf(e.Spell.CastingTime != "", card, "the casting time", "**Casting Time:** "+castingTime(e.Spell.CastingTime))
	},
	"spell.range": func(e *Entity, card, _ string) []string {
		return needIf(e.Spell.Range != "", card, "the range", "**Range:** "+e.Spell.Range)
	},
	"spell.duration": func(e *Entity, card, _ string) []string {
		return needIf(e.Spell.Duration != "", card, "the duration", "**Duration:**")
	},
	"spell.verbal": func(e *Entity, card, _ string) []string {
		return needIf(e.Spell.Verbal, componentsLine(card), "V", "V")
	},
	"spell.somatic": func(e *Entity, card, _ string) []string {
		return needIf(e.Spell.Somatic, componentsLine(card), "S", "S")
	},
	"spell.material": func(e *Entity, card, _ string) []string {
		return needIf(e.Spell.Material, componentsLine(card), "M", "M")
	},
	"spell.material_specified": func(e *Entity, card, _ string) []string {
		return needIf(e.Spell.MaterialSpecified != "", card, "the material", firstWords(strings.TrimSuffix(e.Spell.MaterialSpecified, "."), 6))
	},
	// Said once: by the material's own words ("a diamond worth 300+ GP,
	// which the spell consumes") or after them.
	"spell.material_cost_gp": func(e *Entity, card, _ string) []string {
		c := e.Spell.MaterialCostGP
		// "25,000gp" is 25000.
		if words := strings.ReplaceAll(strings.ToLower(e.Spell.MaterialSpecified), ",", ""); c != nil && strings.Contains(words, num(*c)) && strings.Contains(words, "gp") {
			return need(strings.ReplaceAll(componentsText(card), ",", ""), "the material's cost", num(*c))
		}
		return needIf(c != nil && e.Spell.MaterialSpecified != "", card, "the material's cost", fmt.Sprintf("worth %s gp", num(deref(c))))
	},
	"spell.material_consumed": func(e *Entity, card, _ string) []string {
		if strings.Contains(strings.ToLower(e.Spell.MaterialSpecified), "consum") {
			return needIf(e.Spell.MaterialConsumed, strings.ToLower(componentsText(card)), "consumed", "consum")
		}
		return needIf(e.Spell.MaterialConsumed && e.Spell.MaterialSpecified != "", card, "consumed", ", consumed")
	},
	"spell.damage_roll": func(e *Entity, card, _ string) []string {
		return needIf(e.Spell.DamageRoll != "", card, "the damage", "**Damage:** "+e.Spell.DamageRoll)
	},
	"spell.healing_roll": func(e *Entity, card, _ string) []string {
		want := "**Healing:** " + e.Spell.HealingRoll
		// "1d4 + your spellcasting ability modifier": the card says both.
		if strings.Contains(strings.ReplaceAll(strings.ToLower(e.Description), " ", ""), e.Spell.HealingRoll+"+yourspellcastingabilitymodifier") {
			want += " + spellcasting modifier"
		}
		return needIf(e.Spell.HealingRoll != "", card, "the healing", want)
	},
	"spell.damage_types": func(e *Entity, _, lower string) []string { return needAll(lower, "a damage type", e.Spell.DamageTypes) },
	"spell.saving_throw_ability": func(e *Entity, card, _ string) []string {
		return needIf(e.Spell.SavingThrowAbility != "", card, "the save", "**Saving Throw:** "+title(e.Spell.SavingThrowAbility))
	},
	"spell.attack_roll": func(e *Entity, card, _ string) []string {
		return needIf(e.Spell.AttackRoll, card, "the attack roll", "**Attack:** spell attack")
	},
	"spell.reaction_condition": func(e *Entity, card, _ string) []string {
		return needIf(e.Spell.ReactionCondition != "", card, "the trigger", "**Trigger:**")
	},
	"spell.area": func(e *Entity, _, lower string) []string {
		return needIf(e.Spell.Area != "", lower, "the area", strings.ToLower(e.Spell.Area))
	},
	"spell.subclasses": func(e *Entity, card, _ string) []string {
		return needIf(e.Spell.Subclasses != "", card, "the subclasses", "**Subclasses:**")
	},

	"creature.type": func(e *Entity, _, lower string) []string {
		return need(lower, "the type", strings.ToLower(e.Creature.Type))
	},
	"creature.subtype": func(e *Entity, _, lower string) []string {
		return needIf(e.Creature.Subtype != "", lower, "the subtype", "("+strings.ToLower(e.Creature.Subtype)+")")
	},
	"creature.group": func(e *Entity, card, _ string) []string {
		return needIf(e.Creature.Group != "", card, "the group", e.Creature.Group)
	},
	"creature.size": func(e *Entity, _, lower string) []string {
		return need(lower, "the size", strings.ToLower(e.Creature.Size))
	},
	"creature.alignment": func(e *Entity, card, _ string) []string {
		return needIf(e.Creature.Alignment != "", card, "the alignment", e.Creature.Alignment)
	},
	"creature.armor_class": func(e *Entity, card, _ string) []string {
		return needIf(e.Creature.ArmorClass > 0, card, "the armor class", fmt.Sprintf("**Armor Class** %d", e.Creature.ArmorClass))
	},
	"creature.armor_detail": func(e *Entity, card, _ string) []string {
		return needIf(e.Creature.ArmorDetail != "", card, "the armor", "("+e.Creature.ArmorDetail+")")
	},
	"creature.hit_points": func(e *Entity, card, _ string) []string {
		return needIf(e.Creature.HitPoints > 0, card, "the hit points", fmt.Sprintf("**Hit Points** %d", e.Creature.HitPoints))
	},
	"creature.hit_dice": func(e *Entity, card, _ string) []string {
		return needIf(e.Creature.HitDice != "", card, "the hit dice", "("+e.Creature.HitDice+")")
	},
	"creature.challenge_rating": func(e *Entity, card, _ string) []string {
		return need(card, "the challenge", "**Challenge** "+e.Creature.ChallengeRatingText)
	},
	"creature.experience_points": func(e *Entity, card, _ string) []string {
		return needIf(e.Creature.ExperiencePoints > 0, card, "the XP", thousands(e.Creature.ExperiencePoints)+" XP")
	},
	"creature.proficiency_bonus": func(e *Entity, card, _ string) []string {
		return needIf(e.Creature.ProficiencyBonus > 0, card, "the proficiency bonus", "**Proficiency Bonus** "+signed(e.Creature.ProficiencyBonus))
	},
	"creature.initiative_bonus": func(e *Entity, card, _ string) []string {
		c := e.Creature
		if c.InitiativeBonus == nil {
			return nil
		}
		if showInitiative(e) {
			return need(card, "the initiative", "**Initiative** "+signed(*c.InitiativeBonus))
		}
		// The Dexterity modifier, which the ability table shows.
		return need(card, "the initiative (Dexterity modifier)", fmt.Sprintf("%d (%s)", c.AbilityScores["dexterity"], signed(*c.InitiativeBonus)))
	},
	"creature.speed": func(e *Entity, card, _ string) []string {
		return needIf(len(e.Creature.Speed) > 0 || e.Creature.SpeedText != "", card, "the speed", "**Speed** ")
	},
	"creature.ability_scores": func(e *Entity, card, _ string) []string {
		var out []string
		for _, a := range []string{"strength", "dexterity", "constitution", "intelligence", "wisdom", "charisma"} {
			if s, ok := e.Creature.AbilityScores[a]; ok {
				out = append(out, need(card, a, fmt.Sprintf(" %d (%s) |", s, signed(modifier(s))))...)
			}
		}
		return out
	},
	"creature.saving_throws": func(e *Entity, card, _ string) []string {
		var out []string
		for a, v := range e.Creature.SavingThrows {
			if plainSave(e.Creature, a, v) {
				// The ability table's modifier says it.
				out = append(out, need(card, "a saving throw", fmt.Sprintf("%d (%s)", e.Creature.AbilityScores[a], signed(v)))...)
				continue
			}
			out = append(out, need(card, "a saving throw", abbrev(a)+" "+signed(v))...)
		}
		return out
	},
	"creature.skills": func(e *Entity, _, lower string) []string {
		var out []string
		for k, v := range e.Creature.Skills {
			out = append(out, need(lower, "a skill", strings.ToLower(strings.NewReplacer("_", " ", "-", " ").Replace(k))+" "+signed(v))...)
		}
		return out
	},
	"creature.senses": func(e *Entity, card, _ string) []string {
		return needIf(e.Creature.Senses != "", card, "the senses", e.Creature.Senses)
	},
	"creature.passive_perception": func(e *Entity, _, lower string) []string {
		return needIf(e.Creature.PassivePerception > 0, lower, "passive perception", fmt.Sprintf("passive perception %d", e.Creature.PassivePerception))
	},
	"creature.languages": func(e *Entity, card, _ string) []string {
		return needIf(e.Creature.Languages != "", card, "the languages", "**Languages** "+e.Creature.Languages)
	},
	"creature.damage_vulnerabilities": func(e *Entity, card, _ string) []string {
		return defenseFacts(card, "a vulnerability", e.Creature.DamageVulnerabilities, e.Creature.DamageVulnerabilityEntries)
	},
	"creature.damage_resistances": func(e *Entity, card, _ string) []string {
		return defenseFacts(card, "a resistance", e.Creature.DamageResistances, e.Creature.DamageResistanceEntries)
	},
	"creature.damage_immunities": func(e *Entity, card, _ string) []string {
		return defenseFacts(card, "an immunity", e.Creature.DamageImmunities, e.Creature.DamageImmunityEntries)
	},
	"creature.condition_immunities": func(e *Entity, card, _ string) []string {
		return defenseFacts(card, "a condition immunity", e.Creature.ConditionImmunities, e.Creature.ConditionImmunityEntries)
	},
	"creature.damage_vulnerability_entries": func(e *Entity, card, _ string) []string {
		return defenseFacts(card, "a vulnerability", nil, e.Creature.DamageVulnerabilityEntries)
	},
	"creature.damage_resistance_entries": func(e *Entity, card, _ string) []string {
		return defenseFacts(card, "a resistance", nil, e.Creature.DamageResistanceEntries)
	},
	"creature.damage_immunity_entries": func(e *Entity, card, _ string) []string {
		return defenseFacts(card, "an immunity", nil, e.Creature.DamageImmunityEntries)
	},
	"creature.condition_immunity_entries": func(e *Entity, card, _ string) []string {
		return defenseFacts(card, "a condition immunity", nil, e.Creature.ConditionImmunityEntries)
	},
	"creature.environments": func(e *Entity, _, lower string) []string {
		return needAll(lower, "an environment", lowerAll(environments(e.Creature.Environments)))
	},
	"creature.legendary_intro": func(e *Entity, card, _ string) []string {
		return needIf(e.Creature.LegendaryIntro != "", card, "the legendary paragraph", firstWords(e.Creature.LegendaryIntro, 8))
	},

	"blocks.name":   blockFacts,
	"blocks.text":   blockFacts,
	"blocks.attack": blockFacts, "blocks.usage.type": blockFacts, "blocks.usage.param": blockFacts,
	"blocks.legendary_cost": blockFacts, "blocks.form": blockFacts,

	"item.category": func(e *Entity, _, lower string) []string { return itemHead(e, lower) },
	"item.base": func(e *Entity, _, lower string) []string {
		return needIf(e.Item.Base != "", lower, "what it is made from", "*"+strings.ToLower(e.Item.Category)+" ("+e.Item.Base+")")
	},
	"item.rarity": func(e *Entity, _, lower string) []string {
		return needIf(e.Item.Rarity != "", lower, "the rarity", strings.ToLower(e.Item.Rarity))
	},
	"item.requires_attunement": func(e *Entity, _, lower string) []string {
		return needIf(e.Item.RequiresAttunement, lower, "attunement", "attunement")
	},
	"item.attunement_detail": func(e *Entity, card, _ string) []string {
		return needIf(e.Item.AttunementDetail != "", card, "the attunement", e.Item.AttunementDetail)
	},
	"item.cost_gp": func(e *Entity, card, _ string) []string {
		c := e.Item.CostGP
		return needIf(c != nil && *c > 0, card, "the cost", "**Cost:** "+num(deref(c))+" gp")
	},
	"item.weight_lb": func(e *Entity, card, _ string) []string {
		w := e.Item.WeightLb
		return needIf(w != nil && *w > 0, card, "the weight", "**Weight:** "+num(deref(w))+" lb.")
	},
	"item.weapon": func(e *Entity, _, lower string) []string { return itemHead(e, lower) },
	"item.weapon.damage_dice": func(e *Entity, card, _ string) []string {
		w := e.Item.Weapon
		return needIf(w != nil && w.DamageDice != "", card, "the damage", "**Damage:** "+weaponOf(e).DamageDice)
	},
	"item.weapon.damage_type": func(e *Entity, _, lower string) []string {
		w := weaponOf(e)
		return needIf(w.DamageType != "", lower, "the damage type", strings.ToLower(w.DamageType))
	},
	"item.weapon.properties": func(e *Entity, _, lower string) []string {
		return needAll(lower, "a property", lowerAll(weaponOf(e).Properties))
	},
	"item.weapon.mastery": func(e *Entity, card, _ string) []string {
		w := weaponOf(e)
		return needIf(w.Mastery != "", card, "the mastery", "**Mastery:** "+title(w.Mastery))
	},
	"item.weapon.range_normal": weaponRange, "item.weapon.range_long": weaponRange,
	"item.weapon.versatile_dice": func(e *Entity, card, _ string) []string {
		w := weaponOf(e)
		return needIf(w.VersatileDice != "", card, "the versatile die", "versatile ("+w.VersatileDice+")")
	},
	"item.weapon.is_ranged": func(e *Entity, _, lower string) []string {
		return needIf(weaponOf(e).IsRanged, lower, "ranged", "ranged")
	},
	"item.weapon.is_improvised": func(e *Entity, _, lower string) []string {
		return needIf(weaponOf(e).IsImprovised, lower, "improvised", "improvised")
	},
	"item.armor.category": func(e *Entity, _, lower string) []string { return itemHead(e, lower) },
	"item.armor.ac_base": func(e *Entity, card, _ string) []string {
		a := armorOf(e)
		if a.ACDisplay != "" {
			return need(card, "the armor class", "**Armor Class:** "+a.ACDisplay)
		}
		return needIf(a.ACBase > 0, card, "the armor class", fmt.Sprintf("%d", a.ACBase))
	},
	"item.armor.ac_add_dex": func(e *Entity, _, lower string) []string {
		a := armorOf(e)
		return needIf(a.ACAddDex && a.ACDisplay == "", lower, "the Dex modifier", "dex modifier")
	},
	"item.armor.ac_max_dex": func(e *Entity, card, _ string) []string {
		a := armorOf(e)
		return needIf(a.ACMaxDex > 0 && a.ACDisplay == "", card, "the Dex cap", fmt.Sprintf("(max %d)", a.ACMaxDex))
	},
	"item.armor.ac_display": func(e *Entity, card, _ string) []string {
		a := armorOf(e)
		return needIf(a.ACDisplay != "", card, "the armor class", "**Armor Class:** "+a.ACDisplay)
	},
	"item.armor.stealth_disadvantage": func(e *Entity, card, _ string) []string {
		return needIf(armorOf(e).StealthDisadvantage, card, "stealth", "**Stealth:** Disadvantage")
	},
	"item.armor.strength_required": func(e *Entity, card, _ string) []string {
		a := armorOf(e)
		return needIf(a.StrengthRequired > 0, card, "the strength", fmt.Sprintf("Str %d", a.StrengthRequired))
	},

	"character_option.hit_dice": func(e *Entity, card, _ string) []string {
		return needIf(e.CharacterOption.HitDice != "", card, "the hit dice", "**Hit Dice:** "+e.CharacterOption.HitDice)
	},
	"character_option.caster_type": func(e *Entity, card, _ string) []string {
		c := e.CharacterOption.CasterType
		// NONE and OTHER (an OrcBrew class's own progression) say
		// nothing; a type the card cannot name fails.
		return needIf(c != "" && c != "NONE" && c != "OTHER", card, "the caster type", "**Spellcasting:** "+casterTypes[c])
	},
	"character_option.saving_throws": func(e *Entity, _, lower string) []string {
		return needAll(lower, "a saving throw", lowerAll(e.CharacterOption.SavingThrows))
	},
	"character_option.parent_name": func(e *Entity, card, _ string) []string {
		return needIf(e.CharacterOption.ParentName != "", card, "the parent", " of "+e.CharacterOption.ParentName)
	},
	"character_option.prerequisite": func(e *Entity, card, _ string) []string {
		return needIf(e.CharacterOption.Prerequisite != "", card, "the prerequisite", "**Prerequisite:** "+e.CharacterOption.Prerequisite)
	},
	"character_option.feat_type": func(e *Entity, _, lower string) []string {
		return needIf(e.CharacterOption.FeatType != "", lower, "the feat type", strings.ToLower(e.CharacterOption.FeatType))
	},
	"character_option.size": func(e *Entity, card, _ string) []string {
		return needIf(e.CharacterOption.Size != "", card, "the size", "**Size:** "+title(e.CharacterOption.Size))
	},
	"character_option.speed": func(e *Entity, card, _ string) []string {
		return needIf(e.CharacterOption.Speed > 0, card, "the speed", fmt.Sprintf("**Speed:** %d ft.", e.CharacterOption.Speed))
	},
	"character_option.progression.levels.features":          classTableFacts,
	"character_option.progression.levels.values":            classTableFacts,
	"character_option.progression.levels.proficiency_bonus": classTableFacts,

	"rule.section_name": func(e *Entity, card, _ string) []string {
		return needIf(e.Rule.SectionName != "", card, "the section", " · "+e.Rule.SectionName)
	},
	"rule.ability": func(e *Entity, card, _ string) []string {
		return needIf(e.Rule.Ability != "", card, "the ability", "**Ability:** "+title(e.Rule.Ability))
	},
}

// checkCard returns what e's card lacks of the fact at the Entity field
// to ("a|b": both are checked), and whether the field has a check. flat
// is the card with its whitespace made single spaces (flatten): a card
// breaks lines where the source ran them on.
func checkCard(to string, e *Entity, flat, lower string) ([]string, bool) {
	var out []string
	for _, f := range strings.Split(to, "|") {
		if _, ok := notCardFacts[f]; ok {
			continue
		}
		check, ok := cardFacts[f]
		if !ok {
			return nil, false
		}
		if !hasDetails(f, e) {
			continue
		}
		out = append(out, check(e, flat, lower)...)
	}
	return out, true
}

// hasDetails reports whether e has the details a field's check reads.
func hasDetails(f string, e *Entity) bool {
	switch {
	case strings.HasPrefix(f, "spell."):
		return e.Spell != nil
	case strings.HasPrefix(f, "creature."):
		return e.Creature != nil
	case strings.HasPrefix(f, "item"):
		return e.Item != nil
	case strings.HasPrefix(f, "character_option."):
		return e.CharacterOption != nil
	case strings.HasPrefix(f, "rule."):
		return e.Rule != nil
	}
	return true
}

func flatten(s string) string { return strings.Join(strings.Fields(s), " ") }

// need checks that the flattened card holds each of want.
func need(card, what string, want ...string) []string {
	var out []string
	for _, w := range want {
		if w = flatten(w); w != "" && !strings.Contains(card, w) {
			out = append(out, fmt.Sprintf("card does not show %s %q", what, w))
		}
	}
	return out
}

func needIf(cond bool, card, what string, want ...string) []string {
	if !cond {
		return nil
	}
	return need(card, what, want...)
}

func needAll(card, what string, want []string) []string { return need(card, what, want...) }

func lowerAll(s []string) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = strings.ToLower(x)
	}
	return out
}

func deref(f *float64) float64 {
	if f == nil {
		return 0
	}
	return *f
}

// componentsLine is the letters of the components line: "V, S, M".
func componentsLine(card string) string {
	_, rest, ok := strings.Cut(card, "**Components:** ")
	if !ok {
		return ""
	}
	c, _, _ := strings.Cut(rest, " **")
	c, _, _ = strings.Cut(c, " (")
	return c
}

// componentsText is the whole components line, the material with them.
func componentsText(card string) string {
	_, rest, _ := strings.Cut(card, "**Components:** ")
	line, _, _ := strings.Cut(rest, "\n")
	return line
}

func weaponOf(e *Entity) *Weapon {
	if e.Item.Weapon == nil {
		return &Weapon{}
	}
	return e.Item.Weapon
}

func armorOf(e *Entity) *Armor {
	if e.Item.Armor == nil {
		return &Armor{}
	}
	return e.Item.Armor
}

// itemHead checks the line under an item's name: what it is.
func itemHead(e *Entity, lower string) []string {
	it := e.Item
	switch {
	case it.Weapon != nil && !it.IsMagic:
		cls := "martial"
		if it.Weapon.IsSimple {
			cls = "simple"
		}
		return need(lower, "what the weapon is", "weapon ("+cls)
	case it.Armor != nil && !it.IsMagic:
		if it.Armor.Category == "shield" {
			return need(lower, "what the armor is", "*shield")
		}
		return need(lower, "what the armor is", "armor ("+strings.ToLower(it.Armor.Category)+")")
	case it.Category != "":
		return need(lower, "the category", strings.ReplaceAll(strings.ToLower(it.Category), "-", " "))
	}
	return nil
}

func weaponRange(e *Entity, card, _ string) []string {
	w := weaponOf(e)
	return needIf(w.RangeNormal > 0, card, "the range", fmt.Sprintf("%d/%d", w.RangeNormal, w.RangeLong))
}

// blockFacts checks every block that has something to show: its name
// with what a stat block prints after it (recharge, cost, form, a
// feature's levels), its text's first words and its attack line.
func blockFacts(e *Entity, card, _ string) []string {
	var out []string
	for _, bl := range e.Blocks {
		if emptyBlock(bl) {
			continue
		}
		if bl.Name != "" {
			name := blockName(bl)
			if e.Creature == nil && e.Item == nil {
				name = blockName(Block{Name: featureName(bl), Usage: bl.Usage, Cost: bl.Cost, Form: bl.Form})
			}
			out = append(out, need(card, "the block", "***"+name+".***")...)
		}
		if e.Creature != nil {
			if h := sectionHeadings[bl.Type]; h != "" {
				out = append(out, need(card, "the section", "### "+h)...)
			}
		}
		out = append(out, need(card, "the block's text", firstWords(bl.Text, 6))...)
		if bl.Attack != "" {
			out = append(out, need(card, "the attack", bl.Attack)...)
		}
	}
	return out
}

var sectionHeadings = map[string]string{
	"action": "Actions", "bonus_action": "Bonus Actions", "reaction": "Reactions",
	"legendary_action": "Legendary Actions", "mythic_action": "Mythic Actions", "lair_action": "Lair Actions",
}

// defenseFacts checks a damage or condition line: each entry as the book
// prints it, qualifier and all, and each type of the list in an entry
// shown (a source with keys alone: each key).
func defenseFacts(card, what string, list []string, entries []Defense) []string {
	if len(entries) == 0 {
		return need(strings.ToLower(card), what, lowerAll(list)...)
	}
	var out []string
	for _, d := range entries {
		out = append(out, need(card, what, d.Text)...)
	}
	for _, t := range list {
		if !slices.ContainsFunc(entries, func(d Defense) bool { return slices.Contains(d.Types, t) }) {
			out = append(out, fmt.Sprintf("no entry of the line covers %s %q", what, t))
		}
	}
	return out
}

// classTableFacts checks the class table: a row per level with its
// proficiency bonus, and each column's values.
func classTableFacts(e *Entity, card, _ string) []string {
	t := e.CharacterOption.ClassTable
	if t == nil {
		return nil
	}
	var out []string
	for _, l := range t.Levels {
		row := rowOf(card, l.Level)
		if row == "" {
			out = append(out, fmt.Sprintf("card has no class table row for level %d", l.Level))
			continue
		}
		if l.ProficiencyBonus > 0 && !strings.Contains(row, signed(l.ProficiencyBonus)) {
			out = append(out, fmt.Sprintf("level %d's row lacks its proficiency bonus", l.Level))
		}
		for _, c := range slices.Sorted(maps.Keys(l.Columns)) {
			if v := l.Columns[c]; v != "" && !strings.Contains(row, cell(v)) {
				out = append(out, fmt.Sprintf("level %d's row lacks %s %q", l.Level, c, v))
			}
		}
	}
	return out
}

// rowOf is the class table's row of level in the flattened card: from
// its first cell to the next level's.
func rowOf(card string, level int32) string {
	_, row, ok := strings.Cut(card, "| "+lkv1.Ordinal(level)+" | ")
	if !ok {
		return ""
	}
	row, _, _ = strings.Cut(row, "| "+lkv1.Ordinal(level+1)+" | ")
	return "| " + row
}
