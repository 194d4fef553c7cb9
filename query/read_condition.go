package query

import (
	"slices"
	"strings"

	"lorekeeper.dev/embedder/badgerstore"
)

// conditionReader reads a condition and what the question wants done with
// it: inflicted ("paralyze a humanoid", "a monster that turns people to
// stone", "put enemies to sleep"), ended ("undo petrification", "cure
// poison", "remove a curse", "our rogue got turned to stone, how do we fix
// him") or warded off ("defence against mind control", "protection from
// fear"). It matches what the entities' texts say they do (badgerstore's
// condition fields).
type conditionReader struct{}

func (conditionReader) facet() string { return "condition" }

func (conditionReader) read(r *reading) {
	ends := conditionEnding(r)
	for i := 0; i < len(r.words); i++ {
		if r.used[i] {
			continue
		}
		c, n := conditionAt(r, i)
		if c == "" {
			continue
		}
		from := i
		field := badgerstore.FieldConditionInflicted
		switch {
		case ends >= 0:
			field = badgerstore.FieldConditionEnded
		default:
			for j := max(0, i-4); j < i; j++ {
				if !r.used[j] && protectWords[r.words[j]] {
					field, from = badgerstore.FieldProtection, j
					break
				}
			}
		}
		if field == badgerstore.FieldConditionInflicted && (c == "curse" || c == "disease" || states[r.words[i]] && !causedAt(r, i)) {
			// A state asked about is not what the answer must do: "is
			// this wine poisoned?", "a cursed sword".
			continue
		}
		r.add(keywordFilter(field, []string{c}, false, r.mark(from, i+n)))
		// The words stay in the terms: the texts and names saying them
		// ("Sleep", "Hold Person ... paralyzed") rank among those that do it.
		r.keep()
		i += n - 1
	}
}

// conditionWords are the words a question says a condition or an
// affliction with, and which it is. Phrases of several words are
// conditionPhrases.
var conditionWords = func() map[string]string {
	m := map[string]string{}
	for c, ws := range map[string][]string{
		"paralyzed":     {"paralyze", "paralyzes", "paralyzed", "paralyzing", "paralysis", "paralyse", "paralysed"},
		"restrained":    {"restrain", "restrains", "restrained", "restraining"},
		"petrified":     {"petrify", "petrifies", "petrified", "petrifying", "petrification"},
		"blinded":       {"blind", "blinds", "blinded", "blinding", "blindness"},
		"deafened":      {"deafen", "deafens", "deafened", "deafness", "deaf"},
		"frightened":    {"frighten", "frightens", "frightened", "fear", "fears", "scare", "scares", "terrify", "terrifies", "terrified"},
		"charmed":       {"charm", "charms", "charmed", "dominate", "dominates", "domination"},
		"poisoned":      {"poisoned", "poisoning"},
		"stunned":       {"stun", "stuns", "stunned"},
		"prone":         {"prone", "trip", "trips"},
		"unconscious":   {"unconscious", "asleep"},
		"grappled":      {"grapple", "grapples", "grappled"},
		"incapacitated": {"incapacitate", "incapacitates", "incapacitated"},
		"curse":         {"curse", "curses", "cursed"},
		"disease":       {"disease", "diseases", "diseased"},
	} {
		for _, w := range ws {
			m[w] = c
		}
	}
	return m
}()

// conditionPhrases are conditions said in several words, the last one
// or two fixed: "turn(s/ed) ... to stone", "mind control", "put ... to
// sleep", "knock ... prone/down/out".
var conditionPhrases = []struct {
	first   []string // the phrase's first word, one of these
	last    string   // its last words
	reach   int      // the most words between them
	meaning string
}{
	{[]string{"turn", "turns", "turned", "turning"}, "to stone", 2, "petrified"},
	{[]string{"turn", "turns", "turned", "turning"}, "into stone", 2, "petrified"},
	{[]string{"mind"}, "control", 0, "charmed"},
	{[]string{"put", "puts", "putting"}, "to sleep", 2, "unconscious"},
	{[]string{"knock", "knocks", "knocking"}, "prone", 2, "prone"},
	{[]string{"knock", "knocks", "knocking"}, "down", 2, "prone"},
	{[]string{"knock", "knocks", "knocking"}, "out", 2, "unconscious"},
	{[]string{"poison"}, "", 0, "poisoned"}, // "cure poison": poison damage is damageReader's
}

// conditionAt reads a condition at word i: the condition and how many
// words say it, or "".
func conditionAt(r *reading, i int) (string, int) {
	for _, p := range conditionPhrases {
		if !slices.Contains(p.first, r.words[i]) {
			continue
		}
		if p.last == "" {
			return p.meaning, 1
		}
		last := strings.Fields(p.last)
		for gap := 0; gap <= p.reach; gap++ {
			at := i + 1 + gap
			if at+len(last) > len(r.words) {
				break
			}
			if strings.Join(r.words[at:at+len(last)], " ") == p.last {
				return p.meaning, at + len(last) - i
			}
		}
	}
	if c, ok := conditionWords[r.words[i]]; ok {
		return c, 1
	}
	return "", 0
}

// states are the words that say a condition as a state ("paralyzed"):
// inflicting it takes a verb before them (causedAt).
var states = map[string]bool{"paralyzed": true, "paralysed": true, "restrained": true, "petrified": true, "blinded": true,
	"deafened": true, "deaf": true, "frightened": true, "terrified": true, "charmed": true, "poisoned": true, "stunned": true,
	"grappled": true, "incapacitated": true, "unconscious": true, "prone": true, "asleep": true, "cursed": true, "diseased": true}

// causedAt reports whether a verb within three words before word i makes
// the state there: "leaves them paralyzed", "knocked prone", "falls
// unconscious", "to be frightened".
func causedAt(r *reading, i int) bool {
	for j := max(0, i-3); j < i; j++ {
		if causatives[r.words[j]] {
			return true
		}
	}
	return false
}

var causatives = map[string]bool{"make": true, "makes": true, "making": true, "leave": true, "leaves": true, "left": true,
	"render": true, "renders": true, "rendered": true, "knock": true, "knocks": true, "knocked": true, "become": true,
	"becomes": true, "be": true, "get": true, "gets": true, "keep": true, "keeps": true, "fall": true, "falls": true,
	"cause": true, "causes": true, "drop": true, "drops": true, "turn": true, "turns": true, "knocking": true}

// endWords say a question wants a condition ended, wherever they are in it
// ("undo petrification", "our rogue got turned to stone, how do we fix
// him").
var endWords = map[string]bool{"cure": true, "cures": true, "undo": true, "undoes": true, "remove": true, "removes": true,
	"end": true, "ends": true, "fix": true, "fixes": true, "reverse": true, "reverses": true, "break": true, "breaks": true,
	"lift": true, "lifts": true, "rid": true, "restore": true, "restores": true, "neutralize": true, "neutralise": true,
	"unpetrify": true, "remedy": true, "treat": true, "heal": true, "heals": true}

// conditionEnding is where a question says it wants a condition ended, or
// -1. "Back to flesh" ends petrification too.
func conditionEnding(r *reading) int {
	for i, w := range r.words {
		if endWords[w] && !r.used[i] || w == "back" && r.word(i+1) == "to" && r.word(i+2) == "flesh" {
			return i
		}
	}
	return -1
}

// protectWords say a question wants a condition (or a damage type:
// damageReader) warded off.
var protectWords = map[string]bool{"protect": true, "protects": true, "protection": true, "protecting": true, "defence": true,
	"defense": true, "defend": true, "ward": true, "wards": true, "immune": true, "immunity": true, "resist": true,
	"resistance": true, "resistant": true, "prevent": true, "prevents": true, "safe": true, "proof": true, "guard": true}
