package query

import (
	"slices"

	"lorekeeper.dev/embedder/badgerstore"
)

// effectReader reads what a question wants done, as the entities' texts
// say they do it (badgerstore's Effect values): "stop enemies from
// moving" (immobilize), "slow them down", "a light source", "talk to the
// dead", "see in the dark", "cross a chasm" (climb, jump or fly), "a
// spell to fly", "breathe underwater", "teleport", "summon", "detect".
// The words of a way of moving stay for the other readers: "flying" is a
// creature's movement too (valueReader).
type effectReader struct{}

func (effectReader) facet() string { return "effect" }

func (effectReader) read(r *reading) {
	for i := 0; i < len(r.words); i++ {
		if r.used[i] {
			continue
		}
		for _, p := range effectPhrases {
			to, ok := p.at(r, i)
			if !ok {
				continue
			}
			fields := p.fields
			if len(fields) == 0 {
				fields = []string{badgerstore.FieldEffect}
			}
			if !slices.ContainsFunc(fields, r.has) {
				continue // a later phrase may read the words for these kinds
			}
			phrase := r.mark(i, to)
			for _, f := range fields {
				r.add(keywordFilter(f, p.effects, false, phrase))
			}
			// The words stay in the terms, as a condition's do.
			if !p.taken {
				r.keep()
			}
			i = to - 1
			break
		}
	}
}

// effectPhrase is a way a question says an effect: a first word (one of
// first), then within reach words one of next (none: the first word
// alone); when after is set, the first word comes within afterReach words
// after one of after ("walk upside down on the ceiling").
type effectPhrase struct {
	first   []string
	next    []string
	reach   int
	after   []string
	effects []string
	// fields are read, each where the request's kinds hold it; none:
	// badgerstore.FieldEffect.
	fields []string
	taken  bool // the words leave the terms
}

// afterReach is how many words an effectPhrase's first word may come
// after one of its after words.
const afterReach = 3

// at reads the phrase at word i: the end of its words, and whether it is
// there.
func (p effectPhrase) at(r *reading, i int) (int, bool) {
	if !slices.Contains(p.first, r.words[i]) {
		return 0, false
	}
	if len(p.after) > 0 && !slices.ContainsFunc(r.words[max(i-afterReach, 0):i], func(w string) bool { return slices.Contains(p.after, w) }) {
		return 0, false
	}
	if len(p.next) == 0 {
		return i + 1, true
	}
	for j := i + 1; j <= i+1+p.reach && j < len(r.words); j++ {
		if slices.Contains(p.next, r.words[j]) {
			return j + 1, true
		}
	}
	return 0, false
}

var (
	talkVerbs = []string{"talk", "talks", "talking", "speak", "speaks", "speaking", "communicate", "communicating",
		"converse", "chat", "question", "questions", "interrogate"}
	crossings = []string{"chasm", "chasms", "gap", "gaps", "pit", "pits", "ravine", "canyon", "gorge", "river", "rivers", "crevasse", "cliff"}
)

// effectPhrases are read in order: the first that fits a word wins.
var effectPhrases = []effectPhrase{
	{first: []string{"stop", "stops", "stopping", "prevent", "keep", "keeps"}, next: []string{"moving", "movement", "escaping", "fleeing", "running"}, reach: 3, effects: []string{badgerstore.EffectImmobilize}},
	{first: []string{"immobilize", "immobilizes", "immobilise", "immobilised", "immobilized", "immobile", "root", "roots", "pin"}, effects: []string{badgerstore.EffectImmobilize}},
	{first: []string{"hold", "holds", "freeze", "freezes"}, next: []string{"place"}, reach: 3, effects: []string{badgerstore.EffectImmobilize}},
	{first: []string{"cant", "cannot"}, next: []string{"move"}, reach: 0, effects: []string{badgerstore.EffectImmobilize}},
	{first: []string{"slow", "slows", "slowing", "bog"}, next: []string{"down", "them", "enemies", "foes", "creatures", "speed"}, reach: 1, effects: []string{badgerstore.EffectSlow}},
	{first: []string{"half", "halve", "halves", "reduce", "reduces"}, next: []string{"speed", "movement"}, reach: 2, effects: []string{badgerstore.EffectSlow}},
	{first: []string{"difficult"}, next: []string{"terrain"}, effects: []string{badgerstore.EffectSlow}},
	{first: []string{"light"}, next: []string{"source", "sources", "up"}, effects: []string{badgerstore.EffectLight}},
	{first: []string{"source", "sources"}, next: []string{"light"}, reach: 1, effects: []string{badgerstore.EffectLight}},
	{first: []string{"illuminate", "illuminates", "illumination", "lighting"}, effects: []string{badgerstore.EffectLight}},
	{first: []string{"bright", "dim"}, next: []string{"light"}, effects: []string{badgerstore.EffectLight}},
	{first: talkVerbs, next: []string{"dead", "corpse", "corpses", "deceased", "ghost", "ghosts", "spirits"}, reach: 3, effects: []string{badgerstore.EffectTalkDead}},
	{first: talkVerbs, next: []string{"animal", "animals", "beast", "beasts"}, reach: 3, effects: []string{badgerstore.EffectTalkBeast}},
	{first: talkVerbs, next: []string{"plant", "plants", "trees"}, reach: 3, effects: []string{badgerstore.EffectTalkPlant}},
	{first: []string{"telepathy", "telepathically", "telepathic", "translate", "translates"}, effects: []string{badgerstore.EffectTalk}},
	{first: []string{"see"}, next: []string{"dark", "darkness"}, reach: 2, effects: []string{badgerstore.EffectDarkvision}},
	{first: []string{"darkvision", "nightvision"}, effects: []string{badgerstore.EffectDarkvision}},
	{first: []string{"cross", "crossing", "across", "over"}, next: crossings, reach: 2, effects: []string{badgerstore.EffectClimb, badgerstore.EffectJump, badgerstore.EffectFly}},
	{first: []string{"climb", "climbing", "scale"}, next: []string{"wall", "walls", "cliff", "tower", "up"}, reach: 3, effects: []string{badgerstore.EffectClimb}},
	{first: []string{"climb", "climbing", "climber"}, effects: []string{badgerstore.EffectClimb}},
	{first: []string{"on", "up", "along", "across"}, next: []string{"wall", "walls", "ceiling", "ceilings"}, reach: 1, after: []string{"walk", "walks", "walking", "run", "running", "crawl", "crawling", "stand", "standing"}, effects: []string{badgerstore.EffectClimb}},
	{first: []string{"jump", "jumping", "leap", "leaping"}, effects: []string{badgerstore.EffectJump}},
	{first: []string{"fly", "flying", "flight", "levitate"}, effects: []string{badgerstore.EffectFly}},
	// Wings are a creature's fly speed, and a spell's or an item's flight;
	// the word leaves the terms, which every dragon's Wing Attack says.
	{first: []string{"winged", "wings"}, effects: []string{badgerstore.EffectFly}, fields: []string{badgerstore.FieldMovement, badgerstore.FieldEffect}, taken: true},
	{first: []string{"breathe", "breathing"}, next: []string{"underwater", "water"}, reach: 1, effects: []string{badgerstore.EffectSwim}},
	{first: []string{"swim", "swimming"}, effects: []string{badgerstore.EffectSwim}},
	// A creature's own way of moving, said as what it does ("bursts up
	// out of the ground").
	{first: []string{"burst", "bursts", "erupt", "erupts", "emerge", "emerges", "rise", "rises"}, next: []string{"ground", "earth", "sand", "underground"}, reach: 4, effects: []string{"burrow"}, fields: []string{badgerstore.FieldMovement}},
	{first: []string{"underground", "tunnel", "tunnels", "tunneling", "tunnelling", "dig", "digs", "digging"}, effects: []string{"burrow"}, fields: []string{badgerstore.FieldMovement}},
	{first: []string{"teleport", "teleports", "teleportation", "teleporting"}, effects: []string{badgerstore.EffectTeleport}},
	{first: []string{"summon", "summons", "summoning", "conjure", "conjuring"}, effects: []string{badgerstore.EffectSummon}},
	{first: []string{"detect", "detects", "detecting", "detection", "locate", "locating"}, effects: []string{badgerstore.EffectDetect}},
	{first: []string{"see", "look", "peek", "peer", "watch", "hear", "listen"}, next: []string{"through", "beyond", "behind", "afar", "remotely"}, reach: 1, effects: []string{badgerstore.EffectScry}},
	{first: []string{"spy", "spying", "scry", "scrying", "eavesdrop", "eavesdropping"}, effects: []string{badgerstore.EffectScry}},
}
