package query

import (
	"slices"
	"strings"

	"lorekeeper.dev/embedder/badgerstore"
	"lorekeeper.dev/embedder/relevance"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// valueReader reads the catalogue's own values (vocabulary): creature
// types, sizes, schools, classes, weapon properties, armor categories,
// casting times, item categories and rarities, creatures' ways of moving,
// the longest phrase first ("a Large undead", "medium armor", "wizard
// spell", "bonus action", "flying undead").
type valueReader struct{}

func (valueReader) facet() string { return "value" }

func (valueReader) read(r *reading) {
	for n := r.voc.maxWords; n >= 1; n-- {
		for i := 0; i+n <= len(r.words); i++ {
			if slices.Contains(r.used[i:i+n], true) {
				continue
			}
			fvs := r.voc.phrases[strings.Join(r.stems[i:i+n], " ")]
			if len(fvs) == 0 {
				continue
			}
			byField := map[string][]string{}
			var fields []string
			for _, fv := range fvs {
				if !saidAs(r, fv.field, i, n) {
					continue
				}
				if byField[fv.field] == nil {
					fields = append(fields, fv.field)
				}
				byField[fv.field] = append(byField[fv.field], fv.value)
			}
			if len(fields) == 0 {
				continue
			}
			neg := r.negated(i, 2)
			phrase := r.mark(i, i+n)
			for _, f := range fields {
				r.add(keywordFilter(f, byField[f], neg, phrase))
			}
		}
	}
}

// saidAs reports whether words[i:i+n], a value of field, is said as one
// where it stands.
func saidAs(r *reading, field string, i, n int) bool {
	next := r.word(i + n)
	switch field {
	case badgerstore.FieldSize:
		// "Large" is a size before a creature type or noun only ("a Large
		// undead", "a Huge mount"), not "a large group".
		return r.voc.types[relevance.Stem(next)] || creatureNouns[next] || companionNouns[next]
	case badgerstore.FieldCreatureType, badgerstore.FieldMovement:
		// A type or a movement inside a creature's name is the name's
		// ("giant rat", "dragon turtle", "giant fly").
		return !inCreatureName(r.v, r.word(i-1)+" "+r.words[i]) && !inCreatureName(r.v, r.words[i+n-1]+" "+next)
	case badgerstore.FieldProperty:
		// Before "armor" a word is the armor's category ("light armor",
		// "heavy armor"), not a weapon's property; before "weapon" the
		// other way round.
		st := relevance.Stem(next)
		return st != "armor" && st != "armour" && r.voc.saidOfEquipment(next)
	case badgerstore.FieldArmorCategory:
		return relevance.Stem(next) != "weapon" && r.voc.saidOfEquipment(next)
	}
	return true
}

// nonEquipment are the kinds lookup_equipment does not serve.
var nonEquipment = slices.DeleteFunc(lkv1.Kinds(), func(k lkv1.Kind) bool { return slices.Contains(lkv1.EquipmentKinds(), k) })

// creatureNouns may follow a size ("a Large creature").
var creatureNouns = map[string]bool{"creature": true, "creatures": true, "monster": true, "monsters": true, "one": true, "ones": true}
