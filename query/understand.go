package query

import (
	"slices"

	"lorekeeper.dev/embedder/badgerstore"
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
	complete float64
	// onFields: some filter is on a field besides the kind (answers).
	onFields bool
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
	// by is the facet of the reader that read it.
	by string
}

// ordering is a superlative over a numeric field.
type ordering struct {
	field  string // as reported
	desc   bool
	words  string
	value  func(e *lkv1.Entity) (float64, bool)
	kinds  []lkv1.Kind
	column string // orderField.column
	by     string // the reader's facet
}

// fieldKinds are the kinds holding each filter field (as EntityFields
// writes them): a soft filter on a field applies to these kinds only.
var (
	spellKinds    = []lkv1.Kind{lkv1.Kind_KIND_SPELL}
	creatureKinds = []lkv1.Kind{lkv1.Kind_KIND_CREATURE}
	weaponKinds   = []lkv1.Kind{lkv1.Kind_KIND_WEAPON}
	armorKinds    = []lkv1.Kind{lkv1.Kind_KIND_ARMOR}
	itemKinds     = lkv1.EquipmentKinds()
	// effectKinds are those whose effects are read from their text
	// (badgerstore's effect fields): spells, equipment and character
	// options; a creature's conditions inflicted too.
	effectKinds = slices.Concat(spellKinds, itemKinds, lkv1.CharacterOptionKinds())
	fieldKinds  = map[string][]lkv1.Kind{
		badgerstore.FieldLevel:               spellKinds,
		badgerstore.FieldSchool:              spellKinds,
		badgerstore.FieldClass:               spellKinds,
		badgerstore.FieldConcentration:       spellKinds,
		badgerstore.FieldRitual:              spellKinds,
		badgerstore.FieldHealing:             effectKinds,
		badgerstore.FieldCastingTime:         spellKinds,
		badgerstore.FieldDamageType:          {lkv1.Kind_KIND_SPELL, lkv1.Kind_KIND_WEAPON, lkv1.Kind_KIND_CREATURE},
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
		badgerstore.FieldConditionInflicted:  slices.Concat(effectKinds, creatureKinds),
		badgerstore.FieldConditionEnded:      effectKinds,
		badgerstore.FieldProtection:          effectKinds,
		badgerstore.FieldEffect:              effectKinds,
		badgerstore.FieldEnvironment:         creatureKinds,
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

// readers read a question's facets, one reader each, in this order: a
// reader takes the words it reads (reading.add), and the readers after it
// see them no more ("CR 5" is a challenge rating before the level reader
// looks for levels). Each has its table of questions it must and must not
// read, beside it (read_*_test.go); a new phrasing is a row there first.
var readers = []reader{
	crReader{},
	partyReader{},
	levelReader{},
	amountReader{},
	damageReader{},
	spellSwitchReader{},
	equipmentSwitchReader{},
	legendaryReader{},
	bookReader{},
	editionReader{},
	effectReader{},
	valueReader{},
	conditionReader{},
	environmentReader{},
	companionReader{},
	sizeReader{},
	kindReader{},
	howItWorksReader{},
	orderReader{},
}

// reader reads one facet of a question: it finds its words in r and adds
// what they say (r.add, r.addDocuments, r.setOrder).
type reader interface {
	// facet names what it reads ("cr", "level"), as its table does.
	facet() string
	read(r *reading)
}

// understand reads q against the catalogue's vocabulary for a request
// over kinds: every filter and order its readers find on a field one of
// kinds holds. Nil: nothing understood.
func understand(v *badgerstore.View, q string, kinds []lkv1.Kind) *understanding {
	r := newReading(v, q, kinds)
	if r == nil {
		return nil
	}
	r.readAll()
	return r.finish(q)
}

// readAll lets every reader read the question, in turn.
func (r *reading) readAll() {
	for _, rd := range readers {
		r.by = rd.facet()
		rd.read(r)
	}
}
