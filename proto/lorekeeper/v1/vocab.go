package lorekeeperv1

import "strings"

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
