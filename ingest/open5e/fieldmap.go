package open5e

import "lorekeeper.dev/ingest"

// The field map: for every source shape (a v1 or v2 endpoint's records),
// where each field of the source goes. A field is mapped to the Entity field
// that carries its fact (a proto path such as "creature.initiative_bonus" or
// "blocks.usage.type"), or excluded with the reason it carries nothing a card
// needs. The field-map test walks every record of the bundled snapshot and
// fails on a field with a value that is in neither list, so that new data or
// a new book cannot lose a fact without anyone deciding it should.
//
// An Entity field "a|b" means either of the two.
//
// Paths: "a.b" is field b of object a, "a[].b" field b of each element of
// list a, and a trailing "*" every path that begins with what precedes it
// ("document.*", v1's "document__*"). A value is a non-empty
// string, a non-zero number or true; null, "", 0, false, [] and {} carry
// nothing.

// IsPlaceholder reports whether a source text is only the source's
// stand-in for none ("[No description provided]", "[Column data]"): it
// carries no value, and no card shows it.
func IsPlaceholder(s string) bool { return isPlaceholder(s) }

// FieldMap is the map of one source shape (ingest.FieldMap).
type FieldMap = ingest.FieldMap

// Reasons shared by several shapes.
const (
	whyDocument = "the entity's document, read from the catalog (document metadata endpoints)"
	whyImage    = "an image or icon: no card shows images"
	whyXref     = "links to other pages of the Open5e site; the text they anchor is in the description"
	whyKeyed    = "the same fact as its sibling name/key field, which is mapped"
)

// FieldMaps are the field maps by shape ("v2/creatures", "v1/monsters").
var FieldMaps = map[string]FieldMap{
	"v2/spells": {
		Mapped: map[string]string{
			"key": "source_key", "name": "name", "desc": "description", "higher_level": "higher_level",
			"level": "spell.level", "school.key": "spell.school", "classes[].name": "spell.classes",
			"concentration": "spell.concentration", "ritual": "spell.ritual",
			"casting_time": "spell.casting_time", "range_text": "spell.range", "range": "spell.range",
			"duration": "spell.duration", "verbal": "spell.verbal", "somatic": "spell.somatic",
			"material": "spell.material", "material_specified": "spell.material_specified",
			"material_cost": "spell.material_cost_gp", "material_consumed": "spell.material_consumed",
			"damage_roll": "spell.damage_roll|spell.healing_roll", "damage_types[]": "spell.damage_types",
			"saving_throw_ability": "spell.saving_throw_ability", "attack_roll": "spell.attack_roll",
			"reaction_condition": "spell.reaction_condition", "shape_type": "spell.area", "shape_size": "spell.area",
		},
		Excluded: map[string]string{
			"document.*":        whyDocument,
			"school.name":       whyKeyed,
			"classes[].key":     whyKeyed,
			"crossreferences.*": whyXref,
			// casting_options spell out higher_level per slot or character
			// level ("damage_roll 9d6 at slot 4"): the card prints
			// higher_level's text, which says the same in one sentence.
			"casting_options*": "higher_level's text spelled out per slot level; the card prints higher_level",
			"range_unit":       "the unit is in range_text (\"150 feet\")",
			"shape_size_unit":  "the unit is in the area (\"20-foot sphere\")",
			"target_count":     "in the description (\"one creature\", \"up to three\")",
			// Open5e's classification (creature, object, point, area): the
			// description says what the spell targets, the area is mapped.
			"target_type": "what the spell targets, as the description says it (\"one creature you can see\")",
		},
	},
	"v2/creatures": {
		Mapped: map[string]string{
			"key": "source_key", "name": "name", "desc": "description",
			"type.key": "creature.type", "size.key": "creature.size", "challenge_rating": "creature.challenge_rating",
			"alignment": "creature.alignment", "armor_class": "creature.armor_class", "armor_detail": "creature.armor_detail",
			"hit_points": "creature.hit_points", "hit_dice": "creature.hit_dice",
			"experience_points": "creature.experience_points", "proficiency_bonus": "creature.proficiency_bonus",
			"initiative_bonus": "creature.initiative_bonus", "subcategory": "creature.group",
			"languages.as_string": "creature.languages", "languages.data[].name": "creature.languages",
			"speed.*": "creature.speed", "ability_scores.*": "creature.ability_scores",
			"saving_throws.*": "creature.saving_throws", "skill_bonuses.*": "creature.skills",
			"passive_perception": "creature.passive_perception",
			"blindsight_range":   "creature.senses", "darkvision_range": "creature.senses",
			"tremorsense_range": "creature.senses", "truesight_range": "creature.senses",
			"resistances_and_immunities.damage_vulnerabilities[].key": "creature.damage_vulnerabilities",
			"resistances_and_immunities.damage_resistances[].key":     "creature.damage_resistances",
			"resistances_and_immunities.damage_immunities[].key":      "creature.damage_immunities",
			"resistances_and_immunities.condition_immunities[].key":   "creature.condition_immunities",
			// The lines as the book prints them, qualifiers and all
			// (defenses.go); the lists above are Open5e's reading of them.
			"resistances_and_immunities.damage_vulnerabilities_display": "creature.damage_vulnerability_entries",
			"resistances_and_immunities.damage_resistances_display":     "creature.damage_resistance_entries",
			"resistances_and_immunities.damage_immunities_display":      "creature.damage_immunity_entries|creature.condition_immunity_entries",
			"resistances_and_immunities.condition_immunities_display":   "creature.condition_immunity_entries",
			"environments[].name": "creature.environments",
			"traits[].name":       "blocks.name", "traits[].desc": "blocks.text",
			"actions[].name": "blocks.name", "actions[].desc": "blocks.text", "actions[].action_type": "blocks.type",
			"actions[].usage_limits.type": "blocks.usage.type", "actions[].usage_limits.param": "blocks.usage.param",
			"actions[].legendary_action_cost": "blocks.legendary_cost",
			"actions[].limited_to_form":       "blocks.form",
			// The structured attacks become the block's attack line, checked
			// against the action's text (crosscheck.go).
			"actions[].attacks[].to_hit_mod": "blocks.attack", "actions[].attacks[].reach": "blocks.attack",
			"actions[].attacks[].range": "blocks.attack", "actions[].attacks[].long_range": "blocks.attack",
			"actions[].attacks[].damage_die_count": "blocks.attack", "actions[].attacks[].damage_die_type": "blocks.attack",
			"actions[].attacks[].damage_bonus": "blocks.attack", "actions[].attacks[].damage_type.key": "blocks.attack",
			"actions[].attacks[].extra_damage_die_count": "blocks.attack", "actions[].attacks[].extra_damage_die_type": "blocks.attack",
			"actions[].attacks[].extra_damage_bonus": "blocks.attack", "actions[].attacks[].extra_damage_type.key": "blocks.attack",
		},
		Excluded: map[string]string{
			"document.*":            whyDocument,
			"illustration.*":        whyImage,
			"type.name":             whyKeyed,
			"size.name":             whyKeyed,
			"environments[].key":    whyKeyed,
			"languages.data[].key":  whyKeyed,
			"languages.data[].desc": "the language's own description (lookup_rule serves languages)",
			"resistances_and_immunities.damage_vulnerabilities[].name": whyKeyed,
			"resistances_and_immunities.damage_resistances[].name":     whyKeyed,
			"resistances_and_immunities.damage_immunities[].name":      whyKeyed,
			"resistances_and_immunities.condition_immunities[].name":   whyKeyed,
			"modifiers.*":                                "derived from ability_scores; the card computes them",
			"saving_throws_all.*":                        "every save, proficient or not, derived from ability_scores and saving_throws",
			"skill_bonuses_all.*":                        "every skill, proficient or not, derived from ability_scores and skill_bonuses",
			"speed_all.*":                                "speed with zeros for the modes the creature lacks",
			"normal_sight_range":                         "ordinary sight (10560 ft., two miles): no stat block prints it",
			"category":                                   "the book's section (\"Monsters\", \"Animals\"); type and group say more",
			"creaturesets[]":                             "Open5e's own groupings of creatures for its site",
			"actions[].order_in_statblock":               "the order blocks are listed in, which the entity keeps",
			"actions[].attacks[].name":                   "the attack's name, the action's (\"Tentacle attack\")",
			"actions[].attacks[].attack_type":            "weapon or spell attack: the action's text says which",
			"actions[].attacks[].target_creature_only":   "the action's text says what it targets",
			"actions[].attacks[].damage_type.name":       whyKeyed,
			"actions[].attacks[].extra_damage_type.name": whyKeyed,
		},
		Defaults: map[string]string{
			"speed.unit":                        "feet",
			"actions[].attacks[].distance_unit": "feet",
			"actions[].legendary_action_cost":   "1",
		},
	},
	"v2/weapons": {
		Mapped: weaponFields(""),
		Excluded: map[string]string{
			"document.*":                 whyDocument,
			"damage_type.name":           whyKeyed,
			"properties[].property.desc": "the property's rule, served by lookup_rule (weapon-property)",
			"properties[].property.type": "Mastery or none: a mastery becomes weapon.mastery, the others properties",
		},
		Defaults: map[string]string{"distance_unit": "feet"},
	},
	"v2/armor": {
		Mapped:   armorFields(""),
		Excluded: map[string]string{"document.*": whyDocument},
	},
	"v2/magicitems": itemFieldMap(true),
	"v2/items":      itemFieldMap(false),
	"v2/classes": {
		Mapped: map[string]string{
			"key": "source_key", "name": "name", "desc": "description",
			"hit_dice": "character_option.hit_dice", "caster_type": "character_option.caster_type",
			"saving_throws[].name": "character_option.saving_throws",
			"subclass_of.key":      "character_option.parent_key", "subclass_of.name": "character_option.parent_name",
			"features[].name": "blocks.name", "features[].desc": "blocks.text",
			"features[].gained_at[].level": "blocks.levels",
			// In the class table's features column, or for a subclass
			// (no table) in the feature's text.
			"features[].gained_at[].detail": "character_option.progression.levels.features|blocks.text",
			// The class table: its own columns, and the proficiency bonus.
			"features[].data_for_class_table[].column_value": "character_option.progression.levels.values|character_option.progression.levels.proficiency_bonus",
			"features[].data_for_class_table[].level":        "character_option.progression.levels.values|character_option.progression.levels.proficiency_bonus",
		},
		Excluded: map[string]string{
			"document.*":              whyDocument,
			"features[].key":          "the feature's Open5e key; its name is mapped",
			"features[].feature_type": "CLASS_LEVEL_FEATURE or CLASS_TABLE_DATA: which of the two a feature becomes (a block or a table column)",
			"hit_points.*":            "hit points at 1st and higher levels, spelled out from hit_dice; the class's Hit Points feature text says the same",
		},
	},
	"v2/species": {
		Mapped: map[string]string{
			"key": "source_key", "name": "name", "desc": "description",
			"traits[].name": "blocks.name", "traits[].desc": "blocks.text",
			"is_subspecies": "kind", "subspecies_of": "character_option.parent_key",
		},
		Excluded: map[string]string{
			"document.*":     whyDocument,
			"traits[].order": "the order the traits are listed in, which the entity keeps",
			"traits[].type":  "the trait's role for Open5e's character builder (SIZE, SPEED): read into size and speed from the text",
		},
	},
	"v2/backgrounds": {
		Mapped: map[string]string{
			"key": "source_key", "name": "name", "desc": "description",
			"benefits[].name": "blocks.name", "benefits[].desc": "blocks.text",
		},
		Excluded: map[string]string{
			"document.*":        whyDocument,
			"crossreferences.*": whyXref,
			"benefits[].type":   "the benefit's role for Open5e's character builder (ability_score, skill_proficiency); its name says it",
		},
	},
	"v2/feats": {
		Mapped: map[string]string{
			"key": "source_key", "name": "name", "desc": "description",
			"benefits[].desc": "blocks.text", "prerequisite": "character_option.prerequisite",
			"type": "character_option.feat_type",
		},
		Excluded: map[string]string{
			"document.*":        whyDocument,
			"crossreferences.*": whyXref,
			"has_prerequisite":  "true exactly when prerequisite is set",
		},
	},
	"v2/rulesets": {
		Mapped: map[string]string{
			"key": "rule.section", "name": "name", "desc": "description",
			"rules[].name": "blocks.name", "rules[].desc": "blocks.text",
		},
		Excluded: map[string]string{
			"document.*":                 whyDocument,
			"rules[].key":                "the rule's Open5e key; each rule is its own entity too (v2/rules)",
			"rules[].document":           whyDocument,
			"rules[].ruleset":            "this ruleset",
			"rules[].index":              "the order the rules are listed in, which the entity keeps",
			"rules[].initialHeaderLevel": "the heading level of the rule's text, for Open5e's site",
		},
	},
	"v2/rules": {
		Mapped: map[string]string{
			"key": "source_key", "name": "name", "desc": "description",
			"ruleset": "rule.section", "index": "rule.index",
		},
		Excluded: map[string]string{
			"document":           whyDocument,
			"document.*":         whyDocument,
			"initialHeaderLevel": "the heading level of the rule's text, for Open5e's site",
		},
	},
	"v2/conditions":       referenceFieldMap(map[string]string{"icon.*": whyImage}),
	"v2/damagetypes":      referenceFieldMap(nil),
	"v2/weaponproperties": referenceFieldMap(map[string]string{"crossreferences.*": whyXref, "type": "Mastery or none; the name says which"}),
	"v2/skills":           referenceFieldMap(nil, "ability", "rule.ability"),
	"v2/abilities": referenceFieldMap(map[string]string{
		"short_desc": "the ability's one-line summary; the description says it at length",
		"skills[]*":  "the skills that use the ability: each is its own entity (v2/skills)",
	}),
	"v2/spellschools": referenceFieldMap(nil),
	"v2/languages": referenceFieldMap(map[string]string{
		"is_exotic":       "whether the language is exotic: the description says where it is spoken",
		"is_secret":       "whether the language is secret: the description says so",
		"script_language": "the script it is written in: the description says it",
	}),
	"v2/alignments": referenceFieldMap(map[string]string{
		"morality":          "the alignment's moral half, part of its name",
		"societal_attitude": "the alignment's ethical half, part of its name",
		"short_name":        "the abbreviation (LG): the name is mapped",
	}),

	"v1/spells": {
		Mapped: map[string]string{
			"slug": "source_key", "name": "name", "desc": "description", "higher_level": "higher_level",
			"level_int": "spell.level", "school": "spell.school",
			"spell_lists[]": "spell.classes", "dnd_class": "spell.classes",
			"requires_concentration": "spell.concentration", "concentration": "spell.concentration",
			"can_be_cast_as_ritual": "spell.ritual", "ritual": "spell.ritual",
			"casting_time": "spell.casting_time", "range": "spell.range", "duration": "spell.duration",
			"requires_verbal_components": "spell.verbal", "requires_somatic_components": "spell.somatic",
			"requires_material_components": "spell.material", "material": "spell.material_specified",
			// Deep Magic and SRD subclass spell lists ("Cleric: Light").
			"archetype": "spell.subclasses", "circles": "spell.subclasses",
		},
		// v1 writes the flags a second time as "yes"/"no".
		Defaults: map[string]string{"concentration": "no", "ritual": "no"},
		Excluded: map[string]string{
			"document__*":       whyDocument,
			"level":             "level_int as text (\"3rd-level\")",
			"spell_level":       "level_int again",
			"components":        "the requires_*_components flags as text (\"V, S, M\")",
			"page":              "the page in the printed book; the citation names the book and links the record",
			"target_range_sort": "a number Open5e sorts ranges by; range is mapped",
		},
	},
	"v1/monsters": {
		Mapped: map[string]string{
			"slug": "source_key", "name": "name", "desc": "description",
			"type": "creature.type", "subtype": "creature.subtype", "group": "creature.group", "size": "creature.size",
			"alignment": "creature.alignment", "armor_class": "creature.armor_class", "armor_desc": "creature.armor_detail",
			"hit_points": "creature.hit_points", "hit_dice": "creature.hit_dice",
			"challenge_rating": "creature.challenge_rating", "cr": "creature.challenge_rating",
			"strength": "creature.ability_scores", "dexterity": "creature.ability_scores", "constitution": "creature.ability_scores",
			"intelligence": "creature.ability_scores", "wisdom": "creature.ability_scores", "charisma": "creature.ability_scores",
			"strength_save": "creature.saving_throws", "dexterity_save": "creature.saving_throws", "constitution_save": "creature.saving_throws",
			"intelligence_save": "creature.saving_throws", "wisdom_save": "creature.saving_throws", "charisma_save": "creature.saving_throws",
			"skills.*": "creature.skills", "senses": "creature.senses", "languages": "creature.languages",
			"speed.*": "creature.speed",
			// The lines as the book prints them, qualifiers and all (defenses.go).
			"damage_vulnerabilities": "creature.damage_vulnerability_entries", "damage_resistances": "creature.damage_resistance_entries",
			"damage_immunities": "creature.damage_immunity_entries|creature.condition_immunity_entries", "condition_immunities": "creature.condition_immunity_entries",
			"environments[]":           "creature.environments",
			"legendary_desc":           "creature.legendary_intro",
			"special_abilities[].name": "blocks.name", "special_abilities[].desc": "blocks.text",
			"actions[].name": "blocks.name", "actions[].desc": "blocks.text",
			"bonus_actions[].name": "blocks.name", "bonus_actions[].desc": "blocks.text",
			"reactions[].name": "blocks.name", "reactions[].desc": "blocks.text",
			"legendary_actions[].name": "blocks.name", "legendary_actions[].desc": "blocks.text",
		},
		Excluded: map[string]string{
			"document__*":       whyDocument,
			"img_main":          whyImage,
			"page_no":           "the page in the printed book; the citation names the book and links the record",
			"v2_converted_path": "the v2 record of the same creature (Open5e's own link)",
			"perception":        "skills.perception again",
			"spell_list[]":      "links to the spells the Spellcasting trait names; the trait's text names them",
			// v1's structured attack numbers repeat the action's text
			// ("+14 to hit", "2d10+8"); v1 has no damage type to check.
			"special_abilities[].attack_bonus": "the to-hit in the block's text", "special_abilities[].damage_dice": "the damage in the block's text",
			"special_abilities[].damage_bonus": "the damage in the block's text",
			"actions[].attack_bonus":           "the to-hit in the action's text", "actions[].damage_dice": "the damage in the action's text",
			"actions[].damage_bonus":           "the damage in the action's text",
			"legendary_actions[].attack_bonus": "the to-hit in the action's text", "legendary_actions[].damage_dice": "the damage in the action's text",
			"legendary_actions[].damage_bonus": "the damage in the action's text",
			"reactions[].attack_bonus":         "the to-hit in the reaction's text", "reactions[].damage_dice": "the damage in the reaction's text",
		},
	},
	"v1/weapons": {
		Mapped: map[string]string{
			"slug": "source_key", "name": "name", "desc": "description",
			// "Martial Ranged Weapons": is_simple and is_ranged.
			"category": "item.weapon", "cost": "item.cost_gp", "weight": "item.weight_lb",
			"damage_dice": "item.weapon.damage_dice", "damage_type": "item.weapon.damage_type",
			"properties[]": "item.weapon.properties",
		},
		Excluded: map[string]string{"document__*": whyDocument},
	},
	"v1/armor": {
		Mapped: map[string]string{
			"slug": "source_key", "name": "name", "desc": "description",
			"category": "item.armor.category", "base_ac": "item.armor.ac_base", "plus_dex_mod": "item.armor.ac_add_dex",
			"plus_max": "item.armor.ac_max_dex", "ac_string": "item.armor.ac_display",
			"stealth_disadvantage": "item.armor.stealth_disadvantage", "strength_requirement": "item.armor.strength_required",
			"cost": "item.cost_gp", "weight": "item.weight_lb",
			// Tome of Heroes' armor adds other modifiers; ac_string prints them.
			"plus_con_mod": "item.armor.ac_display", "plus_wis_mod": "item.armor.ac_display", "plus_flat_mod": "item.armor.ac_display",
		},
		Excluded: map[string]string{"document__*": whyDocument},
	},
	"v1/magicitems": {
		Mapped: map[string]string{
			"slug": "source_key", "name": "name", "desc": "description",
			"type": "item.category|item.base", "rarity": "item.rarity",
			"requires_attunement": "item.attunement_detail",
		},
		Excluded: map[string]string{"document__*": whyDocument},
	},
	"v1/classes": {
		Mapped: map[string]string{
			"slug": "source_key", "name": "name", "desc": "description",
			"hit_dice": "character_option.hit_dice", "prof_saving_throws": "character_option.saving_throws",
		},
		Excluded: map[string]string{"document__*": whyDocument},
	},
	"v1/races": {
		Mapped: map[string]string{
			"slug": "source_key", "name": "name", "desc": "description",
			"size_raw": "character_option.size", "speed.walk": "character_option.speed",
			"asi_desc": "blocks.text", "age": "blocks.text", "alignment": "blocks.text", "size": "blocks.text",
			"speed_desc": "blocks.text", "languages": "blocks.text", "vision": "blocks.text", "traits": "blocks.text",
		},
		Excluded: map[string]string{
			"document__*":        whyDocument,
			"asi[].attributes[]": "asi_desc's increases, structured; asi_desc is mapped",
			"asi[].value":        "asi_desc's increases, structured; asi_desc is mapped",
		},
	},
	"v1/backgrounds": {
		Mapped: map[string]string{
			"slug": "source_key", "name": "name", "desc": "description",
			"skill_proficiencies": "blocks.text", "tool_proficiencies": "blocks.text", "languages": "blocks.text",
			"equipment": "blocks.text", "feature": "blocks.name", "feature_desc": "blocks.text",
			"suggested_characteristics": "blocks.text",
		},
		Excluded: map[string]string{"document__*": whyDocument},
	},
	"v1/feats": {
		Mapped: map[string]string{
			"slug": "source_key", "name": "name", "desc": "description",
			"effects_desc[]": "blocks.text", "prerequisite": "character_option.prerequisite",
		},
		Excluded: map[string]string{"document__*": whyDocument},
	},
	"v1/sections": {
		Mapped: map[string]string{
			"slug": "source_key", "name": "name", "desc": "description", "parent": "rule.section_name",
		},
		Excluded: map[string]string{"document__*": whyDocument},
	},
	"v1/conditions": {
		Mapped:   map[string]string{"slug": "source_key", "name": "name", "desc": "description"},
		Excluded: map[string]string{"document__*": whyDocument},
	},
}

// weaponFields maps a v2 weapon, at prefix ("" for a weapon record,
// "weapon." inside an item) and to the Entity's item.weapon.
func weaponFields(prefix string) map[string]string {
	m := map[string]string{
		"damage_dice": "item.weapon.damage_dice", "damage_type.key": "item.weapon.damage_type",
		"is_simple": "item.weapon", "is_improvised": "item.weapon.is_improvised",
		"range": "item.weapon.range_normal", "long_range": "item.weapon.range_long",
		"properties[].property.name": "item.weapon.properties|item.weapon.mastery",
		// The detail is the versatile die or the range ("range 30/120").
		"properties[].detail": "item.weapon.properties",
	}
	if prefix == "" {
		m["key"], m["name"] = "source_key", "name"
		return m
	}
	out := map[string]string{}
	for k, v := range m {
		out[prefix+k] = v
	}
	// is_martial is !is_simple.
	out[prefix+"is_martial"] = "item.weapon"
	return out
}

func armorFields(prefix string) map[string]string {
	m := map[string]string{
		"category": "item.armor.category", "ac_base": "item.armor.ac_base", "ac_add_dexmod": "item.armor.ac_add_dex",
		"ac_cap_dexmod": "item.armor.ac_max_dex", "ac_display": "item.armor.ac_display",
		"grants_stealth_disadvantage": "item.armor.stealth_disadvantage",
		"strength_score_required":     "item.armor.strength_required",
	}
	if prefix == "" {
		m["key"], m["name"] = "source_key", "name"
		return m
	}
	out := map[string]string{}
	for k, v := range m {
		out[prefix+k] = v
	}
	return out
}

// itemFieldMap is the map of v2's items, and of its magic items, whose
// nested weapon or armor is the one they are made from: its name is their
// base ("Weapon (warhammer)"), where a mundane item's is its own name.
func itemFieldMap(magic bool) FieldMap {
	m := map[string]string{
		"key": "source_key", "name": "name", "desc": "description",
		"category.key": "item.category", "cost": "item.cost_gp", "weight": "item.weight_lb",
		"requires_attunement": "item.requires_attunement", "attunement_detail": "item.attunement_detail",
		"rarity.name": "item.rarity",
	}
	for k, v := range weaponFields("weapon.") {
		m[k] = v
	}
	for k, v := range armorFields("armor.") {
		m[k] = v
	}
	excluded := map[string]string{
		"document.*":                        whyDocument,
		"crossreferences.*":                 whyXref,
		"category.name":                     whyKeyed,
		"rarity.key":                        whyKeyed,
		"rarity.rank":                       "the rarity's order (common 1 ... artifact 6); the rarity is mapped",
		"size.*":                            "the item's size (Tiny for nearly everything): no card prints it",
		"weapon.key":                        "the base weapon's Open5e key (its fields are mapped here)",
		"weapon.damage_type.name":           whyKeyed,
		"weapon.properties[].property.desc": "the property's rule, served by lookup_rule (weapon-property)",
		"weapon.properties[].property.type": "Mastery or none: a mastery becomes weapon.mastery, the others properties",
		"armor.key":                         "the base armor's Open5e key (its fields are mapped here)",
	}
	if magic {
		m["weapon.name"], m["armor.name"] = "item.base", "item.base"
	} else {
		excluded["weapon.name"] = "the weapon's own name, which is the item's"
		excluded["armor.name"] = "the armor's own name, which is the item's"
	}
	return FieldMap{
		Mapped:   m,
		Excluded: excluded,
		Defaults: map[string]string{"weight_unit": "lb", "weapon.distance_unit": "feet"},
	}
}

// referenceFieldMap is the map of a reference kind (conditions, damage
// types, ...): a name, a key and a description per document, plus extra
// exclusions and extra mapped pairs (path, Entity field, ...).
func referenceFieldMap(excluded map[string]string, mapped ...string) FieldMap {
	m := FieldMap{
		Mapped: map[string]string{
			"key": "source_key", "name": "name", "desc": "description",
			"descriptions[].desc": "description", "descriptions[].document": "description",
		},
		Excluded: map[string]string{
			"document":                  whyDocument,
			"document.*":                whyDocument,
			"descriptions[].gamesystem": "the description's document's game system; the document is named",
		},
	}
	for k, v := range excluded {
		m.Excluded[k] = v
	}
	for i := 0; i+1 < len(mapped); i += 2 {
		m.Mapped[mapped[i]] = mapped[i+1]
	}
	return m
}
