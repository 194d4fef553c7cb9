package relevance

import (
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Trigrams returns the distinct character trigrams of " s " (s padded with
// a space each side, so that first and last letters weigh in).
func Trigrams(s string) []string {
	r := []rune(" " + s + " ")
	if len(r) < 3 {
		return nil
	}
	out := make([]string, 0, len(r)-2)
	for i := 0; i+3 <= len(r); i++ {
		g := string(r[i : i+3])
		dup := false
		for _, o := range out {
			if o == g {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, g)
		}
	}
	return out
}

// TrigramIndex is what typo-tolerant name matching reads: the distinct
// names, by ID, having each trigram.
type TrigramIndex interface {
	// NameIDs bounds the name IDs: they are below it.
	NameIDs() int
	NamesWithTrigram(g string) []uint32
	NameOfID(id uint32) string
}

// NamesSharingTrigrams returns the names of ix whose trigrams overlap q's
// with a Dice coefficient of at least minDice (and two trigrams at least):
// the candidates for typo-tolerant name matching, sorted.
func NamesSharingTrigrams(ix TrigramIndex, q string, minDice float64) []string {
	out := NamesByTrigrams(ix, q, minDice, ix.NameIDs())
	sort.Strings(out)
	return out
}

// NamesByTrigrams returns at most limit names of ix whose trigrams overlap
// q's with a Dice coefficient of at least minDice (and two trigrams at
// least), the largest overlap first (then by name): the few candidates
// worth an edit distance.
func NamesByTrigrams(ix TrigramIndex, q string, minDice float64, limit int) []string {
	qt := Trigrams(strings.ToLower(q))
	// Counts by name ID in a slice, not a map: this runs on every missed
	// lookup over thousands of names.
	counts := make([]uint16, ix.NameIDs())
	var touched []uint32
	for _, g := range qt {
		for _, id := range ix.NamesWithTrigram(g) {
			if counts[id] == 0 {
				touched = append(touched, id)
			}
			counts[id]++
		}
	}
	type scored struct {
		name string
		dice float64
	}
	var out []scored
	for _, id := range touched {
		c := counts[id]
		// " name " has at most len(name) distinct trigrams, so a name
		// sharing c of them has c letters at least: 2c/(len(qt)+c) bounds
		// its Dice coefficient before its letters are counted.
		if c < 2 || 2*float64(c)/float64(len(qt)+int(c)) < minDice {
			continue
		}
		n := ix.NameOfID(id)
		if d := 2 * float64(c) / float64(len(qt)+utf8.RuneCountInString(n)); d >= minDice {
			out = append(out, scored{n, d})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].dice != out[j].dice {
			return out[i].dice > out[j].dice
		}
		return out[i].name < out[j].name
	})
	names := make([]string, 0, min(limit, len(out)))
	for _, x := range out[:min(limit, len(out))] {
		names = append(names, x.name)
	}
	return names
}

// Typo tolerance: how close a near name must be.
const (
	// MinFuzzySim is the least NameSimilarity of a near name in search.
	MinFuzzySim = 0.7
	// MinSuggestSim is the least NameSimilarity of a did-you-mean
	// suggestion: looser than search, since a suggestion is offered, never
	// substituted.
	MinSuggestSim = 0.5
	// SuggestDice is the trigram overlap that makes a name a candidate,
	// and SuggestCandidates how many of the most overlapping are compared
	// by edit distance.
	SuggestDice       = 0.25
	SuggestCandidates = 48
)

// NormalizeName is a name as people type it reduced to what matters for
// matching: lower case, apostrophes dropped ("Hunter's" meets "hunters"),
// every other run of punctuation or space a single space.
func NormalizeName(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range strings.ToLower(s) {
		switch {
		case r == '\'' || r == '’' || r == '‘' || r == '`':
			continue
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteRune(r)
		default:
			space = true
		}
	}
	return b.String()
}

// NameSimilarity is 1 - edit distance / the longer length, over the
// normalised names: 1 for the same name, 0 for nothing in common.
func NameSimilarity(a, b string) float64 {
	ar, br := []rune(a), []rune(b)
	longest := max(len(ar), len(br))
	if longest == 0 {
		return 1
	}
	return 1 - float64(EditDistance(ar, br))/float64(longest)
}

// EditDistance is the Damerau-Levenshtein (optimal string alignment)
// distance between a and b.
func EditDistance(a, b []rune) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// ReadingOrder returns a name the catalogue writes head first, the way a
// price list or a monster book's index does ("Crossbow, light", "Lantern,
// Hooded", "Minotaur, Ravening", "Gnome, Deep (Svirfneblin)", "Longsword
// (+1)"), in the order people say it ("light crossbow", "hooded lantern",
// "ravening minotaur", "deep gnome", "+1 longsword"), lower-case; any
// other name lower-case as it is. A list ("Climbing, Swimming and
// Crawling") is no inversion.
func ReadingOrder(name string) string {
	s := strings.ToLower(strings.TrimSpace(name))
	if !strings.Contains(s, ", ") && !strings.Contains(s, "+") {
		return s // nearly every name: no regexp read
	}
	if m := plusSuffix.FindStringSubmatch(s); m != nil {
		return m[2] + " " + ReadingOrder(m[1])
	}
	inner := s
	if i := strings.LastIndex(inner, " ("); i > 0 && strings.HasSuffix(inner, ")") {
		inner = inner[:i] // the gloss after an inverted name
	}
	head, tail, ok := strings.Cut(inner, ", ")
	if !ok || head == "" || tail == "" || strings.Contains(tail, ",") || strings.Contains(" "+tail+" ", " and ") {
		return s
	}
	return tail + " " + head
}

// plusSuffix is a magic weapon's or armor's bonus written after its name:
// "longsword (+1)", "longsword, +1".
var plusSuffix = regexp.MustCompile(`^(.+?),? \(?(\+[1-9])\)?$`)
