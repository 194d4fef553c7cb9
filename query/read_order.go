package query

import (
	"slices"
	"strings"

	"lorekeeper.dev/embedder/badgerstore"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

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
		// Plain weak and easy ask for the weakest too ("weak undead for
		// level 1 characters"), but not "weak to sunlight".
		"weak": {power, false}, "easy": {power, false},
		// "A bow with long range" wants the longest.
		"long range": {[]orderField{orderRange}, true},
	}
)

// armorNear reports whether armor is said within three words after
// words[i]: "best" orders by armor class only then ("the best medium
// armor"), not the best weapon or monster.
func armorNear(stems []string, i int) bool {
	return slices.ContainsFunc(stems[i+1:min(i+4, len(stems))], func(s string) bool { return s == "armor" || s == "armour" })
}

// weakTo reports whether plain weak or easy says what a creature is
// vulnerable to or what is easy to do ("weak to sunlight", "easy to
// hide"), not its power.
func weakTo(phrase, next string) bool {
	return (phrase == "weak" || phrase == "easy") && (next == "to" || next == "against")
}

// orderReader reads a superlative ("longest range", "highest AC",
// "strongest", "cheapest"): a field named after "highest" and the like
// wins over an adjective naming its field itself. A monster "for a level
// 8 party" with no other order said: the fairest fights first, the
// challenge ratings nearest the party's level (below it, by the filter);
// not a companion (companionReader). Not in a question about how the game
// works.
type orderReader struct{}

func (orderReader) facet() string { return "superlative" }

func (orderReader) read(r *reading) {
	if r.howItWorks {
		return
	}
	pick := func(fields []orderField, desc bool, words string) *ordering {
		for _, f := range fields {
			if r.hasKinds(f.kinds) {
				return &ordering{field: f.name, desc: desc, words: words, value: f.value, kinds: f.kinds, column: f.column}
			}
		}
		return nil
	}
	words, stems := r.words, r.stems
	for i, w := range words {
		if r.used[i] || !largest[w] && !smallest[w] || i+1 >= len(words) {
			continue
		}
		for n := 2; n >= 1; n-- {
			if i+1+n > len(words) {
				continue
			}
			if fs, ok := stemmedFieldNouns[strings.Join(stems[i+1:i+1+n], " ")]; ok {
				if o := pick(fs, largest[w], strings.Join(r.said[i:i+1+n], " ")); o != nil {
					r.setOrder(o, i, i+1+n)
					return
				}
			}
		}
	}
	for i, w := range words {
		if r.used[i] {
			continue
		}
		for _, phrase := range []string{w + " " + strings.Join(words[i+1:min(i+2, len(words))], ""), w} {
			if sup, ok := implied[phrase]; ok && (phrase != "best" || armorNear(stems, i)) && !weakTo(phrase, r.word(i+1)) {
				if o := pick(sup.fields, sup.desc, phrase); o != nil {
					r.setOrder(o, i, i+len(strings.Fields(phrase)))
					return
				}
			}
		}
	}
	if r.party != "" && !r.companion && r.hasKinds(orderCR.kinds) {
		o := &ordering{field: orderCR.name, desc: true, words: r.party, value: orderCR.value, kinds: orderCR.kinds, column: orderCR.column}
		o.by = r.by
		r.u.order = o
	}
}
