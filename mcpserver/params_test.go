package mcpserver_test

import (
	"encoding/json"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

func i32(v int32) *int32 { return &v }

func common(c *lkv1.Common) *lkv1.Common {
	if c.Limit == 0 {
		c.Limit = 20
	}
	return c
}

// TestTools_RequestMapping checks, for every tool parameter and alias, the
// request the query service receives.
func TestTools_RequestMapping(t *testing.T) {
	h := newHarness(t)
	srd := &lkv1.DocumentFilter{Documents: []string{"srd-5e"}}
	tests := []struct {
		name string
		tool string
		args map[string]any
		want proto.Message
	}{
		{"spell/none", "lookup_spell", nil, &lkv1.LookupSpellsRequest{Common: common(&lkv1.Common{})}},
		{"spell/every parameter", "lookup_spell", map[string]any{
			"name": "Fire*", "level": 3, "level_min": 1, "level_max": 5, "school": "Evocation, illusion",
			"class_key": "Wizard", "concentration": false, "ritual": false, "casting_time": "1 Action",
			"damage_type": "fire", "saving_throw": "DEX", "verbal": true, "somatic": true, "material": false,
			"documents": []string{"srd-5e"}, "semantic_query": "explosive fire damage", "limit": 5, "game_system": "2014",
		}, &lkv1.LookupSpellsRequest{
			Common: &lkv1.Common{Name: "Fire*", Limit: 5, Documents: srd, SemanticQuery: "explosive fire damage", GameSystems: []string{"5e-2014"}},
			Levels: []int32{3}, LevelRange: &lkv1.IntRange{Min: i32(1), Max: i32(5)},
			Schools: []string{"evocation", "illusion"}, Classes: []string{"wizard"},
			Concentration: proto.Bool(false), Ritual: proto.Bool(false), CastingTimes: []string{"action"},
			DamageTypes: []string{"fire"}, SavingThrows: []string{"dexterity"},
			Verbal: proto.Bool(true), Somatic: proto.Bool(true), Material: proto.Bool(false),
		}},
		{"spell/casting times", "lookup_spell", map[string]any{"casting_time": "1 Bonus Action,Reaction,10 Minutes,1 Hour"},
			&lkv1.LookupSpellsRequest{Common: common(&lkv1.Common{}), CastingTimes: []string{"bonus-action", "reaction", "10-minutes", "1-hour"}}},
		{"spell/casting time one round", "lookup_spell", map[string]any{"casting_time": "1 round"},
			&lkv1.LookupSpellsRequest{Common: common(&lkv1.Common{}), CastingTimes: []string{"1-round"}}},
		{"spell/documents empty means none", "lookup_spell", map[string]any{"documents": []string{}},
			&lkv1.LookupSpellsRequest{Common: common(&lkv1.Common{Documents: &lkv1.DocumentFilter{}})}},
		{"spell/level max only", "lookup_spell", map[string]any{"level_max": 2},
			&lkv1.LookupSpellsRequest{Common: common(&lkv1.Common{}), LevelRange: &lkv1.IntRange{Max: i32(2)}}},

		{"creature/every parameter", "lookup_creature", map[string]any{
			"name": "goblin", "cr": "1/4", "cr_min": 0.125, "cr_max": "2", "type": "Humanoid,dragon", "size": "Small",
			"armor_class_min": 10, "armor_class_max": 20, "hit_points_min": 1, "hit_points_max": 300, "legendary": false,
			"damage_immunity": "fire", "damage_resistance": "cold", "damage_vulnerability": "radiant",
			"documents": []string{"srd-5e"}, "semantic_query": "sneaky", "limit": 3, "game_system": "5e-2024,a5e",
		}, &lkv1.LookupCreaturesRequest{
			Common: &lkv1.Common{Name: "goblin", Limit: 3, Documents: srd, SemanticQuery: "sneaky", GameSystems: []string{"5e-2024", "a5e"}},
			Cr:     proto.Float64(0.25), CrRange: &lkv1.DoubleRange{Min: proto.Float64(0.125), Max: proto.Float64(2)},
			Types: []string{"humanoid", "dragon"}, Sizes: []string{"small"},
			ArmorClass: &lkv1.IntRange{Min: i32(10), Max: i32(20)}, HitPoints: &lkv1.IntRange{Min: i32(1), Max: i32(300)},
			Legendary: proto.Bool(false), DamageImmunities: []string{"fire"}, DamageResistances: []string{"cold"},
			DamageVulnerabilities: []string{"radiant"},
		}},
		{"creature/challenge_rating alias", "lookup_creature", map[string]any{"challenge_rating": 10, "type": "dragon"},
			&lkv1.LookupCreaturesRequest{Common: common(&lkv1.Common{}), Cr: proto.Float64(10), Types: []string{"dragon"}}},
		{"creature/alias and canonical agree", "lookup_creature", map[string]any{"challenge_rating": "1/2", "cr": 0.5},
			&lkv1.LookupCreaturesRequest{Common: common(&lkv1.Common{}), Cr: proto.Float64(0.5)}},

		{"equipment/none is all kinds", "lookup_equipment", nil, &lkv1.LookupEquipmentRequest{Common: common(&lkv1.Common{})}},
		{"equipment/all", "lookup_equipment", map[string]any{"type": "all"}, &lkv1.LookupEquipmentRequest{Common: common(&lkv1.Common{})}},
		{"equipment/every parameter", "lookup_equipment", map[string]any{
			"type": "weapon", "name": "longsword", "rarity": "Very Rare", "requires_attunement": "requires attunement",
			"is_magic": false, "category": "Wondrous Item", "damage_dice": "1d8, 2d6", "damage_type": "slashing",
			"is_simple": false, "is_light": true, "is_versatile": true, "is_thrown": true, "is_finesse": true,
			"is_two_handed": true, "is_heavy": true, "is_reach": true, "is_loading": true, "is_ammunition": true,
			"armor_category": "Light", "armor_class_min": 11, "armor_class_max": 18, "stealth_disadvantage": false,
			"cost_min": 10, "cost_max": 100, "weight_min": 0, "weight_max": 5,
			"documents": []string{"srd-5e"}, "semantic_query": "a blade", "limit": 7, "game_system": "5e-2014",
		}, &lkv1.LookupEquipmentRequest{
			Common: &lkv1.Common{Name: "longsword", Limit: 7, Documents: srd, SemanticQuery: "a blade", GameSystems: []string{"5e-2014"}},
			Kinds:  []lkv1.Kind{lkv1.Kind_KIND_WEAPON}, Rarities: []string{"very rare"}, RequiresAttunement: proto.Bool(true),
			IsMagic: proto.Bool(false), Categories: []string{"wondrous-item"}, DamageDice: []string{"1d8", "2d6"},
			DamageTypes: []string{"slashing"}, IsSimple: proto.Bool(false),
			Properties:      []string{"light", "versatile", "thrown", "finesse", "two-handed", "heavy", "reach", "loading", "ammunition"},
			ArmorCategories: []string{"light"}, ArmorClass: &lkv1.IntRange{Min: i32(11), Max: i32(18)},
			StealthDisadvantage: proto.Bool(false),
			CostGp:              &lkv1.DoubleRange{Min: proto.Float64(10), Max: proto.Float64(100)},
			WeightLb:            &lkv1.DoubleRange{Min: proto.Float64(0), Max: proto.Float64(5)},
		}},
		{"equipment/item_type alias", "lookup_equipment", map[string]any{"item_type": "magic-item", "rarity": "rare"},
			&lkv1.LookupEquipmentRequest{Common: common(&lkv1.Common{}), Kinds: []lkv1.Kind{lkv1.Kind_KIND_MAGIC_ITEM}, Rarities: []string{"rare"}}},
		{"equipment/several types", "lookup_equipment", map[string]any{"type": "Armor, items"},
			&lkv1.LookupEquipmentRequest{Common: common(&lkv1.Common{}), Kinds: []lkv1.Kind{lkv1.Kind_KIND_ARMOR, lkv1.Kind_KIND_ITEM}}},
		{"equipment/attunement blank is false", "lookup_equipment", map[string]any{"requires_attunement": ""},
			&lkv1.LookupEquipmentRequest{Common: common(&lkv1.Common{}), RequiresAttunement: proto.Bool(false)}},
		{"equipment/attunement bool", "lookup_equipment", map[string]any{"requires_attunement": true, "type": "magic_item"},
			&lkv1.LookupEquipmentRequest{Common: common(&lkv1.Common{}), Kinds: []lkv1.Kind{lkv1.Kind_KIND_MAGIC_ITEM}, RequiresAttunement: proto.Bool(true)}},

		{"option/none is all kinds", "lookup_character_option", nil, &lkv1.LookupCharacterOptionsRequest{Common: common(&lkv1.Common{})}},
		{"option/every parameter", "lookup_character_option", map[string]any{
			"type": "subclass", "name": "eldritch knight", "parent": "Fighter",
			"documents": []string{"srd-5e"}, "semantic_query": "arcane warrior", "limit": 2, "game_system": "2024",
		}, &lkv1.LookupCharacterOptionsRequest{
			Common: &lkv1.Common{Name: "eldritch knight", Limit: 2, Documents: srd, SemanticQuery: "arcane warrior", GameSystems: []string{"5e-2024"}},
			Kinds:  []lkv1.Kind{lkv1.Kind_KIND_SUBCLASS}, Parent: "Fighter",
		}},
		{"option/option_type alias", "lookup_character_option", map[string]any{"option_type": "Feat"},
			&lkv1.LookupCharacterOptionsRequest{Common: common(&lkv1.Common{}), Kinds: []lkv1.Kind{lkv1.Kind_KIND_FEAT}}},
		{"option/species and plurals", "lookup_character_option", map[string]any{"type": "species,classes,backgrounds,race"},
			&lkv1.LookupCharacterOptionsRequest{Common: common(&lkv1.Common{}), Kinds: []lkv1.Kind{lkv1.Kind_KIND_RACE, lkv1.Kind_KIND_CLASS, lkv1.Kind_KIND_BACKGROUND}}},

		{"rule/none is all kinds", "lookup_rule", nil, &lkv1.LookupRulesRequest{Common: common(&lkv1.Common{})}},
		{"rule/every parameter", "lookup_rule", map[string]any{
			"rule_type": "rule", "name": "opportunity attack*", "section": "Combat",
			"documents": []string{"srd-5e"}, "semantic_query": "leaving reach", "limit": 4, "game_system": "5e-2014",
		}, &lkv1.LookupRulesRequest{
			Common: &lkv1.Common{Name: "opportunity attack*", Limit: 4, Documents: srd, SemanticQuery: "leaving reach", GameSystems: []string{"5e-2014"}},
			Kinds:  []lkv1.Kind{lkv1.Kind_KIND_RULE}, Sections: []string{"combat"},
		}},
		{"rule/type alias", "lookup_rule", map[string]any{"type": "damage-type", "name": "*radiant*"},
			&lkv1.LookupRulesRequest{Common: common(&lkv1.Common{Name: "*radiant*"}), Kinds: []lkv1.Kind{lkv1.Kind_KIND_DAMAGE_TYPE}}},
		{"rule/reference kinds", "lookup_rule", map[string]any{"rule_type": "Condition, weapon_property, skills, ability-score, magic-school, language, proficiency, alignment, rule-section"},
			&lkv1.LookupRulesRequest{Common: common(&lkv1.Common{}), Kinds: []lkv1.Kind{
				lkv1.Kind_KIND_CONDITION, lkv1.Kind_KIND_WEAPON_PROPERTY, lkv1.Kind_KIND_SKILL, lkv1.Kind_KIND_ABILITY_SCORE,
				lkv1.Kind_KIND_MAGIC_SCHOOL, lkv1.Kind_KIND_LANGUAGE, lkv1.Kind_KIND_PROFICIENCY, lkv1.Kind_KIND_ALIGNMENT, lkv1.Kind_KIND_RULE_SECTION}}},

		{"search/query only", "search_dnd_content", map[string]any{"query": "fire damage"},
			&lkv1.SearchRequest{Query: "fire damage", Limit: 20}},
		{"search/every parameter", "search_dnd_content", map[string]any{
			"query": "healing magic", "entity_types": []string{"spells", "magicitems"}, "documents": []string{"srd-5e"},
			"semantic": false, "limit": 5, "game_system": "5e-2024",
		}, &lkv1.SearchRequest{Query: "healing magic", Kinds: []lkv1.Kind{lkv1.Kind_KIND_SPELL, lkv1.Kind_KIND_MAGIC_ITEM},
			Documents: srd, Semantic: proto.Bool(false), Limit: 5, GameSystems: []string{"5e-2024"}}},
		{"search/content_types alias", "search_dnd_content", map[string]any{"query": "fire", "content_types": []string{"Spell"}},
			&lkv1.SearchRequest{Query: "fire", Kinds: []lkv1.Kind{lkv1.Kind_KIND_SPELL}, Limit: 20}},
		{"search/equipment and monsters", "search_dnd_content", map[string]any{"query": "x", "entity_types": []string{"equipment", "monsters", "creatures", "Magic Items", "feats"}},
			&lkv1.SearchRequest{Query: "x", Limit: 20, Kinds: []lkv1.Kind{lkv1.Kind_KIND_WEAPON, lkv1.Kind_KIND_ARMOR, lkv1.Kind_KIND_MAGIC_ITEM, lkv1.Kind_KIND_ITEM, lkv1.Kind_KIND_CREATURE, lkv1.Kind_KIND_FEAT}}},
		{"search/documents empty", "search_dnd_content", map[string]any{"query": "x", "documents": []string{}},
			&lkv1.SearchRequest{Query: "x", Limit: 20, Documents: &lkv1.DocumentFilter{}}},

		{"documents/none", "list_documents", nil, &lkv1.ListDocumentsRequest{}},
		{"documents/source", "list_documents", map[string]any{"source": "orcbrew", "format": "text"},
			&lkv1.ListDocumentsRequest{Sources: []lkv1.Source{lkv1.Source_SOURCE_ORCBREW}}},
		{"documents/source v2", "list_documents", map[string]any{"source": "open5e_v2"},
			&lkv1.ListDocumentsRequest{Sources: []lkv1.Source{lkv1.Source_SOURCE_OPEN5E_V2}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := h.fake.count()
			res := h.call(t, tt.tool, tt.args)
			mustOK(t, res)
			// The call's own request (a lookup_rule that finds nothing asks
			// the other editions next).
			got := h.fake.at(n)
			if !proto.Equal(got, tt.want) {
				t.Errorf("query service got\n%s\nwant\n%s", protojson.Format(got), protojson.Format(tt.want))
			}
			// Absent documents must reach the service as "no filter", not as
			// an empty filter.
			if tt.args["documents"] == nil {
				if c, ok := got.(interface{ GetCommon() *lkv1.Common }); ok && c.GetCommon().GetDocuments() != nil {
					t.Errorf("documents absent but a filter was sent")
				}
			}
		})
	}
}

// TestTools_InvalidArguments checks that bad arguments give an error
// result naming the parameter and the allowed values, and that nothing
// reaches the query service.
func TestTools_InvalidArguments(t *testing.T) {
	h := newHarness(t)
	tests := []struct {
		name  string
		tool  string
		args  map[string]any
		wants []string
	}{
		{"spell level range", "lookup_spell", map[string]any{"level": 10}, []string{`"level"`, "0 (cantrip) to 9"}},
		{"spell level type", "lookup_spell", map[string]any{"level": "invalid"}, []string{"level"}},
		{"spell level_min over level_max", "lookup_spell", map[string]any{"level_min": 5, "level_max": 2}, []string{`"level_min"`, "greater than"}},
		{"spell school", "lookup_spell", map[string]any{"school": "pyromancy"}, []string{`"school"`, `"pyromancy"`, "abjuration", "evocation", "transmutation"}},
		{"spell damage type", "lookup_spell", map[string]any{"damage_type": "sonic"}, []string{`"damage_type"`, "thunder"}},
		{"spell limit zero", "lookup_spell", map[string]any{"limit": 0}, []string{`"limit"`, "1 to 100"}},
		{"spell limit too big", "lookup_spell", map[string]any{"limit": 1000}, []string{`"limit"`, "1 to 100"}},
		{"spell limit beyond int", "lookup_spell", map[string]any{"limit": json.Number("18446744073709551616")}, []string{`"limit"`, "1 to 100"}},
		{"spell limit fraction", "lookup_spell", map[string]any{"limit": json.Number("2.5")}, []string{`"limit"`, "1 to 100"}},
		{"spell level beyond int", "lookup_spell", map[string]any{"level": json.Number("-99999999999999999999")}, []string{`"level"`, "0 (cantrip) to 9"}},
		{"creature cr_max beyond float", "lookup_creature", map[string]any{"cr_max": json.Number("1e999")}, []string{`"cr_max"`, "1 to 30"}},
		{"creature cr beyond float", "lookup_creature", map[string]any{"cr": json.Number("1e999")}, []string{`"cr"`, "1 to 30"}},
		{"creature armor class beyond int", "lookup_creature", map[string]any{"armor_class_min": json.Number("1e30")}, []string{`"armor_class_min"`}},
		{"spell unknown parameter", "lookup_spell", map[string]any{"levle": 3}, []string{"invalid arguments for lookup_spell", "levle", "Parameters: name, level, level_min, level_max, school"}},
		{"creature cr alias conflict", "lookup_creature", map[string]any{"cr": 5, "challenge_rating": 6}, []string{`"challenge_rating"`, `"cr"`, "different value"}},
		{"creature cr range", "lookup_creature", map[string]any{"cr": 31}, []string{`"cr"`, "1 to 30"}},
		{"creature cr text", "lookup_creature", map[string]any{"cr": "a lot"}, []string{"invalid arguments for lookup_creature", "challenge rating", "1/4", "Parameters: name, cr,"}},
		{"creature size", "lookup_creature", map[string]any{"size": "colossal"}, []string{`"size"`, "tiny", "gargantuan"}},
		{"creature type", "lookup_creature", map[string]any{"type": "robot"}, []string{`"type"`, "aberration", "undead"}},
		{"creature cr_min over cr_max", "lookup_creature", map[string]any{"cr_min": 5, "cr_max": 1}, []string{`"cr_min"`}},
		{"equipment type", "lookup_equipment", map[string]any{"type": "vehicle"}, []string{`"type"`, "weapon", "armor", "magic-item", "item", "all"}},
		{"equipment alias conflict", "lookup_equipment", map[string]any{"type": "weapon", "item_type": "armor"}, []string{`"item_type"`, `"type"`}},
		{"equipment rarity", "lookup_equipment", map[string]any{"rarity": "mythic"}, []string{`"rarity"`, "very rare", "artifact"}},
		{"equipment property false", "lookup_equipment", map[string]any{"is_finesse": false}, []string{`"is_finesse"`, "true"}},
		{"equipment cost range", "lookup_equipment", map[string]any{"cost_min": 100, "cost_max": 10}, []string{`"cost_min"`}},
		{"equipment attunement text", "lookup_equipment", map[string]any{"requires_attunement": "maybe"}, []string{"requires_attunement"}},
		{"option type", "lookup_character_option", map[string]any{"type": "spell"}, []string{`"type"`, "class", "subclass", "background", "feat"}},
		{"option alias conflict", "lookup_character_option", map[string]any{"type": "class", "option_type": "feat"}, []string{`"option_type"`, `"type"`}},
		{"rule type", "lookup_rule", map[string]any{"rule_type": "law"}, []string{`"rule_type"`, "condition", "damage-type", "alignment"}},
		{"rule alias conflict", "lookup_rule", map[string]any{"rule_type": "condition", "type": "skill"}, []string{`"type"`, `"rule_type"`}},
		{"search query empty", "search_dnd_content", map[string]any{"query": "  "}, []string{`"query"`, "required"}},
		{"search query missing", "search_dnd_content", map[string]any{}, []string{"query"}},
		{"search entity type", "search_dnd_content", map[string]any{"query": "x", "entity_types": []string{"vehicles"}}, []string{`"entity_types"`, "spells", "creatures"}},
		{"search alias conflict", "search_dnd_content", map[string]any{"query": "x", "entity_types": []string{"spells"}, "content_types": []string{"feats"}}, []string{`"content_types"`, `"entity_types"`}},
		{"game system", "lookup_spell", map[string]any{"game_system": "pathfinder"}, []string{`"game_system"`, "5e-2014", "5e-2024", "a5e"}},
		{"documents format", "list_documents", map[string]any{"format": "xml"}, []string{`"format"`, "json", "text"}},
		{"documents source", "list_documents", map[string]any{"source": "dndbeyond"}, []string{`"source"`, "open5e_v1", "open5e_v2", "orcbrew"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := h.fake.count()
			res := h.call(t, tt.tool, tt.args)
			if !res.IsError {
				t.Fatalf("want an error result, got success: %s", text(res))
			}
			if res.StructuredContent != nil {
				t.Errorf("error result carries structured content %v", res.StructuredContent)
			}
			wantContains(t, text(res), tt.wants...)
			if n := h.fake.count(); n != before {
				t.Errorf("query service was called %d times for invalid arguments", n-before)
			}
			if strings.Contains(text(res), "goroutine") || strings.Contains(text(res), ".go:") ||
				strings.Contains(text(res), "unmarshal") || strings.Contains(text(res), "Go struct") || strings.Contains(text(res), "Go value") {
				t.Errorf("error text leaks internals: %s", text(res))
			}
		})
	}
}
