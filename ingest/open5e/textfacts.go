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
	// The regexps read a whole text in tens of microseconds, and a load
	// reads some 34,000: each reads only around the words it looks for
	// ("damage", "sav", a condition's name), found by a cheap look first.
	lower := lowerASCII(text)
	if strings.Contains(lower, "damage") {
		f.damageTypes = damageDealt(text, lower)
	}
	f.save, f.dc = saveCalled(text, lower)
	if slices.ContainsFunc(lkv1.Conditions(), func(c string) bool { return strings.Contains(lower, c) }) {
		f.conditions = inflictedConditions(text, lower)
	}
	return f
}

// saveCalled is the first saving throw text calls for (saveText), read
// around each "sav" in turn: the ability and DC stand just before it, or
// just after (SRD 5.2's "Saving Throw: DC 19").
func saveCalled(text, lower string) (ability string, dc int32) {
	for at := 0; ; {
		k := strings.Index(lower[at:], "sav")
		if k < 0 {
			return "", 0
		}
		k += at
		at = k + len("sav")
		from := max(0, k-40)
		window := text[from:min(len(text), k+40)]
		for _, m := range saveText.FindAllStringSubmatchIndex(window, -1) {
			if from+m[0] > k || k >= from+m[1] {
				continue // another "sav"'s, read in its own window
			}
			n := group(window, m, 1)
			if n == "" {
				n = group(window, m, 3)
			}
			if d, err := strconv.Atoi(n); err == nil {
				dc = int32(d)
			}
			return strings.ToLower(group(window, m, 2)), dc
		}
	}
}

// group is submatch i of m in s, "" when it matched nothing.
func group(s string, m []int, i int) string {
	if m[2*i] < 0 {
		return ""
	}
	return s[m[2*i]:m[2*i+1]]
}

// asciiSpace is what a regexp's \s matches.
const asciiSpace = " \t\n\f\r"

// damageDealt are the damage types text (lower, lowerASCII's) deals,
// sorted: the types before each "damage" (typedBefore).
func damageDealt(text, lower string) []string {
	var out []string
	for at := 0; ; {
		k := strings.Index(lower[at:], "damage")
		if k < 0 {
			break
		}
		k += at
		at = k + len("damage")
		// The types end at the space before it.
		end := len(strings.TrimRight(text[:k], asciiSpace))
		if end == k {
			continue
		}
		start := max(0, end-120)
		m := typedBefore.FindStringSubmatchIndex(text[start:end])
		if m == nil {
			continue
		}
		typesAt := start + m[2]
		before := text[strings.LastIndexAny(text[:typesAt], ".;\n")+1 : typesAt]
		if defence.MatchString(text[max(0, typesAt-30):typesAt]) || selfDamage.MatchString(before) || strings.HasPrefix(text[at:], " to you") {
			continue
		}
		for _, t := range typeWord.FindAllString(text[typesAt:start+m[3]], -1) {
			out = appendNew(out, strings.ToLower(t))
		}
	}
	slices.Sort(out)
	return out
}

// typedBefore is a list of damage types ending where "damage" follows:
// "Cold, Poison, and Psychic", "10d6 Cold".
var typedBefore = regexp.MustCompile(`(?i)\b((?:` + damageType + `)(?:\s*,\s*(?:and\s+|or\s+)?(?:` + damageType + `))*(?:,?\s*(?:and|or)\s+(?:` + damageType + `))?)$`)

// inflictedConditions are the conditions text says it inflicts, in the
// order of the rules' list: each condition named after a verb that puts a
// creature in it ("or be knocked prone", "has the Grappled condition"), or
// after one so named ("is charmed and incapacitated"), unless negated.
func inflictedConditions(text, lower string) []string {
	type hit struct {
		at, end int
		c       string
	}
	var hits []hit
	for _, c := range lkv1.Conditions() {
		for at := 0; ; {
			k := strings.Index(lower[at:], c)
			if k < 0 {
				break
			}
			k += at
			at = k + len(c)
			if (k == 0 || !isWordByte(lower[k-1])) && (at == len(lower) || !isWordByte(lower[at])) {
				hits = append(hits, hit{k, at, c})
			}
		}
	}
	slices.SortFunc(hits, func(a, b hit) int { return a.at - b.at })
	found := map[string]bool{}
	lastEnd := -1 // the end of the last condition found inflicted
	for _, h := range hits {
		sentence := strings.LastIndexAny(text[:h.at], ".;\n") + 1
		start := max(sentence, h.at-120)
		listed := lastEnd >= start && conditionJoin.MatchString(text[lastEnd:h.at])
		if !listed {
			// The words before the verb say whether it is inflicted.
			v := conditionVerb.FindStringIndex(text[start:h.at])
			if v == nil || notInflicted.MatchString(strings.TrimSpace(text[sentence:start+v[0]])) {
				continue
			}
		}
		found[h.c] = true
		lastEnd = h.end
	}
	var out []string
	for _, c := range lkv1.Conditions() {
		if found[c] {
			out = append(out, c)
		}
	}
	return out
}

// lowerASCII is s with its ASCII letters lower-cased and every other byte
// kept, so an index into it is one into s (strings.ToLower changes the
// length of some letters: "İ", the Kelvin sign).
func lowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

var (
	// conditionVerb is what puts a creature in a condition, just before
	// its name: "or be knocked ", "becomes ", "has the ".
	conditionVerb = regexp.MustCompile(`(?i)\b(?:is|are|be|been|becomes?|became|becoming|falls?|fell|knock(?:s|ed)?|left|remains?|(?:has|have|gains?|with|subjected to) the)\s+(?:(?:also|then|instantly|immediately|magically|both|knocked|now)\s+)?$`)
	// conditionJoin is what joins a list of conditions: ", ", " and ".
	conditionJoin = regexp.MustCompile(`^(?:\s*,\s*|\s+and\s+|\s*,\s*and\s+|\s+or\s+)$`)
)

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
