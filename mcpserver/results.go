package mcpserver

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// The structured content of the tools. Field names are snake_case, the
// document metadata is flat on every entity (document_key, document_name,
// document_source and document, the name, as older clients read it), and
// similarity_score appears only when semantic ranking ran.

// Entity is one result as the tools return it.
type Entity struct {
	URI             string   `json:"uri" jsonschema:"Stable lorekeeper://entity/<key> URI; read it as a resource or cite it."`
	Key             string   `json:"key"`
	Slug            string   `json:"slug"`
	Kind            string   `json:"kind" jsonschema:"spell, creature, weapon, armor, magic-item, item, class, feat, condition, rule, ..."`
	Name            string   `json:"name"`
	SimilarityScore *float64 `json:"similarity_score,omitempty" jsonschema:"Semantic similarity in [0, 1], highest first; present only when semantic ranking ran."`

	Document       string   `json:"document" jsonschema:"The source document's name."`
	DocumentKey    string   `json:"document_key"`
	DocumentName   string   `json:"document_name"`
	DocumentSource string   `json:"document_source" jsonschema:"open5e_v1, open5e_v2, orcbrew or srd_text."`
	GameSystem     string   `json:"game_system,omitempty" jsonschema:"5e-2014, 5e-2024, a5e; empty for homebrew."`
	Publisher      string   `json:"publisher,omitempty"`
	Licenses       []string `json:"licenses,omitempty"`
	Permalink      string   `json:"permalink,omitempty" jsonschema:"Where the source document lives, for citations."`
	Attribution    string   `json:"attribution,omitempty" jsonschema:"Attribution text the licence requires."`
	SourceURL      string   `json:"source_url,omitempty" jsonschema:"The source record this entity was read from."`

	Description string  `json:"description,omitempty" jsonschema:"Markdown."`
	HigherLevel string  `json:"higher_level,omitempty"`
	Blocks      []Block `json:"blocks,omitempty" jsonschema:"Named text blocks: traits, actions, legendary and lair actions, features, benefits."`

	Spell           *Spell           `json:"spell,omitempty"`
	Creature        *Creature        `json:"creature,omitempty"`
	Item            *Item            `json:"item,omitempty"`
	CharacterOption *CharacterOption `json:"character_option,omitempty"`
	Rule            *Rule            `json:"rule,omitempty"`

	Alternates []Alternate `json:"alternates,omitempty" jsonschema:"The same entity in other documents, folded into this result."`

	Corrections []Correction `json:"corrections,omitempty" jsonschema:"Where the source's structured data contradicted its own text: the text won, and the fields above carry its value."`

	Summary string   `json:"summary,omitempty" jsonschema:"With detail summary: the key facts; read the URI for the rest."`
	AlsoIn  []string `json:"also_in,omitempty" jsonschema:"Documents with another copy (summaries)."`
	// also is a summary's "also in ..." line (alsoIn).
	also string
}

// Correction is one structured field corrected from the entity's own text.
type Correction struct {
	Subject        string `json:"subject,omitempty" jsonschema:"The block the field belongs to (e.g. Bite); empty for the entity's own fields."`
	Field          string `json:"field" jsonschema:"to_hit, reach, range, damage, damage_type, extra_damage, attack, damage_types, damage_roll, saving_throw_ability, class_table, category, armor_category, stealth or strength_requirement."`
	SourceValue    string `json:"source_value" jsonschema:"What the source's structured data said."`
	CorrectedValue string `json:"corrected_value" jsonschema:"What the text says; empty when the value was dropped because the text could not be read."`
	Basis          string `json:"basis,omitempty" jsonschema:"srd: ... when SRD 5.1's second transcription decided it."`
	Source         string `json:"source,omitempty" jsonschema:"Where it was read, if not in the entity's own text."`
}

// Block is a named piece of text inside an entity.
type Block struct {
	Type   string  `json:"type"`
	Name   string  `json:"name,omitempty"`
	Text   string  `json:"text,omitempty" jsonschema:"Markdown; left out beside a card (the default detail), where the card has it."`
	Level  int32   `json:"level,omitempty"`
	Levels []int32 `json:"levels,omitempty" jsonschema:"Every class level a feature is gained at."`
	Attack string  `json:"attack,omitempty"`
	Usage  string  `json:"usage,omitempty" jsonschema:"How often it can be used, as a stat block prints it: Recharge 5–6, 2/Day."`
	Cost   int32   `json:"cost,omitempty" jsonschema:"Legendary actions: how many legendary actions it costs, when more than one."`
	Form   string  `json:"form,omitempty" jsonschema:"The form it is limited to (Vampire Form Only)."`
	// What the block's text says it does.
	DamageTypes []string `json:"damage_types,omitempty" jsonschema:"Creatures: the damage types the block deals, by its attack or its text."`
	SavingThrow string   `json:"saving_throw,omitempty" jsonschema:"Creatures: the saving throw its text calls for (dexterity)."`
	SaveDC      int32    `json:"save_dc,omitempty" jsonschema:"The saving throw's DC, where the text gives one."`
	Conditions  []string `json:"conditions,omitempty" jsonschema:"Creatures: the conditions its text inflicts (frightened, prone)."`
}

// Alternate is a copy of a result from another document.
type Alternate struct {
	Key          string `json:"key"`
	URI          string `json:"uri"`
	DocumentKey  string `json:"document_key"`
	DocumentName string `json:"document_name"`
	GameSystem   string `json:"game_system,omitempty"`
	Name         string `json:"name,omitempty" jsonschema:"This copy's name, when it is not the result's (SRD 5.1's Crossbow, light for SRD 5.2's Light Crossbow)."`
}

// Spell holds the spell fields.
type Spell struct {
	Level              int32    `json:"level"`
	School             string   `json:"school"`
	Classes            []string `json:"classes"`
	Concentration      bool     `json:"concentration"`
	Ritual             bool     `json:"ritual"`
	CastingTime        string   `json:"casting_time"`
	Range              string   `json:"range"`
	Duration           string   `json:"duration"`
	Components         string   `json:"components" jsonschema:"As printed: \"V, S, M\"."`
	Verbal             bool     `json:"verbal"`
	Somatic            bool     `json:"somatic"`
	Material           bool     `json:"material"`
	MaterialSpecified  string   `json:"material_specified,omitempty"`
	MaterialCostGP     *float64 `json:"material_cost_gp,omitempty"`
	MaterialConsumed   bool     `json:"material_consumed"`
	DamageTypes        []string `json:"damage_types,omitempty"`
	DamageRoll         string   `json:"damage_roll,omitempty"`
	SavingThrowAbility string   `json:"saving_throw_ability,omitempty"`
	AttackRoll         bool     `json:"attack_roll"`
	ReactionCondition  string   `json:"reaction_condition,omitempty"`
	TargetType         string   `json:"target_type,omitempty"`
	Area               string   `json:"area,omitempty"`
	Subclasses         string   `json:"subclasses,omitempty" jsonschema:"Subclasses with the spell on their list, as the source words it."`
	HealingRoll        string   `json:"healing_roll,omitempty" jsonschema:"The hit points the spell restores, as a roll (2d8); healing is never a damage roll."`
	Conditions         []string `json:"conditions,omitempty" jsonschema:"The conditions the spell's text inflicts (charmed, frightened)."`
}

// Creature holds a stat block's fields.
type Creature struct {
	ChallengeRating       float64          `json:"challenge_rating"`
	ChallengeRatingText   string           `json:"challenge_rating_text"`
	Type                  string           `json:"type"`
	Subtype               string           `json:"subtype,omitempty"`
	Group                 string           `json:"group,omitempty" jsonschema:"The book's heading the stat block is grouped under (Dragons, Chromatic); not a subtype."`
	Size                  string           `json:"size"`
	Alignment             string           `json:"alignment,omitempty"`
	ArmorClass            int32            `json:"armor_class,omitempty" jsonschema:"Absent where the source does not give it (a homebrew monster may not)."`
	ArmorDetail           string           `json:"armor_detail,omitempty"`
	HitPoints             int32            `json:"hit_points,omitempty" jsonschema:"Absent where the source does not give it."`
	HitDice               string           `json:"hit_dice,omitempty"`
	Speed                 map[string]int32 `json:"speed,omitempty"`
	SpeedText             string           `json:"speed_text,omitempty"`
	AbilityScores         map[string]int32 `json:"ability_scores,omitempty"`
	AbilityModifiers      map[string]int32 `json:"ability_modifiers,omitempty"`
	SavingThrows          map[string]int32 `json:"saving_throws,omitempty"`
	Skills                map[string]int32 `json:"skills,omitempty"`
	Senses                string           `json:"senses,omitempty"`
	PassivePerception     int32            `json:"passive_perception,omitempty"`
	Languages             string           `json:"languages,omitempty"`
	DamageVulnerabilities []string         `json:"damage_vulnerabilities,omitempty" jsonschema:"Every damage type the line names, whether always or only as a qualifier says; the entries say which."`
	DamageResistances     []string         `json:"damage_resistances,omitempty" jsonschema:"Every damage type the line names, whether always or only as a qualifier says; the entries say which."`
	DamageImmunities      []string         `json:"damage_immunities,omitempty" jsonschema:"Every damage type the line names, whether always or only as a qualifier says (the werewolf's bludgeoning from nonmagical attacks not made with silvered weapons); the entries say which."`
	ConditionImmunities   []string         `json:"condition_immunities,omitempty"`
	// The lines as the book prints them, entry by entry.
	DamageVulnerabilityEntries []Defense `json:"damage_vulnerability_entries,omitempty" jsonschema:"The damage vulnerabilities as the book prints them: each entry's types and what limits it."`
	DamageResistanceEntries    []Defense `json:"damage_resistance_entries,omitempty" jsonschema:"The damage resistances as the book prints them: each entry's types and what limits it (from nonmagical attacks)."`
	DamageImmunityEntries      []Defense `json:"damage_immunity_entries,omitempty" jsonschema:"The damage immunities as the book prints them: each entry's types and what limits it (from nonmagical attacks not made with silvered weapons)."`
	ConditionImmunityEntries   []Defense `json:"condition_immunity_entries,omitempty" jsonschema:"The condition immunities as the book prints them."`
	ExperiencePoints           int32     `json:"experience_points"`
	ProficiencyBonus           int32     `json:"proficiency_bonus,omitempty"`
	Environments               []string  `json:"environments,omitempty"`
	HasLegendaryActions        bool      `json:"has_legendary_actions"`
	HasLairActions             bool      `json:"has_lair_actions"`
	InitiativeBonus            *int32    `json:"initiative_bonus,omitempty" jsonschema:"2024 stat blocks: the initiative modifier."`
	LegendaryIntro             string    `json:"legendary_intro,omitempty" jsonschema:"The paragraph before the legendary actions."`
	LegendaryPerRound          int32     `json:"legendary_actions_per_round,omitempty" jsonschema:"How many legendary actions the creature can take a round."`
}

// Defense is one entry of a creature's damage or condition line.
type Defense struct {
	Types     []string `json:"types,omitempty" jsonschema:"The damage types or conditions it covers; none for an entry naming a trait that explains it (Undead Resilience)."`
	Qualifier string   `json:"qualifier,omitempty" jsonschema:"When it holds, in the book's words; empty when it always does."`
	Text      string   `json:"text" jsonschema:"The entry as the book prints it."`
}

func defensesFromProto(ds []*lkv1.Defense) []Defense {
	var out []Defense
	for _, d := range ds {
		out = append(out, Defense{Types: d.GetTypes(), Qualifier: d.GetQualifier(), Text: d.GetText()})
	}
	return out
}

// Item holds the fields of weapons, armor, magic items and gear.
type Item struct {
	Category           string   `json:"category,omitempty"`
	IsMagic            bool     `json:"is_magic"`
	Rarity             string   `json:"rarity,omitempty"`
	RequiresAttunement bool     `json:"requires_attunement"`
	AttunementDetail   string   `json:"attunement_detail,omitempty"`
	Base               string   `json:"base,omitempty"`
	CostGP             *float64 `json:"cost_gp,omitempty"`
	WeightLb           *float64 `json:"weight_lb,omitempty"`
	Weapon             *Weapon  `json:"weapon,omitempty"`
	Armor              *Armor   `json:"armor,omitempty"`
}

// Weapon holds weapon statistics.
type Weapon struct {
	DamageDice    string   `json:"damage_dice"`
	DamageType    string   `json:"damage_type"`
	Properties    []string `json:"properties"`
	IsSimple      bool     `json:"is_simple"`
	IsRanged      bool     `json:"is_ranged"`
	RangeNormal   int32    `json:"range_normal,omitempty"`
	RangeLong     int32    `json:"range_long,omitempty"`
	VersatileDice string   `json:"versatile_dice,omitempty"`
	Mastery       string   `json:"mastery,omitempty" jsonschema:"2024 weapons: the weapon's mastery property (sap, vex), for characters with Weapon Mastery."`
	IsImprovised  bool     `json:"is_improvised,omitempty"`
}

// Armor holds armor statistics.
type Armor struct {
	Category            string `json:"category"`
	ACBase              int32  `json:"ac_base"`
	ACAddDex            bool   `json:"ac_add_dex"`
	ACMaxDex            int32  `json:"ac_max_dex,omitempty"`
	ACDisplay           string `json:"ac_display,omitempty"`
	StealthDisadvantage bool   `json:"stealth_disadvantage"`
	StrengthRequired    int32  `json:"strength_required,omitempty"`
}

// CharacterOption holds class, race, background and feat fields.
type CharacterOption struct {
	ParentKey        string      `json:"parent_key,omitempty"`
	ParentName       string      `json:"parent_name,omitempty"`
	HitDice          string      `json:"hit_dice,omitempty"`
	CasterType       string      `json:"caster_type,omitempty"`
	PrimaryAbilities []string    `json:"primary_abilities,omitempty"`
	SavingThrows     []string    `json:"saving_throws,omitempty"`
	Prerequisite     string      `json:"prerequisite,omitempty"`
	FeatType         string      `json:"feat_type,omitempty"`
	Size             string      `json:"size,omitempty"`
	Speed            int32       `json:"speed,omitempty"`
	ClassTable       *ClassTable `json:"class_table,omitempty" jsonschema:"Classes: the class table, level by level."`
}

// ClassTable is a class's progression.
type ClassTable struct {
	Columns []string     `json:"columns" jsonschema:"The table's columns after level, proficiency bonus and features; 1st to 9th are spell slots per spell level."`
	Levels  []ClassLevel `json:"levels" jsonschema:"Levels 1 to 20."`
}

// ClassLevel is one row of a class table.
type ClassLevel struct {
	Level            int32             `json:"level"`
	ProficiencyBonus int32             `json:"proficiency_bonus,omitempty"`
	Features         []string          `json:"features,omitempty" jsonschema:"Features gained at this level."`
	Columns          map[string]string `json:"columns,omitempty" jsonschema:"The other columns' values at this level, by column name."`
	SpellSlots       []int32           `json:"spell_slots,omitempty" jsonschema:"Spell slots per spell level: the first is 1st-level slots."`
}

// Rule holds rule and reference fields.
type Rule struct {
	Section     string     `json:"section,omitempty"`
	SectionName string     `json:"section_name,omitempty"`
	Index       int32      `json:"index,omitempty"`
	Ability     string     `json:"ability,omitempty"`
	Category    string     `json:"category,omitempty" jsonschema:"Its glossary tag: Action, Condition, Hazard, ..."`
	HeadingPath []string   `json:"heading_path,omitempty"`
	SeeAlso     []RuleLink `json:"see_also,omitempty"`
}

// RuleLink is a rule a rule's See also names.
type RuleLink struct {
	Name string `json:"name"`
	URI  string `json:"uri,omitempty"`
}

// LookupOutput is what the five lookup tools return.
type LookupOutput struct {
	Results        []Entity       `json:"results"`
	Count          int            `json:"count"`
	Ranking        string         `json:"ranking" jsonschema:"structured, hybrid or keyword."`
	FallbackReason string         `json:"fallback_reason,omitempty" jsonschema:"Why keyword ranking replaced semantic."`
	Warnings       []string       `json:"warnings,omitempty"`
	NameMatch      string         `json:"name_match,omitempty" jsonschema:"How name matched: exact, pattern, slug, key, tag, alias, inflection, part."`
	Part           string         `json:"part,omitempty" jsonschema:"A name each result holds as a part (name_match part)."`
	MatchedAlias   string         `json:"matched_alias,omitempty" jsonschema:"The alias asked for (Tasha's Hideous Laughter)."`
	Suggestions    []Suggestion   `json:"suggestions,omitempty" jsonschema:"Did you mean: the closest names, best first."`
	NotOpenContent string         `json:"not_open_content,omitempty" jsonschema:"A well-known name no open document carries (Beholder)."`
	Understood     map[string]any `json:"understood,omitempty"`
	Message        string         `json:"message,omitempty"`
	NextCursor     string         `json:"next_cursor,omitempty"`
	Total          uint64         `json:"total"`
	Variants       []Variant      `json:"variants,omitempty" jsonschema:"The name's family under other names (Vorpal Longsword)."`
	// understood is Understood as the query service said it, for the text.
	understood *lkv1.Understood
}

// Suggestion is a did-you-mean suggestion: an entity whose name is close to
// the one asked for.
type Suggestion struct {
	Name         string  `json:"name"`
	Key          string  `json:"key"`
	URI          string  `json:"uri"`
	Document     string  `json:"document" jsonschema:"The document's key."`
	DocumentName string  `json:"document_name,omitempty"`
	Score        float64 `json:"score" jsonschema:"In (0, 1], higher is closer."`
	Via          string  `json:"via" jsonschema:"name (typo-tolerant), alias (a name the book uses), meaning (nearest open content by meaning) or counterpart (its open stand-in)."`
}

// SearchGroup is one content type's results in search_dnd_content.
type SearchGroup struct {
	EntityType string   `json:"entity_type"`
	Count      int      `json:"count"`
	Available  uint64   `json:"available,omitempty"`
	Results    []Entity `json:"results"`
	// brief: a kind the question did not ask for, in a line per result
	// (the answer was too long).
	brief bool
}

// SearchOutput is what search_dnd_content returns.
type SearchOutput struct {
	Query          string         `json:"query"`
	Groups         []SearchGroup  `json:"groups" jsonschema:"Results grouped by content type, best group first."`
	Count          int            `json:"count"`
	Total          uint64         `json:"total" jsonschema:"Results over all pages."`
	Understood     map[string]any `json:"understood,omitempty"`
	Ranking        string         `json:"ranking"`
	FallbackReason string         `json:"fallback_reason,omitempty"`
	Warnings       []string       `json:"warnings,omitempty"`
	Message        string         `json:"message,omitempty"`
	NextCursor     string         `json:"next_cursor,omitempty"`
	NotOpenContent string         `json:"not_open_content,omitempty" jsonschema:"Set when the query is a well-known name that no open-licensed document carries (e.g. beholder); the groups are then the nearest open content."`
	understood     *lkv1.Understood
}

// DocumentInfo is one document in list_documents.
type DocumentInfo struct {
	Document       string            `json:"document" jsonschema:"The document's key: pass it in documents."`
	DocumentKey    string            `json:"document_key"`
	DocumentName   string            `json:"document_name"`
	DisplayName    string            `json:"display_name,omitempty"`
	SourceAPI      string            `json:"source_api" jsonschema:"open5e_v1, open5e_v2, orcbrew or srd_text."`
	DocumentSource string            `json:"document_source"`
	EntityCount    uint64            `json:"entity_count"`
	EntityTypes    map[string]uint64 `json:"entity_types" jsonschema:"Entities by kind."`
	Publisher      string            `json:"publisher,omitempty"`
	License        string            `json:"license,omitempty"`
	LicenseNote    string            `json:"license_note,omitempty"`
	Notice         string            `json:"notice,omitempty"`
	GameSystem     string            `json:"game_system,omitempty"`
	Permalink      string            `json:"permalink,omitempty"`
}

// DocumentsOutput is what list_documents returns.
type DocumentsOutput struct {
	Documents      []DocumentInfo  `json:"documents"`
	Count          int             `json:"count"`
	Message        string          `json:"message,omitempty"`
	NextCursor     string          `json:"next_cursor,omitempty"`
	Total          uint64          `json:"total,omitempty"`
	Warnings       []string        `json:"warnings,omitempty"`
	ImportProblems []ImportProblem `json:"import_problems,omitempty" jsonschema:"OrcBrew homebrew files that could not be imported, or only in part: the file and what is wrong with it."`
}

// ImportProblem is an OrcBrew file whose last import failed or was partial.
type ImportProblem struct {
	File   string `json:"file"`
	Status string `json:"status" jsonschema:"failed (nothing of this version is served; a previous version's content is kept) or partial (some entries were skipped)."`
	Error  string `json:"error"`
}

func rankingName(r lkv1.Ranking) string {
	switch r {
	case lkv1.Ranking_RANKING_HYBRID:
		return "hybrid"
	case lkv1.Ranking_RANKING_KEYWORD:
		return "keyword"
	}
	return "structured"
}

func entityFromResult(r *lkv1.Result) Entity {
	e := entityFromProto(r.GetEntity(), r.GetUri())
	if r.SimilarityScore != nil {
		s := r.GetSimilarityScore()
		e.SimilarityScore = &s
	}
	for _, a := range r.GetAlternates() {
		e.Alternates = append(e.Alternates, Alternate{Key: a.GetKey(), URI: a.GetUri(), DocumentKey: a.GetDocumentKey(), DocumentName: a.GetDocumentName(), GameSystem: a.GetGameSystem(), Name: a.GetName()})
	}
	return e
}

func entityFromProto(p *lkv1.Entity, uri string) Entity {
	if uri == "" {
		uri = lkv1.EntityURI(p.GetKey())
	}
	d := p.GetDocument()
	e := Entity{
		URI:            uri,
		Key:            p.GetKey(),
		Slug:           p.GetSlug(),
		Kind:           p.GetKind().Slug(),
		Name:           p.GetName(),
		Document:       d.GetName(),
		DocumentKey:    d.GetKey(),
		DocumentName:   d.GetName(),
		DocumentSource: d.GetSource().Slug(),
		GameSystem:     d.GetGameSystem(),
		Publisher:      d.GetPublisher(),
		Licenses:       d.GetLicenses(),
		Permalink:      d.GetPermalink(),
		Attribution:    d.GetAttribution(),
		SourceURL:      p.GetSourceUrl(),
		Description:    shown(p.GetDescription()),
		HigherLevel:    shown(p.GetHigherLevel()),
	}
	for _, b := range p.GetBlocks() {
		e.Blocks = append(e.Blocks, Block{Type: b.GetType(), Name: b.GetName(), Text: shown(b.GetText()), Level: b.GetLevel(), Levels: b.GetLevels(), Attack: b.GetAttack(),
			Usage: usageText(b.GetUsage()), Cost: b.GetLegendaryCost(), Form: b.GetForm(),
			DamageTypes: b.GetDamageTypes(), SavingThrow: b.GetSavingThrowAbility(), SaveDC: b.GetSavingThrowDc(), Conditions: b.GetConditions()})
	}
	for _, c := range p.GetCorrections() {
		e.Corrections = append(e.Corrections, Correction{Subject: c.GetSubject(), Field: c.GetField(), SourceValue: c.GetSourceValue(), CorrectedValue: c.GetCorrectedValue(), Basis: c.GetBasis(), Source: c.GetSource()})
	}
	if s := p.GetSpell(); s != nil {
		e.Spell = &Spell{
			Level: s.GetLevel(), School: s.GetSchool(), Classes: nonNil(s.GetClasses()),
			Concentration: s.GetConcentration(), Ritual: s.GetRitual(), CastingTime: s.GetCastingTime(),
			Range: s.GetRange(), Duration: s.GetDuration(), Components: components(s),
			Verbal: s.GetVerbal(), Somatic: s.GetSomatic(), Material: s.GetMaterial(),
			MaterialSpecified: s.GetMaterialSpecified(), MaterialCostGP: s.MaterialCostGp,
			MaterialConsumed: s.GetMaterialConsumed(), DamageTypes: s.GetDamageTypes(), DamageRoll: s.GetDamageRoll(),
			SavingThrowAbility: s.GetSavingThrowAbility(), AttackRoll: s.GetAttackRoll(),
			ReactionCondition: s.GetReactionCondition(), TargetType: s.GetTargetType(), Area: s.GetArea(),
			Subclasses: s.GetSubclasses(), HealingRoll: s.GetHealingRoll(), Conditions: s.GetConditions(),
		}
	}
	if c := p.GetCreature(); c != nil {
		e.Creature = &Creature{
			ChallengeRating: c.GetChallengeRating(), ChallengeRatingText: crText(c), Type: c.GetType(),
			Subtype: c.GetSubtype(), Group: c.GetGroup(), Size: c.GetSize(), Alignment: c.GetAlignment(), ArmorClass: c.GetArmorClass(),
			ArmorDetail: c.GetArmorDetail(), HitPoints: c.GetHitPoints(), HitDice: c.GetHitDice(),
			Speed: c.GetSpeed(), SpeedText: c.GetSpeedText(), SavingThrows: c.GetSavingThrows(), Skills: c.GetSkills(),
			Senses: c.GetSenses(), PassivePerception: c.GetPassivePerception(), Languages: c.GetLanguages(),
			DamageVulnerabilities: c.GetDamageVulnerabilities(), DamageResistances: c.GetDamageResistances(),
			DamageImmunities: c.GetDamageImmunities(), ConditionImmunities: c.GetConditionImmunities(),
			DamageVulnerabilityEntries: defensesFromProto(c.GetDamageVulnerabilityEntries()),
			DamageResistanceEntries:    defensesFromProto(c.GetDamageResistanceEntries()),
			DamageImmunityEntries:      defensesFromProto(c.GetDamageImmunityEntries()),
			ConditionImmunityEntries:   defensesFromProto(c.GetConditionImmunityEntries()),
			ExperiencePoints:           c.GetExperiencePoints(), ProficiencyBonus: c.GetProficiencyBonus(),
			Environments: c.GetEnvironments(), HasLegendaryActions: c.GetHasLegendaryActions() || hasBlock(p, "legendary_action"),
			HasLairActions:  c.GetHasLairActions() || hasBlock(p, "lair_action"),
			InitiativeBonus: c.InitiativeBonus, LegendaryIntro: shown(c.GetLegendaryIntro()), LegendaryPerRound: c.GetLegendaryActionsPerRound(),
		}
		if a := c.GetAbilityScores(); a != nil {
			for _, s := range abilityScores(a) {
				if s.score == 0 {
					continue // unknown: no creature has a score of 0
				}
				if e.Creature.AbilityScores == nil {
					e.Creature.AbilityScores, e.Creature.AbilityModifiers = map[string]int32{}, map[string]int32{}
				}
				e.Creature.AbilityScores[s.name] = s.score
				e.Creature.AbilityModifiers[s.name] = modifier(s.score)
			}
		}
	}
	if it := p.GetItem(); it != nil {
		e.Item = &Item{
			Category: it.GetCategory(), IsMagic: it.GetIsMagic(), Rarity: it.GetRarity(),
			RequiresAttunement: it.GetRequiresAttunement(), AttunementDetail: it.GetAttunementDetail(),
			Base: it.GetBase(), CostGP: it.CostGp, WeightLb: it.WeightLb,
		}
		if w := it.GetWeapon(); w != nil {
			e.Item.Weapon = &Weapon{DamageDice: w.GetDamageDice(), DamageType: w.GetDamageType(), Properties: nonNil(w.GetProperties()),
				IsSimple: w.GetIsSimple(), IsRanged: w.GetIsRanged(), RangeNormal: w.GetRangeNormal(), RangeLong: w.GetRangeLong(), VersatileDice: w.GetVersatileDice(),
				Mastery: w.GetMastery(), IsImprovised: w.GetIsImprovised()}
		}
		if a := it.GetArmor(); a != nil {
			e.Item.Armor = &Armor{Category: a.GetCategory(), ACBase: a.GetAcBase(), ACAddDex: a.GetAcAddDex(), ACMaxDex: a.GetAcMaxDex(),
				ACDisplay: a.GetAcDisplay(), StealthDisadvantage: a.GetStealthDisadvantage(), StrengthRequired: a.GetStrengthRequired()}
		}
	}
	if o := p.GetCharacterOption(); o != nil {
		e.CharacterOption = &CharacterOption{ParentKey: o.GetParentKey(), ParentName: o.GetParentName(), HitDice: o.GetHitDice(),
			CasterType: o.GetCasterType(), PrimaryAbilities: o.GetPrimaryAbilities(), SavingThrows: o.GetSavingThrows(),
			Prerequisite: o.GetPrerequisite(), FeatType: o.GetFeatType(), Size: o.GetSize(), Speed: o.GetSpeed(),
			ClassTable: classTable(o.GetProgression())}
	}
	if r := p.GetRule(); r != nil {
		e.Rule = &Rule{Section: r.GetSection(), SectionName: r.GetSectionName(), Index: r.GetIndex(), Ability: r.GetAbility(),
			Category: r.GetCategory(), HeadingPath: r.GetHeadingPath()}
		for _, l := range r.GetSeeAlso() {
			link := RuleLink{Name: l.GetName()}
			if l.GetKey() != "" {
				link.URI = lkv1.EntityURI(l.GetKey())
			}
			e.Rule.SeeAlso = append(e.Rule.SeeAlso, link)
		}
	}
	return e
}

// usageText writes a usage limit as a stat block prints it after the
// action's name: "Recharge 5–6", "Recharge 6", "2/Day", "Recharges after a
// Short or Long Rest".
func usageText(u *lkv1.Usage) string {
	switch u.GetType() {
	case "":
		return ""
	case "RECHARGE_ON_ROLL":
		if n := u.GetParam(); n > 0 && n < 6 {
			return fmt.Sprintf("Recharge %d–6", n)
		}
		return "Recharge 6"
	case "PER_DAY":
		return fmt.Sprintf("%d/Day", u.GetParam())
	case "RECHARGE":
		// Open5e's RECHARGE with a param is a roll too (SRD 5.2 writes
		// "Recharge 5–6" for them); without one, after a rest.
		if n := u.GetParam(); n > 0 && n < 6 {
			return fmt.Sprintf("Recharge %d–6", n)
		} else if n == 6 {
			return "Recharge 6"
		}
		return "Recharges after a Short or Long Rest"
	}
	return strings.ToLower(strings.ReplaceAll(u.GetType(), "_", " ")) + " " + strconv.Itoa(int(u.GetParam()))
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func hasBlock(p *lkv1.Entity, typ string) bool {
	for _, b := range p.GetBlocks() {
		if b.GetType() == typ {
			return true
		}
	}
	return false
}

func components(s *lkv1.SpellDetails) string {
	var c []string
	if s.GetVerbal() {
		c = append(c, "V")
	}
	if s.GetSomatic() {
		c = append(c, "S")
	}
	// A material named with the flag off (Deep Magic's Blood Armor: "you
	// must have just struck a foe") is a material component all the same.
	if s.GetMaterial() || s.GetMaterialSpecified() != "" {
		c = append(c, "M")
	}
	return strings.Join(c, ", ")
}

type abilityScore struct {
	name  string
	score int32
}

func abilityScores(a *lkv1.AbilityScores) []abilityScore {
	return []abilityScore{
		{"strength", a.GetStrength()}, {"dexterity", a.GetDexterity()}, {"constitution", a.GetConstitution()},
		{"intelligence", a.GetIntelligence()}, {"wisdom", a.GetWisdom()}, {"charisma", a.GetCharisma()},
	}
}

// modifier is the ability modifier of score: floor((score-10)/2).
func modifier(score int32) int32 {
	d := score - 10
	if d < 0 {
		return (d - 1) / 2
	}
	return d / 2
}

func crText(c *lkv1.CreatureDetails) string {
	if t := c.GetChallengeRatingText(); t != "" {
		return t
	}
	return lkv1.ChallengeRatingText(c.GetChallengeRating())
}

func documentInfo(s *lkv1.DocumentSummary) DocumentInfo {
	d := s.GetDocument()
	counts := s.GetCounts()
	if counts == nil {
		counts = map[string]uint64{}
	}
	return DocumentInfo{
		Document: d.GetKey(), DocumentKey: d.GetKey(), DocumentName: d.GetName(), DisplayName: d.GetDisplayName(),
		SourceAPI: d.GetSource().Slug(), DocumentSource: d.GetSource().Slug(), EntityCount: s.GetEntityCount(),
		EntityTypes: counts, Publisher: d.GetPublisher(), License: strings.Join(d.GetLicenses(), ", "),
		LicenseNote: d.GetLicenseNote(), Notice: d.GetAttribution(),
		GameSystem: d.GetGameSystem(), Permalink: d.GetPermalink(),
	}
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
