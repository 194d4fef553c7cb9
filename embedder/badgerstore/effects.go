package badgerstore

import (
	"hash/maphash"
	"regexp"
	"slices"
	"strings"
	"sync"

	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// What an entity does, read from its text, as facets: the conditions it
// inflicts and ends, the damage and conditions it protects from, and what
// else it does (it stops movement, sheds light, speaks with the dead...).
// 5etools tags every spell and monster this way (conditionInflict,
// damageInflict, miscTags); here the tags are read from the text at
// indexing, so that "stop enemies from moving" ranks the spells that
// paralyze or restrain first, whatever words their texts use. Damage dealt
// is FieldDamageType (the typed field) and FieldDamageDealt (an item's
// rolled damage). All are matched in memory (inMemoryOnly).
const (
	// FieldConditionInflicted: the conditions it inflicts ("paralyzed":
	// Hold Person; "petrified": the Medusa's gaze).
	FieldConditionInflicted = "condition_inflicted"
	// FieldConditionEnded: the conditions and afflictions it ends
	// ("petrified": Greater Restoration; "curse": Remove Curse).
	FieldConditionEnded = "condition_ended"
	// FieldProtection: the damage types it grants resistance or immunity
	// to, and the conditions it protects from ("fire": Fire Shield;
	// "charmed": Protection from Evil and Good, Mind Blank).
	FieldProtection = "protection"
	// FieldEffect: what else it does, one of the Effect values.
	FieldEffect = "effect"
)

// Effect values: what an entity does besides conditions and damage.
const (
	EffectImmobilize = "immobilize"  // stops movement: speed 0, restrained, paralyzed, grappled
	EffectSlow       = "slow"        // halves speed, makes difficult terrain
	EffectFly        = "fly"         // grants flight
	EffectClimb      = "climb"       // grants climbing
	EffectJump       = "jump"        // grants jumping
	EffectSwim       = "swim"        // grants swimming or breathing water
	EffectTeleport   = "teleport"    // moves by teleportation or to another plane
	EffectLight      = "light"       // sheds light
	EffectDarkvision = "darkvision"  // grants sight in darkness
	EffectTalk       = "talk"        // lets one speak with others
	EffectTalkDead   = "talk-dead"   // with the dead
	EffectTalkBeast  = "talk-beasts" // with animals
	EffectTalkPlant  = "talk-plants" // with plants
	EffectSummon     = "summon"      // calls creatures
	EffectDetect     = "detect"      // senses or finds what is hidden
	EffectScry       = "scry"        // sees or hears from afar: a sensor, another's eyes
)

// conditionWords are the conditions as a text says them, and the
// condition each is.
var conditionWords = map[string]string{
	"blinded": "blinded", "charmed": "charmed", "deafened": "deafened", "frightened": "frightened",
	"grappled": "grappled", "incapacitated": "incapacitated", "invisible": "invisible", "paralyzed": "paralyzed",
	"paralysed": "paralyzed", "petrified": "petrified", "poisoned": "poisoned", "prone": "prone",
	"restrained": "restrained", "stunned": "stunned", "unconscious": "unconscious",
}

// afflictions are what an entity ends besides conditions, as a text names
// them ("neutralize the poison", "remove the curse", "undo petrification").
var afflictions = map[string]string{
	"curse": "curse", "curses": "curse", "cursed": "curse", "disease": "disease", "diseases": "disease",
	"poison": "poisoned", "poisons": "poisoned", "petrification": "petrified", "paralysis": "paralyzed",
	"blindness": "blinded", "deafness": "deafened", "exhaustion": "exhaustion",
}

// conditionCues are in every word of conditionWords and afflictions;
// protectCues in every match of protectDamage.
var (
	conditionCues = []string{"blind", "charm", "deaf", "frighten", "grappl", "incapacitat", "invisible", "paraly",
		"petrif", "poison", "prone", "restrain", "stun", "unconscious", "curse", "disease", "exhaust"}
	protectCues = []string{"resistan", "immun", "protect"}
)

// stopping are the conditions that stop a creature moving.
var stopping = []string{"restrained", "paralyzed", "grappled", "petrified"}

// effectFields adds to f what e does, read from its text: a creature's
// conditions inflicted (its own defences are its fields); a spell's, an
// item's and a character option's conditions inflicted and ended, its
// protections and effects.
func effectFields(f *Fields, e *lkv1.Entity) {
	k := e.GetKind()
	creature := k == lkv1.Kind_KIND_CREATURE
	if !creature && k != lkv1.Kind_KIND_SPELL && !slices.Contains(lkv1.EquipmentKinds(), k) && !slices.Contains(lkv1.CharacterOptionKinds(), k) {
		return
	}
	if creature && e.GetDocument().GetSource() != lkv1.Source_SOURCE_ORCBREW {
		// Ingestion read what its actions inflict and deal (their typed
		// fields): reading the stat block again, the longest texts of a
		// catalogue, would only cost a load its time.
		for _, b := range e.GetBlocks() {
			f.kw(FieldConditionInflicted, b.GetConditions()...)
			f.kw(FieldDamageDealt, b.GetDamageTypes()...)
		}
		return
	}
	r := effectsRead.read(entityProse(e))
	inflicted := conditionsInflicted(e, r)
	f.kw(FieldConditionInflicted, inflicted...)
	if creature {
		// The damage its actions deal, as their typed fields say.
		for _, b := range e.GetBlocks() {
			f.kw(FieldDamageDealt, b.GetDamageTypes()...)
		}
		return
	}
	if k != lkv1.Kind_KIND_SPELL {
		// A spell's healing is read with its healing roll (EntityFields).
		f.bool(FieldHealing, restoresHitPoints(e.GetDescription()))
	}
	f.kw(FieldConditionEnded, r.ended...)
	f.kw(FieldProtection, r.protection...)
	f.kw(FieldEffect, r.effects...)
	for _, c := range inflicted {
		if slices.Contains(stopping, c) {
			f.kw(FieldEffect, EffectImmobilize)
		}
	}
}

// conditionsInflicted are the conditions e inflicts: an Open5e spell's
// typed conditions (read from its text at ingestion, none when it read
// none), else what its text says (r): an item's, an option's, or an
// OrcBrew entity's, which ingestion does not fill.
func conditionsInflicted(e *lkv1.Entity, r effectReading) []string {
	if e.GetKind() == lkv1.Kind_KIND_SPELL && e.GetDocument().GetSource() != lkv1.Source_SOURCE_ORCBREW {
		return e.GetSpell().GetConditions()
	}
	typed := slices.Clone(e.GetSpell().GetConditions())
	for _, b := range e.GetBlocks() {
		typed = append(typed, b.GetConditions()...)
	}
	if len(typed) > 0 {
		return typed
	}
	return r.inflicted
}

// entityProse is the text an entity's effects are read from: its
// description, what it does at higher levels and its blocks' texts.
func entityProse(e *lkv1.Entity) string {
	var b strings.Builder
	b.WriteString(e.GetDescription())
	b.WriteString("\n")
	b.WriteString(e.GetHigherLevel())
	for _, bl := range e.GetBlocks() {
		b.WriteString("\n")
		b.WriteString(bl.GetText())
	}
	return b.String()
}

// effectReading is what readEffects reads in a text.
type effectReading struct {
	inflicted, ended, protection, effects []string
}

func (r *effectReading) add(list *[]string, v string) {
	if !slices.Contains(*list, v) {
		*list = append(*list, v)
	}
}

// effectsRead keeps what readEffects read of each text a process reads.
// Reading is a pure function of the text, costly beside the rest of
// EntityFields (its expressions over every sentence), and a process reads
// the same texts again: a store's rebuild, a re-index, every store a test
// makes of the catalogue. The package's one piece of shared state, so a
// bounded one, safe for concurrent use; callers do not modify what it
// returns.
var effectsRead = &effectMemo{seed: maphash.MakeSeed(), max: 1 << 15}

type effectMemo struct {
	seed maphash.Seed
	max  int
	mu   sync.Mutex
	m    map[uint64]effectReading
}

// read is readEffects(text), read once per text while it is kept (the
// whole memo is let go when it holds max texts).
func (c *effectMemo) read(text string) effectReading {
	k := maphash.String(c.seed, text)
	c.mu.Lock()
	r, ok := c.m[k]
	c.mu.Unlock()
	if ok {
		return r
	}
	r = readEffects(text)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= c.max {
		c.m = make(map[uint64]effectReading)
	}
	c.m[k] = r
	return r
}

// readEffects reads a text sentence by sentence.
func readEffects(text string) effectReading {
	var r effectReading
	lower := strings.ToLower(text)
	// carried: what a sentence ending something leads into ("... end one
	// condition afflicting it. The condition can be blinded", "end one of
	// the following effects:" and its list).
	carried := false
	for _, s := range sentences(lower) {
		listed := strings.HasPrefix(s, "- ") || strings.HasPrefix(s, "* ")
		carry := carried && (listed || strings.HasPrefix(s, "the condition") || strings.HasPrefix(s, "the effect"))
		// Each reading runs only on a sentence with its words (a cheap
		// look first): a store's open reads every homebrew text, 40,000
		// of them in a large store.
		if containsAny(s, conditionCues) {
			r.conditions(s, carry)
		}
		if containsAny(s, protectCues) {
			r.protections(s)
		}
		r.otherEffects(s)
		carried = carry && listed || endAt(s) >= 0 && (strings.HasSuffix(s, ":") || strings.Contains(s, "condition"))
	}
	return r
}

// sentences splits lower-case text at sentence ends and line breaks.
func sentences(text string) []string {
	var out []string
	start := 0
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c == '\n' || (c == '.' || c == '!' || c == '?') && (i+1 == len(text) || text[i+1] == ' ' || text[i+1] == '\n') {
			if s := strings.TrimSpace(text[start:i]); s != "" {
				out = append(out, s)
			}
			start = i + 1
		}
	}
	if s := strings.TrimSpace(text[start:]); s != "" {
		out = append(out, s)
	}
	return out
}

var (
	// endVerb ends a condition said after it in its sentence: "end one
	// condition", "cures", "removes", "neutralize", "undo" (endAt leaves
	// out "the end of" a turn). Not "the spell ends", which ends the
	// spell's own effect.
	endVerb = regexp.MustCompile(`\b(?:end|ending|cures?|curing|removes?|removing|neutraliz\w*|undoe?s?|reverses?|rid of|free (?:\w+ )?from|frees|suppress\w*)\b`)
	// inflictVerb ends the words before a condition the entity inflicts:
	// "is paralyzed", "falls prone", "be frightened", "becomes restrained",
	// "knocked prone", "subjected to the petrified condition", "against
	// being magically petrified" (a save against it).
	inflictVerb = regexp.MustCompile(`(?:\bis|\bare|\bbe|\bbecomes?|\bbecoming|\bbecame|\bfalls?|\bfell|\bknock(?:s|ed)?(?: \w+)?|\bleft|\bremains?|\brendered|\bsubjected to the|\bgains? the|\bhas the|\bhave the|\bsuffers? the|\bagainst being|\bmakes? (?:it|them|the target)|\bleaves? (?:it|them|the target))\s+(?:\w+\s+){0,2}$`)
	// negated ends the words before a condition that is said not to be:
	// "isn't charmed", "is not frightened", "can't be".
	// "neither reduce the target's speed nor cause the target to be
	// paralyzed" (Freedom of Movement). Or one a creature is said to be
	// in, not put in: "if you are prone", "if the creature has the Prone
	// condition", "a creature that is restrained".
	negated = regexp.MustCompile(`(?:n't|\bnot|\bnever|\bno longer|\bcannot)\s+(?:\w+\s+){0,2}$|\b(?:nor|neither)\s+(?:\S+\s+){0,5}$|\bif\s+(?:\w+\s+){0,2}(?:is|are|has the|have the)\s+$|\b(?:that|who|which)\s+(?:is|are)\s+$`)
	// protectVerb ends the words before the conditions an entity protects
	// from: "can't be charmed, frightened, or possessed", "immune to being
	// frightened", "advantage on saving throws against being charmed".
	// "Creatures immune to being charmed aren't affected" protects no one.
	protectVerb = regexp.MustCompile(`(?:\bcan't|\bcannot|\bcan not)\s+(?:be|become)\s+|(?:\bis|\bare|\bbecomes?|\bbe|'re|\bhas|\bhave|\bgains?|\bgrants?(?: \w+)?) (?:\w+ )?immun(?:e|ity) to\s+|\badvantage on (?:\w+ )?saving throws? (?:made )?against\s+`)
	// listed is what lies between two conditions of one list: ", ", " or
	// ", ", and ".
	listed = regexp.MustCompile(`^(?:,? (?:or|and) |, )$`)
	// endsAfter ends an affliction named before it: "all curses
	// affecting one creature or object end".
	endsAfter = regexp.MustCompile(`\b(?:end|ends|ended|removed|broken|lifted|cured)$|\b(?:end|ends|ended|is removed|is broken|is lifted|is cured)\b`)
	// protectDamage says the entity grants resistance or immunity (or
	// protection) to the damage types named after it in the sentence.
	protectDamage = regexp.MustCompile(`\b(?:resistan(?:ce|t)|immun(?:e|ity)|protect(?:s|ed|ion)?)\b`)
	// ignores undoes a resistance: "ignore resistance to fire", "loses its
	// resistance".
	ignores = regexp.MustCompile(`\b(?:ignores?|loses?|lose|bypass\w*|without|vulnerab\w*)\b`)
)

// conditions reads the conditions sentence s inflicts, ends and protects
// from. carried: the sentence before ended something its own sentence
// names ("... end one condition afflicting it. The condition can be
// blinded, ...").
func (r *effectReading) conditions(s string, carried bool) {
	end := endAt(s)
	var protect [][]int
	if containsAny(s, protectStems) {
		protect = protectVerb.FindAllStringIndex(s, -1)
	}
	// A condition listed after another ("paralyzed or restrained") is
	// read as that one was.
	var last *[]string
	lastEnd := -1
	forEachWord(s, func(w string, at int) {
		if a, ok := afflictions[w]; ok && (end >= 0 && end < at || carried || endsAfter.MatchString(s[at:])) {
			r.add(&r.ended, a)
		}
		c, ok := conditionWords[w]
		if !ok {
			return
		}
		before := tail(s[:at])
		var list *[]string
		switch {
		case lastEnd >= 0 && listed.MatchString(s[lastEnd:at]):
			list = last
		case carried || end >= 0 && end < at && !inflictVerb.MatchString(before):
			list = &r.ended
		case protectedAt(s, protect, at):
			list = &r.protection
		case negated.MatchString(before):
		case inflictVerb.MatchString(before):
			list = &r.inflicted
		}
		if list != nil {
			r.add(list, c)
		}
		last, lastEnd = list, at+len(w)
	})
}

// tail is the last words of s, as many as inflictVerb and negated look
// back over (a few words before a condition): matching an expression
// anchored at the end still walks the whole of what it is given.
func tail(s string) string {
	const reach = 120
	if len(s) <= reach {
		return s
	}
	t := s[len(s)-reach:]
	if i := strings.IndexByte(t, ' '); i >= 0 {
		return t[i:] // from a word's start: \b must not see a word cut
	}
	return t
}

// endAt is where the first verb ending a condition is in s, or -1: not
// "the end of" a turn.
func endAt(s string) int {
	if !containsAny(s, endStems) {
		return -1
	}
	for _, m := range endVerb.FindAllStringIndex(s, -1) {
		if s[m[0]:m[1]] == "end" && (strings.HasPrefix(s[m[1]:], " of") || strings.HasSuffix(s[:m[0]], "the ")) {
			continue
		}
		return m[0]
	}
	return -1
}

// endStems and protectStems are words every match of endVerb and of
// protectVerb has: a sentence with none of them is not run through the
// expression, which cost most of reading a whole catalogue's texts.
var (
	endStems     = []string{"end", "cur", "remov", "neutraliz", "undo", "revers", "rid of", "free", "suppress"}
	protectStems = []string{"can't", "cannot", "can not", "immun", "advantage on"}
)

// containsAny reports whether s contains one of subs.
func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// protectedAt reports whether the condition at at ends a list right after a
// protecting verb ("can't be charmed, frightened, or possessed").
func protectedAt(s string, protect [][]int, at int) bool {
	for _, p := range protect {
		if p[1] > at || at-p[1] > 130 {
			continue
		}
		list := s[p[1]:at]
		if !strings.ContainsAny(list, ".;") && !strings.Contains(list, " is ") && !strings.Contains(list, " are ") {
			return true
		}
	}
	return false
}

// protections reads the damage types sentence s protects from: the types
// named after "resistance", "immune" or "protection" in it, unless it
// takes a resistance away.
func (r *effectReading) protections(s string) {
	loc := protectDamage.FindStringIndex(s)
	if loc == nil || ignores.MatchString(s[:loc[0]]) {
		return
	}
	after := s[loc[1]:min(len(s), loc[1]+160)]
	if ignores.MatchString(after) {
		return
	}
	forEachWord(after, func(w string, _ int) {
		if slices.Contains(lkv1.DamageTypes(), w) {
			r.add(&r.protection, w)
		}
	})
}

// effectPatterns read what else a sentence says the entity does; a
// sentence is tried only when it holds the pattern's cue (a cheap test
// before the regexp).
var effectPatterns = []struct {
	cue    string
	effect string
	re     *regexp.Regexp
}{
	{"speed", EffectImmobilize, regexp.MustCompile(`\bspeed (?:becomes|is|of|drops to|is reduced to|falls to|to) 0\b|\bspeed is 0\b`)},
	// A creature that can't move, not "you" or the spell's own disk, and
	// not Haste's lethargy "when the spell ends" (otherEffects).
	{"move", EffectImmobilize, regexp.MustCompile(`\b(?:target|creature|creatures|it|they)\s+(?:can't|cannot|can not|is unable to|are unable to)\s+move\b|\b(?:becomes?|is|are|and) unable to move\b`)},
	{"speed", EffectSlow, regexp.MustCompile(`\bspeed (?:is )?(?:halved|reduced)|\bhalf (?:its |their |your |the target's )?speed\b|\breduc\w* (?:its|their|the target's|the creature's) speed`)},
	{"difficult terrain", EffectSlow, regexp.MustCompile(`\bdifficult terrain\b`)},
	{"fly", EffectFly, regexp.MustCompile(`\bfl(?:ying|y) speed\b|\bcan fly\b|\bability to fly\b`)},
	{"climb", EffectClimb, regexp.MustCompile(`\bclimb(?:ing)? speed\b|\bcan (?:then |also )?climb\b|\bclimb (?:up|down|across|difficult)|\bvertical surfaces\b`)},
	{"jump", EffectJump, regexp.MustCompile(`\bjump(?:ing)? distance\b|\bcan jump\b|\bjump (?:up to|a distance)`)},
	{"swim", EffectSwim, regexp.MustCompile(`\bswim(?:ming)? speed\b|\bcan swim\b`)},
	{"breathe", EffectSwim, regexp.MustCompile(`\bbreathe (?:underwater|water)\b`)},
	{"teleport", EffectTeleport, regexp.MustCompile(`\bteleports?\b|\bteleportation\b`)},
	{"plane", EffectTeleport, regexp.MustCompile(`\b(?:to|into) (?:another|a different) plane\b`)},
	{"light", EffectLight, regexp.MustCompile(`\b(?:sheds?|casts?|emits?|gives? off|provid\w*|fill\w* \w+ with) (?:bright |dim )?light\b|\bbright light in an? \d+`)},
	{"dark", EffectDarkvision, regexp.MustCompile(`\bdarkvision\b|\bsee (?:normally )?in (?:the )?dark(?:ness)?\b`)},
	{"summon", EffectSummon, regexp.MustCompile(`\bsummons?\b|\bsummoning\b`)},
	{"unoccupied space", EffectSummon, regexp.MustCompile(`\b(?:creature|steed|spirit|beast|servant|guardian|mount|construct|elemental|undead|fey|fiend|celestial)s? (?:appears?|materializes?) (?:\w+ ){0,6}in (?:an|\w+) unoccupied spaces?\b`)},
	{"conjure", EffectSummon, regexp.MustCompile(`\bconjures? (?:\w+ ){0,3}(?:creatures?|spirits?|elementals?|fey|beasts?|celestials?|fiends?|undead|animals?|minions?|servants?|allies|ally)\b`)},
	{"detect", EffectDetect, regexp.MustCompile(`\bdetects?\b`)},
	{"sense", EffectDetect, regexp.MustCompile(`\bsense the presence\b`)},
	{"locat", EffectDetect, regexp.MustCompile(`\b(?:learn|know|sense|reveal)s? the location\b|\blocates?\b`)},
	// Not "scrying" alone: Nondetection's targets can't be perceived
	// through scrying sensors.
	{"sensor", EffectScry, regexp.MustCompile(`\b(?:invisible|magical|scrying) sensor\b`)},
	{"see through", EffectScry, throughEyes},
	{"hear through", EffectScry, throughEyes},
	{"visual information", EffectScry, regexp.MustCompile(`\bvisual information\b`)},
}

// throughEyes is seeing or hearing through another's eyes or ears, or a
// sensor. Its cues are the two verbs with "through": "through" alone is
// in too many of the texts a store's open reads.
var throughEyes = regexp.MustCompile(`\b(?:see|hear) through (?:the|its|a|an|this|that|your) (?:\S+ )?(?:eyes?|ears?|sensor)\b`)

// talking reads that the entity lets one speak with another, and with
// whom: "speak with", "communicate with", "telepathically", "answer the
// questions you pose" (Speak with Dead's corpse).
var (
	talking  = regexp.MustCompile(`\b(?:speak|talk|communicate|converse) (?:telepathically )?with\b|\btelepathic\w*\b|\bunderstand (?:any|every|all) (?:spoken )?languages?\b|\banswers? (?:the |your |up to \w+ )?questions\b|\bask (?:it|them) (?:up to \w+ )?questions\b`)
	theDead  = regexp.MustCompile(`\b(?:corpses?|dead|deceased|spirits? of the)\b`)
	beasts   = regexp.MustCompile(`\b(?:beasts?|animals?)\b`)
	plants   = regexp.MustCompile(`\bplants?\b`)
	cuesTalk = []string{"speak", "talk", "communicat", "convers", "telepath", "language", "question"}
)

// otherEffects reads what else sentence s says the entity does.
func (r *effectReading) otherEffects(s string) {
	aftermath := strings.HasPrefix(s, "when the spell ends")
	for _, p := range effectPatterns {
		if aftermath && p.effect == EffectImmobilize {
			continue // what the spell leaves its own target with
		}
		if strings.Contains(s, p.cue) && p.re.MatchString(s) {
			r.add(&r.effects, p.effect)
		}
	}
	if slices.ContainsFunc(cuesTalk, func(c string) bool { return strings.Contains(s, c) }) && talking.MatchString(s) {
		r.add(&r.effects, EffectTalk)
		switch {
		case theDead.MatchString(s):
			r.add(&r.effects, EffectTalkDead)
		case beasts.MatchString(s):
			r.add(&r.effects, EffectTalkBeast)
		case plants.MatchString(s):
			r.add(&r.effects, EffectTalkPlant)
		}
	}
}

// forEachWord calls fn with each word of lower-case s (letters only) and
// where it starts.
func forEachWord(s string, fn func(w string, at int)) {
	start := -1
	for i := 0; i <= len(s); i++ {
		letter := i < len(s) && s[i] >= 'a' && s[i] <= 'z'
		switch {
		case letter && start < 0:
			start = i
		case !letter && start >= 0:
			fn(s[start:i], start)
			start = -1
		}
	}
}
