package query

import (
	"slices"
	"strconv"

	"lorekeeper.dev/embedder/badgerstore"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

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
