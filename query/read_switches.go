package query

import (
	"strings"

	"lorekeeper.dev/embedder/badgerstore"
	"lorekeeper.dev/embedder/relevance"
)

// spellSwitchReader reads what a spell is or is not: "concentration",
// "ritual", "healing" (a spell that restores hit points: "healing spells
// for a cleric", "a necromancy spell that does not heal").
type spellSwitchReader struct{}

func (spellSwitchReader) facet() string { return "spell-switch" }

func (spellSwitchReader) read(r *reading) {
	for i, w := range r.words {
		if r.used[i] {
			continue
		}
		switch strings.TrimSuffix(w, "s") {
		case "concentration":
			r.add(boolFilter(badgerstore.FieldConcentration, !r.negated(i, 2), r.mark(i, i+1)))
		case "ritual":
			r.add(boolFilter(badgerstore.FieldRitual, !r.negated(i, 2), r.mark(i, i+1)))
		case "heal", "heals", "healing", "healer", "healers":
			// A name ("Healing Word") is the name's. The word stays in
			// the terms: the healers' texts say it, and how much they do
			// ranks them among themselves.
			r.add(boolFilter(badgerstore.FieldHealing, !r.negated(i, 2), r.mark(i, i+1)))
			r.used[i] = false
		}
	}
}

// equipmentSwitchReader reads what a weapon or armor is or is not:
// "stealth disadvantage" (and "no stealth disadvantage", "won't ruin my
// stealth"), "ranged" or "melee", "simple" or "martial", "one-handed",
// "one or two hands" (versatile).
type equipmentSwitchReader struct{}

func (equipmentSwitchReader) facet() string { return "equipment-switch" }

func (equipmentSwitchReader) read(r *reading) {
	for i, w := range r.words {
		if r.used[i] {
			continue
		}
		switch strings.TrimSuffix(w, "s") {
		case "stealth", "stealthy":
			// Armor is asked about stealth to keep it: only "stealth
			// disadvantage" without a negation asks for the disadvantage.
			disadv := strings.HasPrefix(r.word(i+1), "disadvantage")
			to := i + 1
			if disadv {
				to = i + 2
			}
			r.add(boolFilter(badgerstore.FieldStealthDisadvantage, disadv && !r.negated(i, 4), r.mark(i, to)))
		case "ranged", "melee":
			r.add(boolFilter(badgerstore.FieldRanged, (w == "ranged") != r.negated(i, 2), r.mark(i, i+1)))
		case "simple", "martial":
			// Said of a weapon, or asked of equipment alone.
			if relevance.Stem(r.word(i+1)) == "weapon" || !r.hasKinds(nonEquipment) {
				r.add(boolFilter(badgerstore.FieldSimple, w == "simple", r.mark(i, i+1)))
			}
		case "one", "single":
			switch {
			case r.word(i+1) == "or" && r.word(i+2) == "two" && strings.HasPrefix(r.word(i+3), "hand"):
				// "One or two hands" is what the versatile property says
				// of a weapon, not two-handed.
				r.add(keywordFilter(badgerstore.FieldProperty, []string{"versatile"}, false, r.mark(i, i+4)))
			case r.word(i+1) == "handed" || r.word(i+1) == "hand" && relevance.Stem(r.word(i+2)) == "weapon":
				r.add(keywordFilter(badgerstore.FieldProperty, []string{"two-handed"}, true, r.mark(i, i+2)))
			}
		}
	}
}

// legendaryReader reads "legendary" of a creature: "legendary actions",
// "legendary resistance", "a legendary monster", "a legendary dragon";
// else it is an item's rarity (valueReader).
type legendaryReader struct{}

func (legendaryReader) facet() string { return "legendary" }

func (legendaryReader) read(r *reading) {
	for i, w := range r.words {
		if r.used[i] || w != "legendary" {
			continue
		}
		switch next := relevance.Stem(r.word(i + 1)); {
		case strings.HasPrefix(next, "action") || strings.HasPrefix(next, "resist") || creatureNouns[r.word(i+1)]:
			r.add(boolFilter(badgerstore.FieldLegendary, !r.negated(i, 2), r.mark(i, i+2)))
		case r.voc.types[next]: // the type is valueReader's
			r.add(boolFilter(badgerstore.FieldLegendary, !r.negated(i, 2), r.mark(i, i+1)))
		}
	}
}
