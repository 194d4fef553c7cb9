package query

import (
	"strings"

	"lorekeeper.dev/embedder/badgerstore"
	"lorekeeper.dev/embedder/relevance"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

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
	// environments are the creatures' environments by the stems of the
	// words saying them (environmentVocabulary), environmentValues the
	// environments themselves.
	environments      map[string][]string
	environmentValues []string
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
	voc.environments = environmentVocabulary(v)
	v.Values(badgerstore.FieldEnvironment, func(val string, _ int) { voc.environmentValues = append(voc.environmentValues, val) })
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
