package open5e

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"lorekeeper.dev/ingest"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// How a disagreement between Open5e's SRD 5.1 and the second transcription
// is settled: first by a reviewed decision (srdDecisions), then by what the
// entity's own text and other fields say (the rules below), then by the
// other source, Open5e's v1 record of the book, siding with one of the two.

// srdDecision is a reviewed decision: which transcription the SRD 5.1's
// text sides with, and its wording.
type srdDecision struct {
	// side: "srd" for the second transcription's value, "open5e" for the
	// entity's own, "value" for value (neither has the SRD's).
	side, value string
	// wording is what the SRD prints, which decides.
	wording string
	// fix makes a text the SRD's: pairs of the entity's words and the
	// SRD's; cut leaves out the text from it on (another section run
	// into the entity's).
	fix []string
	cut string
}

// srdOutcome is how a disagreement is settled: the verdict and why; for a
// correction other than the field's setter, the change and the value it
// gives.
type srdOutcome struct {
	verdict srdVerdict
	why     string
	set     func()
	value   string
}

// decide is the decision's outcome.
func (d srdDecision) decide(e *lkv1.Entity, f srdField) srdOutcome {
	o := srdOutcome{verdict: srdCorrected, why: "the SRD prints " + d.wording}
	switch {
	case d.side == "open5e":
		o.verdict = srdKept
	case d.side == "value" && f.setTo != nil:
		o.set, o.value = func() { f.setTo(d.value) }, d.value
	case len(d.fix) > 0 || d.cut != "":
		o.set, o.value = func() { fixText(e, d.fix, d.cut) }, "the SRD's wording"
	}
	return o
}

// fixText makes e's texts the SRD's (see srdDecision).
func fixText(e *lkv1.Entity, fix []string, cut string) {
	for _, t := range []*string{&e.Description, &e.HigherLevel} {
		for i := 0; i+1 < len(fix); i += 2 {
			*t = strings.ReplaceAll(*t, fix[i], fix[i+1])
		}
		if i := strings.Index(*t, cut); cut != "" && i >= 0 {
			*t = strings.TrimSpace((*t)[:i])
		}
	}
	if s := e.GetSpell(); s != nil {
		for i := 0; i+1 < len(fix); i += 2 {
			s.MaterialSpecified = strings.ReplaceAll(s.MaterialSpecified, fix[i], fix[i+1])
		}
	}
}

// decideSRD settles a disagreement between the entity's value and the
// transcription's.
func decideSRD(e *lkv1.Entity, f srdField, ev srdEvidence) srdOutcome {
	key := f.kind + "/" + f.entity + "/" + f.field
	if f.subject != "" {
		key += "/" + f.subject
	}
	if d, ok := srdDecisions[key]; ok {
		return d.decide(e, f)
	}
	for _, rule := range srdRules {
		if v, why := rule(e, f, ev); v != srdUnresolved {
			return srdOutcome{verdict: v, why: why}
		}
	}
	if f.field == "text" {
		if set := missingPart(e, f); set != nil {
			return srdOutcome{verdict: srdCorrected, why: "Open5e's text lacks what the transcription's gives (a table, a stat block)", set: set, value: "the transcription's missing part"}
		}
		// Open5e's v1 and v2 texts are one transcription's: their
		// agreement decides nothing.
		return srdOutcome{verdict: srdUnresolved}
	}
	switch other, ok := ev.other[f.field+"\x00"+f.subject]; {
	case !ok:
	case other == f.theirs:
		return srdOutcome{verdict: srdCorrected, why: "Open5e's v1 record of the book says the same"}
	case other == f.ours:
		return srdOutcome{verdict: srdKept, why: "Open5e's v1 record of the book says the same as its v2 record"}
	}
	return srdOutcome{verdict: srdUnresolved}
}

// srdRule settles a disagreement by what the entity says, or returns
// srdUnresolved.
type srdRule func(e *lkv1.Entity, f srdField, ev srdEvidence) (srdVerdict, string)

var srdRules = []srdRule{missing, xpForChallenge, toHitByScores, hitPointsByDice, passiveByWisdom, spellSave, spellDamageType, classesBySubclass}

// missing: the entity lacks what the transcription gives (a weight, a
// material): nothing contradicts it.
func missing(_ *lkv1.Entity, f srdField, _ srdEvidence) (srdVerdict, string) {
	if n, err := strconv.ParseFloat(strings.TrimSpace(f.ours), 64); err == nil && n != 0 {
		return srdUnresolved, ""
	}
	switch strings.Trim(strings.TrimSpace(f.ours), "0.") {
	case "", "none":
		if f.set != nil {
			return srdCorrected, "Open5e's record lacks it"
		}
	}
	return srdUnresolved, ""
}

// xpForChallenge: a creature's XP is the SRD's table's for its challenge
// rating.
func xpForChallenge(e *lkv1.Entity, f srdField, _ srdEvidence) (srdVerdict, string) {
	if f.field != "experience_points" {
		return srdUnresolved, ""
	}
	cr := e.GetCreature().GetChallengeRating()
	xp, ok := lkv1.ChallengeRatingXP(cr)
	why := fmt.Sprintf("the SRD's XP for challenge %s is %d", lkv1.ChallengeRatingText(cr), xp)
	switch {
	case !ok:
	case f.theirs == strconv.Itoa(int(xp)):
		return srdCorrected, why
	case f.ours == strconv.Itoa(int(xp)):
		return srdKept, why
	}
	return srdUnresolved, ""
}

// toHitByScores: an attack's bonus is the creature's Strength or Dexterity
// modifier plus its proficiency bonus.
func toHitByScores(e *lkv1.Entity, f srdField, _ srdEvidence) (srdVerdict, string) {
	if f.field != "to_hit" {
		return srdUnresolved, ""
	}
	c := e.GetCreature()
	prof := proficiencyFor(c.GetChallengeRating())
	if c.GetProficiencyBonus() > 0 {
		prof = c.GetProficiencyBonus()
	}
	a := c.GetAbilityScores()
	for _, s := range []struct {
		name  string
		score int32
	}{{"Strength", a.GetStrength()}, {"Dexterity", a.GetDexterity()}} {
		bonus := fmt.Sprintf("%+d", modifier(s.score)+prof)
		why := fmt.Sprintf("its %s modifier (%+d) and proficiency bonus (+%d) make %s", s.name, modifier(s.score), prof, bonus)
		if bonus == f.theirs {
			return srdCorrected, why
		}
		if bonus == f.ours {
			return srdKept, why
		}
	}
	return srdUnresolved, ""
}

func modifier(score int32) int32 {
	if score >= 10 {
		return (score - 10) / 2
	}
	return -((11 - score) / 2)
}

// proficiencyFor is the proficiency bonus of a challenge rating.
func proficiencyFor(cr float64) int32 {
	if cr < 1 {
		return 2
	}
	return 2 + int32((cr-1)/4)
}

// saveNamed is the ability a text names for a saving throw.
var saveNamed = regexp.MustCompile(`(?i)\b(strength|dexterity|constitution|intelligence|wisdom|charisma)\s+saving throw`)

// spellSave: a spell's save is the one its text calls for.
func spellSave(e *lkv1.Entity, f srdField, _ srdEvidence) (srdVerdict, string) {
	if f.kind != "spell" || f.field != "saving_throw" {
		return srdUnresolved, ""
	}
	m := saveNamed.FindStringSubmatch(e.GetDescription())
	if m == nil {
		return srdUnresolved, ""
	}
	said := strings.ToLower(m[1])
	why := fmt.Sprintf("its text calls for a %s saving throw", m[1])
	switch said {
	case f.theirs:
		return srdCorrected, why
	case f.ours:
		return srdKept, why
	}
	return srdUnresolved, ""
}

// spellDamageType: the damage types a spell deals are those its text
// deals; damage the caster takes is none of them (Dimension Door's).
func spellDamageType(e *lkv1.Entity, f srdField, _ srdEvidence) (srdVerdict, string) {
	if f.kind != "spell" || f.field != "damage_type" {
		return srdUnresolved, ""
	}
	if slices.Contains(readTextFacts(e.GetDescription()).damageTypes, f.theirs) {
		return srdCorrected, "its text deals " + f.theirs + " damage"
	}
	if wordBoundary(f.theirs + " damage").MatchString(e.GetDescription()) {
		return srdKept, "its text deals " + f.theirs + " damage only to the caster"
	}
	return srdUnresolved, ""
}

// classesBySubclass: a class on a spell's list that the transcription
// leaves out, whose subclass the record names as granting the spell
// ("Druid: Underdark", "Cleric: Light"), has the spell through that
// subclass, not on its own list: Web is a sorcerer's and a wizard's, and a
// druid's of the Circle of the Land (Underdark) alone.
func classesBySubclass(e *lkv1.Entity, f srdField, _ srdEvidence) (srdVerdict, string) {
	if f.kind != "spell" || f.field != "classes" {
		return srdUnresolved, ""
	}
	ours, theirs := strings.Split(f.ours, ", "), strings.Split(f.theirs, ", ")
	sub := strings.ToLower(e.GetSpell().GetSubclasses())
	var through []string
	for _, c := range ours {
		if !slices.Contains(theirs, c) {
			if !strings.Contains(sub, c+":") && !(c == "druid" && strings.Contains(sub, "circle")) {
				return srdUnresolved, ""
			}
			through = append(through, c)
		}
	}
	for _, c := range theirs {
		if !slices.Contains(ours, c) {
			return srdUnresolved, ""
		}
	}
	return srdCorrected, fmt.Sprintf("%s %s it through a subclass (%s), not on the class's own list",
		strings.Join(through, " and "), map[bool]string{true: "has", false: "have"}[len(through) == 1], e.GetSpell().GetSubclasses())
}

// hitPointsByDice: a creature's hit dice roll averages to its hit points
// ("33 (6d8 + 6)").
func hitPointsByDice(e *lkv1.Entity, f srdField, _ srdEvidence) (srdVerdict, string) {
	if f.field != "hit_dice" {
		return srdUnresolved, ""
	}
	hp := e.GetCreature().GetHitPoints()
	avg := func(roll string) (int32, bool) {
		m := diceRoll.FindStringSubmatch(roll)
		if m == nil {
			return 0, false
		}
		n, _ := strconv.Atoi(m[1])
		d, _ := strconv.Atoi(m[2])
		b, _ := strconv.Atoi(strings.ReplaceAll(m[3], "+", ""))
		return int32(n*(d+1)/2 + b), true
	}
	why := fmt.Sprintf("its %d hit points are the roll's average", hp)
	if a, ok := avg(f.theirs); ok && a == hp {
		return srdCorrected, why
	}
	if a, ok := avg(f.ours); ok && a == hp {
		return srdKept, why
	}
	return srdUnresolved, ""
}

var diceRoll = regexp.MustCompile(`^(\d+)d(\d+)([+-]\d+)?$`)

// passiveByWisdom: a creature's passive Perception is 10 plus its
// Perception bonus, or its Wisdom modifier when it lists none.
func passiveByWisdom(e *lkv1.Entity, f srdField, _ srdEvidence) (srdVerdict, string) {
	if f.field != "passive_perception" {
		return srdUnresolved, ""
	}
	c := e.GetCreature()
	bonus, ok := c.GetSkills()["perception"]
	why := fmt.Sprintf("10 plus its Perception bonus (%+d)", bonus)
	if !ok {
		bonus = modifier(c.GetAbilityScores().GetWisdom())
		why = fmt.Sprintf("10 plus its Wisdom modifier (%+d)", bonus)
	}
	switch strconv.Itoa(int(10 + bonus)) {
	case f.theirs:
		return srdCorrected, why
	case f.ours:
		return srdKept, why
	}
	return srdUnresolved, ""
}

// missingPart gives the change that inserts into the entity's text the
// parts of the transcription's it lacks (a table, a stat block), each after
// the part before it, where every word of the entity's text is the
// transcription's: Open5e's Control Weather lacks its three tables,
// Teleport its table, the Ebony Fly figurine its Giant Fly.
func missingPart(e *lkv1.Entity, f srdField) func() {
	var plain []string
	for _, w := range strings.Fields(f.ours) {
		if !headerWords[w] {
			plain = append(plain, w)
		}
	}
	if len(f.lines) == 0 || !wordsWithin(strings.Join(plain, " "), f.theirs) {
		return nil
	}
	type insert struct {
		after string // the part before, as the transcription prints it
		parts []string
	}
	var (
		ins    []insert
		anchor string
		run    []string
	)
	flush := func() {
		if len(run) > 0 && anchor != "" {
			ins = append(ins, insert{anchor, run})
		}
		run = nil
	}
	for _, p := range textUnits(f.lines) {
		w := strings.ReplaceAll(ingest.Words(p), " gm ", " dm ")
		if strings.TrimSpace(w) == "" || strings.Contains(f.ours, w) {
			flush()
			anchor = p
			continue
		}
		run = append(run, p)
	}
	flush()
	if len(ins) == 0 {
		return nil
	}
	return func() {
		for _, in := range ins {
			e.Description = insertAfter(e.Description, in.after, strings.Join(in.parts, "\n\n"))
		}
	}
}

// textUnits groups a transcription's lines into parts: a table with the
// heading before it is one part, a paragraph another.
func textUnits(lines []string) []string {
	var out []string
	table := func(l string) bool { return strings.HasPrefix(l, "|") }
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.HasPrefix(l, "#") || table(l) {
			j := i + 1
			for j < len(lines) && table(lines[j]) {
				j++
			}
			out = append(out, strings.Join(lines[i:j], "\n"))
			i = j - 1
			continue
		}
		out = append(out, l)
	}
	return out
}

// insertAfter puts part into text after the paragraph ending with the last
// words of after (as words reads them), or at the end.
func insertAfter(text, after, part string) string {
	w := strings.Fields(ingest.Words(after))
	w = w[max(0, len(w)-4):]
	for i := range w {
		w[i] = regexp.QuoteMeta(w[i])
	}
	at := len(text)
	if len(w) > 0 {
		re := regexp.MustCompile(`(?i)\b` + strings.Join(w, `\W+`) + `\b`)
		if m := re.FindStringIndex(text); m != nil {
			if end := strings.Index(text[m[1]:], "\n"); end >= 0 {
				at = m[1] + end
			}
		}
	}
	return strings.TrimRight(text[:at], " \n") + "\n\n" + part + "\n\n" + strings.TrimLeft(text[at:], " \n")
}
