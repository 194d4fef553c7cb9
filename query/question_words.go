package query

import (
	"slices"
	"strings"
	"unicode"

	"lorekeeper.dev/embedder/relevance"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

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

func stopword(w string) bool { return len(relevance.Tokenize(w)) == 0 }

// negations are the words that turn the filter after them around ("no
// stealth disadvantage", "won't ruin my stealth").
var negations = map[string]bool{"no": true, "not": true, "without": true, "never": true, "non": true, "wont": true,
	"dont": true, "doesnt": true, "isnt": true, "cant": true, "nor": true}

// chatSpellings are the words players type for others in a hurry ("wat
// happens when ur stunned"): the readers read the words meant.
var chatSpellings = map[string]string{"wat": "what", "wut": "what", "wht": "what", "ur": "youre", "u": "you",
	"r": "are", "cuz": "because", "bc": "because"}

// spelledOut replaces chat spellings in words (questionWords) by the words
// they stand for.
func spelledOut(words []string) []string {
	for i, w := range words {
		if full, ok := chatSpellings[w]; ok {
			words[i] = full
		}
	}
	return words
}
