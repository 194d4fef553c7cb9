package open5e

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// normalizeV2 fills the kind-specific fields of a v2 record and returns the
// upstream key of its parent, if any.
func normalizeV2(ep Endpoint, o obj, e *lkv1.Entity, cat *Catalog) string {
	switch ep.Name {
	case "spells":
		e.HigherLevel = normalizeNewlines(o.str("higher_level"))
		s := spellV2(o)
		e.Corrections = checkSpell(s, e.Description, e.HigherLevel)
		e.Details = &lkv1.Entity_Spell{Spell: s}
	case "creatures":
		c, blocks, fixes := creatureV2(o)
		e.Blocks = blocks
		e.Corrections = fixes
		e.Details = &lkv1.Entity_Creature{Creature: c}
	case "weapons":
		w := weaponV2(o)
		e.Corrections = checkWeapon(w)
		e.Details = &lkv1.Entity_Item{Item: &lkv1.ItemDetails{Category: "weapon", Weapon: w}}
	case "armor":
		a := armorV2(o)
		e.Corrections = checkArmor(a, o.str("name"))
		e.Details = &lkv1.Entity_Item{Item: &lkv1.ItemDetails{Category: "armor", Armor: a}}
	case "magicitems", "items":
		it := itemV2(o, ep.Name == "magicitems")
		e.Corrections = checkItemCategory(it)
		if it.Armor != nil {
			e.Corrections = append(e.Corrections, checkArmor(it.Armor, o.obj("armor").str("name"))...)
			e.Corrections = append(e.Corrections, checkArmorText(it.Armor, e.Description)...)
		}
		if it.Weapon != nil {
			e.Corrections = append(e.Corrections, checkWeapon(it.Weapon)...)
		}
		e.Details = &lkv1.Entity_Item{Item: it}
	case "classes":
		co := &lkv1.CharacterOptionDetails{
			HitDice:    strings.ToLower(o.str("hit_dice")),
			CasterType: o.str("caster_type"),
		}
		for _, s := range o.objs("saving_throws") {
			co.SavingThrows = append(co.SavingThrows, lkv1.AbilityName(s.str("name")))
		}
		for _, a := range o.list("primary_abilities") {
			switch v := a.(type) {
			case string:
				co.PrimaryAbilities = append(co.PrimaryAbilities, lkv1.AbilityName(v))
			case map[string]any:
				co.PrimaryAbilities = append(co.PrimaryAbilities, lkv1.AbilityName(obj(v).str("name")))
			}
		}
		var fixes []*lkv1.Correction
		e.Blocks, co.Progression, fixes = classFeatures(o, e.Name)
		e.Corrections = append(e.Corrections, fixes...)
		e.Details = &lkv1.Entity_CharacterOption{CharacterOption: co}
		if p := o.obj("subclass_of"); p != nil {
			e.Kind = lkv1.Kind_KIND_SUBCLASS
			co.ParentName = p.str("name")
			return p.str("key")
		}
	case "species":
		co := &lkv1.CharacterOptionDetails{}
		for _, t := range o.objs("traits") {
			text := normalizeNewlines(t.str("desc"))
			e.Blocks = append(e.Blocks, &lkv1.TextBlock{Type: "trait", Name: t.str("name"), Text: text})
			switch strings.ToLower(t.str("name")) {
			case "size":
				co.Size = sizeIn(text)
			case "speed":
				if f, ok := parseAmount(text); ok {
					co.Speed = clampInt32(f)
				}
			}
		}
		e.Details = &lkv1.Entity_CharacterOption{CharacterOption: co}
		if o.boolean("is_subspecies") || o.str("subspecies_of") != "" {
			e.Kind = lkv1.Kind_KIND_SUBRACE
			return o.str("subspecies_of")
		}
	case "backgrounds":
		for _, b := range o.objs("benefits") {
			e.Blocks = append(e.Blocks, &lkv1.TextBlock{Type: "benefit", Name: b.str("name"), Text: normalizeNewlines(b.str("desc"))})
		}
		e.Details = &lkv1.Entity_CharacterOption{CharacterOption: &lkv1.CharacterOptionDetails{}}
	case "feats":
		for _, b := range o.objs("benefits") {
			e.Blocks = append(e.Blocks, &lkv1.TextBlock{Type: "benefit", Name: b.str("name"), Text: normalizeNewlines(b.str("desc"))})
		}
		e.Details = &lkv1.Entity_CharacterOption{CharacterOption: &lkv1.CharacterOptionDetails{
			Prerequisite: o.str("prerequisite"),
			FeatType:     strings.ToUpper(o.str("type")),
		}}
	case "rulesets":
		for _, r := range o.objs("rules") {
			e.Blocks = append(e.Blocks, &lkv1.TextBlock{Type: "rule", Name: r.str("name"), Text: normalizeNewlines(r.str("desc"))})
		}
		e.Details = &lkv1.Entity_Rule{Rule: &lkv1.RuleDetails{Section: sectionSlug(e.SourceKey), SectionName: e.Name}}
	case "rules":
		rs := o.str("ruleset")
		e.Details = &lkv1.Entity_Rule{Rule: &lkv1.RuleDetails{
			Section:     sectionSlug(rs),
			SectionName: cat.rulesetName(rs),
			Index:       o.int32("index"),
		}}
	case "skills":
		e.Details = &lkv1.Entity_Rule{Rule: &lkv1.RuleDetails{Ability: lkv1.AbilityName(o.str("ability"))}}
	default:
		// conditions, damage types, weapon properties, abilities, spell
		// schools, languages, alignments: reference kinds with no fields.
		e.Details = &lkv1.Entity_Rule{Rule: &lkv1.RuleDetails{}}
	}
	return ""
}

// sectionSlug turns a ruleset key ("srd-2024_combat") into the section
// slug ("combat").
func sectionSlug(k string) string {
	if _, after, ok := strings.Cut(k, "_"); ok {
		return lkv1.Slugify(after)
	}
	return lkv1.Slugify(k)
}

var sizeWords = regexp.MustCompile(`(?i)\b(tiny|small|medium|large|huge|gargantuan)\b`)

func sizeIn(s string) string {
	return strings.ToLower(sizeWords.FindString(s))
}

func spellV2(o obj) *lkv1.SpellDetails {
	s := &lkv1.SpellDetails{
		Level:              o.int32("level"),
		School:             o.keyOrName("school"),
		Concentration:      o.boolean("concentration"),
		Ritual:             o.boolean("ritual"),
		CastingTime:        castingTimeText(o.str("casting_time")),
		CastingTimeKey:     lkv1.CastingTimeKey(o.str("casting_time")),
		Range:              o.str("range_text"),
		Duration:           o.str("duration"),
		Verbal:             o.boolean("verbal"),
		Somatic:            o.boolean("somatic"),
		Material:           o.boolean("material"),
		MaterialSpecified:  o.str("material_specified"),
		MaterialConsumed:   o.boolean("material_consumed"),
		DamageRoll:         o.str("damage_roll"),
		SavingThrowAbility: lkv1.AbilityName(o.str("saving_throw_ability")),
		AttackRoll:         o.boolean("attack_roll"),
		ReactionCondition:  o.str("reaction_condition"),
		TargetType:         o.str("target_type"),
	}
	if s.Range == "" {
		s.Range = o.str("range")
	}
	if f, ok := o.num("material_cost"); ok {
		s.MaterialCostGp = &f
	}
	for _, c := range o.objs("classes") {
		if k := lkv1.Slugify(c.str("name")); k != "" {
			s.Classes = append(s.Classes, k)
		}
	}
	for _, d := range o.list("damage_types") {
		switch v := d.(type) {
		case string:
			s.DamageTypes = append(s.DamageTypes, strings.ToLower(v))
		case map[string]any:
			s.DamageTypes = append(s.DamageTypes, obj(v).keyOrName("key"))
		}
	}
	if shape := o.str("shape_type"); shape != "" {
		unit := strings.TrimSuffix(o.str("shape_size_unit"), "s")
		if unit == "feet" || unit == "" {
			unit = "foot"
		}
		if size, ok := o.num("shape_size"); ok && size > 0 {
			s.Area = fmt.Sprintf("%g-%s %s", size, unit, shape)
		} else {
			s.Area = shape
		}
	}
	return s
}

var runTogether = regexp.MustCompile(`^(\d+)([a-z]+)$`)

// castingTimeText writes v2's casting time keys as a book prints them:
// "1minute" as "1 minute", "action" as "1 action", "bonus-action" as
// "1 bonus action".
func castingTimeText(s string) string {
	if m := runTogether.FindStringSubmatch(s); m != nil {
		return m[1] + " " + m[2]
	}
	switch s {
	case "action", "bonus-action", "reaction", "round", "turn":
		return "1 " + strings.ReplaceAll(s, "-", " ")
	}
	return s
}

// unspacedComma is a comma with a word right after it.
var unspacedComma = regexp.MustCompile(`,(\pL)`)

var actionTypes = map[string]string{
	"ACTION":           "action",
	"BONUS_ACTION":     "bonus_action",
	"REACTION":         "reaction",
	"LEGENDARY_ACTION": "legendary_action",
	"LAIR_ACTION":      "lair_action",
	"MYTHIC_ACTION":    "mythic_action",
}

func creatureV2(o obj) (*lkv1.CreatureDetails, []*lkv1.TextBlock, []*lkv1.Correction) {
	c := &lkv1.CreatureDetails{
		Type:              o.keyOrName("type"),
		Size:              o.keyOrName("size"),
		Alignment:         o.str("alignment"),
		ArmorClass:        o.int32("armor_class"),
		ArmorDetail:       o.str("armor_detail"),
		HitPoints:         o.int32("hit_points"),
		HitDice:           o.str("hit_dice"),
		PassivePerception: o.int32("passive_perception"),
		ExperiencePoints:  o.int32("experience_points"),
		ProficiencyBonus:  o.int32("proficiency_bonus"),
		// subcategory is the book's grouping, not a subtype: v2 has no
		// subtype (mergeV1Creatures brings SRD 5.1's from v1).
		Group: o.str("subcategory"),
	}
	if _, ok := o.num("initiative_bonus"); ok {
		ib := o.int32("initiative_bonus")
		c.InitiativeBonus = &ib
	}
	if cr, ok := o.num("challenge_rating"); ok {
		c.ChallengeRating = cr
		c.ChallengeRatingText = lkv1.ChallengeRatingText(cr)
	}
	if l := o.obj("languages"); l != nil {
		c.Languages = l.str("as_string")
	} else {
		c.Languages = o.str("languages")
	}
	// "Common,Draconic": Black Flag's 125 lists lack the space.
	c.Languages = unspacedComma.ReplaceAllString(c.Languages, ", $1")
	c.Speed, c.SpeedText = speeds(o.obj("speed"))
	if a := o.obj("ability_scores"); a != nil {
		c.AbilityScores = &lkv1.AbilityScores{
			Strength: a.int32("strength"), Dexterity: a.int32("dexterity"),
			Constitution: a.int32("constitution"), Intelligence: a.int32("intelligence"),
			Wisdom: a.int32("wisdom"), Charisma: a.int32("charisma"),
		}
	}
	c.SavingThrows = intMap(o.obj("saving_throws"))
	c.Skills = intMap(o.obj("skill_bonuses"))
	fixes := dropStandInZeros(c)
	var senses []string
	for _, s := range []string{"blindsight", "darkvision", "tremorsense", "truesight"} {
		if f, ok := o.num(s + "_range"); ok && f > 0 {
			senses = append(senses, fmt.Sprintf("%s %g ft.", s, f))
		}
	}
	if c.PassivePerception > 0 {
		senses = append(senses, fmt.Sprintf("passive Perception %d", c.PassivePerception))
	}
	c.Senses = strings.Join(senses, ", ")
	if ri := o.obj("resistances_and_immunities"); ri != nil {
		// The *_display texts are the book's lines, the lists Open5e's
		// reading of them, without the qualifiers.
		fixes = append(fixes, setDefenses(c, func(f string) string { return ri.str(f + "_display") }, func(f string) []string { return keys(ri, f) })...)
	}
	for _, env := range o.objs("environments") {
		if k := lkv1.Slugify(env.str("name")); k != "" {
			c.Environments = append(c.Environments, k)
		}
	}

	var (
		blocks   []*lkv1.TextBlock
		unlisted []*lkv1.TextBlock // actions only naming one the source does not give
	)
	for _, t := range o.objs("traits") {
		blocks = append(blocks, &lkv1.TextBlock{Type: "trait", Name: t.str("name"), Text: normalizeNewlines(t.str("desc"))})
	}
	actions := o.objs("actions")
	sort.SliceStable(actions, func(i, j int) bool {
		return actions[i].int32("order_in_statblock") < actions[j].int32("order_in_statblock")
	})
	for _, a := range actions {
		typ, ok := actionTypes[a.str("action_type")]
		if !ok {
			typ = "action"
		}
		switch typ {
		case "legendary_action":
			c.HasLegendaryActions = true
		case "lair_action":
			c.HasLairActions = true
		}
		b := &lkv1.TextBlock{Type: typ, Name: a.str("name"), Text: normalizeNewlines(a.str("desc")), Form: a.str("limited_to_form")}
		if u := a.obj("usage_limits"); u != nil && u.str("type") != "" {
			b.Usage = &lkv1.Usage{Type: strings.ToUpper(u.str("type")), Param: u.int32("param")}
		}
		// Every action carries a cost of 1, the default; only a legendary
		// action costing more says something.
		if cost := a.int32("legendary_action_cost"); typ == "legendary_action" && cost > 1 {
			b.LegendaryCost = cost
		}
		if typ == "legendary_action" && legendaryIntroName.MatchString(b.Name) {
			// "The vampire can take 1 legendary action." filed as an
			// action of its own (66 Monstrous Menagerie creatures): the
			// paragraph before the legendary actions.
			c.LegendaryIntro = strings.TrimSuffix(b.Name, ".") + ". " + b.Text
			c.LegendaryActionsPerRound = legendaryPerRound(b.Name)
			fixes = append(fixes, &lkv1.Correction{Subject: b.Name, Field: "listed_as",
				SourceValue: "a legendary action", CorrectedValue: "the legendary actions' opening paragraph"})
			continue
		}
		var f []*lkv1.Correction
		if namesUnlisted(b.Text, actions) {
			// "The lich uses Paralyzing Touch.", an action the source does
			// not give: the structured attack is the only stat line there
			// is, and the text says nothing it could contradict. Whether it
			// is shown depends on the creature's other attacks (below).
			b.Attack, _ = checkAttacks(b.Name, "", a.objs("attacks"))
			if b.Attack != "" {
				unlisted = append(unlisted, b)
			}
		} else {
			b.Attack, f = checkAttacks(b.Name, b.Text, a.objs("attacks"))
		}
		fixes = append(fixes, f...)
		fixes = append(fixes, checkUsage(b)...)
		blocks = append(blocks, b)
	}
	// The structured attacks of the creature's other actions, checked
	// against their texts, say whether its record's numbers can be trusted
	// where no text says them: Tome of Beasts' records drop every damage
	// bonus (the cave dragon's legendary Tail would deal 2d8, not 2d8+8).
	if slices.ContainsFunc(fixes, func(c *lkv1.Correction) bool { return attackFields[c.GetField()] }) {
		for _, b := range unlisted {
			fixes = append(fixes, &lkv1.Correction{Subject: b.Name, Field: "attack", SourceValue: b.Attack})
			b.Attack = ""
		}
	}
	blocks, f := dropLegendaryTwins(blocks)
	return c, blocks, append(fixes, f...)
}

// attackFields are the corrections that say a record's structured attacks
// disagree with their texts.
var attackFields = map[string]bool{"to_hit": true, "reach": true, "range": true, "damage": true, "damage_type": true, "extra_damage": true}

// bareReference is an action whose whole text names another action:
// "The lich uses Paralyzing Touch.", "The hive queen makes one Stinger
// attack."
var bareReference = regexp.MustCompile(`^The [^.]+? (?:uses|makes) (?:its |one |a |an )?([^.]+?)(?: attack)?\.$`)

// NamedAction returns the action that text does nothing but name: "The
// lich uses Paralyzing Touch." names Paralyzing Touch.
func NamedAction(text string) (string, bool) {
	m := bareReference.FindStringSubmatch(strings.TrimSpace(text))
	if m == nil {
		return "", false
	}
	return m[1], true
}

// namesUnlisted reports whether text only names another action that none
// of the creature's actions gives, under its name or with its legendary
// cost ("Maddening Touch (Costs 2 Actions)"), other than by naming it
// too: 29 actions in five books, whose attacks are in the source's
// structured data alone.
func namesUnlisted(text string, actions []obj) bool {
	named, ok := NamedAction(text)
	if !ok {
		return false
	}
	for _, a := range actions {
		name := a.str("name")
		if c := costsActions.FindStringSubmatch(name); c != nil {
			name = c[1]
		}
		if _, ref := NamedAction(a.str("desc")); strings.EqualFold(name, named) && !ref {
			return false
		}
	}
	return true
}

// legendaryIntroName is the opening sentence of the legendary actions as a
// block's name.
var legendaryIntroName = regexp.MustCompile(`(?i)^the .+ can take (\d+|one|two|three|four|five) legendary actions?\.?$`)

// costsActions is a legendary action's cost written in its name:
// "Wing Attack (Costs 2 Actions)".
var costsActions = regexp.MustCompile(`(?i)^(.+?)\s*\(costs? \d+ actions?\)$`)

// dropLegendaryTwins leaves out the actions that are a legendary action
// filed twice, once as an action with its cost in its name ("Wing Attack
// (Costs 2 Actions)", 113 blocks in four Kobold Press and Black Flag books):
// a card would offer it as an action of the creature's turn.
func dropLegendaryTwins(blocks []*lkv1.TextBlock) ([]*lkv1.TextBlock, []*lkv1.Correction) {
	legendary := map[string]bool{}
	for _, b := range blocks {
		if b.Type == "legendary_action" {
			legendary[strings.ToLower(strings.TrimSpace(b.Name))] = true
		}
	}
	if len(legendary) == 0 {
		return blocks, nil
	}
	var fixes []*lkv1.Correction
	out := blocks[:0]
	for _, b := range blocks {
		if m := costsActions.FindStringSubmatch(b.Name); b.Type != "legendary_action" && m != nil && legendary[strings.ToLower(m[1])] {
			fixes = append(fixes, &lkv1.Correction{Subject: b.Name, Field: "listed_as",
				SourceValue: "an action and a legendary action", CorrectedValue: "a legendary action"})
			continue
		}
		out = append(out, b)
	}
	return out, fixes
}

// skillAbilities are the abilities the rules' skills use.
var skillAbilities = map[string]string{
	"acrobatics": "dexterity", "animal_handling": "wisdom", "arcana": "intelligence", "athletics": "strength",
	"deception": "charisma", "history": "intelligence", "insight": "wisdom", "intimidation": "charisma",
	"investigation": "intelligence", "medicine": "wisdom", "nature": "intelligence", "perception": "wisdom",
	"performance": "charisma", "persuasion": "charisma", "religion": "intelligence", "sleight_of_hand": "dexterity",
	"stealth": "dexterity", "survival": "wisdom",
}

// dropStandInZeros leaves out saving throws and skills that are all +0
// where one of them is below its ability's modifier, which no bonus can
// be: the source's stand-in for none (SRD 5.1's Elephant and seven other
// beasts list six saves and eighteen skills at +0). A single +0 that the
// scores allow (the Zombie's Wisdom save) is the book's.
func dropStandInZeros(c *lkv1.CreatureDetails) []*lkv1.Correction {
	a := c.GetAbilityScores()
	if a == nil {
		return nil
	}
	scores := map[string]int32{"strength": a.Strength, "dexterity": a.Dexterity, "constitution": a.Constitution,
		"intelligence": a.Intelligence, "wisdom": a.Wisdom, "charisma": a.Charisma}
	standIn := func(m map[string]int32, ability func(string) string) bool {
		below := false
		for k, v := range m {
			if v != 0 {
				return false
			}
			if s, ok := scores[ability(k)]; ok && s > 0 && (s-10)/2 > 0 {
				below = true
			}
		}
		return below
	}
	var fixes []*lkv1.Correction
	if standIn(c.SavingThrows, func(k string) string { return k }) {
		fixes = append(fixes, &lkv1.Correction{Field: "saving_throws", SourceValue: fmt.Sprintf("%d at +0", len(c.SavingThrows)), CorrectedValue: "none"})
		c.SavingThrows = nil
	}
	if standIn(c.Skills, func(k string) string { return skillAbilities[strings.ReplaceAll(k, " ", "_")] }) {
		fixes = append(fixes, &lkv1.Correction{Field: "skills", SourceValue: fmt.Sprintf("%d at +0", len(c.Skills)), CorrectedValue: "none"})
		c.Skills = nil
	}
	return fixes
}

func speeds(o obj) (map[string]int32, string) {
	if o == nil {
		return nil, ""
	}
	m := map[string]int32{}
	unit := o.str("unit")
	if unit == "" || unit == "feet" {
		unit = "ft."
	}
	var text []string
	for _, mode := range []string{"walk", "burrow", "climb", "crawl", "fly", "swim"} {
		if f, ok := o.num(mode); ok && f > 0 {
			m[mode] = clampInt32(f)
			if mode == "walk" {
				text = append([]string{fmt.Sprintf("%g %s", f, unit)}, text...)
			} else {
				text = append(text, fmt.Sprintf("%s %g %s", mode, f, unit))
			}
		}
	}
	if o.boolean("hover") {
		m["hover"] = 1
		text = append(text, "(hover)")
	}
	if len(m) == 0 {
		return nil, ""
	}
	return m, strings.Join(text, ", ")
}

func intMap(o obj) map[string]int32 {
	if len(o) == 0 {
		return nil
	}
	m := map[string]int32{}
	for k := range o {
		if f, ok := o.num(k); ok {
			m[strings.ToLower(k)] = clampInt32(f)
		}
	}
	if len(m) == 0 {
		return nil
	}
	return m
}

// keys reads a list of {name, key} objects or strings as lower-case keys.
func keys(o obj, k string) []string {
	a, _ := o[k].([]any)
	var out []string
	for _, v := range a {
		switch v := v.(type) {
		case string:
			out = append(out, strings.ToLower(strings.TrimSpace(v)))
		case map[string]any:
			if s := obj(v).keyOrName("key"); s != "" {
				out = append(out, s)
			} else if s := strings.ToLower(obj(v).str("name")); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

// weaponV2 reads a weapon record, or the weapon inside an item record,
// which has no range fields: there the range is only in the property's
// detail ("range 30/120", "Range 80/320; Arrow"), as in v1.
func weaponV2(o obj) *lkv1.WeaponStats {
	w := &lkv1.WeaponStats{
		DamageDice:   o.str("damage_dice"),
		DamageType:   o.keyOrName("damage_type"),
		IsSimple:     o.boolean("is_simple"),
		IsImprovised: o.boolean("is_improvised"),
		RangeNormal:  o.int32("range"),
		RangeLong:    o.int32("long_range"),
	}
	thrown := false
	for _, p := range o.objs("properties") {
		prop := p.obj("property")
		if prop == nil {
			continue
		}
		k := lkv1.Slugify(prop.str("name"))
		if k == "" {
			continue
		}
		// 2024 weapons have one mastery property, which only a character
		// with Weapon Mastery uses: a fact of its own, not a property.
		if strings.EqualFold(prop.str("type"), "mastery") {
			w.Mastery = k
			continue
		}
		w.Properties = append(w.Properties, k)
		detail := p.str("detail")
		switch k {
		case "versatile":
			w.VersatileDice = detail
		case "thrown":
			thrown = true
		}
		if m := rangePair.FindStringSubmatch(detail); m != nil && w.RangeNormal == 0 {
			n, _ := parseAmount(m[1])
			l, _ := parseAmount(m[2])
			w.RangeNormal, w.RangeLong = clampInt32(n), clampInt32(l)
		}
	}
	w.IsRanged = w.RangeNormal > 0 && !thrown
	return w
}

func armorV2(o obj) *lkv1.ArmorStats {
	return &lkv1.ArmorStats{
		Category:            strings.ToLower(o.str("category")),
		AcBase:              o.int32("ac_base"),
		AcAddDex:            o.boolean("ac_add_dexmod"),
		AcMaxDex:            o.int32("ac_cap_dexmod"),
		AcDisplay:           o.str("ac_display"),
		StealthDisadvantage: o.boolean("grants_stealth_disadvantage"),
		StrengthRequired:    o.int32("strength_score_required"),
	}
}

func itemV2(o obj, magic bool) *lkv1.ItemDetails {
	it := &lkv1.ItemDetails{
		Category:           o.keyOrName("category"),
		IsMagic:            magic,
		RequiresAttunement: o.boolean("requires_attunement"),
		AttunementDetail:   o.str("attunement_detail"),
	}
	if r := o.obj("rarity"); r != nil {
		it.Rarity = strings.ToLower(r.str("name"))
		if r.str("name") != "" || r.str("key") != "" {
			it.IsMagic = true
		}
	}
	// A cost or weight of 0 is the source's stand-in for unknown (every
	// magic item, SRD 5.1's Acid): left out, never served as 0.
	if f, ok := o.num("cost"); ok && f > 0 {
		it.CostGp = &f
	}
	if f, ok := o.num("weight"); ok && f > 0 {
		if lb, ok := weightLB(f, o.str("weight_unit")); ok {
			it.WeightLb = &lb
		}
	}
	if w := o.obj("weapon"); w != nil {
		it.Weapon = weaponV2(w)
		it.Base = magicBase(it, w)
	}
	if a := o.obj("armor"); a != nil {
		it.Armor = armorV2(a)
		it.Base = magicBase(it, a)
	}
	return it
}

// magicBase is the weapon or armor a magic item is made from ("Weapon
// (warhammer)"), named by the record nested in it; a mundane item's nested
// record is itself.
func magicBase(it *lkv1.ItemDetails, nested obj) string {
	if !it.GetIsMagic() {
		return ""
	}
	return strings.ToLower(nested.str("name"))
}
