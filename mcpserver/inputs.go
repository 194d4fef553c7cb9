package mcpserver

import (
	"fmt"
	"strings"

	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// The tool inputs. Every field is optional unless its description says
// otherwise; pointers tell "not given" from false or 0. Descriptions list
// the allowed values and examples, because they are what an assistant reads.
// A field without a description takes that of sharedParams.

// sharedParams describes the parameters several tools take, once.
var sharedParams = map[string]string{
	"game_system": "Only this ruleset: 5e-2014 (SRD 5.1), 5e-2024 (SRD 5.2), a5e (or \"2014\", \"2024\"); comma-separate for several.",
	"documents":   "Only these documents (keys or names), e.g. [\"srd-2014\"]; [] returns nothing; list_documents has the keys.",
	"limit":       fmt.Sprintf("Results per page, 1 to %d (default %d).", maxLimit, defaultLimit),
}

// SpellInput is lookup_spell's arguments.
type SpellInput struct {
	Name          string   `json:"name,omitempty" jsonschema:"Spell name, e.g. \"Fireball\" or \"fire*\"."`
	Level         *int     `json:"level,omitempty" jsonschema:"Spell level, 0 (cantrip) to 9, e.g. 3."`
	LevelMin      *int     `json:"level_min,omitempty" jsonschema:"Lowest spell level, 0 to 9 (inclusive)."`
	LevelMax      *int     `json:"level_max,omitempty" jsonschema:"Highest spell level, 0 to 9 (inclusive)."`
	School        string   `json:"school,omitempty" jsonschema:"Magic school: abjuration, conjuration, divination, enchantment, evocation, illusion, necromancy, transmutation. Several may be given comma-separated (\"evocation,illusion\")."`
	ClassKey      string   `json:"class_key,omitempty" jsonschema:"Only spells on this class's list, e.g. \"wizard\", \"cleric\". Comma-separate for several."`
	Concentration *bool    `json:"concentration,omitempty" jsonschema:"true: only concentration spells; false: only spells without concentration."`
	Ritual        *bool    `json:"ritual,omitempty" jsonschema:"true: only ritual spells; false: only non-ritual spells."`
	CastingTime   string   `json:"casting_time,omitempty" jsonschema:"Casting time, e.g. \"action\", \"1 Action\", \"bonus-action\", \"Reaction\", \"1 Minute\", \"10 Minutes\", \"1 Hour\". Comma-separate for several."`
	DamageType    string   `json:"damage_type,omitempty" jsonschema:"Spells that deal this damage type: acid, bludgeoning, cold, fire, force, lightning, necrotic, piercing, poison, psychic, radiant, slashing, thunder. Comma-separate for several."`
	SavingThrow   string   `json:"saving_throw,omitempty" jsonschema:"Spells that call for this saving throw: strength, dexterity, constitution, intelligence, wisdom, charisma (or str, dex, ...)."`
	Verbal        *bool    `json:"verbal,omitempty" jsonschema:"Filter on the verbal (V) component."`
	Somatic       *bool    `json:"somatic,omitempty" jsonschema:"Filter on the somatic (S) component."`
	Material      *bool    `json:"material,omitempty" jsonschema:"Filter on the material (M) component."`
	GameSystem    string   `json:"game_system,omitempty"`
	Documents     []string `json:"documents,omitempty"`
	SemanticQuery string   `json:"semantic_query,omitempty" jsonschema:"Words to rank spells by meaning, e.g. \"restore health and cure wounds\"; words like \"cantrip\", \"3rd-level\", \"up to 3rd level\", \"fire damage\" rank matches first (see understood). Ranked after the other filters."`
	Limit         *int     `json:"limit,omitempty"`
	Paging
}

func (in SpellInput) nameArg() string { return in.Name }

func (in SpellInput) request() (*lkv1.LookupSpellsRequest, error) {
	c, err := commonArgs(in.Name, in.Limit, in.Documents, in.SemanticQuery, in.GameSystem)
	if err != nil {
		return nil, err
	}
	r := &lkv1.LookupSpellsRequest{Common: c, Concentration: in.Concentration, Ritual: in.Ritual, Verbal: in.Verbal, Somatic: in.Somatic, Material: in.Material}
	if in.Level != nil {
		if *in.Level < 0 || *in.Level > 9 {
			return nil, argErr("level", fmt.Sprintf("%d is out of range; spell levels are 0 (cantrip) to 9", *in.Level))
		}
		r.Levels = []int32{int32(*in.Level)}
	}
	if r.LevelRange, err = intRange("level_min", in.LevelMin, in.LevelMax, 0, 9); err != nil {
		return nil, err
	}
	if r.Schools, err = closedSet("school", in.School, spellSchools, nil); err != nil {
		return nil, err
	}
	r.Classes = splitList(in.ClassKey)
	for i, c := range r.Classes {
		r.Classes[i] = strings.TrimPrefix(strings.TrimPrefix(lkv1.Slugify(c), "srd-"), "srd_")
	}
	for _, t := range splitList(in.CastingTime) {
		r.CastingTimes = append(r.CastingTimes, lkv1.CastingTimeKey(t))
	}
	if r.DamageTypes, err = closedSet("damage_type", in.DamageType, damageTypes, nil); err != nil {
		return nil, err
	}
	if r.SavingThrows, err = closedSet("saving_throw", in.SavingThrow, lkv1.Abilities(), lkv1.AbilityName); err != nil {
		return nil, err
	}
	return r, nil
}

// CreatureInput is lookup_creature's arguments.
type CreatureInput struct {
	Name                string           `json:"name,omitempty" jsonschema:"Creature name, e.g. \"Goblin\", \"ancient red dragon\" or \"*dragon*\"."`
	CR                  *ChallengeRating `json:"cr,omitempty" jsonschema:"Exact challenge rating: 0, 0.125, 0.25, 0.5, 1 to 30, or as a fraction string \"1/8\", \"1/4\", \"1/2\"."`
	ChallengeRating     *ChallengeRating `json:"challenge_rating,omitempty" jsonschema:"Alias of cr."`
	CRMin               *ChallengeRating `json:"cr_min,omitempty" jsonschema:"Lowest challenge rating (inclusive), e.g. 1 or \"1/4\"."`
	CRMax               *ChallengeRating `json:"cr_max,omitempty" jsonschema:"Highest challenge rating (inclusive), e.g. 5."`
	Type                string           `json:"type,omitempty" jsonschema:"Creature type: aberration, beast, celestial, construct, dragon, elemental, fey, fiend, giant, humanoid, monstrosity, ooze, plant, undead. Comma-separate for several (\"dragon,undead\")."`
	Size                string           `json:"size,omitempty" jsonschema:"Size: tiny, small, medium, large, huge, gargantuan. Comma-separate for several."`
	ArmorClassMin       *int             `json:"armor_class_min,omitempty" jsonschema:"Lowest armor class (inclusive)."`
	ArmorClassMax       *int             `json:"armor_class_max,omitempty" jsonschema:"Highest armor class (inclusive)."`
	HitPointsMin        *int             `json:"hit_points_min,omitempty" jsonschema:"Lowest hit points (inclusive)."`
	HitPointsMax        *int             `json:"hit_points_max,omitempty" jsonschema:"Highest hit points (inclusive)."`
	Legendary           *bool            `json:"legendary,omitempty" jsonschema:"true: only creatures with legendary actions; false: only creatures without."`
	DamageImmunity      string           `json:"damage_immunity,omitempty" jsonschema:"Only creatures immune to this damage type, e.g. \"fire\" (always immune); \"nonmagical slashing\" also counts immunity to nonmagical attacks (the werewolf), \"any slashing\" immunity whatever limits it. Comma-separate for several."`
	DamageResistance    string           `json:"damage_resistance,omitempty" jsonschema:"Only creatures resistant to this damage type, e.g. \"cold\" (always resistant); \"nonmagical slashing\" also counts resistance to nonmagical attacks, \"any slashing\" resistance whatever limits it."`
	DamageVulnerability string           `json:"damage_vulnerability,omitempty" jsonschema:"Only creatures vulnerable to this damage type, e.g. \"radiant\"; \"any piercing\" also counts a vulnerability a qualifier limits (piercing from magic weapons wielded by good creatures)."`
	Environment         string           `json:"environment,omitempty" jsonschema:"Where it lives: \"swamp\", \"underdark\"..."`
	GameSystem          string           `json:"game_system,omitempty"`
	Documents           []string         `json:"documents,omitempty"`
	SemanticQuery       string           `json:"semantic_query,omitempty" jsonschema:"Words to rank creatures by meaning, e.g. \"risen dead that drain life force\"; words like \"CR 1/2\", \"CR 5 or lower\", \"Large undead\", \"legendary actions\" rank matches first (see understood). Ranked after the other filters."`
	Limit               *int             `json:"limit,omitempty"`
	Paging
}

func crValue(param string, c *ChallengeRating) (*float64, error) {
	if c == nil {
		return nil, nil
	}
	v := float64(*c)
	if v < 0 || v > 30 {
		return nil, argErr(param, fmt.Sprintf("%v is out of range; challenge ratings are 0, 1/8, 1/4, 1/2 and 1 to 30", v))
	}
	return &v, nil
}

func (in CreatureInput) nameArg() string { return in.Name }

func (in CreatureInput) request() (*lkv1.LookupCreaturesRequest, error) {
	c, err := commonArgs(in.Name, in.Limit, in.Documents, in.SemanticQuery, in.GameSystem)
	if err != nil {
		return nil, err
	}
	r := &lkv1.LookupCreaturesRequest{Common: c, Legendary: in.Legendary}
	cr, err := crValue("cr", in.CR)
	if err != nil {
		return nil, err
	}
	alias, err := crValue("challenge_rating", in.ChallengeRating)
	if err != nil {
		return nil, err
	}
	if cr != nil && alias != nil && *cr != *alias {
		return nil, argErr("challenge_rating", fmt.Sprintf("is an alias of \"cr\" and was given a different value (%v vs %v); give only one", *alias, *cr))
	}
	if cr == nil {
		cr = alias
	}
	r.Cr = cr
	lo, err := crValue("cr_min", in.CRMin)
	if err != nil {
		return nil, err
	}
	hi, err := crValue("cr_max", in.CRMax)
	if err != nil {
		return nil, err
	}
	if lo != nil || hi != nil {
		if lo != nil && hi != nil && *lo > *hi {
			return nil, argErr("cr_min", fmt.Sprintf("minimum %v is greater than cr_max %v", *lo, *hi))
		}
		r.CrRange = &lkv1.DoubleRange{Min: lo, Max: hi}
	}
	if r.Types, err = closedSet("type", in.Type, creatureTypes, nil); err != nil {
		return nil, err
	}
	if r.Sizes, err = closedSet("size", in.Size, sizes, nil); err != nil {
		return nil, err
	}
	if r.ArmorClass, err = intRange("armor_class_min", in.ArmorClassMin, in.ArmorClassMax, 0, 100); err != nil {
		return nil, err
	}
	if r.HitPoints, err = intRange("hit_points_min", in.HitPointsMin, in.HitPointsMax, 0, 100000); err != nil {
		return nil, err
	}
	if r.DamageImmunities, err = closedSet("damage_immunity", in.DamageImmunity, defenseTypes, nil); err != nil {
		return nil, err
	}
	if r.DamageResistances, err = closedSet("damage_resistance", in.DamageResistance, defenseTypes, nil); err != nil {
		return nil, err
	}
	if r.DamageVulnerabilities, err = closedSet("damage_vulnerability", in.DamageVulnerability, defenseTypes, nil); err != nil {
		return nil, err
	}
	r.Environments = splitList(in.Environment)
	return r, nil
}

// EquipmentInput is lookup_equipment's arguments.
type EquipmentInput struct {
	Type                string      `json:"type,omitempty" jsonschema:"What to search: weapon, armor, magic-item, item (mundane gear) or all (default). Comma-separate for several (\"weapon,armor\")."`
	ItemType            string      `json:"item_type,omitempty" jsonschema:"Alias of type."`
	Name                string      `json:"name,omitempty" jsonschema:"Item name, e.g. \"Longsword\", \"bag of holding\", \"*sword*\"."`
	Rarity              string      `json:"rarity,omitempty" jsonschema:"Magic item rarity: common, uncommon, rare, very rare, legendary, artifact. Comma-separate for several."`
	RequiresAttunement  *Attunement `json:"requires_attunement,omitempty" jsonschema:"true (or \"requires attunement\"): only items that require attunement; false (or \"\"): only items that do not."`
	IsMagic             *bool       `json:"is_magic,omitempty" jsonschema:"true: only magic items; false: only mundane items."`
	Category            string      `json:"category,omitempty" jsonschema:"Item category key, e.g. wondrous-item, potion, ring, rod, scroll, staff, wand, weapon, armor, adventuring-gear, tools. Comma-separate for several."`
	DamageDice          string      `json:"damage_dice,omitempty" jsonschema:"Weapon damage dice, e.g. \"1d8\", \"2d6\". Comma-separate for several."`
	DamageType          string      `json:"damage_type,omitempty" jsonschema:"Weapon damage type: bludgeoning, piercing, slashing (or any other damage type)."`
	IsSimple            *bool       `json:"is_simple,omitempty" jsonschema:"true: simple weapons only; false: martial weapons only."`
	IsLight             *bool       `json:"is_light,omitempty" jsonschema:"true: only weapons with the light property."`
	IsVersatile         *bool       `json:"is_versatile,omitempty" jsonschema:"true: only versatile weapons."`
	IsThrown            *bool       `json:"is_thrown,omitempty" jsonschema:"true: only thrown weapons."`
	IsFinesse           *bool       `json:"is_finesse,omitempty" jsonschema:"true: only finesse weapons."`
	IsTwoHanded         *bool       `json:"is_two_handed,omitempty" jsonschema:"true: only two-handed weapons."`
	IsHeavy             *bool       `json:"is_heavy,omitempty" jsonschema:"true: only heavy weapons."`
	IsReach             *bool       `json:"is_reach,omitempty" jsonschema:"true: only reach weapons."`
	IsLoading           *bool       `json:"is_loading,omitempty" jsonschema:"true: only loading weapons."`
	IsAmmunition        *bool       `json:"is_ammunition,omitempty" jsonschema:"true: only weapons that use ammunition."`
	ArmorCategory       string      `json:"armor_category,omitempty" jsonschema:"Armor category: light, medium, heavy, shield. Comma-separate for several."`
	ArmorClassMin       *int        `json:"armor_class_min,omitempty" jsonschema:"Lowest base armor class (inclusive)."`
	ArmorClassMax       *int        `json:"armor_class_max,omitempty" jsonschema:"Highest base armor class (inclusive)."`
	StealthDisadvantage *bool       `json:"stealth_disadvantage,omitempty" jsonschema:"Filter armor on whether it imposes disadvantage on Stealth."`
	CostMin             *float64    `json:"cost_min,omitempty" jsonschema:"Lowest cost in gold pieces (inclusive), e.g. 10."`
	CostMax             *float64    `json:"cost_max,omitempty" jsonschema:"Highest cost in gold pieces (inclusive), e.g. 100."`
	WeightMin           *float64    `json:"weight_min,omitempty" jsonschema:"Lowest weight in pounds (inclusive)."`
	WeightMax           *float64    `json:"weight_max,omitempty" jsonschema:"Highest weight in pounds (inclusive), e.g. 5."`
	GameSystem          string      `json:"game_system,omitempty"`
	Documents           []string    `json:"documents,omitempty"`
	SemanticQuery       string      `json:"semantic_query,omitempty" jsonschema:"Words to rank items by meaning, e.g. \"weapons for attacking from a distance\"; words like \"medium armor\", \"reach\", \"longest range\" rank matches first (see understood). Ranked after the other filters."`
	Limit               *int        `json:"limit,omitempty"`
	Paging
}

func (in EquipmentInput) nameArg() string { return in.Name }

func (in EquipmentInput) request() (*lkv1.LookupEquipmentRequest, error) {
	c, err := commonArgs(in.Name, in.Limit, in.Documents, in.SemanticQuery, in.GameSystem)
	if err != nil {
		return nil, err
	}
	r := &lkv1.LookupEquipmentRequest{Common: c, IsMagic: in.IsMagic, IsSimple: in.IsSimple, StealthDisadvantage: in.StealthDisadvantage}
	typ, err := aliasString("type", "item_type", in.Type, in.ItemType)
	if err != nil {
		return nil, err
	}
	types, err := closedSet("type", typ, equipmentTypeNames, equipmentTypeName)
	if err != nil {
		return nil, err
	}
	for _, t := range types {
		if t == "all" {
			r.Kinds = nil
			break
		}
		r.Kinds = append(r.Kinds, equipmentTypes[t]...)
	}
	if in.RequiresAttunement != nil {
		v := bool(*in.RequiresAttunement)
		r.RequiresAttunement = &v
	}
	if r.Rarities, err = closedSet("rarity", in.Rarity, rarities, func(s string) string { return strings.ReplaceAll(s, "-", " ") }); err != nil {
		return nil, err
	}
	for _, v := range splitList(in.Category) {
		r.Categories = append(r.Categories, lkv1.Slugify(v))
	}
	r.DamageDice = splitList(in.DamageDice)
	if r.DamageTypes, err = closedSet("damage_type", in.DamageType, damageTypes, nil); err != nil {
		return nil, err
	}
	for _, p := range []struct {
		param, key string
		v          *bool
	}{
		{"is_light", "light", in.IsLight}, {"is_versatile", "versatile", in.IsVersatile},
		{"is_thrown", "thrown", in.IsThrown}, {"is_finesse", "finesse", in.IsFinesse},
		{"is_two_handed", "two-handed", in.IsTwoHanded}, {"is_heavy", "heavy", in.IsHeavy},
		{"is_reach", "reach", in.IsReach}, {"is_loading", "loading", in.IsLoading},
		{"is_ammunition", "ammunition", in.IsAmmunition},
	} {
		if p.v == nil {
			continue
		}
		if !*p.v {
			return nil, argErr(p.param, "only true is supported (weapons that have the property); omit it to include weapons with and without it", "true")
		}
		r.Properties = append(r.Properties, p.key)
	}
	if r.ArmorCategories, err = closedSet("armor_category", in.ArmorCategory, armorCategories, nil); err != nil {
		return nil, err
	}
	if r.ArmorClass, err = intRange("armor_class_min", in.ArmorClassMin, in.ArmorClassMax, 0, 100); err != nil {
		return nil, err
	}
	if r.CostGp, err = doubleRange("cost_min", in.CostMin, in.CostMax); err != nil {
		return nil, err
	}
	if r.WeightLb, err = doubleRange("weight_min", in.WeightMin, in.WeightMax); err != nil {
		return nil, err
	}
	return r, nil
}

// equipmentTypeName accepts "weapons", "magic_item", "Magic Item",
// "magicitems".
func equipmentTypeName(s string) string {
	s = singular(lkv1.Slugify(s))
	switch s {
	case "magicitem", "magic":
		return "magic-item"
	case "armour":
		return "armor"
	case "equipment", "any":
		return "all"
	}
	return s
}

// CharacterOptionInput is lookup_character_option's arguments.
type CharacterOptionInput struct {
	Type          string   `json:"type,omitempty" jsonschema:"Kind of option: class, subclass, race (or species), subrace, background, feat, invocation, boon, selection. Omit for all of them. Comma-separate for several (\"class,subclass\")."`
	OptionType    string   `json:"option_type,omitempty" jsonschema:"Alias of type."`
	Name          string   `json:"name,omitempty" jsonschema:"Option name, e.g. \"Paladin\", \"Eldritch Knight\", \"half-elf\", \"Sharpshooter\", \"*elf*\". Case-insensitive exact match; * and % are wildcards; with no match tried as a slug."`
	Parent        string   `json:"parent,omitempty" jsonschema:"Only subclasses of this class or subraces of this race (name or key), e.g. \"fighter\", \"elf\"."`
	GameSystem    string   `json:"game_system,omitempty"`
	Documents     []string `json:"documents,omitempty"`
	SemanticQuery string   `json:"semantic_query,omitempty" jsonschema:"Words to rank options by meaning, e.g. \"divine warrior\", \"masters of arcane magic\". Ranked after the other filters."`
	Limit         *int     `json:"limit,omitempty"`
	Paging
}

func (in CharacterOptionInput) nameArg() string { return in.Name }

func (in CharacterOptionInput) request() (*lkv1.LookupCharacterOptionsRequest, error) {
	c, err := commonArgs(in.Name, in.Limit, in.Documents, in.SemanticQuery, in.GameSystem)
	if err != nil {
		return nil, err
	}
	r := &lkv1.LookupCharacterOptionsRequest{Common: c, Parent: strings.TrimSpace(in.Parent)}
	typ, err := aliasString("type", "option_type", in.Type, in.OptionType)
	if err != nil {
		return nil, err
	}
	types, err := closedSet("type", typ, characterOptionTypeNames, func(s string) string { return singularOption(lkv1.Slugify(s)) })
	if err != nil {
		return nil, err
	}
	for _, t := range types {
		k := characterOptionTypes[t]
		if !containsKind(r.Kinds, k) {
			r.Kinds = append(r.Kinds, k)
		}
	}
	return r, nil
}

func singularOption(s string) string {
	if s == "species" || s == "subspecies" {
		return s
	}
	return singular(s)
}

func containsKind(ks []lkv1.Kind, k lkv1.Kind) bool {
	for _, x := range ks {
		if x == k {
			return true
		}
	}
	return false
}

// RuleInput is lookup_rule's arguments.
type RuleInput struct {
	RuleType      string   `json:"rule_type,omitempty" jsonschema:"Kind of rule content: rule, rule-section, condition, damage-type, weapon-property, skill, ability-score, magic-school, language, proficiency, alignment. Omit for all of them. Comma-separate for several."`
	Type          string   `json:"type,omitempty" jsonschema:"Alias of rule_type."`
	Name          string   `json:"name,omitempty" jsonschema:"Rule or reference name, e.g. \"Grappled\", \"opportunity attack\", \"radiant\", \"stealth\", \"*cover*\". Case-insensitive exact match; * and % are wildcards; with no match tried as a slug."`
	Section       string   `json:"section,omitempty" jsonschema:"For rules: the section, e.g. adventuring, appendix, combat, equipment, spellcasting, using-ability-scores. Comma-separate for several."`
	GameSystem    string   `json:"game_system,omitempty"`
	Documents     []string `json:"documents,omitempty"`
	SemanticQuery string   `json:"semantic_query,omitempty" jsonschema:"Words to rank rules by meaning, e.g. \"what happens when I fall\", \"attacking while hidden\". Ranked after the other filters."`
	Limit         *int     `json:"limit,omitempty"`
	Paging
}

func (in RuleInput) nameArg() string { return in.Name }

func (in RuleInput) request() (*lkv1.LookupRulesRequest, error) {
	c, err := commonArgs(in.Name, in.Limit, in.Documents, in.SemanticQuery, in.GameSystem)
	if err != nil {
		return nil, err
	}
	r := &lkv1.LookupRulesRequest{Common: c}
	typ, err := aliasString("rule_type", "type", in.RuleType, in.Type)
	if err != nil {
		return nil, err
	}
	types, err := closedSet("rule_type", typ, ruleTypeNames(), func(s string) string {
		s = lkv1.Slugify(s)
		if _, ok := lkv1.KindFromSlug(s); ok {
			return s
		}
		return singular(s)
	})
	if err != nil {
		return nil, err
	}
	for _, t := range types {
		k, _ := lkv1.KindFromSlug(t)
		r.Kinds = append(r.Kinds, k)
	}
	for _, s := range splitList(in.Section) {
		r.Sections = append(r.Sections, lkv1.Slugify(s))
	}
	return r, nil
}

// SearchInput is search_dnd_content's arguments.
type SearchInput struct {
	Query        string   `json:"query" jsonschema:"Required. What to find, in words or by name, e.g. \"fire damage\", \"healing magic\", \"dragon breath\", \"firbal\" (typos are tolerated)."`
	EntityTypes  []string `json:"entity_types,omitempty" jsonschema:"Limit to these content types, plural or singular, any case: spells, creatures (monsters), equipment (weapons, armor, magicitems, items), classes, subclasses, races (species), backgrounds, feats, rules, conditions, skills, ... Omit for all types."`
	ContentTypes []string `json:"content_types,omitempty" jsonschema:"Alias of entity_types."`
	Documents    []string `json:"documents,omitempty"`
	GameSystem   string   `json:"game_system,omitempty"`
	Semantic     *bool    `json:"semantic,omitempty" jsonschema:"Default true: hybrid semantic + keyword + typo-tolerant name ranking. false: keyword and name matching only."`
	Limit        *int     `json:"limit,omitempty" jsonschema:"Maximum results per content type, 1 to 100. Default 20."`
	Paging
}

func (in SearchInput) request() (*lkv1.SearchRequest, error) {
	q := strings.TrimSpace(in.Query)
	if q == "" {
		return nil, argErr("query", "is required: say what to search for, e.g. \"fire damage\"")
	}
	n, err := limitArg("limit", in.Limit)
	if err != nil {
		return nil, err
	}
	names, err := aliasStrings("entity_types", "content_types", in.EntityTypes, in.ContentTypes)
	if err != nil {
		return nil, err
	}
	kinds, err := entityTypeKinds("entity_types", names)
	if err != nil {
		return nil, err
	}
	if names != nil && len(kinds) == 0 {
		return nil, argErr("entity_types", "is empty; omit it to search every content type", entityTypeNames()...)
	}
	systems, err := gameSystems(in.GameSystem)
	if err != nil {
		return nil, err
	}
	return &lkv1.SearchRequest{
		GameSystems: systems,
		Query:       q,
		Kinds:       kinds,
		Documents:   documentFilter(in.Documents),
		Semantic:    in.Semantic,
		Limit:       n,
	}, nil
}

// DocumentsInput is list_documents's arguments.
type DocumentsInput struct {
	Source string `json:"source,omitempty" jsonschema:"Only documents from this source: open5e_v1, open5e_v2, orcbrew (homebrew imports), srd_text (SRD 5.2's text). Omit for all."`
	Format string `json:"format,omitempty" jsonschema:"text (default): a table; json: the list's JSON in the text as well."`
	Limit  *int   `json:"limit,omitempty" jsonschema:"Documents per page (1-100, in key order); omit for all."`
	Cursor string `json:"cursor,omitempty" jsonschema:"next_cursor of the previous page."`
}

func (in DocumentsInput) request() (*lkv1.ListDocumentsRequest, string, error) {
	format := strings.ToLower(strings.TrimSpace(in.Format))
	switch format {
	case "":
		format = "text" // the structured result is the JSON: once is enough
	case "json", "text":
	default:
		return nil, "", argErr("format", fmt.Sprintf("unknown value %q", in.Format), "json", "text")
	}
	var n uint32
	if in.Limit != nil { // omitted: every document at once
		var err error
		if n, err = limitArg("limit", in.Limit); err != nil {
			return nil, "", err
		}
	}
	r := &lkv1.ListDocumentsRequest{Limit: n, Cursor: strings.TrimSpace(in.Cursor)}
	for _, s := range splitList(in.Source) {
		src, ok := lkv1.SourceFromSlug(strings.ReplaceAll(s, "-", "_"))
		if !ok {
			return nil, "", argErr("source", fmt.Sprintf("unknown value %q", s), sourceNames...)
		}
		r.Sources = append(r.Sources, src)
	}
	return r, format, nil
}
