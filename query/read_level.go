package query

import (
	"strconv"
	"strings"

	"lorekeeper.dev/embedder/badgerstore"
	"lorekeeper.dev/embedder/relevance"
)

// levelReader reads a spell's level: "a cantrip", "3rd-level", "level 3
// spell", "level 3 or lower", "at least 6th level"; and a character's
// level as the spells it reaches ("fire spells a 5th level wizard can
// cast": up to 3rd level, by the caster type of the catalogue's class). A
// level said of a named spell is the slot it is cast with ("fireball at
// 5th level"), and a party's is a challenge rating (partyReader).
type levelReader struct{}

func (levelReader) facet() string { return "level" }

func (levelReader) read(r *reading) {
	for i := 0; i < len(r.words); i++ {
		if r.used[i] {
			continue
		}
		if _, party := partyLevelAt(r, i); party {
			continue
		}
		w := r.words[i]
		switch {
		case r.stems[i] == "cantrip":
			r.addCompared(badgerstore.FieldLevel, 0, i, i+1)
		case ordinalNumber(w) > 0 && r.word(i+1) == "level" && character(r.v, r.word(i+2), r.word(i+3)) != nil:
			// "a 5th level wizard": the character's level, whose spells
			// go up to the 3rd ("a 3rd level wizard spell" is the spell's).
			if n := character(r.v, r.word(i+2), r.word(i+3))(ordinalNumber(w)); n > 0 {
				r.add(rangeFilter(badgerstore.FieldLevel, atMost, float64(n), r.mark(i, i+2)))
			}
			i++
		case w == "level" && character(r.v, r.word(i+2), r.word(i+3)) != nil:
			if l, err := strconv.Atoi(r.word(i + 1)); err == nil && l >= 1 && l <= 20 {
				if n := character(r.v, r.word(i+2), r.word(i+3))(l); n > 0 {
					r.add(rangeFilter(badgerstore.FieldLevel, atMost, float64(n), r.mark(i, i+2)))
				}
				i++
			}
		case ordinals[w] > 0 && r.word(i+1) == "level" && !r.atSlot(i):
			r.addCompared(badgerstore.FieldLevel, float64(ordinals[w]), i, i+2)
			i++
		case w == "level":
			// "level 3 spell", "level 3 or lower": not "level 3" alone,
			// more often a character's.
			n, err := strconv.Atoi(r.word(i + 1))
			if b, _, _ := compares(r.words, r.used, i, i+2); err == nil && n >= 1 && n <= 9 && !r.atSlot(i) && (relevance.Stem(r.word(i+2)) == "spell" || b != exactly) {
				r.addCompared(badgerstore.FieldLevel, float64(n), i, i+2)
				i++
			}
		}
	}
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
