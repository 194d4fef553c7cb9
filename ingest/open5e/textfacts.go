package open5e

import (
	"regexp"
	"slices"
	"strconv"
	"strings"

	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// What a spell's or an action's own text says it does, for the fields that
// filter: the damage types it deals ("takes 22 (4d10) fire damage on a
// failed save": Acid Splash's acid, which its record lacks, as 195 of the
// 580 spells dealing a damage type lack one), the saving throw it calls
// for, and the conditions it inflicts. The text is what the book prints,
// so where the record lacks what the text says, the text fills it.

// textFacts are what a text says.
type textFacts struct {
	damageTypes []string
	save        string // lower-case ability
	dc          int32
	conditions  []string
}

var (
	// "DC 15 Dexterity saving throw", "Dexterity Saving Throw: DC 19"
	// (SRD 5.2), "a Wisdom saving throw", "Strength or Dexterity saving
	// throw (target's choice)": the first ability named.
	saveText = regexp.MustCompile(`(?i)\b(?:DC\s*(\d+)\s+)?(strength|dexterity|constitution|intelligence|wisdom|charisma)(?:\s+or\s+\w+)?\s+sav(?:ing throw|e)\b(?:\*?:\s*\*?DC\s*(\d+))?`)
	// A condition inflicted: "or be knocked prone", "is frightened",
	// "becomes paralyzed", "falls unconscious", "has the Grappled
	// condition" (SRD 5.2), "is charmed and incapacitated".
	conditionText = regexp.MustCompile(`(?i)\b(?:is|are|be|been|becomes?|became|becoming|falls?|fell|knock(?:s|ed)?|left|remains?|(?:has|have|gains?|with|subjected to) the)\s+(?:(?:also|then|instantly|immediately|magically|both|knocked|now)\s+)?(` + strings.Join(lkv1.Conditions(), "|") + `)\b((?:\s*,\s*|\s+and\s+|\s*,\s*and\s+|\s+or\s+)(?:` + strings.Join(lkv1.Conditions(), "|") + `)\b)*`)
	conditionWord = regexp.MustCompile(`(?i)\b(?:` + strings.Join(lkv1.Conditions(), "|") + `)\b`)
	// What makes a condition named no condition inflicted: a negation or
	// an immunity in the words before it ("can't be charmed", "neither
	// reduce ... nor cause the target to be paralyzed", "suppress any
	// effect causing a target to be charmed", "the condition can be
	// blinded": Lesser Restoration's list), or a creature described as
	// in it ("a creature that is charmed", "if it is poisoned").
	notInflicted = regexp.MustCompile(`(?i)(?:\b(?:can't|cannot|not|isn't|aren't|won't|doesn't|don't|no longer|neither|nor|immune|immunity|suppress\w*|ends?|condition can)\b(?:\W+\w+){0,6}|\b(?:that|who|which|already)|\bif(?:\W+\w+){1,2})\W*$`)
)

// selfDamage is the damage a caster takes ("you take 1d10 necrotic
// damage per level", Wish's stress; "you and any creature traveling with
// you each take 4d6 force damage", Dimension Door gone wrong), or damage
// the text says cannot be dealt (Major Image: "You can't create ... a sound
// loud enough to deal thunder damage"), or damage dealt "to you" (Meld
// into Stone's expulsion): damage the spell does not deal.
var selfDamage = regexp.MustCompile(`(?i)\byou(?:(?: and| are) [^.;]*?)?(?: each| also| both| instead)? take (?:an? )?(?:extra |additional )?[\dd+\-−\s()]*$|\b(?:can't|cannot)\b[^.;]*$`)

// readTextFacts reads text. A damage type named only as an immunity,
// resistance or vulnerability ("resistance to fire damage", as
// dealtTypes), or as damage the caster takes, is no damage dealt.
func readTextFacts(text string) textFacts {
	var f textFacts
	for _, m := range typedDamage.FindAllStringSubmatchIndex(text, -1) {
		before := text[strings.LastIndexAny(text[:m[2]], ".;\n")+1 : m[2]]
		if defence.MatchString(text[max(0, m[2]-30):m[2]]) || selfDamage.MatchString(before) || strings.HasPrefix(text[m[1]:], " to you") {
			continue
		}
		for _, t := range typeWord.FindAllString(text[m[2]:m[3]], -1) {
			f.damageTypes = appendNew(f.damageTypes, strings.ToLower(t))
		}
	}
	slices.Sort(f.damageTypes)
	if m := saveText.FindStringSubmatch(text); m != nil {
		f.save = strings.ToLower(m[2])
		dc := m[1]
		if dc == "" {
			dc = m[3]
		}
		if n, err := strconv.Atoi(dc); err == nil {
			f.dc = int32(n)
		}
	}
	f.conditions = inflictedConditions(text)
	return f
}

// inflictedConditions are the conditions text says it inflicts, in the
// order of the rules' list.
func inflictedConditions(text string) []string {
	found := map[string]bool{}
	for _, m := range conditionText.FindAllStringIndex(text, -1) {
		start := strings.LastIndexAny(text[:m[0]], ".;\n") + 1
		if notInflicted.MatchString(strings.TrimSpace(text[start:m[0]])) {
			continue
		}
		for _, c := range conditionWord.FindAllString(text[m[0]:m[1]], -1) {
			found[strings.ToLower(c)] = true
		}
	}
	var out []string
	for _, c := range lkv1.Conditions() {
		if found[c] {
			out = append(out, c)
		}
	}
	return out
}

// fillSpellFacts gives a spell what its text says and its record lacks:
// the damage types its description deals, the saving throw it calls for,
// the conditions it inflicts. It returns the corrections.
func fillSpellFacts(s *lkv1.SpellDetails, desc string) []*lkv1.Correction {
	f := readTextFacts(desc)
	var fixes []*lkv1.Correction
	var more []string
	for _, t := range f.damageTypes {
		if !slices.Contains(s.DamageTypes, t) {
			more = append(more, t)
		}
	}
	if len(more) > 0 {
		from := listOrNone(s.DamageTypes)
		s.DamageTypes = append(s.DamageTypes, more...)
		fixes = append(fixes, &lkv1.Correction{Field: "damage_types", SourceValue: from, CorrectedValue: strings.Join(s.DamageTypes, ", ")})
	}
	if s.SavingThrowAbility == "" && f.save != "" {
		s.SavingThrowAbility = f.save
		fixes = append(fixes, &lkv1.Correction{Field: "saving_throw_ability", SourceValue: "none", CorrectedValue: f.save})
	}
	s.Conditions = f.conditions
	return fixes
}

// fillBlockFacts gives a creature's block what its text says: the damage
// types it deals (with its attack's), its saving throw and DC, the
// conditions it inflicts.
func fillBlockFacts(b *lkv1.TextBlock) {
	f := readTextFacts(b.GetText())
	types := f.damageTypes
	for _, t := range typeWord.FindAllString(b.GetAttack(), -1) {
		types = appendNew(types, strings.ToLower(t))
	}
	slices.Sort(types)
	b.DamageTypes, b.SavingThrowAbility, b.SavingThrowDc, b.Conditions = types, f.save, f.dc, f.conditions
}

// fillTextFacts gives e's spell or creature blocks what their texts say.
func fillTextFacts(e *lkv1.Entity) {
	if s := e.GetSpell(); s != nil {
		e.Corrections = append(e.Corrections, fillSpellFacts(s, e.GetDescription())...)
	}
	if e.GetCreature() != nil {
		for _, b := range e.GetBlocks() {
			fillBlockFacts(b)
		}
	}
}
