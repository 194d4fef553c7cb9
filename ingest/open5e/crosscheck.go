package open5e

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// Open5e's structured fields sometimes contradict the record's own text:
// nearly every SRD 5.1 creature attack names "thunder" damage and drops the
// damage bonus, and a few spells carry another spell's damage and save. The
// text is what the book says, so it wins: the structured value is replaced
// by what the text says and the replacement is recorded on the entity as a
// Correction. When the text cannot be read, the structured value is dropped
// rather than shown beside a text that may contradict it.

// damageTypes are the damage types a text can name.
var damageTypes = lkv1.DamageTypes()

// dice is a damage amount: count dice of die sides plus bonus, or a flat
// amount when count is 0.
type dice struct {
	count, sides, bonus int
}

func (d dice) String() string {
	if d.count == 0 {
		return strconv.Itoa(d.bonus)
	}
	s := fmt.Sprintf("%dd%d", d.count, d.sides)
	if d.bonus != 0 {
		s += fmt.Sprintf("%+d", d.bonus)
	}
	return s
}

// damage is one damage clause: "19 (2d10 + 8) piercing damage".
type damage struct {
	amount dice
	typ    string
}

func (d damage) String() string { return strings.TrimSpace(d.amount.String() + " " + d.typ) }

// hit is one way an attack can deal damage: its main damage and what comes
// "plus" it.
type hit struct {
	main   damage
	extras []damage
}

func (h hit) String() string {
	s := h.main.String()
	for _, x := range h.extras {
		s += " plus " + x.String()
	}
	return s
}

// textAttack is what an attack action's text says.
type textAttack struct {
	toHit           int
	reach           int
	rangeN, rangeL  int
	hits            []hit
	hasToHit        bool
	hasReach        bool
	hasRange        bool
	hasRangeLong    bool
	parsedAnyDamage bool
}

var (
	toHitText  = regexp.MustCompile(`(?i)([+\-−–]\s?\d+)\s*to hit|attack roll:\s*([+\-−–]\s?\d+)`)
	reachText  = regexp.MustCompile(`(?i)\breach\s+(\d+)\s*(?:ft|feet)`)
	rangeText  = regexp.MustCompile(`(?i)\brange\s+(\d+)(?:\s*/\s*(\d+))?`)
	damageType = `(?:` + strings.Join(damageTypes, "|") + `)`
	// "19 (2d10 + 8) piercing damage", "1 piercing damage", "2 (1 + 1)
	// bludgeoning damage", "31 (5d8 + 9) bludgeoning, piercing, or slashing
	// damage".
	damageText = regexp.MustCompile(`(?i)(\d+)\s*(\([^()]*\))?\s+(` + damageType + `(?:\s*,\s*` + damageType + `)*(?:,?\s*or\s+` + damageType + `)?)\s+damage`)
	// "18 (3d6 + 8) plus 3 (1d6) poison damage": a main damage whose type
	// the text leaves out, before a typed one.
	untypedPlus = regexp.MustCompile(`(?i)(\d+)\s*(\([^()]*\))\s*,?\s*plus\s+$`)
	diceText    = regexp.MustCompile(`(?i)^\(\s*(\d+)\s*d\s*(\d+)\s*(?:([+\-−–])\s*(\d+))?\s*\)$`)
	plusBetween = regexp.MustCompile(`(?i)^[\s,]*(?:plus|and)\s*$`)
)

// signedInt reads "+14", "- 1", "−1".
func signedInt(s string) (int, bool) {
	s = strings.NewReplacer(" ", "", "−", "-", "–", "-").Replace(s)
	n, err := strconv.Atoi(strings.TrimPrefix(s, "+"))
	return n, err == nil
}

// parseAttackText reads an attack's text: to-hit, reach, range and the
// damage clauses, grouped into hits (a clause that follows another with
// only "plus" between them belongs to it).
func parseAttackText(text string) textAttack {
	var t textAttack
	if m := toHitText.FindStringSubmatch(text); m != nil {
		v := m[1]
		if v == "" {
			v = m[2]
		}
		t.toHit, t.hasToHit = signedInt(v)
	}
	if m := reachText.FindStringSubmatch(text); m != nil {
		t.reach, _ = strconv.Atoi(m[1])
		t.hasReach = true
	}
	if m := rangeText.FindStringSubmatch(text); m != nil {
		t.rangeN, _ = strconv.Atoi(m[1])
		t.hasRange = true
		if m[2] != "" {
			t.rangeL, _ = strconv.Atoi(m[2])
			t.hasRangeLong = true
		}
	}
	prevEnd := -1
	readAmount := func(total, parens string) dice {
		var a dice
		if dm := diceText.FindStringSubmatch(parens); dm != nil {
			a.count, _ = strconv.Atoi(dm[1])
			a.sides, _ = strconv.Atoi(dm[2])
			if dm[3] != "" {
				b, _ := strconv.Atoi(dm[4])
				if dm[3] != "+" {
					b = -b
				}
				a.bonus = b
			}
			return a
		}
		// A flat amount, with or without its sum in parentheses.
		a.bonus, _ = strconv.Atoi(total)
		return a
	}
	for _, m := range damageText.FindAllStringSubmatchIndex(text, -1) {
		sub := func(i int) string {
			if m[2*i] < 0 {
				return ""
			}
			return text[m[2*i]:m[2*i+1]]
		}
		d := damage{amount: readAmount(sub(1), sub(2)), typ: strings.ToLower(sub(3))}
		t.parsedAnyDamage = true
		if u := untypedPlus.FindStringSubmatch(text[max(prevEnd, 0):m[0]]); u != nil && diceText.MatchString(u[2]) {
			t.hits = append(t.hits, hit{main: damage{amount: readAmount(u[1], u[2])}, extras: []damage{d}})
		} else if prevEnd >= 0 && len(t.hits) > 0 && plusBetween.MatchString(text[prevEnd:m[0]]) {
			last := &t.hits[len(t.hits)-1]
			last.extras = append(last.extras, d)
		} else {
			t.hits = append(t.hits, hit{main: d})
		}
		prevEnd = m[1]
	}
	return t
}

// sourceAttack is one of the source's structured attacks.
type sourceAttack struct {
	toHit          int
	hasToHit       bool
	reach          int
	rangeN, rangeL int
	main           damage
	hasMain        bool
	extra          damage
	hasExtra       bool
}

func readSourceAttack(a obj) sourceAttack {
	var s sourceAttack
	if f, ok := a.num("to_hit_mod"); ok {
		s.toHit, s.hasToHit = int(f), true
	}
	if f, ok := a.num("reach"); ok && f > 0 {
		s.reach = int(f)
	}
	if f, ok := a.num("range"); ok && f > 0 {
		s.rangeN = int(f)
		if l, ok := a.num("long_range"); ok && l > 0 {
			s.rangeL = int(l)
		}
	}
	read := func(count, die, bonus, typ string) (damage, bool) {
		var d damage
		n, ok := a.num(count)
		if !ok || n <= 0 {
			return d, false
		}
		d.amount.count = int(n)
		d.amount.sides, _ = strconv.Atoi(strings.TrimPrefix(strings.ToLower(a.str(die)), "d"))
		if b, ok := a.num(bonus); ok {
			d.amount.bonus = int(b)
		}
		d.typ = a.keyOrName(typ)
		return d, true
	}
	s.main, s.hasMain = read("damage_die_count", "damage_die_type", "damage_bonus", "damage_type")
	s.extra, s.hasExtra = read("extra_damage_die_count", "extra_damage_die_type", "extra_damage_bonus", "extra_damage_type")
	if !s.hasMain {
		// A type without dice is still a claim about the damage.
		s.main.typ = a.keyOrName("damage_type")
	}
	// SRD 5.2 and Tome of Beasts records put the main damage's type in
	// extra_damage_type when there is no extra damage.
	if s.main.typ == "" && !s.hasExtra {
		s.main.typ = a.keyOrName("extra_damage_type")
	}
	return s
}

// summary writes the attack as a stat block does:
// "+9 to hit, reach 15 ft., 2d6+5 bludgeoning".
func (s sourceAttack) summary() string {
	var parts []string
	if s.hasToHit {
		parts = append(parts, fmt.Sprintf("%+d to hit", s.toHit))
	}
	if s.reach > 0 {
		parts = append(parts, fmt.Sprintf("reach %d ft.", s.reach))
	}
	if s.rangeN > 0 {
		r := fmt.Sprintf("range %d", s.rangeN)
		if s.rangeL > 0 {
			r += fmt.Sprintf("/%d", s.rangeL)
		}
		parts = append(parts, r+" ft.")
	}
	if s.hasMain {
		d := s.main.String()
		if s.hasExtra {
			d += " plus " + s.extra.String()
		}
		parts = append(parts, d)
	}
	return strings.Join(parts, ", ")
}

// summary writes what the text says, with the hits the structured attacks
// describe: "+14 to hit, reach 10 ft., 2d10+8 piercing plus 2d6 fire".
func (t textAttack) summary(hits []hit) string {
	var parts []string
	if t.hasToHit {
		parts = append(parts, fmt.Sprintf("%+d to hit", t.toHit))
	}
	var reach []string
	if t.hasReach {
		reach = append(reach, fmt.Sprintf("reach %d ft.", t.reach))
	}
	if t.hasRange {
		r := fmt.Sprintf("range %d", t.rangeN)
		if t.hasRangeLong {
			r += fmt.Sprintf("/%d", t.rangeL)
		}
		reach = append(reach, r+" ft.")
	}
	if len(reach) > 0 {
		parts = append(parts, strings.Join(reach, " or "))
	}
	var hs []string
	for _, h := range hits {
		if s := h.String(); !slices.Contains(hs, s) {
			hs = append(hs, s)
		}
	}
	if len(hs) > 0 {
		parts = append(parts, strings.Join(hs, " or "))
	}
	return strings.Join(parts, ", ")
}

// checkAttacks compares an action's structured attacks with its text and
// returns the attack summary to show and the corrections made. subject is
// the action's name.
func checkAttacks(subject, text string, attacks []obj) (string, []*lkv1.Correction) {
	if len(attacks) == 0 {
		return "", nil
	}
	src := make([]sourceAttack, len(attacks))
	var srcSummaries []string
	for i, a := range attacks {
		src[i] = readSourceAttack(a)
		if s := src[i].summary(); s != "" && !slices.Contains(srcSummaries, s) {
			srcSummaries = append(srcSummaries, s)
		}
	}
	srcSummary := strings.Join(srcSummaries, "; ")
	if strings.TrimSpace(text) == "" {
		// Nothing to check against.
		return srcSummary, nil
	}
	t := parseAttackText(text)
	hasDamage := slices.ContainsFunc(src, func(s sourceAttack) bool { return s.hasMain })
	if !t.hasToHit || (hasDamage && !t.parsedAnyDamage) {
		if srcSummary == "" {
			return "", nil
		}
		return "", []*lkv1.Correction{{Subject: subject, Field: "attack", SourceValue: srcSummary}}
	}

	var (
		fixes []*lkv1.Correction
		shown []hit
	)
	fix := func(field, from, to string) {
		if from == to {
			return
		}
		c := &lkv1.Correction{Subject: subject, Field: field, SourceValue: from, CorrectedValue: to}
		for _, f := range fixes {
			if f.Field == c.Field && f.SourceValue == c.SourceValue && f.CorrectedValue == c.CorrectedValue {
				return
			}
		}
		fixes = append(fixes, c)
	}
	for i, s := range src {
		if s.hasToHit {
			fix("to_hit", fmt.Sprintf("%+d", s.toHit), fmt.Sprintf("%+d", t.toHit))
		}
		if s.reach > 0 {
			to := ""
			if t.hasReach {
				to = fmt.Sprintf("%d ft.", t.reach)
			}
			fix("reach", fmt.Sprintf("%d ft.", s.reach), to)
		}
		if s.rangeN > 0 {
			from, to := rangeString(s.rangeN, s.rangeL), ""
			if t.hasRange {
				l := t.rangeL
				if !t.hasRangeLong {
					l = 0
				}
				to = rangeString(t.rangeN, l)
			}
			fix("range", from, to)
		}
		if len(t.hits) == 0 || (!s.hasMain && s.main.typ == "") {
			continue
		}
		h := matchHit(s, i, t.hits)
		if !slices.ContainsFunc(shown, func(x hit) bool { return x.String() == h.String() }) {
			shown = append(shown, h)
		}
		if s.hasMain && s.main.amount != h.main.amount {
			fix("damage", s.main.amount.String(), h.main.amount.String())
		}
		if s.main.typ != "" && !typeAgrees(s.main.typ, h.main.typ) {
			fix("damage_type", s.main.typ, h.main.typ)
		}
		if s.hasExtra {
			to := ""
			if len(h.extras) > 0 {
				to = h.extras[0].String()
			}
			fix("extra_damage", s.extra.String(), to)
		}
	}
	if len(shown) == 0 && len(t.hits) > 0 {
		shown = t.hits[:1]
	}
	return t.summary(shown), fixes
}

// typeAgrees reports whether the structured damage type is the text's, or
// one of the text's choices ("bludgeoning, piercing, or slashing").
func typeAgrees(structured, text string) bool {
	if structured == text {
		return true
	}
	choice := strings.Contains(text, ",") || strings.Contains(text, " or ")
	return choice && wordBoundary(structured).MatchString(text)
}

// matchHit picks the text's hit a structured attack describes: the one
// with the same dice, else the one at the same position, else the first.
func matchHit(s sourceAttack, i int, hits []hit) hit {
	for _, h := range hits {
		if h.main.amount.count == s.main.amount.count && h.main.amount.sides == s.main.amount.sides && h.main.amount.count > 0 {
			return h
		}
	}
	if i < len(hits) {
		return hits[i]
	}
	return hits[0]
}

func rangeString(n, l int) string {
	if l > 0 {
		return fmt.Sprintf("%d/%d ft.", n, l)
	}
	return fmt.Sprintf("%d ft.", n)
}

var (
	spellDamage  = regexp.MustCompile(`(?i)\b(\d+\s*d\s*\d+(?:\s*[+\-−–]\s*\d+)?)\s+(?:(` + strings.Join(damageTypes, "|") + `)\s+)?damage`)
	savingThrow  = regexp.MustCompile(`(?i)\b(strength|dexterity|constitution|intelligence|wisdom|charisma)\s+sav(?:ing throw|e)`)
	wordBoundary = func(w string) *regexp.Regexp { return regexp.MustCompile(`(?i)\b` + regexp.QuoteMeta(w) + `\b`) }
)

// normalizeDice writes "8 d 6 + 2" as "8d6+2" for comparison.
func normalizeDice(s string) string {
	return strings.ToLower(strings.NewReplacer(" ", "", "−", "-", "–", "-").Replace(s))
}

// checkSpell compares a spell's damage types, damage roll and saving
// throw with its text (the description, then the higher-level text),
// corrects them where they disagree and returns the corrections. A
// replacement is read from the description only: the higher-level text
// speaks of the extra damage.
func checkSpell(s *lkv1.SpellDetails, desc, higher string) []*lkv1.Correction {
	text := desc + "\n\n" + higher
	if strings.TrimSpace(text) == "" {
		return nil
	}
	var fixes []*lkv1.Correction
	fix := func(field, from, to string) {
		fixes = append(fixes, &lkv1.Correction{Field: field, SourceValue: from, CorrectedValue: to})
	}
	if s.DamageRoll != "" && healsWith(text, s.DamageRoll) && !dealsDamageWith(text, s.DamageRoll) {
		// Cure Wounds' "2d8" is the hit points it restores.
		fix("damage_roll", s.DamageRoll, "healing "+s.DamageRoll)
		s.HealingRoll, s.DamageRoll = s.DamageRoll, ""
	}
	if s.HealingRoll == "" {
		if m := healingText.FindStringSubmatch(desc); m != nil {
			s.HealingRoll = normalizeDice(m[1])
		}
	}
	if len(s.DamageTypes) > 0 {
		var kept []string
		dealt := dealtTypes(text)
		for _, d := range s.DamageTypes {
			// A type the text names only as an immunity, resistance or
			// vulnerability (Wall of Ice: "Immunity to Cold, Poison, and
			// Psychic damage") is not damage the spell deals.
			if dealt[d] || (wordBoundary(d).MatchString(text) && !defendedType(text, d)) {
				kept = append(kept, d)
			}
		}
		if len(kept) < len(s.DamageTypes) {
			if len(kept) == 0 {
				for _, m := range spellDamage.FindAllStringSubmatch(desc, -1) {
					if t := strings.ToLower(m[2]); t != "" && !slices.Contains(kept, t) {
						kept = append(kept, t)
					}
				}
			}
			fix("damage_types", strings.Join(s.DamageTypes, ", "), strings.Join(kept, ", "))
			s.DamageTypes = kept
		}
	}
	if s.DamageRoll != "" && !strings.Contains(normalizeDice(text), normalizeDice(s.DamageRoll)) {
		var rolls []string
		for _, m := range spellDamage.FindAllStringSubmatch(desc, -1) {
			if r := normalizeDice(m[1]); !slices.Contains(rolls, r) {
				rolls = append(rolls, r)
			}
		}
		to := strings.Join(rolls, " + ")
		fix("damage_roll", s.DamageRoll, to)
		s.DamageRoll = to
	}
	if a := s.SavingThrowAbility; a != "" && !wordBoundary(a).MatchString(text) {
		to := ""
		if m := savingThrow.FindStringSubmatch(desc); m != nil {
			to = strings.ToLower(m[1])
		}
		fix("saving_throw_ability", a, to)
		s.SavingThrowAbility = to
	}
	return fixes
}

// checkWeapon drops the damage of a weapon that deals none: the Net, whose
// record says "0" bludgeoning where SRD 5.1's table prints "—", which a
// card would show and a damage-type filter find.
func checkWeapon(w *lkv1.WeaponStats) []*lkv1.Correction {
	if d := w.GetDamageDice(); d != "0" && d != "—" && d != "-" {
		return nil
	}
	from := strings.TrimSpace(w.DamageDice + " " + w.DamageType)
	w.DamageDice, w.DamageType = "", ""
	return []*lkv1.Correction{{Field: "damage", SourceValue: from, CorrectedValue: "none"}}
}

var shieldName = regexp.MustCompile(`(?i)^shield$`)

// checkArmor corrects a shield filed under another armor category (SRD
// 5.2's Shield is "heavy" with "Armor Class: 2"): a shield is its own
// category and adds to AC, "+2". name is the armor's own name (a magic
// item's base armor: "Shield").
func checkArmor(a *lkv1.ArmorStats, name string) []*lkv1.Correction {
	if a == nil || !shieldName.MatchString(strings.TrimSpace(name)) {
		return nil
	}
	var fixes []*lkv1.Correction
	if a.Category != "shield" {
		fixes = append(fixes, &lkv1.Correction{Field: "armor_category", SourceValue: a.Category, CorrectedValue: "shield"})
		a.Category = "shield"
	}
	if a.AcBase > 0 && !a.AcAddDex {
		// Printed as a bonus, as the books do.
		a.AcDisplay = fmt.Sprintf("+%d", a.AcBase)
	}
	return fixes
}

// checkItemCategory files an item under what its stats make it: SRD 5.1's
// Mithral Armor (Half-Plate) says "weapon" with an armor's stats and no
// weapon's, and would answer "weapon" filters and print "Weapon" on its card.
func checkItemCategory(it *lkv1.ItemDetails) []*lkv1.Correction {
	to := ""
	switch {
	case it.Category == "weapon" && it.Armor != nil && it.Weapon == nil:
		to = "armor"
	case it.Category == "armor" && it.Weapon != nil && it.Armor == nil:
		to = "weapon"
	default:
		return nil
	}
	from := it.Category
	it.Category = to
	return []*lkv1.Correction{{Field: "category", SourceValue: from, CorrectedValue: to}}
}

// checkArmorText drops the stealth disadvantage and strength requirement
// of a magic armor whose text lifts them (Mithral Armor: "If the armor
// normally imposes disadvantage on Dexterity (Stealth) checks or has a
// Strength requirement, the mithral version of the armor doesn't."): the
// record gives the base armor's, which a card would print and a "no
// stealth disadvantage" filter believe.
func checkArmorText(a *lkv1.ArmorStats, desc string) []*lkv1.Correction {
	m := liftedArmor.FindStringSubmatch(desc)
	if a == nil || m == nil {
		return nil
	}
	var fixes []*lkv1.Correction
	if a.StealthDisadvantage {
		fixes = append(fixes, &lkv1.Correction{Field: "stealth", SourceValue: "disadvantage", CorrectedValue: "none"})
		a.StealthDisadvantage = false
	}
	if m[1] != "" && a.StrengthRequired > 0 {
		fixes = append(fixes, &lkv1.Correction{Field: "strength_requirement", SourceValue: fmt.Sprintf("Str %d", a.StrengthRequired), CorrectedValue: "none"})
		a.StrengthRequired = 0
	}
	return fixes
}

// liftedArmor is a magic armor's text lifting its base armor's stealth
// disadvantage (and, when group 1 is set, its strength requirement).
var liftedArmor = regexp.MustCompile(`(?i)normally imposes disadvantage on dexterity \(stealth\) checks( or has a strength requirement)?, (?:the \w+ version of the armor|this version of the armor|this armor) does(?:n['’]t| not)|you don['’]t have disadvantage on dexterity \(stealth\) checks as a result of wearing`)

var (
	// "regains a number of Hit Points equal to 2d8", "regains 1d4 hit
	// points", "regain hit points equal to 70".
	healingText = regexp.MustCompile(`(?i)\bregains?\s+(?:a number of\s+)?(?:hit points\s+equal\s+to\s+|)(\d+d\d+(?:\s*[+]\s*\d+)?)`)
	// A list of damage types before "damage": "Cold, Poison, and Psychic
	// damage", "10d6 Cold damage".
	typedDamage = regexp.MustCompile(`(?i)\b((?:` + damageType + `)(?:\s*,\s*(?:and\s+|or\s+)?(?:` + damageType + `))*(?:,?\s*(?:and|or)\s+(?:` + damageType + `))?)\s+damage`)
	// What makes a "<type> damage" no damage dealt: an immunity,
	// resistance or vulnerability, or a threshold (Prismatic Wall: "if it
	// takes at least 60 Force damage").
	defence  = regexp.MustCompile(`(?i)(?:(?:immun\w*|resist\w*|vulnerab\w*)\s+(?:to\s+|against\s+)?(?:all\s+)?(?:non-?magical\s+)?|at least \d+\s+)$`)
	typeWord = regexp.MustCompile(`(?i)` + damageType)
)

// dealtTypes are the damage types the text names as damage dealt, not as
// an immunity, resistance or vulnerability.
func dealtTypes(text string) map[string]bool {
	out := map[string]bool{}
	for _, m := range typedDamage.FindAllStringSubmatchIndex(text, -1) {
		if defence.MatchString(text[max(0, m[2]-30):m[2]]) {
			continue
		}
		for _, t := range typeWord.FindAllString(text[m[2]:m[3]], -1) {
			out[strings.ToLower(t)] = true
		}
	}
	return out
}

// defendedType reports whether the text names typ before "damage" only as
// an immunity, resistance or vulnerability.
func defendedType(text, typ string) bool {
	defended := false
	for _, m := range typedDamage.FindAllStringSubmatchIndex(text, -1) {
		if !wordBoundary(typ).MatchString(text[m[2]:m[3]]) {
			continue
		}
		if !defence.MatchString(text[max(0, m[2]-30):m[2]]) {
			return false
		}
		defended = true
	}
	return defended
}

// healsWith reports whether roll appears in the text as hit points
// regained.
func healsWith(text, roll string) bool {
	for _, m := range healingText.FindAllStringSubmatch(text, -1) {
		if normalizeDice(m[1]) == normalizeDice(roll) || strings.HasPrefix(normalizeDice(m[1]), normalizeDice(roll)) {
			return true
		}
	}
	return false
}

// dealsDamageWith reports whether roll appears in the text as damage.
func dealsDamageWith(text, roll string) bool {
	for _, m := range spellDamage.FindAllStringSubmatch(text, -1) {
		if normalizeDice(m[1]) == normalizeDice(roll) {
			return true
		}
	}
	return false
}

var (
	rechargeName = regexp.MustCompile(`(?i)\brecharge (\d)(?:\s*[–—-]\s*6)?\b`)
	perDayName   = regexp.MustCompile(`(?i)\b(\d+)\s*/\s*day\b`)
	costsName    = regexp.MustCompile(`(?i)\bcosts (\d) actions\b`)
)

// checkUsage compares an action's structured usage limit and legendary
// cost with what its name says ("Fire Breath (Recharge 5–6)", "Arcane
// Doubling (2/Day)", "Wing Attack (Costs 2 Actions)"): the name is the
// book's, so it wins, and the correction is recorded.
func checkUsage(b *lkv1.TextBlock) []*lkv1.Correction {
	var fixes []*lkv1.Correction
	u := b.GetUsage()
	show := func(u *lkv1.Usage) string {
		if u == nil {
			return ""
		}
		return fmt.Sprintf("%s %d", strings.ToLower(u.GetType()), u.GetParam())
	}
	var named *lkv1.Usage
	if m := rechargeName.FindStringSubmatch(b.Name); m != nil {
		n, _ := strconv.Atoi(m[1])
		named = &lkv1.Usage{Type: "RECHARGE_ON_ROLL", Param: int32(n)}
		if u.GetType() == "RECHARGE" && u.GetParam() == named.Param {
			named = nil // Open5e's RECHARGE with a roll says the same.
		}
	} else if m := perDayName.FindStringSubmatch(b.Name); m != nil {
		n, _ := strconv.Atoi(m[1])
		named = &lkv1.Usage{Type: "PER_DAY", Param: int32(n)}
	}
	if named != nil && u != nil && (u.GetType() != named.GetType() || u.GetParam() != named.GetParam()) {
		fixes = append(fixes, &lkv1.Correction{Subject: b.Name, Field: "usage", SourceValue: show(u), CorrectedValue: show(named)})
		b.Usage = named
	}
	if m := costsName.FindStringSubmatch(b.Name); m != nil && b.LegendaryCost > 1 {
		if n, _ := strconv.Atoi(m[1]); int32(n) != b.LegendaryCost {
			fixes = append(fixes, &lkv1.Correction{Subject: b.Name, Field: "legendary_cost", SourceValue: strconv.Itoa(int(b.LegendaryCost)), CorrectedValue: m[1]})
			b.LegendaryCost = int32(n)
		}
	}
	return fixes
}
