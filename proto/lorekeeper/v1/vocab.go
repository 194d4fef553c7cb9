package lorekeeperv1

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"
)

// The vocabulary every module shares: the slugs of kinds and sources as they
// appear in subjects, keys, URIs and tool arguments. Kept beside the
// generated code so that no module spells them differently.

var kindSlugs = map[Kind]string{
	Kind_KIND_SPELL:           "spell",
	Kind_KIND_CREATURE:        "creature",
	Kind_KIND_WEAPON:          "weapon",
	Kind_KIND_ARMOR:           "armor",
	Kind_KIND_MAGIC_ITEM:      "magic-item",
	Kind_KIND_ITEM:            "item",
	Kind_KIND_CLASS:           "class",
	Kind_KIND_SUBCLASS:        "subclass",
	Kind_KIND_RACE:            "race",
	Kind_KIND_SUBRACE:         "subrace",
	Kind_KIND_BACKGROUND:      "background",
	Kind_KIND_FEAT:            "feat",
	Kind_KIND_RULE:            "rule",
	Kind_KIND_RULE_SECTION:    "rule-section",
	Kind_KIND_CONDITION:       "condition",
	Kind_KIND_DAMAGE_TYPE:     "damage-type",
	Kind_KIND_WEAPON_PROPERTY: "weapon-property",
	Kind_KIND_SKILL:           "skill",
	Kind_KIND_ABILITY_SCORE:   "ability-score",
	Kind_KIND_MAGIC_SCHOOL:    "magic-school",
	Kind_KIND_LANGUAGE:        "language",
	Kind_KIND_PROFICIENCY:     "proficiency",
	Kind_KIND_ALIGNMENT:       "alignment",
	Kind_KIND_INVOCATION:      "invocation",
	Kind_KIND_BOON:            "boon",
	Kind_KIND_SELECTION:       "selection",
	Kind_KIND_ENCOUNTER:       "encounter",
}

var kindsBySlug = func() map[string]Kind {
	m := make(map[string]Kind, len(kindSlugs))
	for k, s := range kindSlugs {
		m[s] = k
	}
	return m
}()

// Slug is the kind's lower-case hyphenated name ("magic-item"), or "" for
// KIND_UNSPECIFIED.
func (k Kind) Slug() string { return kindSlugs[k] }

// KindFromSlug returns the kind named by slug ("magic-item"); ok is false
// for anything else.
func KindFromSlug(slug string) (k Kind, ok bool) {
	k, ok = kindsBySlug[strings.ToLower(slug)]
	return k, ok
}

// Kinds returns every kind but KIND_UNSPECIFIED, in enum order.
func Kinds() []Kind {
	out := make([]Kind, 0, len(kindSlugs))
	for i := int32(1); i < int32(len(Kind_name)); i++ {
		out = append(out, Kind(i))
	}
	return out
}

var sourceSlugs = map[Source]string{
	Source_SOURCE_OPEN5E_V1: "open5e_v1",
	Source_SOURCE_OPEN5E_V2: "open5e_v2",
	Source_SOURCE_ORCBREW:   "orcbrew",
}

// Slug is the source's name as users and subjects write it ("open5e_v2").
func (s Source) Slug() string { return sourceSlugs[s] }

// SourceFromSlug returns the source named by slug; ok is false otherwise.
func SourceFromSlug(slug string) (Source, bool) {
	for s, name := range sourceSlugs {
		if strings.EqualFold(name, slug) {
			return s, true
		}
	}
	return Source_SOURCE_UNSPECIFIED, false
}

// SubjectPrefix is the common prefix of every entity event subject.
const SubjectPrefix = "lorekeeper.entity"

// Subject is the stream subject for an event about an entity of kind from
// source: lorekeeper.entity.<source>.<kind>.
func Subject(s Source, k Kind) string {
	return SubjectPrefix + "." + s.Slug() + "." + k.Slug()
}

// URIPrefix starts every entity URI.
const URIPrefix = "lorekeeper://entity/"

// EntityURI is the stable URI of the entity with key.
func EntityURI(key string) string { return URIPrefix + key }

// KeyFromURI returns the key inside an entity URI, or s itself when s is not
// a URI (so callers may pass either).
func KeyFromURI(s string) string { return strings.TrimPrefix(s, URIPrefix) }

// The kinds each family of lookups serves, in enum order.
var (
	equipmentKinds       = []Kind{Kind_KIND_WEAPON, Kind_KIND_ARMOR, Kind_KIND_MAGIC_ITEM, Kind_KIND_ITEM}
	characterOptionKinds = []Kind{Kind_KIND_CLASS, Kind_KIND_SUBCLASS, Kind_KIND_RACE, Kind_KIND_SUBRACE,
		Kind_KIND_BACKGROUND, Kind_KIND_FEAT, Kind_KIND_INVOCATION, Kind_KIND_BOON, Kind_KIND_SELECTION}
	ruleKinds = []Kind{Kind_KIND_RULE, Kind_KIND_RULE_SECTION, Kind_KIND_CONDITION, Kind_KIND_DAMAGE_TYPE,
		Kind_KIND_WEAPON_PROPERTY, Kind_KIND_SKILL, Kind_KIND_ABILITY_SCORE, Kind_KIND_MAGIC_SCHOOL,
		Kind_KIND_LANGUAGE, Kind_KIND_PROFICIENCY, Kind_KIND_ALIGNMENT}
)

// EquipmentKinds are the kinds of lookup_equipment.
func EquipmentKinds() []Kind { return slices.Clone(equipmentKinds) }

// CharacterOptionKinds are the kinds of lookup_character_option.
func CharacterOptionKinds() []Kind { return slices.Clone(characterOptionKinds) }

// RuleKinds are the kinds of lookup_rule.
func RuleKinds() []Kind { return slices.Clone(ruleKinds) }

// damageTypes are the rules' thirteen damage types (SRD 5.1 and 5.2).
var damageTypes = []string{
	"acid", "bludgeoning", "cold", "fire", "force", "lightning", "necrotic",
	"piercing", "poison", "psychic", "radiant", "slashing", "thunder",
}

// DamageTypes are the rules' damage types, lower-case, in alphabetical
// order.
func DamageTypes() []string { return slices.Clone(damageTypes) }

// conditions are the rules' fifteen conditions (SRD 5.1 and 5.2).
var conditions = []string{
	"blinded", "charmed", "deafened", "exhaustion", "frightened", "grappled", "incapacitated",
	"invisible", "paralyzed", "petrified", "poisoned", "prone", "restrained", "stunned", "unconscious",
}

// Conditions are the rules' conditions, lower-case, in alphabetical order.
func Conditions() []string { return slices.Clone(conditions) }

// EntityKey is the key of an entity: <source>:<document>:<kind>:<slug>
// ("open5e_v2:srd-2014:spell:fireball").
func EntityKey(s Source, document string, k Kind, slug string) string {
	return s.Slug() + ":" + document + ":" + k.Slug() + ":" + slug
}

// KeyParts are the parts of an entity key.
type KeyParts struct {
	Source   Source
	Document string
	Kind     Kind
	Slug     string
}

// ParseEntityKey splits an entity key into its parts; ok is false unless
// the key has four parts, a known source and a known kind.
func ParseEntityKey(key string) (p KeyParts, ok bool) {
	parts := strings.SplitN(key, ":", 4)
	if len(parts) != 4 || parts[1] == "" || parts[3] == "" {
		return KeyParts{}, false
	}
	src, ok1 := SourceFromSlug(parts[0])
	kind, ok2 := KindFromSlug(parts[2])
	if !ok1 || !ok2 {
		return KeyParts{}, false
	}
	return KeyParts{Source: src, Document: parts[1], Kind: kind, Slug: parts[3]}, true
}

// ChallengeRatingText writes a challenge rating as the books do:
// 0.125 -> "1/8", 0.25 -> "1/4", 0.5 -> "1/2", 17 -> "17".
func ChallengeRatingText(cr float64) string {
	switch cr {
	case 0.125:
		return "1/8"
	case 0.25:
		return "1/4"
	case 0.5:
		return "1/2"
	}
	return strconv.FormatFloat(cr, 'f', -1, 64)
}

// ChallengeXP is a row of the SRD's Experience Points by Challenge Rating
// table (the same in SRD 5.1 and 5.2).
type ChallengeXP struct {
	CR float64
	XP int32
}

var challengeXP = []ChallengeXP{
	{0, 10}, {0.125, 25}, {0.25, 50}, {0.5, 100}, {1, 200}, {2, 450}, {3, 700}, {4, 1100}, {5, 1800},
	{6, 2300}, {7, 2900}, {8, 3900}, {9, 5000}, {10, 5900}, {11, 7200}, {12, 8400}, {13, 10000},
	{14, 11500}, {15, 13000}, {16, 15000}, {17, 18000}, {18, 20000}, {19, 22000}, {20, 25000},
	{21, 33000}, {22, 41000}, {23, 50000}, {24, 62000}, {25, 75000}, {26, 90000}, {27, 105000},
	{28, 120000}, {29, 135000}, {30, 155000},
}

// ChallengeXPs returns the SRD's Experience Points by Challenge Rating,
// lowest rating first.
func ChallengeXPs() []ChallengeXP { return slices.Clone(challengeXP) }

// ChallengeRatingXP is the XP of a creature of challenge rating cr by the
// SRD's table; ok is false for a rating the table does not have.
func ChallengeRatingXP(cr float64) (xp int32, ok bool) {
	i, found := slices.BinarySearchFunc(challengeXP, cr, func(r ChallengeXP, cr float64) int { return cmp.Compare(r.CR, cr) })
	if !found {
		return 0, false
	}
	return challengeXP[i].XP, true
}

// ParseChallengeRating reads a challenge rating written as a fraction or a
// number ("1/4", "0.25", "10"); ok is false for anything else, NaN and the
// infinities included.
func ParseChallengeRating(s string) (cr float64, ok bool) {
	s = strings.TrimSpace(s)
	if a, b, frac := strings.Cut(s, "/"); frac {
		n, err1 := strconv.ParseFloat(strings.TrimSpace(a), 64)
		d, err2 := strconv.ParseFloat(strings.TrimSpace(b), 64)
		if err1 != nil || err2 != nil || d == 0 || !finite(n) || !finite(d) {
			return 0, false
		}
		return n / d, true
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || !finite(f) {
		return 0, false
	}
	return f, true
}

func finite(f float64) bool { return !math.IsInf(f, 0) && !math.IsNaN(f) }

var abilities = []string{"strength", "dexterity", "constitution", "intelligence", "wisdom", "charisma"}

// Abilities are the six ability names in the books' order.
func Abilities() []string { return slices.Clone(abilities) }

// AbilityName returns the full lower-case name of an ability written in
// full or abbreviated, in any case ("DEX", "Dexterity" -> "dexterity"), and
// anything else lower-cased and trimmed (IsAbility tells which).
func AbilityName(s string) string {
	l := strings.ToLower(strings.TrimSpace(s))
	for _, a := range abilities {
		if l == a[:3] {
			return a
		}
	}
	return l
}

// IsAbility reports whether name is one of Abilities.
func IsAbility(name string) bool { return slices.Contains(abilities, name) }

// CastingTimeKey is the filter key of a casting time, the one form ingest
// stores and queries match against: "1 action" and "Action" -> "action";
// "1 bonus action" and "bonus" -> "bonus-action"; "1 reaction, which you
// take ..." -> "reaction"; "1 round" and "round" -> "1-round"; "10minutes"
// and "10 Minutes" -> "10-minutes"; anything else its Slugify.
func CastingTimeKey(s string) string {
	l := strings.ToLower(strings.TrimSpace(s))
	if i := strings.IndexAny(l, ",("); i >= 0 {
		l = strings.TrimSpace(l[:i])
	}
	w := castingTimeWords(l)
	n := "1"
	switch {
	case len(w) > 0 && w[0][0] >= '0' && w[0][0] <= '9':
		n, w = strings.TrimLeft(w[0], "0"), w[1:]
	case len(w) > 0 && (w[0] == "a" || w[0] == "an"):
		w = w[1:]
	}
	if len(w) == 0 || n == "" {
		return Slugify(l)
	}
	if w[0] == "bonus" && (len(w) == 1 || strings.HasPrefix(w[1], "action")) {
		return "bonus-action"
	}
	switch unit := strings.TrimSuffix(w[0], "s"); unit {
	case "action", "reaction":
		return unit
	case "round", "turn", "minute", "hour", "day", "week":
		if n != "1" {
			unit += "s"
		}
		return n + "-" + unit
	}
	return Slugify(l)
}

// castingTimeWords splits s into runs of digits and runs of letters
// ("10minutes" -> "10", "minutes").
func castingTimeWords(s string) []string {
	var out []string
	start, digits := -1, false
	for i, r := range s + " " {
		d, l := r >= '0' && r <= '9', r >= 'a' && r <= 'z'
		if start >= 0 && (!(d || l) || d != digits) {
			out = append(out, s[start:i])
			start = -1
		}
		if start < 0 && (d || l) {
			start, digits = i, d
		}
	}
	return out
}

// Ordinal writes n as the books write levels: 1 -> "1st", 2 -> "2nd",
// 11 -> "11th", 21 -> "21st".
func Ordinal(n int32) string {
	suffix := "th"
	if n%100 < 11 || n%100 > 13 {
		switch n % 10 {
		case 1:
			suffix = "st"
		case 2:
			suffix = "nd"
		case 3:
			suffix = "rd"
		}
	}
	return strconv.FormatInt(int64(n), 10) + suffix
}

// ErrorDomain and the reasons below name the query service's errors in a
// google.rpc.ErrorInfo detail, so that a client (the MCP server) can say
// what a bare status code cannot.
const (
	ErrorDomain = "lorekeeper.dev"
	// ReasonIndexLoading: Unavailable because a restarted node is still
	// building its in-memory index; the status message says how far.
	ReasonIndexLoading = "INDEX_LOADING"
)
