package open5e

import (
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"lorekeeper.dev/ingest"
	"lorekeeper.dev/ingest/srddb"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// The SRD 5.1 cross-check: every SRD 5.1 creature, spell, magic item,
// weapon, armor, gear, condition and class compared field by field with a
// second, independent transcription of the same book (srddb, the 5e-bits
// project's 5e-database). Where the two agree, two transcriptions vouch for
// the fact. Where they disagree, the SRD's own text decides (the entity's
// own text or its other fields, read by the rules in srdrules.go, or, for
// what no rule reads, the reviewed decisions of srdDecisions with the SRD's
// wording): the entity takes the transcription's value, recorded as a
// Correction based on "srd", or keeps its own. A disagreement neither
// decides is unresolved, and the cross-check test fails on it.

// srdDocument is the v2 document of SRD 5.1.
const srdDocument = "srd-2014"

// srdField is one field of one entity as each transcription gives it,
// written the same way for both ("2d10+8 piercing", "dexterity +6").
type srdField struct {
	kind, field string
	// entity is the entity's slug.
	entity string
	// subject is what the field belongs to: a block's name, or "".
	subject      string
	ours, theirs string
	// set makes the entity's field the transcription's value; nil where
	// the field is only compared (a text). setTo makes it a value a
	// decision gives.
	set   func()
	setTo func(string)
	// lines are the transcription's text as it gives it, for a text.
	lines []string
}

// srdVerdict is how a disagreement is settled.
type srdVerdict int

const (
	srdAgree      srdVerdict = iota
	srdCorrected             // the entity took the transcription's value
	srdKept                  // the entity's value is the SRD's; the transcription errs
	srdUnresolved            // nothing decides it
)

// SRDTally counts one field's comparisons.
type SRDTally struct {
	Agree, Corrected, Kept, Unresolved int
	// Examples are the first disagreements of each verdict.
	Examples []string
}

// SRDReport is the cross-check's tally by kind and field.
type SRDReport map[string]map[string]*SRDTally

func (r SRDReport) add(f srdField, v srdVerdict, why string) {
	if r[f.kind] == nil {
		r[f.kind] = map[string]*SRDTally{}
	}
	t := r[f.kind][f.field]
	if t == nil {
		t = &SRDTally{}
		r[f.kind][f.field] = t
	}
	switch v {
	case srdAgree:
		t.Agree++
		return
	case srdCorrected:
		t.Corrected++
	case srdKept:
		t.Kept++
	case srdUnresolved:
		t.Unresolved++
	}
	if len(t.Examples) < 400 {
		what := map[srdVerdict]string{srdCorrected: "corrected", srdKept: "kept", srdUnresolved: "unresolved"}[v]
		ours, theirs := f.ours, f.theirs
		if len(ours) > 120 || len(theirs) > 120 {
			ours, theirs = wordDiff(ours, theirs)
		}
		t.Examples = append(t.Examples, fmt.Sprintf("%s %s %s %s: ours %q, theirs %q (%s)", what, f.entity, f.subject, f.field, ours, theirs, why))
	}
}

// Unresolved is the number of disagreements nothing decides.
func (r SRDReport) Unresolved() int {
	n := 0
	for _, fields := range r {
		for _, t := range fields {
			n += t.Unresolved
		}
	}
	return n
}

// Kinds are the kinds compared, in order.
func (r SRDReport) Kinds() []string { return slices.Sorted(maps.Keys(r)) }

// Disagreements are the disagreements of a kind, each with its verdict
// first ("corrected", "kept", "unresolved").
func (r SRDReport) Disagreements(kind string) []string {
	var out []string
	for _, field := range slices.Sorted(maps.Keys(r[kind])) {
		out = append(out, r[kind][field].Examples...)
	}
	return out
}

// Compared is the number of comparisons.
func (r SRDReport) Compared() int {
	n := 0
	for _, fields := range r {
		for _, t := range fields {
			n += t.Agree + t.Corrected + t.Kept + t.Unresolved
		}
	}
	return n
}

// Table writes the tally: per kind and field, the comparisons that agree,
// those the entity took the transcription's value for, those where the
// entity's value stands, those unresolved.
func (r SRDReport) Table() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-10s %-26s %7s %9s %5s %10s\n", "kind", "field", "agree", "corrected", "kept", "unresolved")
	for _, kind := range slices.Sorted(maps.Keys(r)) {
		for _, field := range slices.Sorted(maps.Keys(r[kind])) {
			t := r[kind][field]
			fmt.Fprintf(&b, "%-10s %-26s %7d %9d %5d %10d\n", kind, field, t.Agree, t.Corrected, t.Kept, t.Unresolved)
		}
	}
	return b.String()
}

// CrossCheckSRD compares the SRD 5.1 entities of es with the second
// transcription and settles each disagreement (see the top of this file);
// v1 are Open5e's v1 entities of the book (the other source), or nil. It
// changes the entities it corrects, and returns them and the report. A
// disagreement already settled (the catalogue checked a second time) is
// counted as it was settled.
func CrossCheckSRD(db *srddb.DB, es, v1 []*lkv1.Entity) ([]*lkv1.Entity, SRDReport) {
	r := SRDReport{}
	others := map[string]*lkv1.Entity{}
	for _, e := range v1 {
		if e.GetDocument().GetKey() == srdV1Document || e.GetDocument().GetKey() == srdDocument {
			others[e.GetKind().String()+"\x00"+e.GetSlug()] = e
		}
	}
	var changed []*lkv1.Entity
	for _, e := range es {
		if e.GetDocument().GetKey() != srdDocument || e.GetDocument().GetSource() != lkv1.Source_SOURCE_OPEN5E_V2 {
			continue
		}
		fields, text := srdFields(db, e)
		ev := srdEvidence{text: text, other: map[string]string{}}
		if o := others[e.GetKind().String()+"\x00"+e.GetSlug()]; o != nil {
			of, _ := srdFields(db, o)
			for _, f := range of {
				ev.other[f.field+"\x00"+f.subject] = f.ours
			}
		}
		n := len(e.Corrections)
		for _, f := range fields {
			f.entity = e.GetSlug()
			if c := settled(e, f); c != nil {
				// Corrected by an earlier check: the value then, and why.
				f.ours = c.GetSourceValue()
				r.add(f, srdCorrected, strings.TrimPrefix(c.GetBasis(), "srd: "))
				continue
			}
			if f.ours == f.theirs {
				r.add(f, srdAgree, "")
				continue
			}
			o := decideSRD(e, f, ev)
			if o.set == nil {
				o.set, o.value = f.set, f.theirs
			}
			if o.verdict == srdCorrected {
				if o.set == nil {
					o.verdict, o.why = srdUnresolved, "no way to set the field: "+o.why
				} else {
					o.set()
					e.Corrections = append(e.Corrections, &lkv1.Correction{Subject: f.subject, Field: f.field,
						SourceValue: shortened(f.ours), CorrectedValue: shortened(o.value), Basis: "srd: " + o.why})
				}
			}
			r.add(f, o.verdict, o.why)
		}
		if len(e.Corrections) > n {
			changed = append(changed, e)
		}
	}
	return changed, r
}

// srdChecked are the v2 endpoints the cross-check reads, each with the v1
// endpoint of its kind, the other source ("" for none).
var srdChecked = map[string]string{"creatures": "monsters", "spells": "spells", "weapons": "weapons", "armor": "armor",
	"magicitems": "magicitems", "items": "", "conditions": "conditions", "classes": "classes"}

// SRDOtherSource is the v1 endpoint a resync of the v2 endpoint ep reads
// for the SRD 5.1 cross-check, if any.
func SRDOtherSource(ep Endpoint) (Endpoint, bool) {
	name, ok := srdChecked[ep.Name]
	if !ok || name == "" || ep.Version != "v2" {
		return Endpoint{}, false
	}
	for _, v1 := range V1Endpoints {
		if v1.Name == name {
			return v1, true
		}
	}
	return Endpoint{}, false
}

// crossCheckSRD runs CrossCheckSRD on es and gives the entities it changes
// their new content hash.
func crossCheckSRD(db *srddb.DB, es, v1 []*lkv1.Entity) error {
	changed, _ := CrossCheckSRD(db, es, v1)
	for _, e := range changed {
		h, err := ingest.ContentHash(e)
		if err != nil {
			return fmt.Errorf("cross-check %s: %w", e.GetKey(), err)
		}
		e.ContentHash = h
	}
	return nil
}

// shortened is a value as a correction records it: a text's words up to
// 120 characters.
func shortened(s string) string {
	s = strings.TrimSpace(s)
	if len(s) <= 120 {
		return s
	}
	return s[:strings.LastIndex(s[:117], " ")] + " …"
}

// srdV1Document is SRD 5.1's v1 document.
const srdV1Document = "wotc-srd"

// settled is the correction the cross-check made of f, on a catalogue
// checked before.
func settled(e *lkv1.Entity, f srdField) *lkv1.Correction {
	for _, c := range e.GetCorrections() {
		if strings.HasPrefix(c.GetBasis(), "srd: ") && c.GetField() == f.field && c.GetSubject() == f.subject {
			return c
		}
	}
	return nil
}

// srdEvidence is what decides a disagreement besides the two values: the
// entity's text, and the other source's value of each field (Open5e's v1
// record of the book), by field and subject.
type srdEvidence struct {
	text  string
	other map[string]string
}

// srdFields are e's fields beside the transcription's, and the texts that
// decide between them; nil when the transcription lacks e.
func srdFields(db *srddb.DB, e *lkv1.Entity) ([]srdField, string) {
	switch e.GetKind() {
	case lkv1.Kind_KIND_CREATURE:
		if m := db.Monsters[e.GetSlug()]; m != nil {
			return creatureFields(e, m), entityText(e)
		}
	case lkv1.Kind_KIND_SPELL:
		if s := db.Spells[e.GetSlug()]; s != nil {
			return spellFields(e, s), entityText(e)
		}
	case lkv1.Kind_KIND_MAGIC_ITEM:
		if m := magicItemOf(db, e); m != nil {
			return magicItemFields(e, m), entityText(e)
		}
	case lkv1.Kind_KIND_WEAPON, lkv1.Kind_KIND_ARMOR, lkv1.Kind_KIND_ITEM:
		if q := equipmentOf(db, e); q != nil {
			return equipmentFields(e, q), entityText(e)
		}
	case lkv1.Kind_KIND_CONDITION:
		if c := db.Conditions[e.GetSlug()]; c != nil {
			ours, theirs := texts(e.GetDescription(), strings.Join(c.Desc, "\n"))
			return []srdField{{kind: "condition", field: "text", ours: ours, theirs: theirs}}, ""
		}
	case lkv1.Kind_KIND_CLASS:
		if c := db.Classes[e.GetSlug()]; c != nil {
			return classFields(e, c, db.Levels[c.Index]), ""
		}
	}
	return nil, ""
}

// magicItemOf is the transcription's item e is, or of which e is a variant
// ("Flame Tongue (Longsword)" is Flame Tongue).
func magicItemOf(db *srddb.DB, e *lkv1.Entity) *srddb.MagicItem {
	if m := db.MagicItems[e.GetSlug()]; m != nil {
		return m
	}
	if base, _, ok := strings.Cut(e.GetName(), " ("); ok {
		return db.MagicItems[lkv1.Slugify(base)]
	}
	return nil
}

// equipmentOf is the transcription's weapon, armor or gear e is: by slug,
// or by name in reading order ("Crossbow, light" is the light crossbow).
func equipmentOf(db *srddb.DB, e *lkv1.Entity) *srddb.Equipment {
	for _, k := range []string{e.GetSlug(), e.GetSlug() + "-armor", strings.TrimSuffix(e.GetSlug(), "-armor")} {
		if q := db.Equipment[k]; q != nil {
			return q
		}
	}
	if a, b, ok := strings.Cut(e.GetName(), ", "); ok {
		return db.Equipment[lkv1.Slugify(b+" "+a)]
	}
	return nil
}

// itemLine is what a magic item's first line says: "Weapon (any sword),
// rare (requires attunement)".
var attunementWords = regexp.MustCompile(`(?i)\(requires attunement([^)]*)\)`)

func magicItemFields(e *lkv1.Entity, m *srddb.MagicItem) []srdField {
	it := e.GetItem()
	var out []srdField
	add := func(field, ours, theirs string, set func()) {
		out = append(out, srdField{kind: "magic-item", field: field, ours: ours, theirs: theirs, set: set})
	}
	line := ""
	if len(m.Desc) > 0 {
		line = m.Desc[0]
	}
	rarity := strings.ToLower(m.Rarity.Name)
	if rarity != "varies" {
		add("rarity", it.GetRarity(), rarity, func() { it.Rarity = rarity })
	}
	att := attunementWords.MatchString(line)
	add("attunement", strconv.FormatBool(it.GetRequiresAttunement()), strconv.FormatBool(att), func() { it.RequiresAttunement = att })
	desc := m.Desc
	if len(desc) > 0 {
		desc = desc[1:]
	}
	ours, theirs := texts(e.GetDescription(), strings.Join(desc, "\n"))
	if (e.GetSlug() != m.Index || m.Variant || len(m.Variants) > 0) && (wordsWithin(ours, theirs) || wordsWithin(theirs, ours)) {
		// An item of variants (Crystal Ball, Horn of Valhalla, Spell
		// Scroll): Open5e gives each variant the text about it, the
		// transcription the item's whole text.
		theirs = ours
	}
	out = append(out, srdField{kind: "magic-item", field: "text", ours: ours, theirs: theirs, lines: desc})
	return out
}

// wordsWithin reports whether every word of a is a word of b.
func wordsWithin(a, b string) bool {
	have := map[string]bool{}
	for _, w := range strings.Fields(b) {
		have[w] = true
	}
	for _, w := range strings.Fields(a) {
		if !have[w] {
			return false
		}
	}
	return true
}

func equipmentFields(e *lkv1.Entity, q *srddb.Equipment) []srdField {
	it := e.GetItem()
	kind := e.GetKind().Slug()
	var out []srdField
	add := func(field, ours, theirs string, set func()) {
		out = append(out, srdField{kind: kind, field: field, ours: ours, theirs: theirs, set: set})
	}
	// Open5e prices ammunition by the piece ("Crossbow bolt", 0.05 gp),
	// the transcription by the bundle (20 for 1 gp).
	per := 1.0
	if q.Quantity > 1 {
		per = float64(q.Quantity)
	}
	if q.Cost != nil {
		gp := q.Cost.Quantity * map[string]float64{"cp": 0.01, "sp": 0.1, "ep": 0.5, "gp": 1, "pp": 10}[q.Cost.Unit] / per
		add("cost", amount(it.GetCostGp()), amount(gp), func() { it.CostGp = &gp })
	}
	if q.Weight > 0 {
		w := q.Weight / per
		add("weight", amount(it.GetWeightLb()), amount(w), func() { it.WeightLb = &w })
	}
	if w := it.GetWeapon(); w != nil && q.WeaponCategory != "" {
		add("category", strconv.FormatBool(w.GetIsSimple()), strconv.FormatBool(q.WeaponCategory == "Simple"), nil)
		if q.Damage != nil {
			add("damage", w.GetDamageDice()+" "+w.GetDamageType(), q.Damage.DamageDice+" "+q.Damage.DamageType.Index, func() {
				w.DamageDice, w.DamageType = q.Damage.DamageDice, q.Damage.DamageType.Index
			})
		}
		var props []string
		for _, p := range q.Properties {
			if p.Index != "monk" && p.Index != "special" {
				props = append(props, p.Index)
			}
		}
		theirs := sortedSet(props)
		// "special-lance": the Lance's special rule, which the
		// transcription gives as text.
		ours := sortedSet(slices.DeleteFunc(slices.Clone(w.GetProperties()), func(p string) bool { return strings.HasPrefix(p, "special") }))
		add("properties", ours, theirs, func() {
			w.Properties = append(slices.DeleteFunc(w.Properties, func(p string) bool { return !strings.HasPrefix(p, "special") }), strings.Split(theirs, ", ")...)
		})
		rng := q.Range
		if q.ThrowRange != nil {
			rng = q.ThrowRange
		}
		if rng != nil && rng.Long > 0 {
			add("range", fmt.Sprintf("%d/%d", w.GetRangeNormal(), w.GetRangeLong()), fmt.Sprintf("%d/%d", rng.Normal, rng.Long), nil)
		}
		if q.TwoHandedDamage != nil {
			add("versatile", w.GetVersatileDice(), q.TwoHandedDamage.DamageDice, nil)
		}
	}
	if a := it.GetArmor(); a != nil && q.ArmorClass != nil {
		add("armor_category", a.GetCategory(), strings.ToLower(q.ArmorCategory), nil)
		maxDex := int32(0)
		if q.ArmorClass.MaxBonus != nil {
			maxDex = int32(*q.ArmorClass.MaxBonus)
		}
		add("armor_class", fmt.Sprintf("%d dex=%v max=%d", a.GetAcBase(), a.GetAcAddDex(), a.GetAcMaxDex()),
			fmt.Sprintf("%d dex=%v max=%d", q.ArmorClass.Base, q.ArmorClass.DexBonus, maxDex), nil)
		add("strength", itoa(a.GetStrengthRequired()), strconv.Itoa(q.StrMinimum), nil)
		add("stealth", strconv.FormatBool(a.GetStealthDisadvantage()), strconv.FormatBool(q.StealthDisadvantage), nil)
	}
	return out
}

// amount writes a cost or weight to the hundredth, a twentieth of a
// pound read as the same either way (1.5 lb. of 20 bolts).
func amount(f float64) string { return strconv.FormatFloat(math.Round(f*20)/20, 'f', 2, 64) }

func classFields(e *lkv1.Entity, c *srddb.Class, levels []*srddb.Level) []srdField {
	co := e.GetCharacterOption()
	var out []srdField
	add := func(field, ours, theirs string) {
		out = append(out, srdField{kind: "class", field: field, ours: ours, theirs: theirs})
	}
	add("hit_dice", co.GetHitDice(), fmt.Sprintf("d%d", c.HitDie))
	var saves []string
	for _, s := range c.SavingThrows {
		saves = append(saves, abilityAbbrev[s.Index])
	}
	add("saving_throws", sortedSet(co.GetSavingThrows()), sortedSet(saves))
	for _, l := range levels {
		var ours *lkv1.ClassLevel
		for _, x := range co.GetProgression().GetLevels() {
			if int(x.GetLevel()) == l.Level {
				ours = x
			}
		}
		add("proficiency_bonus", itoa(ours.GetProficiencyBonus()), strconv.Itoa(l.ProfBonus))
		var theirs []string
		for i := 1; i <= 9; i++ {
			if n := l.Spellcasting[fmt.Sprintf("spell_slots_level_%d", i)]; n > 0 {
				theirs = append(theirs, strconv.Itoa(n))
			}
		}
		var slots []string
		for _, n := range ours.GetSpellSlots() {
			if n > 0 {
				slots = append(slots, itoa(n))
			}
		}
		if i := slices.Index(co.GetProgression().GetColumns(), "Spell Slots"); i >= 0 && len(slots) == 0 && i < len(ours.GetValues()) {
			// The warlock's Pact Magic: a count of slots, all of one level.
			slots = append(slots, ours.GetValues()[i])
		}
		add("spell_slots", strings.Join(slots, " "), strings.Join(theirs, " "))
	}
	return out
}

// entityText is all e's text: its description and its blocks'.
func entityText(e *lkv1.Entity) string {
	var b strings.Builder
	b.WriteString(e.GetDescription())
	b.WriteString("\n")
	b.WriteString(e.GetHigherLevel())
	for _, bl := range e.GetBlocks() {
		b.WriteString("\n" + bl.GetName() + ". " + bl.GetText())
	}
	return b.String()
}

func itoa(n int32) string { return strconv.Itoa(int(n)) }

// feet reads "30 ft." as 30.
func feet(v any) int32 {
	switch x := v.(type) {
	case string:
		if f, ok := parseAmount(x); ok {
			return clampInt32(f)
		}
	case float64:
		return clampInt32(x)
	}
	return 0
}

var abilityAbbrev = map[string]string{"str": "strength", "dex": "dexterity", "con": "constitution", "int": "intelligence", "wis": "wisdom", "cha": "charisma"}

// bonuses writes a map of bonuses as "dexterity +6, wisdom +7" in key
// order.
func bonuses(m map[string]int32) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %+d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

// sortedSet writes a set of keys in order, once each.
func sortedSet(list []string) string {
	var out []string
	for _, x := range list {
		x = strings.ToLower(strings.TrimSpace(x))
		if x != "" && !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

func creatureFields(e *lkv1.Entity, m *srddb.Monster) []srdField {
	c := e.GetCreature()
	var out []srdField
	add := func(field, ours, theirs string, set func()) {
		out = append(out, srdField{kind: "creature", field: field, ours: ours, theirs: theirs, set: set})
	}
	typ, sub := strings.ToLower(m.Type), strings.ToLower(m.Subtype)
	if t, ok := strings.CutPrefix(typ, "swarm of "); ok {
		// "swarm of tiny beasts": a beast, of the swarm subtype, as
		// Open5e writes it ("Medium swarm of Tiny beasts").
		typ, sub = strings.TrimSuffix(strings.Fields(t)[len(strings.Fields(t))-1], "s"), "swarm"
	}
	add("size", c.GetSize(), strings.ToLower(m.Size), func() { c.Size = strings.ToLower(m.Size) })
	add("type", c.GetType(), typ, func() { c.Type = typ })
	add("subtype", strings.ToLower(c.GetSubtype()), sub, func() { c.Subtype = sub })
	add("alignment", strings.ToLower(c.GetAlignment()), strings.ToLower(m.Alignment), func() { c.Alignment = m.Alignment })
	if len(m.ArmorClass) > 0 {
		// The forms the transcription lists: "natural 15" and "armor 17"
		// for the book's "17 (natural armor, shield)", "natural 14" and
		// "11 while prone", "12" and "15 with mage armor".
		ac := int32(m.ArmorClass[0].Value)
		for _, a := range m.ArmorClass {
			if int32(a.Value) == c.GetArmorClass() {
				ac = c.GetArmorClass()
			}
		}
		add("armor_class", itoa(c.GetArmorClass()), itoa(ac), func() { c.ArmorClass = ac })
	}
	add("hit_points", itoa(c.GetHitPoints()), strconv.Itoa(m.HitPoints), func() { c.HitPoints = int32(m.HitPoints) })
	add("hit_dice", normalizeDice(c.GetHitDice()), normalizeDice(m.HitPointsRoll), func() { c.HitDice = m.HitPointsRoll })
	speed := map[string]int32{}
	for mode, v := range m.Speed {
		if mode == "hover" {
			if b, _ := v.(bool); b {
				speed["hover"] = 1
			}
			continue
		}
		if n := feet(v); n > 0 {
			speed[mode] = n
		}
	}
	add("speed", bonuses(c.GetSpeed()), bonuses(speed), func() { c.Speed = speed })
	a := c.GetAbilityScores()
	theirs := &lkv1.AbilityScores{Strength: int32(m.Strength), Dexterity: int32(m.Dexterity), Constitution: int32(m.Constitution),
		Intelligence: int32(m.Intelligence), Wisdom: int32(m.Wisdom), Charisma: int32(m.Charisma)}
	add("ability_scores", abilityLine(a), abilityLine(theirs), func() { c.AbilityScores = theirs })
	saves, skills := map[string]int32{}, map[string]int32{}
	for _, p := range m.Proficiencies {
		switch k := p.Proficiency.Index; {
		case strings.HasPrefix(k, "saving-throw-"):
			saves[abilityAbbrev[strings.TrimPrefix(k, "saving-throw-")]] = int32(p.Value)
		case strings.HasPrefix(k, "skill-"):
			skills[strings.ReplaceAll(strings.TrimPrefix(k, "skill-"), "-", "_")] = int32(p.Value)
		}
	}
	add("saving_throws", bonuses(c.GetSavingThrows()), bonuses(saves), func() { c.SavingThrows = saves })
	ourSkills := map[string]int32{}
	for k, v := range c.GetSkills() {
		ourSkills[strings.ReplaceAll(strings.ReplaceAll(k, " ", "_"), "-", "_")] = v
	}
	add("skills", bonuses(ourSkills), bonuses(skills), func() { c.Skills = skills })
	senses := map[string]int32{}
	for k, v := range m.Senses {
		if k == "passive_perception" {
			continue
		}
		senses[k] = feet(v)
	}
	add("senses", bonuses(sensesOf(c.GetSenses())), bonuses(senses), func() {
		// As the transcription words each: "blindsight 30 ft. or 10 ft.
		// while deafened (blind beyond this radius)".
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(m.Senses)) {
			if v, ok := m.Senses[k].(string); ok && k != "passive_perception" {
				parts = append(parts, k+" "+v)
			}
		}
		parts = append(parts, fmt.Sprintf("passive Perception %d", c.GetPassivePerception()))
		c.Senses = strings.Join(parts, ", ")
	})
	if pp, ok := m.Senses["passive_perception"].(float64); ok {
		add("passive_perception", itoa(c.GetPassivePerception()), strconv.Itoa(int(pp)), func() {
			c.Senses = strings.ReplaceAll(c.Senses, fmt.Sprintf("passive Perception %d", c.GetPassivePerception()), fmt.Sprintf("passive Perception %d", int(pp)))
			c.PassivePerception = int32(pp)
		})
	}
	add("languages", ingest.Words(c.GetLanguages()), ingest.Words(m.Languages), nil)
	add("challenge_rating", strconv.FormatFloat(c.GetChallengeRating(), 'g', -1, 64), strconv.FormatFloat(m.ChallengeRating, 'g', -1, 64), func() {
		c.ChallengeRating, c.ChallengeRatingText = m.ChallengeRating, lkv1.ChallengeRatingText(m.ChallengeRating)
		c.ProficiencyBonus = proficiencyFor(m.ChallengeRating)
	})
	add("experience_points", itoa(c.GetExperiencePoints()), strconv.Itoa(m.XP), func() { c.ExperiencePoints = int32(m.XP) })
	var conds []string
	for _, r := range m.ConditionImmunities {
		conds = append(conds, r.Index)
	}
	add("condition_immunities", sortedSet(c.GetConditionImmunities()), sortedSet(conds), func() {
		c.ConditionImmunities = strings.Split(sortedSet(conds), ", ")
		c.ConditionImmunityEntries = []*lkv1.Defense{{Types: c.ConditionImmunities, Text: strings.Join(c.ConditionImmunities, ", ")}}
	})
	for _, d := range []struct {
		field   string
		list    *[]string
		entries *[]*lkv1.Defense
		theirs  []string
	}{
		{"damage_vulnerabilities", &c.DamageVulnerabilities, &c.DamageVulnerabilityEntries, m.DamageVulnerabilities},
		{"damage_resistances", &c.DamageResistances, &c.DamageResistanceEntries, m.DamageResistances},
		{"damage_immunities", &c.DamageImmunities, &c.DamageImmunityEntries, m.DamageImmunities},
	} {
		var theirs []*lkv1.Defense
		for _, line := range d.theirs {
			theirs = append(theirs, readDefenses(line, false).entries...)
		}
		add(d.field, defenseKey(*d.entries), defenseKey(theirs), func() {
			// The SRD's wording of a qualifier, where the entity had
			// it, over the transcription's ("from nonmagical attacks
			// not made with silvered weapons").
			for _, t := range theirs {
				for _, o := range c.GetDamageImmunityEntries() {
					if o.GetQualifier() != "" && qualifierClass(o.GetQualifier()) == qualifierClass(t.GetQualifier()) {
						t.Qualifier, t.Text = o.GetQualifier(), strings.Replace(t.GetText(), t.GetQualifier(), o.GetQualifier(), 1)
					}
				}
			}
			*d.entries, *d.list = theirs, typesOf(theirs)
		})
	}
	for _, group := range [][]*srddb.Action{m.Actions, m.LegendaryActions, m.Reactions, m.SpecialAbilities} {
		for _, act := range group {
			out = append(out, actionFields(e, act)...)
		}
	}
	return out
}

// actionFields compare the attack and saving throw of an action of the
// transcription with the block of e of the same name.
func actionFields(e *lkv1.Entity, act *srddb.Action) []srdField {
	b := blockByName(e, act.Name)
	if b == nil {
		return []srdField{{kind: "creature", field: "action", subject: act.Name, ours: "", theirs: act.Name}}
	}
	var out []srdField
	add := func(field, ours, theirs string) {
		out = append(out, srdField{kind: "creature", field: field, subject: act.Name, ours: ours, theirs: theirs})
	}
	if t := parseAttackText(b.GetText()); act.AttackBonus != nil && (t.hasToHit || *act.AttackBonus != 0) {
		// An attack bonus of 0 is the transcription's for an action that
		// makes no attack roll (the Octopus's Ink Cloud).
		ours := ""
		if t.hasToHit {
			ours = fmt.Sprintf("%+d", t.toHit)
		}
		add("to_hit", ours, fmt.Sprintf("%+d", *act.AttackBonus))
	}
	if len(act.Damage) > 0 {
		var theirs []string
		for _, d := range act.Damage {
			if d.DamageDice != "" {
				theirs = append(theirs, normalizeDice(d.DamageDice)+" "+d.DamageType.Index)
			}
		}
		var ours []string
		for _, h := range parseAttackText(b.GetText()).hits {
			for _, d := range append([]damage{h.main}, h.extras...) {
				ours = append(ours, d.amount.String()+" "+d.typ)
			}
		}
		if len(theirs) > 0 {
			// The transcription gives the hit's damage; the text also
			// the versatile grip's and a failed save's.
			ourSet := sortedSet(ours)
			if !slices.ContainsFunc(theirs, func(d string) bool { return !slices.Contains(ours, d) }) {
				ourSet = sortedSet(theirs)
			}
			add("damage", ourSet, sortedSet(theirs))
		}
	}
	if act.DC != nil {
		add("save", fmt.Sprintf("%s %d", b.GetSavingThrowAbility(), b.GetSavingThrowDc()),
			fmt.Sprintf("%s %d", abilityAbbrev[act.DC.Type.Index], act.DC.Value))
	}
	return out
}

// blockByName is e's block named name, ignoring what follows it in
// brackets ("Fire Breath (Recharge 5–6)").
func blockByName(e *lkv1.Entity, name string) *lkv1.TextBlock {
	var found *lkv1.TextBlock
	for _, b := range e.GetBlocks() {
		if actionName(b.GetName()) != actionName(name) {
			continue
		}
		if _, ref := NamedAction(b.GetText()); !ref {
			return b // the action, not a legendary action naming it
		}
		found = b
	}
	return found
}

func abilityLine(a *lkv1.AbilityScores) string {
	return fmt.Sprintf("%d %d %d %d %d %d", a.GetStrength(), a.GetDexterity(), a.GetConstitution(), a.GetIntelligence(), a.GetWisdom(), a.GetCharisma())
}

var senseText = regexp.MustCompile(`(?i)\b(blindsight|darkvision|tremorsense|truesight)\s+(\d+)`)

// sensesOf reads "darkvision 60 ft., passive Perception 10" as ranges by
// sense.
func sensesOf(s string) map[string]int32 {
	m := map[string]int32{}
	for _, x := range senseText.FindAllStringSubmatch(s, -1) {
		n, _ := strconv.Atoi(x[2])
		m[strings.ToLower(x[1])] = int32(n)
	}
	return m
}

// defenseKey writes a damage line as its types, each with what limits it
// as a class of qualifier ("slashing: nonmagical, silvered"), so that two
// wordings of one limit compare equal.
func defenseKey(entries []*lkv1.Defense) string {
	var parts []string
	for _, d := range entries {
		q := qualifierClass(d.GetQualifier())
		for _, t := range d.GetTypes() {
			if q != "" {
				t += ": " + q
			}
			parts = append(parts, t)
		}
		if len(d.GetTypes()) == 0 {
			parts = append(parts, "("+ingest.Words(d.GetText())+")")
		}
	}
	return sortedSet(parts)
}

// qualifierClass is what a qualifier limits a defense to, in a few words:
// "nonmagical", "nonmagical, silvered", "magic".
func qualifierClass(q string) string {
	if q == "" {
		return ""
	}
	l := strings.ToLower(q)
	var out []string
	if nonmagicWords.MatchString(l) {
		out = append(out, "nonmagical")
	} else if strings.Contains(l, "magic") {
		out = append(out, "magic")
	}
	for _, m := range []string{"silver", "adamantine"} {
		if strings.Contains(l, m) {
			out = append(out, m)
		}
	}
	if len(out) == 0 {
		return ingest.Words(q)
	}
	return strings.Join(out, ", ")
}

var nonmagicWords = regexp.MustCompile(`non-?\s?magic`)

func spellFields(e *lkv1.Entity, s *srddb.Spell) []srdField {
	sp := e.GetSpell()
	var out []srdField
	add := func(field, ours, theirs string, set func()) {
		out = append(out, srdField{kind: "spell", field: field, ours: ours, theirs: theirs, set: set})
	}
	add("level", itoa(sp.GetLevel()), strconv.Itoa(s.Level), func() { sp.Level = int32(s.Level) })
	add("school", sp.GetSchool(), s.School.Index, func() { sp.School = s.School.Index })
	var comp []string
	if sp.GetVerbal() {
		comp = append(comp, "v")
	}
	if sp.GetSomatic() {
		comp = append(comp, "s")
	}
	if sp.GetMaterial() {
		comp = append(comp, "m")
	}
	add("components", sortedSet(comp), sortedSet(s.Components), nil)
	mo, mt := texts(strings.TrimSuffix(sp.GetMaterialSpecified(), "."), strings.TrimSuffix(s.Material, "."))
	add("material", mo, mt, func() { sp.MaterialSpecified = s.Material })
	add("range", ingest.Words(sp.GetRange()), ingest.Words(s.Range), nil)
	// "Concentration, up to 1 minute": Open5e's v2 records keep the
	// concentration apart and drop the "up to".
	dur := func(d string) string {
		d = strings.TrimPrefix(strings.ToLower(d), "concentration, ")
		return ingest.Words(strings.TrimPrefix(d, "up to "))
	}
	add("duration", dur(sp.GetDuration()), dur(s.Duration), nil)
	add("concentration", strconv.FormatBool(sp.GetConcentration()), strconv.FormatBool(s.Concentration), func() { sp.Concentration = s.Concentration })
	add("ritual", strconv.FormatBool(sp.GetRitual()), strconv.FormatBool(s.Ritual), func() { sp.Ritual = s.Ritual })
	add("casting_time", ingest.Words(sp.GetCastingTime()), ingest.Words(s.CastingTime), nil)
	var classes []string
	for _, c := range s.Classes {
		classes = append(classes, c.Index)
	}
	out = append(out, srdField{kind: "spell", field: "classes", ours: sortedSet(sp.GetClasses()), theirs: sortedSet(classes),
		set:   func() { sp.Classes = strings.Split(sortedSet(classes), ", ") },
		setTo: func(v string) { sp.Classes = strings.Split(v, ", ") }})
	if s.Damage != nil && s.Damage.DamageType.Index != "" {
		t := s.Damage.DamageType.Index
		ours := t
		if !slices.Contains(sp.GetDamageTypes(), t) {
			ours = sortedSet(sp.GetDamageTypes())
		}
		add("damage_type", ours, t, func() { sp.DamageTypes = append(sp.DamageTypes, t) })
	}
	if s.DC != nil {
		a := abilityAbbrev[s.DC.Type.Index]
		add("saving_throw", sp.GetSavingThrowAbility(), a, func() { sp.SavingThrowAbility = a })
	}
	// A cantrip's growth is in its description in one transcription, in
	// its higher levels in the other: the texts are compared whole.
	ours, theirs := texts(e.GetDescription()+"\n"+e.GetHigherLevel(), strings.Join(append(slices.Clone(s.Desc), s.HigherLevel...), "\n"))
	out = append(out, srdField{kind: "spell", field: "text", ours: ours, theirs: theirs, lines: s.Desc})
	return out
}

// texts are two texts' words (as words writes them), the same when they
// differ only in spacing ("1st level" and "1stlevel", "thunder wave" and
// "thunderwave") or in a table's header words, which one transcription
// prints and the other leaves out.
func texts(a, b string) (string, string) {
	// Each transcription writes "GM" in places (5e-database in spells,
	// Open5e in magic items) where SRD 5.1 prints "DM".
	x, y := strings.ReplaceAll(ingest.Words(a), " gm ", " dm "), strings.ReplaceAll(ingest.Words(b), " gm ", " dm ")
	if strings.ReplaceAll(x, " ", "") == strings.ReplaceAll(y, " ", "") {
		return x, x
	}
	if d1, d2 := wordDiff(x, y); markupOnly(d1) && markupOnly(d2) {
		return x, x
	}
	return x, y
}

// headerWords are the words of a table's header or an item's heading that
// one transcription prints and the other leaves out ("| Level | Effect |",
// "Bronze Griffon (Rare)").
var headerWords = map[string]bool{"table": true, "level": true, "effect": true, "material": true, "duration": true,
	"d100": true, "race": true, "x": true, "rare": true, "uncommon": true, "very": true, "legendary": true, "common": true}

// markupOnly reports whether a wordDiff side's differing words are header
// words alone.
func markupOnly(d string) bool {
	_, mid, _ := strings.Cut(d, "[")
	mid, _, _ = strings.Cut(mid, "]")
	for _, w := range strings.Fields(mid) {
		if !headerWords[w] {
			return false
		}
	}
	return true
}

// wordDiff writes where two texts of words (as words writes them) differ:
// the words between their common beginning and end, with a few words of
// context. Equal texts give "".
func wordDiff(a, b string) (string, string) {
	x, y := strings.Fields(a), strings.Fields(b)
	i := 0
	for i < len(x) && i < len(y) && x[i] == y[i] {
		i++
	}
	j := 0
	for j < len(x)-i && j < len(y)-i && x[len(x)-1-j] == y[len(y)-1-j] {
		j++
	}
	if i == len(x) && i == len(y) {
		return "", ""
	}
	from := max(0, i-3)
	show := func(w []string) string {
		end := min(len(w), len(w)-j+3)
		return "…" + strings.Join(w[from:i], " ") + " [" + strings.Join(w[i:len(w)-j], " ") + "] " + strings.Join(w[len(w)-j:end], " ") + "…"
	}
	return show(x), show(y)
}
