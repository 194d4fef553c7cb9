package query

import (
	"lorekeeper.dev/embedder/badgerstore"
	"lorekeeper.dev/embedder/relevance"
)

// damageReader reads a damage type: dealt ("fire damage", "fire spells",
// "a cold cantrip", "piercing weapons"), a creature's defence ("immune
// to fire", "cold resistance", "weak to fire"), or what protects from it
// ("protect yourself from fire damage" is Fire Shield's resistance, not
// fire dealt).
type damageReader struct{}

func (damageReader) facet() string { return "damage" }

func (damageReader) read(r *reading) {
	for i, st := range r.stems {
		if r.used[i] || !r.voc.damage[st] {
			continue
		}
		// A defence said before the type ("immune to fire", "protect
		// yourself from fire damage") or after it ("cold resistance").
		rel, from, to := damageRelations[r.word(i+1)], i, i+1
		protect := protectWords[r.word(i+1)]
		if rel != "" || protect {
			to = i + 2
		} else {
			// Four words back: "protect the party from fire".
			for j := max(0, i-4); j < i; j++ {
				if d := damageRelations[r.words[j]]; d != "" || protectWords[r.words[j]] {
					rel, protect, from = d, protectWords[r.words[j]], j
				}
			}
		}
		switch {
		case rel != "" || protect:
			// A creature's own defence; what a spell, an item or an
			// option protects from (badgerstore.FieldProtection).
			words := r.mark(from, to)
			if rel != "" {
				r.add(keywordFilter(rel, []string{r.words[i]}, false, words))
			}
			if rel != badgerstore.FieldDamageVulnerability {
				r.add(keywordFilter(badgerstore.FieldProtection, []string{r.words[i]}, false, words))
			}
		case r.word(i+1) == "damage":
			r.add(damageFilter(r.words[i], r.mark(i, i+2)))
		case damageNouns[relevance.Stem(r.word(i+1))]:
			// "fire spells", "a cold cantrip", "piercing weapons".
			r.add(damageFilter(r.words[i], r.mark(i, i+1)))
		}
	}
}

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
