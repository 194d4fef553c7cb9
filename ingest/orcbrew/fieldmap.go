package orcbrew

import (
	"maps"

	"lorekeeper.dev/ingest"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// The field map of OrcBrew (ingest.FieldMap), by content kind as an export
// names it ("spells", "monsters"): where each field of an entry goes. The
// paths are those of the entity's source record, the entry as JSON
// (edn.ToJSON: keywords without their colon, "spell-lists.wizard" for
// {:spell-lists {:wizard true}}). The field-map test walks every OrcBrew
// file of the project's test data and fails on a field with a value that
// is neither mapped nor excluded.

// Reasons shared by several kinds.
const (
	whyBuilderOnly = "how OrcPub's builder counts spells known (:schedule follows :spells-known, which is mapped)"
)

// ContentKind is the content kind of an export that holds entities of
// kind k ("spells" for KIND_SPELL), "" for none.
func ContentKind(k lkv1.Kind) string {
	for name, kk := range kinds {
		if kk == k {
			return name
		}
	}
	return ""
}

// common are every kind's identity fields.
func common(extra map[string]string) map[string]string {
	m := map[string]string{
		"key": "source_key", "name": "name", "description": "description",
		// The book of an unwrapped export; a wrapped one names it too.
		"option-pack": "document.name",
	}
	maps.Copy(m, extra)
	return m
}

// builderMapped are the builder's fields that builderBlocks writes as
// blocks (builder.go), and the traits every character option has.
func builderMapped(extra map[string]string) map[string]string {
	m := map[string]string{
		"traits[].name": "blocks.name", "traits[].description": "blocks.text", "traits[].level": "blocks.level",
		// An action, bonus action or reaction follows the name: "Waymark (Action)".
		"traits[].type": "blocks.name",
		"abilities.*":   "blocks.text", "ability-increases[]*": "blocks.text",
		"darkvision": "blocks.text", "languages[]": "blocks.text", "languages": "blocks.text",
		"profs.*": "blocks.text", "props.*": "blocks.text",
		"spells[].value.key": "blocks.text", "spells[].value.level": "blocks.text", "spells[].value.ability": "blocks.text",
		"level-modifiers[].type": "blocks.name", "level-modifiers[].value*": "blocks.text", "level-modifiers[].level": "blocks.level",
		"level-selections[].type": "blocks.name", "level-selections[].num": "blocks.text", "level-selections[].level": "blocks.level",
	}
	maps.Copy(m, extra)
	return m
}

var classMapped = map[string]string{
	"hit-die": "character_option.hit_dice", "spellcasting.level-factor": "character_option.caster_type",
	"profs.save.*":         "character_option.saving_throws",
	"spellcasting.ability": "blocks.text", "spellcasting.spell-list-kw": "blocks.text",
	"spellcasting.spells-known.*": "blocks.text", "spellcasting.spell-list.*": "blocks.text",
	"ability-increase-levels[]": "blocks.text",
	"subclass-title":            "blocks.name", "subclass-level": "blocks.text",
}

var classExcluded = map[string]string{
	"spellcasting.known-mode": whyBuilderOnly,
	// broken-content's class writes :selections, which no builder reads
	// (a class's choices are :level-selections, mapped).
	"selections[]*": "not a class field of OrcPub's builder (its choices are :level-selections)",
}

// classDefaults: a level modifier at level 1 applies from the start, as
// one without a level does ({:level 1 :modifiers []} says nothing at all).
var classDefaults = map[string]string{"level-modifiers[].level": "1"}

// FieldMaps are the OrcBrew field maps by content kind.
var FieldMaps = map[string]ingest.FieldMap{
	"spells": {Mapped: common(map[string]string{
		"level": "spell.level", "school": "spell.school", "spell-lists.*": "spell.classes",
		"ritual": "spell.ritual", "concentration": "spell.concentration",
		"casting-time": "spell.casting_time", "range": "spell.range", "duration": "spell.duration",
		"attack-roll?": "spell.attack_roll", "save": "spell.saving_throw_ability",
		"components.verbal": "spell.verbal", "components.somatic": "spell.somatic",
		"components.material": "spell.material", "components.material-component": "spell.material_specified",
		// Some exports put the component flags on the spell itself.
		"verbal": "spell.verbal", "somatic": "spell.somatic", "material": "spell.material",
		"material-component": "spell.material_specified",
	})},
	"monsters": {Mapped: common(map[string]string{
		"type": "creature.type", "subtypes*": "creature.subtype", "size": "creature.size",
		"alignment": "creature.alignment", "armor-class": "creature.armor_class", "armor-notes": "creature.armor_detail",
		"challenge": "creature.challenge_rating", "senses": "creature.senses", "languages": "creature.languages",
		"passive-perception": "creature.passive_perception", "xp": "creature.experience_points",
		"hit-points": "creature.hit_points", "hit-points.*": "creature.hit_dice|creature.hit_points",
		"speed": "creature.speed", "speed.*": "creature.speed",
		"str": "creature.ability_scores", "dex": "creature.ability_scores", "con": "creature.ability_scores",
		"int": "creature.ability_scores", "wis": "creature.ability_scores", "cha": "creature.ability_scores",
		"abilities.*": "creature.ability_scores", "saving-throws.*": "creature.saving_throws", "skills.*": "creature.skills",
		"props.damage-vulnerability.*": "creature.damage_vulnerabilities", "props.damage-resistance.*": "creature.damage_resistances",
		"props.damage-immunity.*": "creature.damage_immunities", "props.condition-immunity.*": "creature.condition_immunities",
		"props.language.*": "creature.languages",
		"traits[].name":    "blocks.name", "traits[].description": "blocks.text", "traits[].type": "blocks.type", "traits[].level": "blocks.level",
		"actions*": "blocks.name|blocks.text", "reactions*": "blocks.name|blocks.text",
		"legendary-actions*": "blocks.name|blocks.text", "lair-actions*": "blocks.name|blocks.text",
	})},
	"classes":    {Mapped: common(builderMapped(classMapped)), Excluded: classExcluded, Defaults: classDefaults},
	"subclasses": {Mapped: common(builderMapped(withParent(classMapped, "class"))), Excluded: classExcluded, Defaults: classDefaults},
	"races": {Mapped: common(builderMapped(map[string]string{
		"size": "character_option.size", "speed": "character_option.speed",
	}))},
	"subraces": {Mapped: common(builderMapped(map[string]string{
		"race": "character_option.parent_name", "speed": "character_option.speed",
	}))},
	"backgrounds": {Mapped: common(builderMapped(map[string]string{
		"equipment.*": "blocks.text", "equipment-choices[]*": "blocks.text", "treasure.*": "blocks.text",
	}))},
	"feats": {Mapped: common(builderMapped(map[string]string{
		"prerequisite": "character_option.prerequisite", "prereqs[]": "character_option.prerequisite",
		"path-prereqs.*": "character_option.prerequisite",
	}))},
	"languages": {Mapped: common(nil)},
	"invocations": {Mapped: common(map[string]string{
		"prerequisite": "character_option.prerequisite", "prereqs[]": "character_option.prerequisite",
	})},
	"boons": {Mapped: common(map[string]string{
		"prerequisite": "character_option.prerequisite", "prereqs[]": "character_option.prerequisite",
	})},
	"selections": {Mapped: common(map[string]string{"options[].name": "blocks.name", "options[].description": "blocks.text"})},
	"encounters": {
		Mapped: common(map[string]string{"creatures[].creature.monster": "blocks.name", "creatures[].creature.num": "blocks.text"}),
		// OrcPub's encounters hold monsters only.
		Defaults: map[string]string{"creatures[].type": "monster"},
	},
	"magic-items": {Mapped: common(itemMapped(nil))},
	"weapons": {Mapped: common(itemMapped(map[string]string{
		"damage-type": "item.weapon.damage_type", "damage-die": "item.weapon.damage_dice", "damage-die-count": "item.weapon.damage_dice",
		"versatile-die": "item.weapon.versatile_dice", "ranged?": "item.weapon.is_ranged",
		// Simple or martial: is_simple, false for martial.
		"category": "item.weapon", "range.min": "item.weapon.range_normal", "range.max": "item.weapon.range_long",
		"finesse?": "item.weapon.properties", "light?": "item.weapon.properties", "heavy?": "item.weapon.properties",
		"reach?": "item.weapon.properties", "thrown?": "item.weapon.properties", "two-handed?": "item.weapon.properties",
		"ammunition?": "item.weapon.properties", "loading?": "item.weapon.properties",
		"finesse": "item.weapon.properties", "light": "item.weapon.properties", "heavy": "item.weapon.properties",
		"reach": "item.weapon.properties", "thrown": "item.weapon.properties", "two-handed": "item.weapon.properties",
		"ammunition": "item.weapon.properties", "loading": "item.weapon.properties", "versatile": "item.weapon.properties",
	}))},
	"armor": {Mapped: common(itemMapped(map[string]string{
		"base-ac": "item.armor.ac_base", "max-dex-mod": "item.armor.ac_add_dex",
		"stealth-disadvantage?": "item.armor.stealth_disadvantage", "min-str": "item.armor.strength_required",
	}))},
}

func withParent(m map[string]string, field string) map[string]string {
	out := maps.Clone(m)
	out[field] = "character_option.parent_name"
	return out
}

func itemMapped(extra map[string]string) map[string]string {
	m := map[string]string{
		"type": "item.category", "rarity": "item.rarity", "cost": "item.cost_gp", "weight": "item.weight_lb",
		"attunement": "item.requires_attunement", "attunement[]": "item.attunement_detail|item.requires_attunement",
		"attunement.*": "item.attunement_detail|item.requires_attunement",
	}
	maps.Copy(m, extra)
	return m
}
