package open5e

import (
	"html"
	"regexp"
	"slices"
	"strings"

	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// A creature's damage and condition lines as the book prints them
// ("necrotic; bludgeoning, piercing, and slashing from nonmagical attacks
// not made with silvered weapons"), read into entries: the types each
// covers and what limits it. Open5e's v2 records give the lines as text
// (*_display) beside key lists that drop every qualifier (694 records'
// lines have one); its v1 records give the text alone. A DM runs the card
// as printed: a werewolf immune to slashing is not the werewolf of the
// book.

// defenses is what a creature's line says: its entries, and the
// conditions a damage line names (Black Flag prints one Immunities line:
// "necrotic,charmed,grappled,Undead Resilience").
type defenses struct {
	entries    []*lkv1.Defense
	conditions []*lkv1.Defense
}

// types are the keys every entry covers, in order, once each.
func typesOf(entries []*lkv1.Defense) []string {
	var out []string
	for _, d := range entries {
		for _, t := range d.GetTypes() {
			if !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	return out
}

// readDefenses reads a damage line (conditions false) or a condition
// immunities line.
func readDefenses(line string, conditions bool) defenses {
	line = strings.TrimSpace(strings.ReplaceAll(html.UnescapeString(line), "&amp", "&"))
	line = strings.TrimSuffix(line, ".")
	line = unspacedComma.ReplaceAllString(line, ", $1")
	var out defenses
	switch strings.ToLower(line) {
	case "", "false", "none", "-", "—", "n/a":
		// Tome of Beasts 2023's v1 records write "False" for none.
		return out
	}
	if strings.Contains(line, "[++]") {
		// Tome of Beasts 3's template markup: "[++], Senses, &amp;
		// [/++][++]Languages[/++] as Phoenixborn" is the phoenixborn's
		// resistances, senses and languages; one entry, as printed.
		line = strings.Trim(strings.Join(strings.Fields(templateMarks.ReplaceAllString(line, " ")), " "), " ,")
		out.entries = []*lkv1.Defense{{Text: line}}
		return out
	}
	if m := sentenceDefense.FindStringSubmatch(line); m != nil {
		// "The falseheart is vulnerable to radiant damage."
		line = m[1]
	}
	if before, after, ok := cutFold(line, "condition immunities"); ok && !conditions {
		// "psychic Condition Immunities blinded, prone": two lines run
		// together.
		out = readDefenses(before, false)
		out.conditions = append(out.conditions, readDefenses(after, true).entries...)
		return out
	}
	if sentences.MatchString(line) {
		// "A dragonleaf tree enjoys the same immunities as its
		// progenitor. Black, copper, and green trees are immune to acid
		// damage, ...": prose, one entry.
		words := strings.Fields(line)
		out.entries = []*lkv1.Defense{{Types: typesWithin(words, conditions), Qualifier: line, Text: line}}
		return out
	}
	for _, group := range strings.Split(line, ";") {
		r := defenseReader{conditionLine: conditions}
		for _, tok := range strings.Split(group, ",") {
			r.token(tok)
		}
		r.close()
		out.entries = append(out.entries, r.entries...)
		out.conditions = append(out.conditions, r.conditions...)
	}
	return out
}

// sentenceDefense is a line written as a sentence: "The falseheart is
// vulnerable to radiant damage".
var sentenceDefense = regexp.MustCompile(`(?i)^the .+? is (?:vulnerable|resistant|immune) to (.+?)(?: damage)?$`)

var templateMarks = regexp.MustCompile(`\[/?\+\+\]`)

// sentences is a line of prose: a sentence's end inside it, or a clause
// saying what is immune.
var sentences = regexp.MustCompile(`(?i)\w\. [A-Z]| (?:are|is) (?:immune|resistant|vulnerable) to `)

// defenseReader reads one group of a line (between semicolons), token by
// token (between commas).
type defenseReader struct {
	conditionLine bool
	entries       []*lkv1.Defense
	conditions    []*lkv1.Defense

	cur *lkv1.Defense
	// text is the current entry's tokens as printed; prefix, whether its
	// qualifier came first ("nonmagic B/P/S attacks", "damage from
	// nonmagical weapons"): then everything up to the group's end or the
	// next condition or trait is part of it.
	text   []string
	prefix bool
}

func (r *defenseReader) close() {
	if r.cur == nil {
		return
	}
	d := r.cur
	d.Text = strings.TrimSpace(strings.Join(r.text, ","))
	if r.prefix {
		d.Qualifier = d.Text
	}
	if len(d.Types) == 0 && !r.conditionLine && weaponWords.MatchString(d.Qualifier) {
		// "damage from nonmagical weapons": weapons deal bludgeoning,
		// piercing and slashing damage.
		d.Types = []string{"bludgeoning", "piercing", "slashing"}
	}
	r.entries = append(r.entries, d)
	r.cur, r.text, r.prefix = nil, nil, false
}

// weaponWords is a qualifier speaking of weapons or attacks.
var weaponWords = regexp.MustCompile(`(?i)\b(?:weapons?|attacks?)\b`)

func (r *defenseReader) token(raw string) {
	words := strings.Fields(raw)
	for len(words) > 0 && connector(words[0]) {
		words = words[1:]
	}
	if len(words) == 0 {
		return
	}
	types, rest := leadingTypes(words, r.conditionLine)
	switch {
	case len(types) > 0 && (len(rest) == 0 || len(rest) == 1 && strings.EqualFold(rest[0], "damage")):
		// A type alone: "fire", "and slashing", "poison damage".
		if !r.conditionLine && !slices.ContainsFunc(types, func(t string) bool { return !isCondition(t) }) {
			r.close()
			r.conditions = append(r.conditions, &lkv1.Defense{Types: types, Text: strings.Join(words, " ")})
			return
		}
		if r.cur != nil && r.cur.Qualifier != "" && !r.prefix {
			r.close() // a qualified entry ended: "... from nonmagical attacks, cold"
		}
		r.add(raw, types)
	case len(types) > 0:
		// Types, then what limits them: "and slashing from nonmagical attacks".
		if r.cur != nil && r.cur.Qualifier != "" && !r.prefix {
			r.close()
		}
		r.add(raw, types)
		if !r.prefix {
			r.cur.Qualifier = strings.Join(rest, " ")
		}
	case r.cur != nil && (r.prefix || r.cur.Qualifier != "") && !startsUpper(words[0]):
		// More of the qualifier: "from nonmagical, non-adamantine weapons".
		r.text = append(r.text, raw)
		if !r.prefix {
			r.cur.Qualifier += ", " + strings.Join(words, " ")
		}
		r.cur.Types = appendNew(r.cur.Types, typesWithin(words, r.conditionLine)...)
	case len(typesWithin(words, r.conditionLine)) == 0 && !qualifierLike(words):
		// What a trait of the stat block explains ("Undead
		// Resilience"), or what the rules have no key for ("diseased").
		r.close()
		r.entries = append(r.entries, &lkv1.Defense{Text: strings.Join(words, " ")})
	default:
		// A qualifier first: "nonmagic B/P/S attacks", "damage from
		// nonmagical weapons", "varies (see moonbound)".
		r.close()
		r.cur, r.prefix = &lkv1.Defense{Types: typesWithin(words, r.conditionLine)}, true
		r.text = []string{raw}
	}
}

// add puts types and the token printing them into the current entry.
func (r *defenseReader) add(raw string, types []string) {
	if r.cur == nil {
		r.cur = &lkv1.Defense{}
	}
	r.cur.Types = appendNew(r.cur.Types, types...)
	r.text = append(r.text, raw)
}

func appendNew(list []string, more ...string) []string {
	for _, t := range more {
		if !slices.Contains(list, t) {
			list = append(list, t)
		}
	}
	return list
}

func connector(w string) bool {
	switch strings.ToLower(w) {
	case "and", "or", "&":
		return true
	}
	return false
}

func startsUpper(w string) bool { return w != "" && 'A' <= w[0] && w[0] <= 'Z' }

// qualifierLike reports whether words say when an entry holds rather
// than name something: "damage from nonmagical weapons", "(in day form)",
// "ranged weapons".
func qualifierLike(words []string) bool {
	if strings.HasPrefix(words[0], "(") {
		return true
	}
	switch w := strings.ToLower(words[0]); {
	case strings.HasPrefix(w, "non"), w == "damage", w == "from", w == "while", w == "when", w == "with", w == "in",
		w == "except", w == "unless", w == "only", w == "if":
		return true
	}
	return weaponWords.MatchString(strings.Join(words, " ")) || magicWord.MatchString(strings.Join(words, " "))
}

var magicWord = regexp.MustCompile(`(?i)magic`)

// cutFold is strings.Cut ignoring case.
func cutFold(s, sep string) (before, after string, found bool) {
	i := strings.Index(strings.ToLower(s), sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}

// leadingTypes reads the types words begins with ("bludgeoning and
// piercing from ...", "B/P/S"), and returns them and the words after.
func leadingTypes(words []string, conditionLine bool) (types, rest []string) {
	i := 0
	for i < len(words) {
		w := words[i]
		if connector(w) && len(types) > 0 {
			i++
			continue
		}
		ts := typeKeys(w, conditionLine)
		if len(ts) == 0 {
			break
		}
		types = appendNew(types, ts...)
		i++
	}
	if len(types) == 0 {
		return nil, words
	}
	// A trailing connector belongs to what follows ("fire and").
	for i > 0 && connector(words[i-1]) {
		i--
	}
	return types, words[i:]
}

// typesWithin are the types words names anywhere ("nonmagic B/P/S
// attacks", "nonmagic bludgeoning").
func typesWithin(words []string, conditionLine bool) []string {
	var out []string
	for _, w := range words {
		out = appendNew(out, typeKeys(w, conditionLine)...)
	}
	return out
}

// typeKeys are the keys a word names: a damage type ("Fire", the typo
// "lighting"), "B/P/S", or a condition ("fatigue" is Level Up's
// exhaustion).
func typeKeys(w string, conditionLine bool) []string {
	w = strings.ToLower(strings.Trim(w, "().:"))
	if w == "b/p/s" {
		return []string{"bludgeoning", "piercing", "slashing"}
	}
	if k, ok := conditionAliases[w]; ok {
		return []string{k}
	}
	if conditionLine && w == "poison" {
		return []string{"poisoned"}
	}
	for _, t := range damageTypes {
		if !conditionLine && (w == t || len(w) >= 6 && oneEdit(w, t)) {
			return []string{t}
		}
	}
	for _, c := range lkv1.Conditions() {
		if w == c || len(w) >= 6 && oneEdit(w, c) {
			return []string{c}
		}
	}
	return nil
}

// conditionAliases are other names books give a condition.
var conditionAliases = map[string]string{
	"fatigue": "exhaustion", "fatigued": "exhaustion", "exhausted": "exhaustion", "paralysis": "paralyzed",
	"blind": "blinded", "blindness": "blinded", "deafness": "deafened", "petrification": "petrified",
}

func isCondition(k string) bool { return slices.Contains(lkv1.Conditions(), k) }

// defenseFields are a creature's four lines: the source's field (v2's key
// list, v1's text) and where the entity keeps them.
var defenseFields = []struct {
	source     string
	conditions bool
	list       func(*lkv1.CreatureDetails) *[]string
	entries    func(*lkv1.CreatureDetails) *[]*lkv1.Defense
}{
	{"damage_vulnerabilities", false, func(c *lkv1.CreatureDetails) *[]string { return &c.DamageVulnerabilities },
		func(c *lkv1.CreatureDetails) *[]*lkv1.Defense { return &c.DamageVulnerabilityEntries }},
	{"damage_resistances", false, func(c *lkv1.CreatureDetails) *[]string { return &c.DamageResistances },
		func(c *lkv1.CreatureDetails) *[]*lkv1.Defense { return &c.DamageResistanceEntries }},
	{"damage_immunities", false, func(c *lkv1.CreatureDetails) *[]string { return &c.DamageImmunities },
		func(c *lkv1.CreatureDetails) *[]*lkv1.Defense { return &c.DamageImmunityEntries }},
	{"condition_immunities", true, func(c *lkv1.CreatureDetails) *[]string { return &c.ConditionImmunities },
		func(c *lkv1.CreatureDetails) *[]*lkv1.Defense { return &c.ConditionImmunityEntries }},
}

// setDefenses fills c's four lines from the book's text of each (line
// returns it by source field) and, for v2, the key lists beside it (keys;
// nil for v1). Where a list says other types than its text, the text
// wins and the correction is returned.
func setDefenses(c *lkv1.CreatureDetails, line func(field string) string, keys func(field string) []string) []*lkv1.Correction {
	var moved []*lkv1.Defense // conditions printed in a damage line
	for _, f := range defenseFields {
		d := readDefenses(line(f.source), f.conditions)
		entries := d.entries
		if f.conditions {
			entries = append(entries, moved...)
		}
		moved = append(moved, d.conditions...)
		*f.entries(c) = entries
		*f.list(c) = typesOf(entries)
	}
	if keys == nil {
		return nil
	}
	var fixes []*lkv1.Correction
	for _, f := range defenseFields {
		listed := keys(f.source)
		if len(*f.entries(c)) == 0 && line(f.source) == "" {
			// No text: the list is all there is.
			*f.list(c) = listed
			if len(listed) > 0 {
				*f.entries(c) = []*lkv1.Defense{{Types: listed, Text: strings.Join(listed, ", ")}}
			}
			continue
		}
		if !sameSet(listed, *f.list(c)) {
			fixes = append(fixes, &lkv1.Correction{Field: f.source, SourceValue: listOrNone(listed), CorrectedValue: listOrNone(*f.list(c))})
		}
	}
	return fixes
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

func listOrNone(list []string) string {
	if len(list) == 0 {
		return "none"
	}
	return strings.Join(list, ", ")
}
