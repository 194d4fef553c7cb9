package orcbrew

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"lorekeeper.dev/ingest/edn"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// rec reads the fields of one entity. A field of the wrong type is
// reported as a warning and read as absent.
type rec struct {
	m     edn.Map
	d     *decoder
	where string
}

func (r rec) get(k string) any { return r.m[edn.Keyword(k)] }

func (r rec) bad(k string, v any, want string) {
	r.d.warnf("%s: ignored :%s: %s, want %s", r.where, k, typeName(v), want)
}

// str reads text: a string, or a keyword's name.
func (r rec) str(k string) string {
	switch x := r.get(k).(type) {
	case nil:
		return ""
	case string:
		return x
	case edn.Keyword:
		return kwName(x)
	case int64, float64:
		return edn.String(x)
	default:
		r.bad(k, x, "text")
		return ""
	}
}

// num reads a number; "1/8" and "3" as strings count too.
func (r rec) num(k string) (float64, bool) {
	v := r.get(k)
	if v == nil {
		return 0, false
	}
	if f, ok := toNum(v); ok {
		return f, true
	}
	r.bad(k, v, "a number")
	return 0, false
}

func toNum(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return 0, false
		}
		return x, true
	case string:
		// Challenge ratings are the fractions among the numbers ("1/4").
		return lkv1.ParseChallengeRating(x)
	}
	return 0, false
}

func (r rec) int32(k string) int32 {
	f, ok := r.num(k)
	if !ok {
		return 0
	}
	return clampInt32(f)
}

func clampInt32(f float64) int32 {
	return int32(max(min(f, math.MaxInt32), math.MinInt32))
}

func (r rec) bool(k string) bool {
	switch x := r.get(k).(type) {
	case nil:
		return false
	case bool:
		return x
	default:
		r.bad(k, x, "true or false")
		return false
	}
}

func (r rec) sub(k string) (rec, bool) {
	switch x := r.get(k).(type) {
	case nil:
		return rec{}, false
	case edn.Map:
		return rec{m: x, d: r.d, where: r.where + " :" + k}, true
	default:
		r.bad(k, x, "a map")
		return rec{}, false
	}
}

// list reads a vector, list or set.
func (r rec) list(k string) []any {
	switch x := r.get(k).(type) {
	case nil:
		return nil
	case edn.Vector:
		return x
	case edn.Set:
		return x
	default:
		r.bad(k, x, "a vector")
		return nil
	}
}

// names reads a collection of names: a map whose true-valued keys count
// ({:wizard true :bard false}), a set or vector of keywords or strings, or
// one keyword or string. Names come back lower-case and sorted.
func (r rec) names(k string) []string {
	v := r.get(k)
	var out []string
	switch x := v.(type) {
	case nil:
		return nil
	case edn.Map:
		for key, val := range x {
			if t, ok := val.(bool); ok && !t || val == nil {
				continue
			}
			if n := nameOf(key); n != "" {
				out = append(out, n)
			}
		}
	case edn.Vector, edn.Set:
		var items []any
		if vv, ok := x.(edn.Vector); ok {
			items = vv
		} else {
			items = x.(edn.Set)
		}
		for _, e := range items {
			if n := nameOf(e); n != "" {
				out = append(out, n)
			}
		}
	case string, edn.Keyword:
		out = append(out, nameOf(x))
	default:
		r.bad(k, x, "a map, set or vector of names")
		return nil
	}
	sort.Strings(out)
	return out
}

func nameOf(v any) string {
	switch x := v.(type) {
	case edn.Keyword:
		return strings.ToLower(kwName(x))
	case string:
		return strings.ToLower(strings.TrimSpace(x))
	}
	return ""
}

// kwName is a keyword's name without its namespace:
// :orcpub.dnd.e5.character/str -> "str".
func kwName(k edn.Keyword) string {
	s := string(k)
	if i := strings.LastIndexByte(s, '/'); i >= 0 && i < len(s)-1 {
		return s[i+1:]
	}
	return s
}

// humanize turns a key name into words: "animal-handling" -> "Animal handling".
func humanize(s string) string {
	s = strings.TrimSpace(strings.ReplaceAll(s, "-", " "))
	if s == "" {
		return ""
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// details fills the kind's typed fields and text blocks.
func (d *decoder) details(e *lkv1.Entity, r rec) {
	switch e.GetKind() {
	case lkv1.Kind_KIND_SPELL:
		e.Details = &lkv1.Entity_Spell{Spell: spellDetails(r)}
	case lkv1.Kind_KIND_CREATURE:
		c, blocks := creatureDetails(r)
		e.Details = &lkv1.Entity_Creature{Creature: c}
		e.Blocks = blocks
	case lkv1.Kind_KIND_CLASS:
		e.Details = &lkv1.Entity_CharacterOption{CharacterOption: classDetails(r)}
		e.Blocks = append(traitBlocks(r, "traits", "feature"), builderBlocks(r, "feature")...)
	case lkv1.Kind_KIND_SUBCLASS:
		e.Details = &lkv1.Entity_CharacterOption{CharacterOption: d.parent(e, r, "class", lkv1.Kind_KIND_CLASS)}
		e.Blocks = append(traitBlocks(r, "traits", "feature"), builderBlocks(r, "feature")...)
	case lkv1.Kind_KIND_RACE:
		co := &lkv1.CharacterOptionDetails{Size: strings.ToLower(r.str("size")), Speed: r.int32("speed")}
		e.Details = &lkv1.Entity_CharacterOption{CharacterOption: co}
		e.Blocks = append(traitBlocks(r, "traits", "trait"), builderBlocks(r, "trait")...)
	case lkv1.Kind_KIND_SUBRACE:
		co := d.parent(e, r, "race", lkv1.Kind_KIND_RACE)
		co.Speed = r.int32("speed")
		e.Details = &lkv1.Entity_CharacterOption{CharacterOption: co}
		e.Blocks = append(traitBlocks(r, "traits", "trait"), builderBlocks(r, "trait")...)
	case lkv1.Kind_KIND_BACKGROUND:
		e.Details = &lkv1.Entity_CharacterOption{CharacterOption: &lkv1.CharacterOptionDetails{}}
		e.Blocks = append(traitBlocks(r, "traits", "benefit"), builderBlocks(r, "benefit")...)
	case lkv1.Kind_KIND_FEAT:
		e.Details = &lkv1.Entity_CharacterOption{CharacterOption: &lkv1.CharacterOptionDetails{Prerequisite: prerequisite(r)}}
		e.Blocks = append(traitBlocks(r, "traits", "benefit"), builderBlocks(r, "benefit")...)
	case lkv1.Kind_KIND_INVOCATION, lkv1.Kind_KIND_BOON:
		e.Details = &lkv1.Entity_CharacterOption{CharacterOption: &lkv1.CharacterOptionDetails{Prerequisite: prerequisite(r)}}
	case lkv1.Kind_KIND_SELECTION:
		e.Details = &lkv1.Entity_CharacterOption{CharacterOption: &lkv1.CharacterOptionDetails{}}
		e.Blocks = traitBlocks(r, "options", "option")
	case lkv1.Kind_KIND_ENCOUNTER:
		e.Blocks = encounterBlocks(r)
	case lkv1.Kind_KIND_MAGIC_ITEM, lkv1.Kind_KIND_WEAPON, lkv1.Kind_KIND_ARMOR:
		e.Details = &lkv1.Entity_Item{Item: itemDetails(e.GetKind(), r)}
	}
}

var (
	gpCost   = regexp.MustCompile(`(?i)([\d,]+(?:\.\d+)?)\s*gp`)
	consumes = regexp.MustCompile(`(?i)\bconsume`)
)

func spellDetails(r rec) *lkv1.SpellDetails {
	s := &lkv1.SpellDetails{
		Level:         r.int32("level"),
		School:        strings.ToLower(r.str("school")),
		Classes:       r.names("spell-lists"),
		Ritual:        r.bool("ritual"),
		Concentration: r.bool("concentration"),
		CastingTime:   r.str("casting-time"),
		Range:         r.str("range"),
		Duration:      r.str("duration"),
		AttackRoll:    r.bool("attack-roll?"),
	}
	if strings.Contains(strings.ToLower(s.Duration), "concentration") {
		s.Concentration = true
	}
	s.CastingTimeKey = lkv1.CastingTimeKey(s.CastingTime)
	comp, ok := r.sub("components")
	if !ok {
		comp = r // some exports put the component flags on the spell itself
	}
	s.Verbal = comp.bool("verbal")
	s.Somatic = comp.bool("somatic")
	s.Material = comp.bool("material")
	s.MaterialSpecified = strings.TrimSpace(comp.str("material-component"))
	if s.MaterialSpecified != "" {
		s.Material = true
		if m := gpCost.FindStringSubmatch(s.MaterialSpecified); m != nil {
			if f, err := strconv.ParseFloat(strings.ReplaceAll(m[1], ",", ""), 64); err == nil {
				s.MaterialCostGp = &f
			}
		}
		s.MaterialConsumed = consumes.MatchString(s.MaterialSpecified)
	}
	if save := r.str("save"); save != "" {
		s.SavingThrowAbility = lkv1.AbilityName(save)
	}
	return s
}

// traitTypes maps OrcPub's monster trait :type to TextBlock types.
var traitTypes = map[string]string{
	"":                 "trait",
	"trait":            "trait",
	"other":            "trait",
	"action":           "action",
	"bonus-action":     "bonus_action",
	"b-action":         "bonus_action",
	"reaction":         "reaction",
	"legendary-action": "legendary_action",
	"lair-action":      "lair_action",
	"mythic-action":    "mythic_action",
}

func creatureDetails(r rec) (*lkv1.CreatureDetails, []*lkv1.TextBlock) {
	c := &lkv1.CreatureDetails{
		Type:        strings.ToLower(r.str("type")),
		Subtype:     strings.Join(r.names("subtypes"), ", "),
		Size:        strings.ToLower(r.str("size")),
		Alignment:   r.str("alignment"),
		ArmorClass:  r.int32("armor-class"),
		ArmorDetail: r.str("armor-notes"),
		Senses:      r.str("senses"),
	}
	if cr, ok := r.num("challenge"); ok && cr >= 0 {
		c.ChallengeRating = cr
		c.ChallengeRatingText = lkv1.ChallengeRatingText(cr)
	}
	switch hp := r.get("hit-points").(type) {
	case edn.Map:
		h := rec{m: hp, d: r.d, where: r.where + " :hit-points"}
		die, count, mod := h.int32("die"), h.int32("die-count"), h.int32("modifier")
		if die > 0 && count > 0 {
			c.HitDice = fmt.Sprintf("%dd%d", count, die)
			if mod != 0 {
				c.HitDice += fmt.Sprintf("%+d", mod)
			}
			c.HitPoints = clampInt32(math.Floor(float64(count)*float64(die+1)/2) + float64(mod))
		} else if mod > 0 {
			c.HitPoints = mod
		}
	default:
		c.HitPoints = r.int32("hit-points")
	}
	switch sp := r.get("speed").(type) {
	case string:
		c.SpeedText = sp
		c.Speed = parseSpeed(sp)
	case int64, float64:
		c.Speed = map[string]int32{"walk": r.int32("speed")}
		c.SpeedText = fmt.Sprintf("%d ft.", c.Speed["walk"])
	case edn.Map:
		c.Speed = map[string]int32{}
		var parts []string
		for _, k := range sortedKeys(sp) {
			mode := nameOf(k)
			f, ok := toNum(sp[k])
			if b, isBool := sp[k].(bool); isBool && b && mode == "hover" {
				f, ok = 1, true
			}
			if mode == "" || !ok {
				continue
			}
			c.Speed[mode] = clampInt32(f)
			if mode != "hover" {
				parts = append(parts, fmt.Sprintf("%s %s ft.", mode, strconv.FormatFloat(f, 'f', -1, 64)))
			}
		}
		c.SpeedText = strings.Join(parts, ", ")
	case nil:
	default:
		r.bad("speed", sp, "text or a map of speeds")
	}
	ab := r
	if sub, ok := r.sub("abilities"); ok {
		ab = sub
	}
	c.AbilityScores = &lkv1.AbilityScores{
		Strength: ab.int32("str"), Dexterity: ab.int32("dex"), Constitution: ab.int32("con"),
		Intelligence: ab.int32("int"), Wisdom: ab.int32("wis"), Charisma: ab.int32("cha"),
	}
	c.SavingThrows = bonusMap(r, "saving-throws", lkv1.AbilityName)
	c.Skills = bonusMap(r, "skills", strings.ToLower)
	props, _ := r.sub("props")
	if props.m != nil {
		c.DamageVulnerabilities = props.names("damage-vulnerability")
		c.DamageResistances = props.names("damage-resistance")
		c.DamageImmunities = props.names("damage-immunity")
		c.ConditionImmunities = props.names("condition-immunity")
	}
	c.Languages = r.str("languages")
	if c.Languages == "" && props.m != nil {
		var langs []string
		for _, l := range props.names("language") {
			langs = append(langs, humanize(l))
		}
		c.Languages = strings.Join(langs, ", ")
	}
	c.PassivePerception = r.int32("passive-perception")
	c.ExperiencePoints = r.int32("xp")
	if c.ExperiencePoints == 0 && c.ChallengeRatingText != "" {
		// OrcBrew files rarely say it (OrcPub works it out from the
		// challenge rating): without it a homebrew monster has no XP on
		// its card and no place in plan_encounter.
		c.ExperiencePoints, _ = lkv1.ChallengeRatingXP(c.ChallengeRating)
	}

	var blocks []*lkv1.TextBlock
	for i, t := range r.list("traits") {
		tm, ok := t.(edn.Map)
		if !ok {
			r.d.warnf("%s: ignored trait %d: %s, want a map", r.where, i+1, typeName(t))
			continue
		}
		tr := rec{m: tm, d: r.d, where: fmt.Sprintf("%s trait %d", r.where, i+1)}
		typ, ok := traitTypes[strings.ToLower(tr.str("type"))]
		if !ok {
			typ = "trait"
		}
		if b := textBlock(tr, typ); b != nil {
			blocks = append(blocks, b)
		}
	}
	for _, k := range []struct{ field, typ, name string }{
		{"actions", "action", "Actions"},
		{"reactions", "reaction", "Reactions"},
		{"legendary-actions", "legendary_action", "Legendary Actions"},
		{"lair-actions", "lair_action", "Lair Actions"},
	} {
		switch x := r.get(k.field).(type) {
		case edn.Map: // {:description "..."}: one block of prose
			b := textBlock(rec{m: x, d: r.d, where: r.where + " :" + k.field}, k.typ)
			if b != nil {
				if b.Name == "" {
					b.Name = k.name
				}
				blocks = append(blocks, b)
			}
		case edn.Vector:
			for _, t := range x {
				if tm, ok := t.(edn.Map); ok {
					if b := textBlock(rec{m: tm, d: r.d, where: r.where + " :" + k.field}, k.typ); b != nil {
						blocks = append(blocks, b)
					}
				}
			}
		}
	}
	for _, b := range blocks {
		c.HasLegendaryActions = c.HasLegendaryActions || b.Type == "legendary_action"
		c.HasLairActions = c.HasLairActions || b.Type == "lair_action"
	}
	return c, blocks
}

var speedPart = regexp.MustCompile(`(?i)(?:\b(walk|fly|swim|climb|burrow)\s+)?(\d+)\s*(?:ft|feet|')`)

// parseSpeed reads "30 ft., fly 60 ft. (hover)" into speeds by mode.
func parseSpeed(s string) map[string]int32 {
	out := map[string]int32{}
	for _, m := range speedPart.FindAllStringSubmatch(s, -1) {
		mode := strings.ToLower(m[1])
		if mode == "" {
			mode = "walk"
		}
		if n, err := strconv.Atoi(m[2]); err == nil {
			if _, dup := out[mode]; !dup {
				out[mode] = clampInt32(float64(n))
			}
		}
	}
	if strings.Contains(strings.ToLower(s), "hover") {
		out["hover"] = 1
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func bonusMap(r rec, k string, key func(string) string) map[string]int32 {
	sub, ok := r.sub(k)
	if !ok {
		return nil
	}
	out := map[string]int32{}
	for kk, v := range sub.m {
		name := nameOf(kk)
		f, ok := toNum(v)
		if name == "" || !ok {
			continue
		}
		out[key(name)] = clampInt32(f)
	}
	return out
}

// textBlock reads {:name :description :level}; nil when it has neither
// name nor text.
func textBlock(r rec, typ string) *lkv1.TextBlock {
	b := &lkv1.TextBlock{
		Type:  typ,
		Name:  strings.TrimSpace(r.str("name")),
		Text:  strings.TrimSpace(r.str("description")),
		Level: r.int32("level"),
	}
	if b.Name == "" && b.Text == "" {
		return nil
	}
	return b
}

// featureActions are the :type of a class's or race's trait that name
// the action it takes; :other and none are plain features.
var featureActions = map[string]string{
	"action": "Action", "bonus-action": "Bonus Action", "b-action": "Bonus Action", "reaction": "Reaction",
}

// traitBlocks reads a vector of {:name :description} maps as blocks.
func traitBlocks(r rec, field, typ string) []*lkv1.TextBlock {
	var blocks []*lkv1.TextBlock
	for i, t := range r.list(field) {
		tm, ok := t.(edn.Map)
		if !ok {
			r.d.warnf("%s: ignored %s entry %d: %s, want a map", r.where, field, i+1, typeName(t))
			continue
		}
		tr := rec{m: tm, d: r.d, where: fmt.Sprintf("%s %s %d", r.where, field, i+1)}
		b := textBlock(tr, typ)
		if b == nil {
			r.d.warnf("%s: ignored %s entry %d: no name and no description", r.where, field, i+1)
			continue
		}
		// A feature used as an action says so after its name, as a
		// class's text prints it: "Waymark (Action)".
		if a := featureActions[strings.ToLower(tr.str("type"))]; a != "" && b.Name != "" {
			b.Name += " (" + a + ")"
		}
		blocks = append(blocks, b)
	}
	return blocks
}

func classDetails(r rec) *lkv1.CharacterOptionDetails {
	co := &lkv1.CharacterOptionDetails{}
	if hd := r.int32("hit-die"); hd > 0 {
		co.HitDice = fmt.Sprintf("d%d", hd)
	}
	if sc, ok := r.sub("spellcasting"); ok {
		switch f, _ := sc.num("level-factor"); f {
		case 1:
			co.CasterType = "FULL"
		case 2:
			co.CasterType = "HALF"
		case 3:
			co.CasterType = "THIRD"
		default:
			co.CasterType = "OTHER"
		}
	} else {
		co.CasterType = "NONE"
	}
	if profs, ok := r.sub("profs"); ok {
		for _, a := range profs.names("save") {
			co.SavingThrows = append(co.SavingThrows, lkv1.AbilityName(a))
		}
	}
	return co
}

// parent notes the class of a subclass (the race of a subrace) to link
// once the whole file is read.
func (d *decoder) parent(e *lkv1.Entity, r rec, field string, kind lkv1.Kind) *lkv1.CharacterOptionDetails {
	co := &lkv1.CharacterOptionDetails{}
	var key string
	switch x := r.get(field).(type) {
	case edn.Keyword:
		key = string(x)
	case string:
		key = strings.TrimSpace(x)
	case nil:
		return co
	default:
		r.bad(field, x, "a keyword")
		return co
	}
	co.ParentName = humanize(kwName(edn.Keyword(key)))
	d.parents = append(d.parents, parentRef{e: e, parentKind: kind, parentKey: key})
	return co
}

// prerequisite writes a feat's :prereqs (abilities, armor, spellcasting)
// and :prerequisite text as one line.
func prerequisite(r rec) string {
	if s := strings.TrimSpace(r.str("prerequisite")); s != "" {
		return s
	}
	var parts []string
	for _, p := range r.names("prereqs") {
		parts = append(parts, humanize(lkv1.AbilityName(p)))
	}
	// :path-prereqs {:race {:elf true ...}}: the races (or other paths)
	// that may take the feat.
	if pp, ok := r.get("path-prereqs").(edn.Map); ok {
		for _, k := range sortedKeys(pp) {
			if s := words(pp[k]); s != "" {
				parts = append(parts, humanize(nameOf(k))+": "+s)
			}
		}
	}
	return strings.Join(parts, ", ")
}

func encounterBlocks(r rec) []*lkv1.TextBlock {
	var blocks []*lkv1.TextBlock
	for _, c := range r.list("creatures") {
		cm, ok := c.(edn.Map)
		if !ok {
			continue
		}
		cr := rec{m: cm, d: r.d, where: r.where + " creature"}
		inner, ok := cr.sub("creature")
		if !ok {
			continue
		}
		n := inner.int32("num")
		who := humanize(inner.str("monster"))
		if who == "" {
			continue
		}
		text := who
		if n > 0 {
			text = fmt.Sprintf("%d × %s", n, who)
		}
		blocks = append(blocks, &lkv1.TextBlock{Type: "creature", Name: who, Text: text})
	}
	return blocks
}

func itemDetails(kind lkv1.Kind, r rec) *lkv1.ItemDetails {
	it := &lkv1.ItemDetails{
		Category: lkv1.Slugify(r.str("type")),
		IsMagic:  kind == lkv1.Kind_KIND_MAGIC_ITEM,
		Rarity:   strings.ReplaceAll(strings.ToLower(r.str("rarity")), "-", " "),
	}
	switch a := r.get("attunement").(type) {
	case nil:
	case bool:
		it.RequiresAttunement = a
	default:
		it.RequiresAttunement = true
		var who []string
		for _, n := range r.names("attunement") {
			if n != "any" {
				who = append(who, humanize(n))
			}
		}
		if len(who) > 0 {
			it.AttunementDetail = "by a " + strings.Join(who, ", ")
		}
	}
	if f, ok := r.num("cost"); ok {
		it.CostGp = &f
	}
	if f, ok := r.num("weight"); ok {
		it.WeightLb = &f
	}
	switch kind {
	case lkv1.Kind_KIND_WEAPON:
		it.Category = "weapon"
		w := &lkv1.WeaponStats{DamageType: strings.ToLower(r.str("damage-type"))}
		if n, die := r.int32("damage-die-count"), r.int32("damage-die"); die > 0 {
			w.DamageDice = fmt.Sprintf("%dd%d", max(n, 1), die)
		}
		if v := r.int32("versatile-die"); v > 0 {
			w.VersatileDice = fmt.Sprintf("%dd%d", max(r.int32("damage-die-count"), 1), v)
		}
		for _, p := range []string{"finesse", "light", "heavy", "reach", "thrown", "two-handed", "ammunition", "loading", "versatile"} {
			if r.get(p+"?") == true || r.get(p) == true || (p == "versatile" && w.VersatileDice != "") {
				w.Properties = append(w.Properties, p)
			}
		}
		w.IsRanged = r.get("ranged?") == true || strings.EqualFold(r.str("type"), "ranged")
		w.IsSimple = strings.EqualFold(r.str("category"), "simple")
		if rg, ok := r.sub("range"); ok {
			w.RangeNormal, w.RangeLong = rg.int32("min"), rg.int32("max")
		}
		it.Weapon = w
	case lkv1.Kind_KIND_ARMOR:
		it.Category = "armor"
		a := &lkv1.ArmorStats{Category: strings.ToLower(r.str("type")), AcBase: r.int32("base-ac")}
		if md, ok := r.num("max-dex-mod"); ok {
			a.AcAddDex, a.AcMaxDex = true, clampInt32(md)
		}
		a.StealthDisadvantage = r.get("stealth-disadvantage?") == true
		a.StrengthRequired = r.int32("min-str")
		it.Armor = a
	}
	return it
}
