package query

import (
	"slices"
	"strconv"
	"strings"
	"unicode"

	"lorekeeper.dev/embedder/badgerstore"
	"lorekeeper.dev/embedder/relevance"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// Questions carry their own filters: "CR 1/2 hyena-headed raiders", "a
// cantrip", "one-handed weapon with reach", "CR 5 undead from the SRD",
// "bow with the longest range". understand reads those words against the
// filters' own vocabulary (the catalogue's field values, proto's numbers
// and the document names), never against lists of expected questions, and
// the ranking uses what it read as soft filters: what matches ranks above
// what contradicts, and nothing the request's own filters keep is dropped.

// understanding is what the words of a question were read as.
type understanding struct {
	filters []softFilter
	docs    []string // document keys
	docWord string
	order   *ordering
	// rest is the question without the words read as filters, for name
	// matching: "firbolt cantrip" is the name "firbolt" and level 0.
	rest string
	// terms are the question's words not read as filters or documents,
	// for BM25: what a filter says ranks by tier, and counted
	// again as text it would favour the texts repeating the filter's
	// words ("fire", "damage", "wizard", "spell") over those answering
	// the rest of the question, at the cost of walking those words'
	// long postings.
	terms string
	// complete is the tier of an entity matching every soft filter (set
	// by prepare).
	complete float32
	// names are the names the question says ("what does Fireball do").
	names []string
	// prepared are the soft filters read against the view (prepare).
	prepared []prepared
	// named are the entities a name in the question (names, or the rest
	// read as a name, typos and aliases too) names, and nameScore the
	// score each earns by it (prepare).
	named     badgerstore.Set
	nameScore map[uint32]float64
}

// softFilter is one filter read from the question: the entities matching
// it, and those it applies to (a kind holding the field), so that an
// entity it applies to and does not match contradicts it.
type softFilter struct {
	field   string // the index's field
	report  string // the name it is reported under, if not reported(field)
	values  []string
	negated bool
	words   string
	// match is the entities having the value, from the view's indexes.
	match func(v *badgerstore.View) badgerstore.Set
}

// ordering is a superlative over a numeric field.
type ordering struct {
	field  string // as reported
	desc   bool
	words  string
	value  func(e *lkv1.Entity) (float64, bool)
	kinds  []lkv1.Kind
	column string // orderField.column
}

// fieldKinds are the kinds holding each filter field (as EntityFields
// writes them): a soft filter on a field applies to these kinds only.
var (
	spellKinds    = []lkv1.Kind{lkv1.Kind_KIND_SPELL}
	creatureKinds = []lkv1.Kind{lkv1.Kind_KIND_CREATURE}
	weaponKinds   = []lkv1.Kind{lkv1.Kind_KIND_WEAPON}
	armorKinds    = []lkv1.Kind{lkv1.Kind_KIND_ARMOR}
	itemKinds     = lkv1.EquipmentKinds()
	fieldKinds    = map[string][]lkv1.Kind{
		badgerstore.FieldLevel:               spellKinds,
		badgerstore.FieldSchool:              spellKinds,
		badgerstore.FieldClass:               spellKinds,
		badgerstore.FieldConcentration:       spellKinds,
		badgerstore.FieldRitual:              spellKinds,
		badgerstore.FieldHealing:             spellKinds,
		badgerstore.FieldCastingTime:         spellKinds,
		badgerstore.FieldDamageType:          {lkv1.Kind_KIND_SPELL, lkv1.Kind_KIND_WEAPON},
		badgerstore.FieldCR:                  creatureKinds,
		badgerstore.FieldCreatureType:        creatureKinds,
		badgerstore.FieldSize:                creatureKinds,
		badgerstore.FieldLegendary:           creatureKinds,
		badgerstore.FieldMovement:            creatureKinds,
		badgerstore.FieldDamageImmunity:      creatureKinds,
		badgerstore.FieldDamageResistance:    creatureKinds,
		badgerstore.FieldDamageVulnerability: creatureKinds,
		badgerstore.FieldProperty:            weaponKinds,
		badgerstore.FieldSimple:              weaponKinds,
		badgerstore.FieldRanged:              weaponKinds,
		badgerstore.FieldArmorCategory:       armorKinds,
		badgerstore.FieldStealthDisadvantage: armorKinds,
		badgerstore.FieldCategory:            itemKinds,
		badgerstore.FieldRarity:              itemKinds,
		badgerstore.FieldKind:                lkv1.Kinds(),
		badgerstore.FieldCost:                itemKinds,
		badgerstore.FieldWeight:              itemKinds,
	}
)

// reportedField is the name a field is reported under: the lookup
// filter's.
var reportedField = map[string]string{
	badgerstore.FieldCR:       "challenge_rating",
	badgerstore.FieldSimple:   "is_simple",
	badgerstore.FieldCategory: "category",
	badgerstore.FieldKind:     "entity_type", // search's entity_types
}

func reported(field string) string {
	if r, ok := reportedField[field]; ok {
		return r
	}
	return field
}

// vocabFields are the keyword fields whose catalogue values are read in
// questions, longest phrase first.
var vocabFields = []string{
	badgerstore.FieldCreatureType, badgerstore.FieldSize, badgerstore.FieldSchool, badgerstore.FieldClass,
	badgerstore.FieldProperty, badgerstore.FieldArmorCategory, badgerstore.FieldCastingTime,
	badgerstore.FieldCategory, badgerstore.FieldRarity, badgerstore.FieldMovement,
}

// fieldValue is a keyword field's value.
type fieldValue struct{ field, value string }

// vocabulary is the catalogue's filter values by the stemmed words that
// say them ("two handed" -> property two-handed), and its documents.
type vocabulary struct {
	phrases  map[string][]fieldValue
	maxWords int
	types    map[string]bool // stemmed creature types
	damage   map[string]bool // stemmed damage types
	// heads are the last words of equipment's names, stemmed ("sword"
	// of "Dancing Sword", "crossbow", "mail"): what a weapon property or
	// an armor category is said of.
	heads map[string]bool
	docs  []docWords
}

// docWords are the ways a question names a document.
type docWords struct {
	key, gameSystem string
	name            []string // the name's words, without a trailing version
	acronym         string   // initials of the name's words ("srd", "tob")
	version         string   // a trailing version number ("5.1")
	homebrew        bool     // an OrcBrew document
}

// saidOfEquipment reports whether a weapon property or armor category
// read before next is said of equipment: next ends the question or its
// clause, is another value or a kind, or ends equipment's names ("heavy
// crossbow", "light weapons", "two-handed sword", whose "sword" ends
// Longsword). Not "a cheap light source", "a heavy load".
func (voc *vocabulary) saidOfEquipment(next string) bool {
	if next == "" || stopword(next) {
		return true
	}
	if _, ok := kindNoun(next); ok {
		return true
	}
	st := relevance.Stem(next)
	if voc.heads[st] || len(voc.phrases[st]) > 0 || st == "armour" || st == "gear" || st == "equipment" {
		return true
	}
	for h := range voc.heads {
		if len(st) >= 3 && strings.HasSuffix(h, st) {
			return true
		}
	}
	return false
}

// vocabularyOf returns the catalogue's vocabulary, remembered by the view
// until the next write.
func vocabularyOf(v *badgerstore.View) *vocabulary {
	return v.Memo("understand-vocabulary", func() any { return buildVocabulary(v) }).(*vocabulary)
}

func buildVocabulary(v *badgerstore.View) *vocabulary {
	voc := &vocabulary{phrases: map[string][]fieldValue{}, types: map[string]bool{}, damage: map[string]bool{}}
	v.Values(badgerstore.FieldDamageType, func(val string, _ int) { voc.damage[relevance.Stem(val)] = true })
	for _, f := range vocabFields {
		total, most := 0, 0
		vals := map[string]int{}
		v.Values(f, func(val string, n int) {
			vals[val] = n
			total += n
			most = max(most, n)
		})
		for val, n := range vals {
			// A value most of the field's entities hold ("action" of
			// casting times) says nothing; numbers in questions are more
			// often durations and distances than casting times.
			if 2*n > total && len(vals) > 2 || strings.ContainsAny(val, "0123456789(),") {
				continue
			}
			words := questionWords(val)
			if len(words) == 0 || len(words) > 3 {
				continue
			}
			k := stemKey(words)
			voc.phrases[k] = append(voc.phrases[k], fieldValue{f, val})
			voc.maxWords = max(voc.maxWords, len(words))
			if f == badgerstore.FieldCreatureType {
				voc.types[k] = true
			}
		}
	}
	voc.heads = map[string]bool{}
	var equipment []string
	for _, k := range lkv1.EquipmentKinds() {
		equipment = append(equipment, k.Slug())
	}
	v.Postings(badgerstore.FieldKind, equipment...).Each(func(slot uint32) bool {
		if ws := questionWords(v.Name(slot)); len(ws) > 0 {
			voc.heads[relevance.Stem(ws[len(ws)-1])] = true
		}
		return true
	})
	for _, d := range v.Documents() {
		doc := d.Document
		dw := docWords{key: strings.ToLower(doc.GetKey()), gameSystem: strings.ToLower(doc.GetGameSystem()),
			homebrew: doc.GetSource() == lkv1.Source_SOURCE_ORCBREW}
		dw.name = questionWords(doc.GetName())
		if n := len(dw.name); n > 1 && strings.ContainsAny(dw.name[n-1], "0123456789") && strings.Contains(dw.name[n-1], ".") {
			dw.version, dw.name = dw.name[n-1], dw.name[:n-1]
		}
		for _, w := range dw.name {
			if w[0] >= 'a' && w[0] <= 'z' {
				dw.acronym += w[:1]
			}
		}
		voc.docs = append(voc.docs, dw)
	}
	return voc
}

// spellLevelAt is, per caster type as the catalogue's classes give it, the
// highest spell level a character of a level casts (SRD 5.1 and 5.2 agree):
// a full caster's 9th at 17th level, a half caster's 5th at 17th, a pact
// caster's 5th slots at 9th (its Mystic Arcanum aside).
var spellLevelAt = map[string]func(level int) int{
	"full": func(l int) int { return min((l+1)/2, 9) },
	"half": func(l int) int { return min((l+3)/4, 5) * min(l/2, 1) },
	"pact": func(l int) int { return min((l+1)/2, 5) },
}

// questionWords splits text into lower-case words: letters and digits,
// with "1/2" and "5.1" kept whole and apostrophes dropped ("won't" ->
// "wont"); hyphens split ("two-handed" -> "two", "handed").
func questionWords(text string) []string {
	var out []string
	var b strings.Builder
	flush := func() {
		if b.Len() > 0 {
			out = append(out, strings.Trim(b.String(), "./"))
			b.Reset()
		}
	}
	rs := []rune(strings.ToLower(text))
	for i, r := range rs {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		case r == '\'' || r == '’':
		case (r == '/' || r == '.') && i > 0 && i+1 < len(rs) && unicode.IsDigit(rs[i-1]) && unicode.IsDigit(rs[i+1]):
			b.WriteRune(r)
		default:
			flush()
		}
	}
	flush()
	return slices.DeleteFunc(out, func(w string) bool { return w == "" })
}

func stemKey(words []string) string {
	s := make([]string, len(words))
	for i, w := range words {
		s[i] = relevance.Stem(w)
	}
	return strings.Join(s, " ")
}

// negations are the words that turn the filter after them around ("no
// stealth disadvantage", "won't ruin my stealth").
var negations = map[string]bool{"no": true, "not": true, "without": true, "never": true, "non": true, "wont": true,
	"dont": true, "doesnt": true, "isnt": true, "cant": true, "nor": true}

// ordinals are spell levels as the books write them.
var ordinals = map[string]int{"1st": 1, "2nd": 2, "3rd": 3, "4th": 4, "5th": 5, "6th": 6, "7th": 7, "8th": 8, "9th": 9,
	"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8, "ninth": 9}

// character returns the spell levels of the caster class a level is said
// of ("5th level wizard", "level 5 clerics"), or nil: not a caster class,
// or the level is a spell's ("3rd level wizard spell").
func character(v *badgerstore.View, class, next string) func(int) int {
	if st := relevance.Stem(next); st == "spell" || st == "cantrip" || class == "" {
		return nil
	}
	if f := casterOf(v, class); f != nil {
		return f
	}
	return casterOf(v, strings.TrimSuffix(class, "s")) // "wizards", "ranger's"
}

// casterOf is spellLevelAt of the caster type the catalogue's class named
// name gives (any book's that gives one), or nil, remembered by the view:
// it reads the few classes of that name, only when a question says a
// level and a word after it.
func casterOf(v *badgerstore.View, name string) func(int) int {
	return v.Memo("caster\x00"+name, func() any {
		var f func(int) int
		namedClasses(v, []string{name}).Each(func(slot uint32) bool {
			if e, err := v.Entity(slot); err == nil {
				f = spellLevelAt[strings.ToLower(e.GetCharacterOption().GetCasterType())]
			}
			return f == nil
		})
		return f
	}).(func(int) int)
}

// ordinalNumber is a character level written as an ordinal ("5th",
// "twelfth" is not: players write levels in digits), 1 to 20, or 0.
func ordinalNumber(w string) int {
	if n := ordinals[w]; n > 0 {
		return n
	}
	if len(w) < 3 {
		return 0
	}
	switch w[len(w)-2:] {
	case "st", "nd", "rd", "th":
		if n, err := strconv.Atoi(w[:len(w)-2]); err == nil && n >= 1 && n <= 20 {
			return n
		}
	}
	return 0
}

// partyNouns are the words a level is said of when it is the party's.
var partyNouns = map[string]bool{"party": true, "player": true, "group": true, "character": true, "pc": true, "pcs": true,
	"adventurer": true, "hero": true, "team": true}

// damageNouns are the things a damage type before them says deal it.
var damageNouns = map[string]bool{"spell": true, "cantrip": true, "weapon": true, "attack": true}

// damageRelations are the words before ("immune to fire") or after ("fire
// resistance") a damage type that make it a creature's defence.
var damageRelations = map[string]string{
	"immune": badgerstore.FieldDamageImmunity, "immunity": badgerstore.FieldDamageImmunity, "immunities": badgerstore.FieldDamageImmunity,
	"resistant": badgerstore.FieldDamageResistance, "resistance": badgerstore.FieldDamageResistance, "resists": badgerstore.FieldDamageResistance,
	"resist": badgerstore.FieldDamageResistance, "vulnerable": badgerstore.FieldDamageVulnerability, "vulnerability": badgerstore.FieldDamageVulnerability,
	// "weak to fire", "fire weakness": what players call a vulnerability.
	"weak": badgerstore.FieldDamageVulnerability, "weakness": badgerstore.FieldDamageVulnerability, "weaknesses": badgerstore.FieldDamageVulnerability,
}

// nonEquipment are the kinds lookup_equipment does not serve.
var nonEquipment = slices.DeleteFunc(lkv1.Kinds(), func(k lkv1.Kind) bool { return slices.Contains(lkv1.EquipmentKinds(), k) })

// creatureNouns may follow a size ("a Large creature").
var creatureNouns = map[string]bool{"creature": true, "creatures": true, "monster": true, "monsters": true, "one": true, "ones": true}

// fillers are left out of the rest besides stop words: the kinds' own
// nouns ("firbolt cantrip", "hold person spell").
var fillers = func() map[string]bool {
	m := map[string]bool{"monster": true, "monsters": true, "spells": true, "creatures": true, "weapons": true, "items": true}
	for _, k := range lkv1.Kinds() {
		m[strings.ReplaceAll(k.Slug(), "-", " ")] = true
	}
	return m
}()

// understand reads q against the catalogue's vocabulary for a request
// over kinds: every filter and order it finds on a field one of kinds
// holds. Nil: nothing understood (or Options.Literal).
//
// The reading is remembered by the view until the next write, as search's
// near names are: an understanding is read-only once made (apply changes
// only the items it is given), so requests share it.
func (s *Service) understand(v *badgerstore.View, q string, kinds []lkv1.Kind) *understanding {
	if s.opts.Literal {
		return nil
	}
	key := make([]byte, 0, len(q)+2*len(kinds)+12)
	key = append(key, "understand\x00"...)
	for _, k := range kinds {
		key = append(key, byte(k), byte(k>>8))
	}
	key = append(append(key, 0), q...)
	u, _ := v.Memo(string(key), func() any {
		u := understand(v, q, kinds)
		if u != nil {
			u.prepare(v, q)
		}
		return u
	}).(*understanding)
	return u
}

func understand(v *badgerstore.View, q string, kinds []lkv1.Kind) *understanding {
	words := questionWords(q)
	if len(words) == 0 {
		return nil
	}
	voc := vocabularyOf(v)
	u := &understanding{}
	used := make([]bool, len(words))
	party := "" // the words saying a party's level ("level 8 party"), if any
	stems := make([]string, len(words))
	for i, w := range words {
		stems[i] = relevance.Stem(w)
	}
	hasKinds := func(ks []lkv1.Kind) bool {
		for _, k := range kinds {
			if slices.Contains(ks, k) {
				return true
			}
		}
		return false
	}
	has := func(field string) bool { return hasKinds(fieldKinds[field]) }
	word := func(i int) string {
		if i >= 0 && i < len(words) {
			return words[i]
		}
		return ""
	}
	// A name of several words that the question mostly is, borne by
	// something of the kinds asked, keeps its words from the filters:
	// "how does two-weapon fighting work" asks for a rule, not weapons;
	// "destroy undead" for a feature, not undead. So does a name of one
	// word before the kind of what bears it: "the poisoned condition" is
	// a condition, not the poison category.
	var held [][2]int
	names, spans := namedIn(v, words, used, hasKinds)
	for i, h := range spans {
		switch k, ok := kindNoun(word(h[1])); {
		case h[1]-h[0] >= 2 && bornBy(v, names[i], hasKinds):
			held = append(held, h)
		case ok && bornBy(v, names[i], func(ks []lkv1.Kind) bool { return ks[0] == k && hasKinds(ks) }):
			held = append(held, [2]int{h[0], h[1] + 1})
		}
	}
	// A question about how the game works, asked of the rules and other
	// kinds, names what the rule is about, not what the answer must be:
	// "how does concentration work" wants the rule, not concentration
	// spells above it.
	rules := lkv1.RuleKinds()
	howItWorksWords, howItWorks := asksRule(words)
	howItWorks = howItWorks && hasKinds(rules) && slices.ContainsFunc(kinds, func(k lkv1.Kind) bool { return !slices.Contains(rules, k) })
	// A level said of a named spell ("fireball at 5th level") is the slot
	// it is cast with, not the spell's level.
	atSlot := func(i int) bool { return word(i-1) == "at" && spellIn(v, words, hasKinds) }
	// mark names the words a filter is read from; add takes them out of
	// the question's other readings and its terms only if it keeps the
	// filter: "legendary" of a lookup without creatures stays there to be
	// read as a rarity, "concentration" of a rules lookup as a word.
	var span [2]int
	mark := func(from, to int) string {
		span = [2]int{from, to}
		return strings.Join(words[from:to], " ")
	}
	take := func() {
		for i := span[0]; i < span[1]; i++ {
			used[i] = true
		}
	}
	negated := func(i, reach int) bool {
		for j := max(0, i-reach); j < i; j++ {
			if negations[words[j]] {
				used[j] = true
				return true
			}
		}
		return false
	}
	// splits reports whether words[from:to] would take part of a held name.
	splits := func(from, to int) bool {
		for _, h := range held {
			if from < h[1] && h[0] < to && (h[0] < from || to < h[1]) {
				return true
			}
		}
		return false
	}
	add := func(f softFilter) {
		if howItWorks || splits(span[0], span[1]) {
			return
		}
		// Said twice ("a giant ..., the weakest kind of giant"), a
		// filter counts once.
		for _, g := range u.filters {
			if g.field == f.field && g.report == f.report && g.negated == f.negated && slices.Equal(g.values, f.values) {
				take()
				return
			}
		}
		if has(f.field) {
			u.filters = append(u.filters, f)
			take()
		}
	}
	// addCompared adds the filter the number x of words[from:to] makes
	// with the comparison around it, if any ("CR 10 or lower").
	addCompared := func(field string, x float64, from, to int) {
		b, from, to := compares(words, used, from, to)
		if b == exactly {
			add(numberFilter(field, x, mark(from, to)))
			return
		}
		if x, ok := inclusive(field, b, x); ok {
			add(rangeFilter(field, b, x, mark(from, to)))
		}
	}
	// Numbers: "CR 1/2", "challenge rating 5", "3rd-level", "level 3
	// spell", "cantrip".
	for i := 0; i < len(words); i++ {
		switch {
		case words[i] == "cr" || words[i] == "challenge":
			j := i + 1
			if word(j) == "rating" {
				j++
			}
			cr, ok := lkv1.ParseChallengeRating(word(j))
			if !ok || cr < 0 || cr > 30 {
				continue
			}
			// "CR 5 to 10", "CR 5-10": both bounds.
			k := j + 1
			if word(k) == "to" || word(k) == "through" {
				k++
			}
			if hi, ok := lkv1.ParseChallengeRating(word(k)); ok && hi > cr && hi <= 30 {
				w := mark(i, k+1)
				add(rangeFilter(badgerstore.FieldCR, atLeast, cr, w))
				add(rangeFilter(badgerstore.FieldCR, atMost, hi, w))
				i = k
				continue
			}
			addCompared(badgerstore.FieldCR, cr, i, j+1)
			i = j
		case stems[i] == "cantrip":
			addCompared(badgerstore.FieldLevel, 0, i, i+1)
		case partyNouns[relevance.Stem(word(i+2))] && (words[i] == "level" || ordinalNumber(words[i]) > 0 && word(i+1) == "level"):
			// "for a level 8 party", "5th level players": a monster's
			// challenge rating is the level of a party of four that can
			// defeat it without a death (the SRD's definition), so those
			// of the party's level and below.
			l := ordinalNumber(words[i])
			if l == 0 {
				l, _ = strconv.Atoi(word(i + 1))
			}
			if l >= 1 && l <= 20 {
				party = mark(i, i+3)
				add(rangeFilter(badgerstore.FieldCR, atMost, float64(l), party))
				i += 2
			}
		case ordinalNumber(words[i]) > 0 && word(i+1) == "level" && character(v, word(i+2), word(i+3)) != nil:
			// "a 5th level wizard": the character's level, whose spells
			// go up to the 3rd ("a 3rd level wizard spell" is the spell's).
			if n := character(v, word(i+2), word(i+3))(ordinalNumber(words[i])); n > 0 {
				add(rangeFilter(badgerstore.FieldLevel, atMost, float64(n), mark(i, i+2)))
			}
			i++
		case words[i] == "level" && character(v, word(i+2), word(i+3)) != nil:
			if l, err := strconv.Atoi(word(i + 1)); err == nil && l >= 1 && l <= 20 {
				if n := character(v, word(i+2), word(i+3))(l); n > 0 {
					add(rangeFilter(badgerstore.FieldLevel, atMost, float64(n), mark(i, i+2)))
				}
				i++
			}
		case ordinals[words[i]] > 0 && word(i+1) == "level" && !atSlot(i):
			addCompared(badgerstore.FieldLevel, float64(ordinals[words[i]]), i, i+2)
			i++
		case words[i] == "level":
			// "level 3 spell", "level 3 or lower": not "level 3" alone,
			// more often a character's.
			n, err := strconv.Atoi(word(i + 1))
			if b, _, _ := compares(words, used, i, i+2); err == nil && n >= 1 && n <= 9 && !atSlot(i) && (relevance.Stem(word(i+2)) == "spell" || b != exactly) {
				addCompared(badgerstore.FieldLevel, float64(n), i, i+2)
				i++
			}
		case units[word(i+1)].field != "":
			// A price or a weight compared ("under 10 gp", "at most 5
			// lb"); an amount alone ("a 10 gp gem") filters nothing.
			x, err := strconv.ParseFloat(words[i], 64)
			if b, from, to := compares(words, used, i, i+2); err == nil && x >= 0 && b != exactly {
				u := units[word(i+1)]
				if x, ok := inclusive(u.field, b, x*u.scale); ok {
					add(rangeFilter(u.field, b, x, mark(from, to)))
				}
				i++
			}
		}
	}
	// Damage: "fire damage", "immune to fire", "cold resistance".
	for i, st := range stems {
		if used[i] || !voc.damage[st] {
			continue
		}
		rel := damageRelations[word(i+1)]
		from, to := i, i+1
		if rel == "" {
			for j := max(0, i-3); j < i; j++ {
				if r := damageRelations[words[j]]; r != "" {
					rel, from = r, j
				}
			}
		} else {
			to = i + 2
		}
		switch {
		case rel != "":
			add(keywordFilter(rel, []string{words[i]}, false, mark(from, to)))
		case word(i+1) == "damage":
			add(damageFilter(words[i], mark(i, i+2)))
		case damageNouns[relevance.Stem(word(i+1))]:
			// "fire spells", "a cold cantrip", "piercing weapons".
			add(damageFilter(words[i], mark(i, i+1)))
		}
	}
	// Switches (the words themselves): concentration, ritual, stealth, ranged or melee, simple or
	// martial, one-handed.
	for i, w := range words {
		if used[i] {
			continue
		}
		switch strings.TrimSuffix(w, "s") {
		case "concentration":
			add(boolFilter(badgerstore.FieldConcentration, !negated(i, 2), mark(i, i+1)))
		case "ritual":
			add(boolFilter(badgerstore.FieldRitual, !negated(i, 2), mark(i, i+1)))
		case "heal", "heals", "healing", "healer", "healers":
			// A spell that restores hit points, said of spells: "healing
			// spells for a cleric" (a name, "Healing Word", is the name's).
			// The word stays in the terms: the healers' texts say it, and
			// how much they do ranks them among themselves.
			add(boolFilter(badgerstore.FieldHealing, !negated(i, 2), mark(i, i+1)))
			used[i] = false
		case "stealth", "stealthy":
			// Armor is asked about stealth to keep it: only "stealth
			// disadvantage" without a negation asks for the disadvantage.
			disadv := strings.HasPrefix(word(i+1), "disadvantage")
			to := i + 1
			if disadv {
				to = i + 2
			}
			add(boolFilter(badgerstore.FieldStealthDisadvantage, disadv && !negated(i, 4), mark(i, to)))
		case "ranged", "melee":
			add(boolFilter(badgerstore.FieldRanged, (w == "ranged") != negated(i, 2), mark(i, i+1)))
		case "simple", "martial":
			// Said of a weapon, or asked of equipment alone.
			if relevance.Stem(word(i+1)) == "weapon" || !hasKinds(nonEquipment) {
				add(boolFilter(badgerstore.FieldSimple, w == "simple", mark(i, i+1)))
			}
		case "legendary":
			// A creature's: "legendary actions", "legendary resistance",
			// "a legendary monster", "a legendary dragon"; else an item's
			// rarity (below).
			switch next := relevance.Stem(word(i + 1)); {
			case strings.HasPrefix(next, "action") || strings.HasPrefix(next, "resist") || creatureNouns[word(i+1)]:
				add(boolFilter(badgerstore.FieldLegendary, !negated(i, 2), mark(i, i+2)))
			case voc.types[next]: // the type is read below
				add(boolFilter(badgerstore.FieldLegendary, !negated(i, 2), mark(i, i+1)))
			}
		case "one", "single":
			switch {
			case word(i+1) == "or" && word(i+2) == "two" && strings.HasPrefix(word(i+3), "hand"):
				// "One or two hands" is what the versatile property says
				// of a weapon, not two-handed.
				add(keywordFilter(badgerstore.FieldProperty, []string{"versatile"}, false, mark(i, i+4)))
			case word(i+1) == "handed" || word(i+1) == "hand" && relevance.Stem(word(i+2)) == "weapon":
				add(keywordFilter(badgerstore.FieldProperty, []string{"two-handed"}, true, mark(i, i+2)))
			}
		}
	}
	u.readDocuments(voc, words, used)
	// The catalogue's values: creature types, sizes, schools, classes,
	// weapon properties, armor categories, casting times, item categories
	// and rarities, the longest phrase first.
	for n := voc.maxWords; n >= 1; n-- {
		for i := 0; i+n <= len(words); i++ {
			if slices.Contains(used[i:i+n], true) {
				continue
			}
			key := strings.Join(stems[i:i+n], " ")
			fvs := voc.phrases[key]
			if len(fvs) == 0 {
				continue
			}
			byField := map[string][]string{}
			var fields []string
			for _, fv := range fvs {
				switch fv.field {
				case badgerstore.FieldSize:
					// "Large" is a size before a creature type or noun
					// only ("a Large undead"), not "a large group".
					if next := relevance.Stem(word(i + n)); !voc.types[next] && !creatureNouns[word(i+n)] {
						continue
					}
				case badgerstore.FieldCreatureType, badgerstore.FieldMovement:
					// A type or a movement inside a creature's name is
					// the name's ("giant rat", "dragon turtle", "giant
					// fly").
					if inCreatureName(v, word(i-1)+" "+words[i]) || inCreatureName(v, words[i+n-1]+" "+word(i+n)) {
						continue
					}
				case badgerstore.FieldProperty:
					// Before "armor" a word is the armor's category
					// ("light armor", "heavy armor"), not a weapon's
					// property; before "weapon" the other way round.
					if next := relevance.Stem(word(i + n)); next == "armor" || next == "armour" || !voc.saidOfEquipment(word(i+n)) {
						continue
					}
				case badgerstore.FieldArmorCategory:
					if relevance.Stem(word(i+n)) == "weapon" || !voc.saidOfEquipment(word(i+n)) {
						continue
					}
				}
				if byField[fv.field] == nil {
					fields = append(fields, fv.field)
				}
				byField[fv.field] = append(byField[fv.field], fv.value)
			}
			if len(fields) == 0 {
				continue
			}
			neg := negated(i, 2)
			phrase := mark(i, i+n)
			for _, f := range fields {
				add(keywordFilter(f, byField[f], neg, phrase))
			}
		}
	}
	if len(kinds) > 1 && !howItWorks {
		if f, at, ok := readKind(words, used, kinds); ok && !slices.ContainsFunc(at, func(i int) bool { return splits(i, i+1) }) {
			u.filters = append(u.filters, f)
			for _, i := range at {
				used[i] = true
			}
		}
	}
	// A name only the rules bear, theirs or a part's ("surprise", "heavy
	// armor"), asks for them all the more.
	othersNamed := func() bool {
		return slices.ContainsFunc(names, func(n string) bool {
			return bornBy(v, n, func(ks []lkv1.Kind) bool { return !slices.Contains(rules, ks[0]) && hasKinds(ks) })
		})
	}
	if howItWorks && !othersNamed() {
		// It asks for the rules, as "feats for a spellcaster" asks for
		// feats: they rank first, the rest still follows. Not when it is
		// mostly a name something else bears ("how does sneak attack
		// work": the Rogue's feature).
		var slugs []string
		for _, k := range rules {
			if slices.Contains(kinds, k) {
				slugs = append(slugs, k.Slug())
			}
		}
		u.filters = append(u.filters, keywordFilter(badgerstore.FieldKind, slugs, false, howItWorksWords))
	}
	byFilters := slices.Clone(used)
	if !howItWorks {
		u.order = readOrder(words, stems, used, hasKinds)
		if u.order == nil && party != "" && hasKinds(orderCR.kinds) {
			// A monster "for a level 8 party" with no other order said:
			// the fairest fights first, the challenge ratings nearest the
			// party's level (below it, by the filter).
			u.order = &ordering{field: orderCR.name, desc: true, words: party, value: orderCR.value, kinds: orderCR.kinds, column: orderCR.column}
		}
	}
	// A superlative restricts nothing: its words stay in the terms (the
	// texts saying "armor class" are those it orders), the kind's own
	// nouns ("spell") do not.
	var terms []string
	framing := frame(words)
	for i, w := range words {
		if !byFilters[i] && !framing[i] && (used[i] || !fillers[stems[i]] && !fillers[w]) {
			terms = append(terms, w)
		}
	}
	u.terms = strings.Join(terms, " ")
	if len(relevance.Tokenize(u.terms)) == 0 {
		// Nothing but filters ("fire damage"): the texts saying them most
		// rank first in their tier.
		u.terms = unframed(q, false)
	}
	var rest []string
	for i, w := range words {
		if !used[i] && !fillers[stems[i]] && !fillers[w] && !stopword(w) {
			rest = append(rest, w)
		}
	}
	u.rest = strings.Join(rest, " ")
	u.names, _ = namedIn(v, words, used, hasKinds)
	if len(u.filters) == 0 && len(u.docs) == 0 && u.order == nil && len(u.names) == 0 {
		return nil
	}
	return u
}

// spellIn reports whether words name a spell, if spells are asked for.
func spellIn(v *badgerstore.View, words []string, hasKinds func([]lkv1.Kind) bool) bool {
	if !hasKinds([]lkv1.Kind{lkv1.Kind_KIND_SPELL}) {
		return false
	}
	spell := func(ks []lkv1.Kind) bool { return ks[0] == lkv1.Kind_KIND_SPELL && hasKinds(ks) }
	names, _ := storedNames(v, words, make([]bool, len(words)), spell)
	return slices.ContainsFunc(names, func(n string) bool { return bornBy(v, n, spell) })
}

// frame marks the words that frame a question rather than say what it
// asks about: "work" of "how does X work", "mean" of "what does X mean"
// and "meaning" of "what is the meaning of X". BM25 reads none of them:
// "mean" is in hundreds of texts saying what something means, and "what
// does advantage mean" found Limited Usage ("X/Day means") before the
// rule on advantage.
func frame(words []string) []bool {
	out := make([]bool, len(words))
	if len(words) < 3 {
		return out // "work", "mean": the word is the question
	}
	for i, w := range words {
		switch w {
		case "work", "works":
			out[i] = words[0] == "how" && i > 1
		case "mean", "means", "meaning", "meant":
			out[i] = words[0] == "what" || words[0] == "whats"
		}
	}
	return out
}

// unframed is q without the words framing it (frame), but "work" when
// keepWork, or q when nothing else is left.
func unframed(q string, keepWork bool) string {
	words := questionWords(q)
	framing := frame(words)
	if keepWork {
		for i, w := range words {
			framing[i] = framing[i] && w != "work" && w != "works"
		}
	}
	if !slices.Contains(framing, true) {
		return q
	}
	var rest []string
	for i, w := range words {
		if !framing[i] {
			rest = append(rest, w)
		}
	}
	out := strings.Join(rest, " ")
	if len(relevance.Tokenize(out)) == 0 {
		return q
	}
	return out
}

// asksRule reports whether the question asks how the game works, and
// the words that say so: "how does/do/is ... work", "what happens
// when/if", "what does ... mean", "how long does it take", "can I ...",
// the rules or mechanics of something.
func asksRule(words []string) (string, bool) {
	framing := frame(words)
	for i, w := range words {
		switch {
		case framing[i] && (w == "mean" || w == "means" || w == "meaning" || w == "meant"):
			return strings.Join(words[:i+1], " "), true
		case w == "rule" || w == "rules" || w == "mechanic" || w == "mechanics":
			return w, true
		case i == 1 && words[0] == "can" && (w == "i" || w == "my" || w == "we"):
			// "can I cast two spells in one turn": what a player may do.
			return "can " + w, true
		case w == "work" || w == "works":
			if words[0] == "how" && i > 1 {
				return strings.Join(words[:i+1], " "), true
			}
		case w == "happens" || w == "happen":
			if i > 0 && (words[i-1] == "what" || words[i-1] == "whats") {
				return "what " + w, true
			}
		case w == "take" && i >= 4:
			if words[i-4] == "how" && words[i-3] == "long" && words[i-1] == "it" {
				return strings.Join(words[i-4:i+1], " "), true
			}
		}
	}
	return "", false
}

// readKind reads the one kind a question over several kinds names, in
// the plural or as "monster" ("monsters with legendary actions", "feats
// for a spellcaster"): another singular is more often said of something
// else ("a spell that lets a creature fly"), and a question naming two
// kinds is about both. at are the words it is read from.
func readKind(words []string, used []bool, kinds []lkv1.Kind) (f softFilter, at []int, ok bool) {
	var named lkv1.Kind
	for i := 0; i < len(words); i++ {
		if used[i] {
			continue
		}
		n := 1
		k, ok := kindNouns[words[i]]
		if i+1 < len(words) && !used[i+1] {
			if k2, ok2 := kindNouns[words[i]+" "+words[i+1]]; ok2 {
				k, ok, n = k2, true, 2
			}
		}
		if !ok || !slices.Contains(kinds, k) {
			continue
		}
		if len(at) > 0 && k != named {
			return softFilter{}, nil, false
		}
		named = k
		for j := i; j < i+n; j++ {
			at = append(at, j)
		}
		i += n - 1
	}
	if len(at) == 0 {
		return softFilter{}, nil, false
	}
	said := make([]string, len(at))
	for j, i := range at {
		said[j] = words[i]
	}
	return keywordFilter(badgerstore.FieldKind, []string{named.Slug()}, false, strings.Join(said, " ")), at, true
}

// kindNoun returns the kind a singular noun names ("condition", "spell",
// "monster").
func kindNoun(w string) (lkv1.Kind, bool) {
	if w == "monster" {
		return lkv1.Kind_KIND_CREATURE, true
	}
	return lkv1.KindFromSlug(w)
}

// kindNouns name a kind in a question: the kinds' plurals ("spells",
// "magic items"), "monster(s)", "species". Not "classes" ("armor
// class"), "rules", "items" or "armor", which other readings take.
var kindNouns = func() map[string]lkv1.Kind {
	m := map[string]lkv1.Kind{"monster": lkv1.Kind_KIND_CREATURE, "monsters": lkv1.Kind_KIND_CREATURE, "species": lkv1.Kind_KIND_RACE}
	for _, k := range lkv1.Kinds() {
		switch k {
		case lkv1.Kind_KIND_CLASS, lkv1.Kind_KIND_SUBCLASS, lkv1.Kind_KIND_RULE, lkv1.Kind_KIND_RULE_SECTION, lkv1.Kind_KIND_ITEM, lkv1.Kind_KIND_ARMOR:
			continue
		}
		m[strings.ReplaceAll(k.Slug(), "-", " ")+"s"] = k
	}
	return m
}()

// bound is how a question compares a number: exactly, or as a bound
// (inclusive: "CR 10 or lower", "at least 3rd level"; strict: "under CR
// 5", "above CR 10").
type bound int

const (
	exactly bound = iota
	atMost
	atLeast
	below
	above
)

// Words comparing a number, after it ("or lower") or before it ("lower
// than").
var (
	lowerWords = map[string]bool{"lower": true, "less": true, "below": true, "under": true, "fewer": true, "weaker": true,
		"cheaper": true, "lighter": true}
	higherWords = map[string]bool{"higher": true, "more": true, "above": true, "over": true, "greater": true, "stronger": true,
		"up": true, "heavier": true}
)

// compares reads the comparison around the number words[from:to], and
// widens the span to its words: after the number "or lower", "and
// under", "or higher", "and up", "plus"; before it "up to", "at most",
// "at least", "no more than", "under", "below", "less than", "over",
// "above", "more than", "max", "min".
func compares(words []string, used []bool, from, to int) (bound, int, int) {
	free := func(i int) string {
		if i >= 0 && i < len(words) && !used[i] {
			return words[i]
		}
		return ""
	}
	if w := free(to); w == "or" || w == "and" {
		switch next := free(to + 1); {
		case lowerWords[next]:
			return atMost, from, to + 2
		case higherWords[next]:
			return atLeast, from, to + 2
		}
	}
	if free(to) == "plus" {
		return atLeast, from, to + 1
	}
	switch w1, w2 := free(from-1), free(from-2); {
	case w2 == "up" && w1 == "to", w2 == "at" && w1 == "most":
		return atMost, from - 2, to
	case w2 == "at" && w1 == "least":
		return atLeast, from - 2, to
	case w1 == "max" || w1 == "maximum":
		return atMost, from - 1, to
	case w1 == "min" || w1 == "minimum":
		return atLeast, from - 1, to
	case w1 == "than" && (lowerWords[w2] || higherWords[w2]):
		// "no more than" is at most, "no less than" at least.
		switch no := free(from-3) == "no"; {
		case no && lowerWords[w2]:
			return atLeast, from - 3, to
		case no:
			return atMost, from - 3, to
		case lowerWords[w2]:
			return below, from - 2, to
		}
		return above, from - 2, to
	case w1 == "under" || w1 == "below":
		return below, from - 1, to
	case w1 == "over" || w1 == "above":
		return above, from - 1, to
	}
	return exactly, from, to
}

// units are the words after a price or a weight, with what they make of
// the number: gold pieces, or pounds.
var units = map[string]struct {
	field string
	scale float64
}{
	"gp": {badgerstore.FieldCost, 1}, "gold": {badgerstore.FieldCost, 1}, "sp": {badgerstore.FieldCost, 0.1},
	"silver": {badgerstore.FieldCost, 0.1}, "cp": {badgerstore.FieldCost, 0.01}, "copper": {badgerstore.FieldCost, 0.01},
	"lb": {badgerstore.FieldWeight, 1}, "lbs": {badgerstore.FieldWeight, 1}, "pound": {badgerstore.FieldWeight, 1},
	"pounds": {badgerstore.FieldWeight, 1},
}

// crSteps are the challenge ratings, in order.
var crSteps = func() []float64 {
	s := []float64{0, 0.125, 0.25, 0.5}
	for cr := 1; cr <= 30; cr++ {
		s = append(s, float64(cr))
	}
	return s
}()

// inclusive turns a strict bound into an inclusive one over the field's
// steps (challenge ratings, spell levels 0-9): below CR 1 is at most CR
// 1/2. ok is false when nothing is left (below CR 0). A price or a weight
// has no steps: its bound stays as said.
func inclusive(field string, b bound, x float64) (float64, bool) {
	if b != below && b != above || field == badgerstore.FieldCost || field == badgerstore.FieldWeight {
		return x, true
	}
	steps := crSteps
	if field == badgerstore.FieldLevel {
		steps = []float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	}
	i, found := slices.BinarySearch(steps, x)
	switch {
	case b == below && i > 0:
		return steps[i-1], true
	case b == above && found && i+1 < len(steps):
		return steps[i+1], true
	case b == above && !found && i < len(steps):
		return steps[i], true
	}
	return 0, false
}

// rangeFilter matches the entities whose number field is at least (atLeast,
// above) or at most (atMost, below) x, reported as the lookup's bound
// filter ("cr_max", "level_min"). x is inclusive (see inclusive).
func rangeFilter(field string, b bound, x float64, words string) softFilter {
	val := strconv.FormatFloat(x, 'f', -1, 64)
	if field == badgerstore.FieldCR {
		val = lkv1.ChallengeRatingText(x)
	}
	f := softFilter{field: field, values: []string{val}, words: words}
	name := map[string]string{badgerstore.FieldCR: "cr", badgerstore.FieldLevel: "level",
		badgerstore.FieldCost: "cost", badgerstore.FieldWeight: "weight"}[field]
	if b == atLeast || b == above {
		f.report = name + "_min"
		f.match = func(v *badgerstore.View) badgerstore.Set { return v.Range(field, &x, nil) }
	} else {
		f.report = name + "_max"
		f.match = func(v *badgerstore.View) badgerstore.Set { return v.Range(field, nil, &x) }
	}
	return f
}

func numberFilter(field string, x float64, words string) softFilter {
	return softFilter{field: field, values: []string{lkv1.ChallengeRatingText(x)}, words: words,
		match: func(v *badgerstore.View) badgerstore.Set { return v.Range(field, &x, &x) }}
}

func boolFilter(field string, b bool, words string) softFilter {
	val := strconv.FormatBool(b)
	return softFilter{field: field, values: []string{val}, words: words,
		match: func(v *badgerstore.View) badgerstore.Set { return v.Postings(field, val) }}
}

// keywordFilter matches any of values; negated, none of them.
func keywordFilter(field string, values []string, negated bool, words string) softFilter {
	return softFilter{field: field, values: values, negated: negated, words: words,
		match: func(v *badgerstore.View) badgerstore.Set { return v.Postings(field, values...) }}
}

// damageFilter matches what deals a damage type: a spell or weapon of it,
// or an item whose text rolls it (Flame Tongue's fire).
func damageFilter(val, words string) softFilter {
	return softFilter{field: badgerstore.FieldDamageType, values: []string{val}, words: words,
		match: func(v *badgerstore.View) badgerstore.Set {
			set := v.Postings(badgerstore.FieldDamageType, val)
			set.Or(v.Postings(badgerstore.FieldDamageDealt, val))
			return set
		}}
}

// maxNamedWords bounds the names looked for in a question, in words.
const maxNamedWords = 4

// namedIn returns the stored names a question's words (those not read as
// filters) say (storedNames), when the question is mostly names ("what
// does Fireball do", "vampire weaknesses", "how does sneak attack work"):
// names inside a description ("a cross between an owl and a bear") are
// not what it asks for.
func namedIn(v *badgerstore.View, words []string, used []bool, hasKinds func([]lkv1.Kind) bool) (out []string, spans [][2]int) {
	out, spans = storedNames(v, words, used, hasKinds)
	n := 0
	for _, h := range spans {
		for i := h[0]; i < h[1]; i++ {
			if !stopword(words[i]) {
				n++
			}
		}
	}
	if 2*n < contentWords(words, used) {
		return nil, nil
	}
	return out, spans
}

// storedNames returns the stored names, entities' or their features'
// ("sneak attack"), that words not used say, longest first, and where
// each is in words.
func storedNames(v *badgerstore.View, words []string, used []bool, hasKinds func([]lkv1.Kind) bool) (out []string, spans [][2]int) {
	taken := make([]bool, len(words))
	// "fire damage" is damage of a type, not the damage type Fire and the
	// rule Damage (SRD 5.2's glossary has one) said side by side.
	for i := 0; i+1 < len(words); i++ {
		if words[i+1] == "damage" && slices.Contains(lkv1.DamageTypes(), words[i]) {
			taken[i], taken[i+1] = true, true
		}
	}
	for n := maxNamedWords; n >= 1; n-- {
		for i := 0; i+n <= len(words); i++ {
			if slices.Contains(used[i:i+n], true) || slices.Contains(taken[i:i+n], true) || stopword(words[i]) || stopword(words[i+n-1]) {
				continue
			}
			if phrase, ok := storedName(v, words[i:i+n], hasKinds); ok {
				out = append(out, phrase)
				spans = append(spans, [2]int{i, i + n})
				for j := i; j < i+n; j++ {
					taken[j] = true
				}
			}
		}
	}
	return out, spans
}

// bornBy reports whether something of the kinds asked (has) bears a
// stored name (storedName), as its name or a feature's.
func bornBy(v *badgerstore.View, phrase string, has func([]lkv1.Kind) bool) bool {
	found := false
	for _, field := range []string{badgerstore.FieldName, badgerstore.FieldFeature} {
		v.Postings(field, phrase).Each(func(slot uint32) bool {
			found = has([]lkv1.Kind{v.Kind(slot)})
			return !found
		})
		if found {
			return true
		}
	}
	return false
}

// contentWords counts the words of a question that say what it asks: not
// used (nil: none is), not stop words, not asking words.
func contentWords(words []string, used []bool) int {
	n := 0
	for i, w := range words {
		if (used == nil || !used[i]) && !stopword(w) && !asking[w] {
			n++
		}
	}
	return n
}

// storedName returns the name, entity's or feature's, that words say, as
// stored: the words as they are, with one hyphen between two of them
// ("half orc" is Half-Orc: the question's words split at hyphens), or the
// last in the singular, if something of the kinds asked (hasKinds) bears
// that name.
func storedName(v *badgerstore.View, words []string, hasKinds func([]lkv1.Kind) bool) (string, bool) {
	has := func(name string) bool {
		return nameExists(v, name) || !v.Postings(badgerstore.FieldFeature, name).Empty()
	}
	phrase := strings.Join(words, " ")
	if has(phrase) {
		return phrase, true
	}
	for j := 1; j < len(words); j++ {
		hyphened := strings.Join(words[:j], " ") + "-" + strings.Join(words[j:], " ")
		if has(hyphened) {
			return hyphened, true
		}
	}
	// A plural is its singular's name ("owlbears": Owlbear), but for the
	// kinds' own nouns ("spells" asks for spells, not one named Spell);
	// so is a verb's "-s" ("blinks": Blink), so only a name of the kinds
	// asked counts.
	last := words[len(words)-1]
	if _, kind := kindNouns[last]; kind || !strings.HasSuffix(last, "s") {
		return "", false
	}
	head := strings.Join(words[:len(words)-1], " ")
	singulars := []string{last[:len(last)-1]}
	if sg, ok := strings.CutSuffix(last, "es"); ok {
		singulars = append(singulars, sg)
	}
	if sg, ok := strings.CutSuffix(last, "ies"); ok {
		singulars = append(singulars, sg+"y")
	}
	for _, sg := range singulars {
		if len(sg) < 3 {
			continue
		}
		if phrase := strings.TrimSpace(head + " " + sg); bornBy(v, phrase, hasKinds) { // its postings: no lookup before it
			return phrase, true
		}
	}
	return "", false
}

// asking are the question words BM25 keeps (its stop words hold "what",
// "which", "who", "when"), which say no more of what is asked than those:
// "how does rage work" is mostly the name "rage", "tell me about the
// longsword" the name "longsword".
var asking = map[string]bool{"how": true, "why": true, "where": true, "tell": true, "about": true, "explain": true, "describe": true,
	// What is asked of a named thing: "how much does a longsword cost",
	// "how much does plate armor weigh", "how many hit points does an ogre
	// have".
	"much": true, "many": true, "cost": true, "costs": true, "price": true, "weigh": true, "weighs": true}

// nameExists reports whether some entity is named name (lower-case),
// through the name trigrams: only the names with name's rarest trigram
// are compared.
func nameExists(v *badgerstore.View, name string) bool {
	r := []rune(" " + name + " ")
	if len(r) < 3 {
		return false
	}
	var rarest []uint32
	for i := 0; i+3 <= len(r); i++ {
		ids := v.NamesWithTrigram(string(r[i : i+3]))
		if i == 0 || len(ids) < len(rarest) {
			rarest = ids
		}
	}
	for _, id := range rarest {
		if v.NameOfID(id) == name {
			return true
		}
	}
	return false
}

// inCreatureName reports whether some creature's name contains phrase.
func inCreatureName(v *badgerstore.View, phrase string) bool {
	phrase = strings.TrimSpace(phrase)
	if !strings.Contains(phrase, " ") {
		return false
	}
	return v.Memo("creature-name\x00"+phrase, func() any {
		found := false
		for _, name := range relevance.NamesSharingTrigrams(v, phrase, 0) {
			if containsWords(name, phrase) { // whole words: "hydra dragon" holds no "a dragon"
				s := v.Postings(badgerstore.FieldName, name)
				s.Each(func(slot uint32) bool {
					found = v.Kind(slot) == lkv1.Kind_KIND_CREATURE
					return !found
				})
			}
			if found {
				break
			}
		}
		return found
	}).(bool)
}

// readDocuments reads the documents a question names: a run of at least
// two words starting a document's name ("Tome of Beasts", "Level Up"), the
// name's initials ("SRD", "ToB"), its version ("5.1"), or the year of its
// game system ("2024"). Several readings narrow each other.
func (u *understanding) readDocuments(voc *vocabulary, words []string, used []bool) {
	var sets [][]string
	var said []string
	for i := 0; i < len(words); i++ {
		if used[i] {
			continue
		}
		// The longest run of words a name starts with ("Tome of Beasts");
		// the names it is the whole of, when there are ("Tome of Beasts",
		// not "Tome of Beasts 2").
		var keys, whole []string
		n := 0
		for _, d := range voc.docs {
			m := 0
			for m < len(d.name) && i+m < len(words) && !used[i+m] && words[i+m] == d.name[m] {
				m++
			}
			if m < 2 || m < len(d.name) && stopword(d.name[m-1]) || m < n {
				continue
			}
			if m > n {
				n, keys, whole = m, nil, nil
			}
			keys = append(keys, d.key)
			if m == len(d.name) {
				whole = append(whole, d.key)
			}
		}
		if len(whole) > 0 {
			keys = whole
		}
		if n == 0 {
			// One word: initials ("SRD", "ToB"), a version ("5.1"), a game
			// system's year ("2024"), "homebrew" (every OrcBrew document).
			n = 1
			for _, d := range voc.docs {
				if len(d.acronym) >= 3 && words[i] == d.acronym || d.version != "" && words[i] == d.version ||
					len(words[i]) == 4 && strings.HasSuffix(d.gameSystem, "-"+words[i]) ||
					d.homebrew && (words[i] == "homebrew" || words[i] == "orcbrew") {
					keys = append(keys, d.key)
				}
			}
		}
		if len(keys) == 0 {
			continue
		}
		slices.Sort(keys)
		sets = append(sets, slices.Compact(keys))
		for j := i; j < i+n; j++ {
			used[j] = true
		}
		said = append(said, strings.Join(words[i:i+n], " "))
		i += n - 1
	}
	if len(sets) == 0 {
		return
	}
	docs := sets[0]
	for _, s := range sets[1:] {
		if both := slices.DeleteFunc(slices.Clone(docs), func(k string) bool { return !slices.Contains(s, k) }); len(both) > 0 {
			docs = both
		} else {
			docs = append(docs, s...)
		}
	}
	slices.Sort(docs)
	u.docs, u.docWord = slices.Compact(docs), strings.Join(said, ", ")
}

func stopword(w string) bool { return len(relevance.Tokenize(w)) == 0 }

// orderField is a numeric field a superlative orders by: its value in an
// entity, and the kinds having it.
type orderField struct {
	name  string
	kinds []lkv1.Kind
	value func(e *lkv1.Entity) (float64, bool)
	// column is the number field holding the value for the entities
	// having one (badgerstore.EntityFields), or "" (a weapon's range).
	column string
}

var (
	orderRange = orderField{"range", weaponKinds, func(e *lkv1.Entity) (float64, bool) {
		w := e.GetItem().GetWeapon()
		return float64(max(w.GetRangeLong(), w.GetRangeNormal())), w != nil
	}, ""}
	orderAC = orderField{"armor_class", []lkv1.Kind{lkv1.Kind_KIND_CREATURE, lkv1.Kind_KIND_ARMOR}, func(e *lkv1.Entity) (float64, bool) {
		if c := e.GetCreature(); c != nil {
			return float64(c.GetArmorClass()), true
		}
		a := e.GetItem().GetArmor()
		return float64(a.GetAcBase()), a != nil
	}, badgerstore.FieldArmorClass}
	orderCR = orderField{"challenge_rating", creatureKinds, func(e *lkv1.Entity) (float64, bool) {
		c := e.GetCreature()
		return c.GetChallengeRating(), c != nil
	}, badgerstore.FieldCR}
	orderHP = orderField{"hit_points", creatureKinds, func(e *lkv1.Entity) (float64, bool) {
		c := e.GetCreature()
		return float64(c.GetHitPoints()), c != nil
	}, badgerstore.FieldHitPoints}
	orderLevel = orderField{"level", spellKinds, func(e *lkv1.Entity) (float64, bool) {
		s := e.GetSpell()
		return float64(s.GetLevel()), s != nil
	}, badgerstore.FieldLevel}
	orderCost = orderField{"cost_gp", itemKinds, func(e *lkv1.Entity) (float64, bool) {
		it := e.GetItem()
		return it.GetCostGp(), it != nil && it.CostGp != nil
	}, badgerstore.FieldCost}
	orderWeight = orderField{"weight_lb", itemKinds, func(e *lkv1.Entity) (float64, bool) {
		it := e.GetItem()
		return it.GetWeightLb(), it != nil && it.WeightLb != nil
	}, badgerstore.FieldWeight}
)

// fieldNouns name a numeric field after a superlative ("highest AC").
var fieldNouns = map[string][]orderField{
	"ac": {orderAC}, "armor class": {orderAC}, "armour class": {orderAC}, "range": {orderRange},
	"cr": {orderCR}, "challenge rating": {orderCR}, "challenge": {orderCR}, "hit point": {orderHP}, "hp": {orderHP},
	"level": {orderLevel}, "spell level": {orderLevel}, "cost": {orderCost}, "price": {orderCost}, "weight": {orderWeight},
}

var stemmedFieldNouns = func() map[string][]orderField {
	m := map[string][]orderField{}
	for k, fs := range fieldNouns {
		m[stemKey(strings.Fields(k))] = fs
	}
	return m
}()

// superlatives: "highest" etc. before a field noun, and the adjectives
// that name their field themselves. Power is a creature's challenge
// rating (a spell's level is asked as "highest level": "the weakest" of a
// spell question is more often its targets); a creature's age category
// rises with its challenge rating (wyrmling, young, adult, ancient), so
// "oldest" orders by it as well. The best armor is the one with the
// highest armor class.
var (
	largest  = map[string]bool{"highest": true, "best": true, "most": true, "greatest": true, "biggest": true, "largest": true, "top": true, "max": true, "maximum": true, "longest": true}
	smallest = map[string]bool{"lowest": true, "least": true, "smallest": true, "worst": true, "min": true, "minimum": true, "fewest": true, "shortest": true}
	power    = []orderField{orderCR}
	implied  = map[string]struct {
		fields []orderField
		desc   bool
	}{
		"longest": {[]orderField{orderRange}, true}, "farthest": {[]orderField{orderRange}, true}, "furthest": {[]orderField{orderRange}, true},
		"shortest": {[]orderField{orderRange}, false}, "strongest": {power, true}, "deadliest": {power, true}, "toughest": {power, true},
		"most powerful": {power, true}, "most dangerous": {power, true}, "oldest": {[]orderField{orderCR}, true},
		"weakest": {power, false}, "easiest": {power, false}, "least powerful": {power, false}, "least dangerous": {power, false},
		"youngest": {[]orderField{orderCR}, false}, "cheapest": {[]orderField{orderCost}, false}, "most expensive": {[]orderField{orderCost}, true},
		"priciest": {[]orderField{orderCost}, true}, "costliest": {[]orderField{orderCost}, true}, "heaviest": {[]orderField{orderWeight}, true},
		"lightest": {[]orderField{orderWeight}, false}, "best": {[]orderField{orderAC}, true},
	}
)

// armorNear reports whether armor is said within three words after
// words[i]: "best" orders by armor class only then ("the best medium
// armor"), not the best weapon or monster.
func armorNear(stems []string, i int) bool {
	return slices.ContainsFunc(stems[i+1:min(i+4, len(stems))], func(s string) bool { return s == "armor" || s == "armour" })
}

// readOrder reads a superlative: a field named after "highest" and the
// like wins over an adjective naming its field itself.
func readOrder(words, stems []string, used []bool, has func(kinds []lkv1.Kind) bool) *ordering {
	pick := func(fields []orderField, desc bool, words string) *ordering {
		for _, f := range fields {
			if has(f.kinds) {
				return &ordering{field: f.name, desc: desc, words: words, value: f.value, kinds: f.kinds, column: f.column}
			}
		}
		return nil
	}
	for i, w := range words {
		if used[i] || !largest[w] && !smallest[w] || i+1 >= len(words) {
			continue
		}
		for n := 2; n >= 1; n-- {
			if i+1+n > len(words) {
				continue
			}
			if fs, ok := stemmedFieldNouns[strings.Join(stems[i+1:i+1+n], " ")]; ok {
				if o := pick(fs, largest[w], strings.Join(words[i:i+1+n], " ")); o != nil {
					for j := i; j < i+1+n; j++ {
						used[j] = true
					}
					return o
				}
			}
		}
	}
	for i, w := range words {
		if used[i] {
			continue
		}
		for _, phrase := range []string{w + " " + strings.Join(words[i+1:min(i+2, len(words))], ""), w} {
			if sup, ok := implied[phrase]; ok && (phrase != "best" || armorNear(stems, i)) {
				if o := pick(sup.fields, sup.desc, phrase); o != nil {
					n := len(strings.Fields(phrase))
					for j := i; j < i+n; j++ {
						used[j] = true
					}
					return o
				}
			}
		}
	}
	return nil
}
