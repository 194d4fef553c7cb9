package mcpserver

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// ArgumentError is a tool argument that cannot be used: it names the
// parameter and, where the set is closed, the values it accepts. Tools
// return it to the client as an error result, never as a protocol error.
type ArgumentError struct {
	Param   string
	Problem string
	Allowed []string
}

func (e *ArgumentError) Error() string {
	msg := fmt.Sprintf("invalid argument %q: %s", e.Param, e.Problem)
	if len(e.Allowed) > 0 {
		msg += "; allowed values: " + strings.Join(e.Allowed, ", ")
	}
	return msg
}

func argErr(param, problem string, allowed ...string) *ArgumentError {
	return &ArgumentError{Param: param, Problem: problem, Allowed: allowed}
}

// Limits of the limit parameter.
const (
	defaultLimit = 20
	maxLimit     = 100
)

// numberRanges says what each numeric parameter accepts, for numbers that
// do not fit its type at all; the tools check the values that do.
var numberRanges = map[string]string{
	"limit":            fmt.Sprintf("give 1 to %d (default %d)", maxLimit, defaultLimit),
	"level":            "spell levels are 0 (cantrip) to 9",
	"level_min":        "spell levels are 0 (cantrip) to 9",
	"level_max":        "spell levels are 0 (cantrip) to 9",
	"cr":               crRange,
	"challenge_rating": crRange,
	"cr_min":           crRange,
	"cr_max":           crRange,
	"armor_class_min":  "armor class is 0 to 100",
	"armor_class_max":  "armor class is 0 to 100",
	"hit_points_min":   "hit points are 0 to 100000",
	"hit_points_max":   "hit points are 0 to 100000",
	"cost_min":         "give a non-negative number of gold pieces",
	"cost_max":         "give a non-negative number of gold pieces",
	"weight_min":       "give a non-negative number of pounds",
	"weight_max":       "give a non-negative number of pounds",
}

const crRange = "challenge ratings are 0, 1/8, 1/4, 1/2 and 1 to 30"

// numericParams lists the properties of a tool's input schema that take
// numbers; true marks whole numbers.
func numericParams(sch *jsonschema.Schema) map[string]bool {
	out := map[string]bool{}
	for name, p := range sch.Properties {
		types := append([]string{p.Type}, p.Types...)
		switch {
		case slices.Contains(types, "integer"):
			out[name] = true
		case slices.Contains(types, "number"):
			out[name] = false
		}
	}
	return out
}

// checkNumbers finds the first numeric argument in args that its Go type
// cannot hold: a whole-number parameter given a fraction or a number
// beyond int32, or any number beyond float64. Arguments that are not JSON
// numbers, or not an object, are left to the SDK's validation.
func checkNumbers(numeric map[string]bool, args json.RawMessage) *ArgumentError {
	if len(numeric) == 0 || len(args) == 0 {
		return nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(args, &m) != nil {
		return nil
	}
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		whole, ok := numeric[name]
		raw := strings.TrimSpace(string(m[name]))
		if !ok || raw == "" || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) {
			continue
		}
		f, _, err := big.ParseFloat(raw, 10, 64, big.ToNearestEven)
		if err != nil {
			continue // not a number after all: the SDK says so
		}
		rng := numberRanges[name]
		if rng == "" {
			rng = "give a smaller number"
		}
		if f.IsInf() {
			return argErr(name, fmt.Sprintf("%s is out of range; %s", raw, rng))
		}
		if v, _ := f.Float64(); math.IsInf(v, 0) {
			return argErr(name, fmt.Sprintf("%s is out of range; %s", raw, rng))
		}
		if !whole {
			continue
		}
		if !f.IsInt() {
			return argErr(name, fmt.Sprintf("%s is not a whole number; %s", raw, rng))
		}
		if v, acc := f.Int64(); acc != big.Exact || v < math.MinInt32 || v > math.MaxInt32 {
			return argErr(name, fmt.Sprintf("%s is out of range; %s", raw, rng))
		}
	}
	return nil
}

// ChallengeRating is a challenge rating given as a number (0.25, 5) or as
// people write it ("1/4", "5").
type ChallengeRating float64

// UnmarshalJSON accepts a JSON number or a string such as "1/8" or "10".
func (c *ChallengeRating) UnmarshalJSON(b []byte) error {
	var f float64
	if err := json.Unmarshal(b, &f); err == nil {
		*c = ChallengeRating(f)
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("challenge rating must be a number or a string such as \"1/4\"")
	}
	v, ok := lkv1.ParseChallengeRating(s)
	if !ok {
		return fmt.Errorf("challenge rating %q is not a number or a fraction such as \"1/4\"", s)
	}
	*c = ChallengeRating(v)
	return nil
}

// Attunement is requires_attunement: a boolean, or the strings older
// clients send ("requires attunement" for true, "" for false).
type Attunement bool

// UnmarshalJSON accepts true/false or a string.
func (a *Attunement) UnmarshalJSON(b []byte) error {
	var v bool
	if err := json.Unmarshal(b, &v); err == nil {
		*a = Attunement(v)
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("requires_attunement must be true, false, \"requires attunement\" or \"\"")
	}
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "false", "no", "none", "not required":
		*a = false
	case "true", "yes", "requires attunement", "required", "attunement":
		*a = true
	default:
		return fmt.Errorf("requires_attunement %q: use true, false, \"requires attunement\" or \"\"", s)
	}
	return nil
}

// splitList splits a comma-separated argument into trimmed, non-empty,
// lower-cased values.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.ToLower(strings.TrimSpace(p)); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// closedSet checks every comma-separated value of param against allowed
// (after normalise) and returns the normalised values.
func closedSet(param, value string, allowed []string, normalise func(string) string) ([]string, error) {
	var out []string
	for _, v := range splitList(value) {
		if normalise != nil {
			v = normalise(v)
		}
		if !slices.Contains(allowed, v) {
			return nil, argErr(param, fmt.Sprintf("unknown value %q", v), allowed...)
		}
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out, nil
}

// aliasString resolves a canonical parameter and its alias: either may be
// given, both only with the same value.
func aliasString(canonical, alias, cv, av string) (string, error) {
	if cv != "" && av != "" && !strings.EqualFold(strings.TrimSpace(cv), strings.TrimSpace(av)) {
		return "", argErr(alias, fmt.Sprintf("is an alias of %q and was given a different value (%q vs %q); give only one", canonical, av, cv))
	}
	if cv != "" {
		return cv, nil
	}
	return av, nil
}

func aliasStrings(canonical, alias string, cv, av []string) ([]string, error) {
	if cv != nil && av != nil && !slices.Equal(cv, av) {
		return nil, argErr(alias, fmt.Sprintf("is an alias of %q and was given a different value; give only one", canonical))
	}
	if cv != nil {
		return cv, nil
	}
	return av, nil
}

func limitArg(param string, v *int) (uint32, error) {
	if v == nil {
		return defaultLimit, nil
	}
	if *v < 1 || *v > maxLimit {
		return 0, argErr(param, fmt.Sprintf("%d is out of range; give 1 to %d (default %d)", *v, maxLimit, defaultLimit))
	}
	return uint32(*v), nil
}

func commonArgs(name string, limit *int, documents []string, semanticQuery, gameSystem string) (*lkv1.Common, error) {
	n, err := limitArg("limit", limit)
	if err != nil {
		return nil, err
	}
	c := &lkv1.Common{
		Name:          strings.TrimSpace(name),
		Limit:         n,
		SemanticQuery: strings.TrimSpace(semanticQuery),
	}
	c.Documents = documentFilter(documents)
	if c.GameSystems, err = gameSystems(gameSystem); err != nil {
		return nil, err
	}
	return c, nil
}

// documentFilter keeps the three meanings apart: nil = all documents,
// [] = none, a list = any of them.
func documentFilter(documents []string) *lkv1.DocumentFilter {
	if documents == nil {
		return nil
	}
	f := &lkv1.DocumentFilter{Documents: []string{}}
	for _, d := range documents {
		if d = strings.TrimSpace(d); d != "" {
			f.Documents = append(f.Documents, d)
		}
	}
	return f
}

func intRange(minParam string, lo, hi *int, minOK, maxOK int) (*lkv1.IntRange, error) {
	if lo == nil && hi == nil {
		return nil, nil
	}
	r := &lkv1.IntRange{}
	for _, b := range []struct {
		v *int
		p **int32
	}{{lo, &r.Min}, {hi, &r.Max}} {
		if b.v == nil {
			continue
		}
		if *b.v < minOK || *b.v > maxOK {
			return nil, argErr(minParam, fmt.Sprintf("%d is out of range %d to %d", *b.v, minOK, maxOK))
		}
		x := int32(*b.v)
		*b.p = &x
	}
	if r.Min != nil && r.Max != nil && *r.Min > *r.Max {
		return nil, argErr(minParam, fmt.Sprintf("minimum %d is greater than maximum %d", *r.Min, *r.Max))
	}
	return r, nil
}

func doubleRange(minParam string, lo, hi *float64) (*lkv1.DoubleRange, error) {
	if lo == nil && hi == nil {
		return nil, nil
	}
	r := &lkv1.DoubleRange{Min: lo, Max: hi}
	for _, v := range []*float64{lo, hi} {
		if v != nil && (*v < 0 || math.IsNaN(*v) || math.IsInf(*v, 0)) {
			return nil, argErr(minParam, fmt.Sprintf("%v is not a non-negative number", *v))
		}
	}
	if lo != nil && hi != nil && *lo > *hi {
		return nil, argErr(minParam, fmt.Sprintf("minimum %v is greater than maximum %v", *lo, *hi))
	}
	return r, nil
}

// Closed vocabularies, as the tools accept them.
var (
	spellSchools    = []string{"abjuration", "conjuration", "divination", "enchantment", "evocation", "illusion", "necromancy", "transmutation"}
	damageTypes     = lkv1.DamageTypes()
	creatureTypes   = []string{"aberration", "beast", "celestial", "construct", "dragon", "elemental", "fey", "fiend", "giant", "humanoid", "monstrosity", "ooze", "plant", "undead"}
	sizes           = []string{"tiny", "small", "medium", "large", "huge", "gargantuan"}
	rarities        = []string{"common", "uncommon", "rare", "very rare", "legendary", "artifact"}
	armorCategories = []string{"light", "medium", "heavy", "shield"}
	sourceNames     = []string{"open5e_v1", "open5e_v2", "orcbrew"}
	// defenseTypes are what a damage immunity, resistance or
	// vulnerability filter takes: a type, "nonmagical <type>", "any <type>".
	defenseTypes = qualifiedTypes(damageTypes)
)

func qualifiedTypes(types []string) []string {
	out := slices.Clone(types)
	for _, p := range []string{"nonmagical ", "any "} {
		for _, t := range types {
			out = append(out, p+t)
		}
	}
	return out
}

// Kind vocabularies per tool.
var (
	equipmentTypes = map[string][]lkv1.Kind{
		"weapon":     {lkv1.Kind_KIND_WEAPON},
		"armor":      {lkv1.Kind_KIND_ARMOR},
		"magic-item": {lkv1.Kind_KIND_MAGIC_ITEM},
		"item":       {lkv1.Kind_KIND_ITEM},
		"all":        nil,
	}
	equipmentTypeNames = []string{"weapon", "armor", "magic-item", "item", "all"}

	characterOptionTypes = map[string]lkv1.Kind{
		"class":      lkv1.Kind_KIND_CLASS,
		"subclass":   lkv1.Kind_KIND_SUBCLASS,
		"race":       lkv1.Kind_KIND_RACE,
		"species":    lkv1.Kind_KIND_RACE,
		"subrace":    lkv1.Kind_KIND_SUBRACE,
		"subspecies": lkv1.Kind_KIND_SUBRACE,
		"background": lkv1.Kind_KIND_BACKGROUND,
		"feat":       lkv1.Kind_KIND_FEAT,
		"invocation": lkv1.Kind_KIND_INVOCATION,
		"boon":       lkv1.Kind_KIND_BOON,
		"selection":  lkv1.Kind_KIND_SELECTION,
	}
	characterOptionTypeNames = []string{"class", "subclass", "race", "species", "subrace", "background", "feat", "invocation", "boon", "selection"}
)

func ruleTypeNames() []string {
	kinds := lkv1.RuleKinds()
	out := make([]string, len(kinds))
	for i, k := range kinds {
		out[i] = k.Slug()
	}
	return out
}

// singular strips a plural ending so that "spells", "feats", "classes" and
// "species" map onto kind slugs.
func singular(s string) string {
	switch {
	case s == "species" || s == "armor" || s == "equipment":
		return s
	case strings.HasSuffix(s, "classes"), strings.HasSuffix(s, "subclasses"):
		return strings.TrimSuffix(s, "es")
	case strings.HasSuffix(s, "ies"):
		return strings.TrimSuffix(s, "ies") + "y"
	case strings.HasSuffix(s, "s") && !strings.HasSuffix(s, "ss"):
		return strings.TrimSuffix(s, "s")
	}
	return s
}

// entityTypeKinds maps search_dnd_content's entity_types names (plural or
// singular, any case: "spells", "Spell", "magicitems", "equipment",
// "monsters") to kinds.
var entityTypeGroups = map[string][]lkv1.Kind{
	"monster":          {lkv1.Kind_KIND_CREATURE},
	"magicitem":        {lkv1.Kind_KIND_MAGIC_ITEM},
	"equipment":        lkv1.EquipmentKinds(),
	"species":          {lkv1.Kind_KIND_RACE},
	"subspecies":       {lkv1.Kind_KIND_SUBRACE},
	"character-option": lkv1.CharacterOptionKinds(),
	"archetype":        {lkv1.Kind_KIND_SUBCLASS},
	"section":          {lkv1.Kind_KIND_RULE_SECTION},
	"ruleset":          {lkv1.Kind_KIND_RULE_SECTION},
	"damagetype":       {lkv1.Kind_KIND_DAMAGE_TYPE},
	"weaponproperty":   {lkv1.Kind_KIND_WEAPON_PROPERTY},
	"spellschool":      {lkv1.Kind_KIND_MAGIC_SCHOOL},
	"abilityscore":     {lkv1.Kind_KIND_ABILITY_SCORE},
	"ability":          {lkv1.Kind_KIND_ABILITY_SCORE},
}

func entityTypeNames() []string {
	out := []string{}
	for _, k := range lkv1.Kinds() {
		out = append(out, k.Slug())
	}
	return append(out, "spells", "creatures", "monsters", "equipment", "weapons", "magicitems", "items", "classes", "races", "species", "backgrounds", "feats", "rules", "conditions", "character-options")
}

func entityTypeKinds(param string, names []string) ([]lkv1.Kind, error) {
	var out []lkv1.Kind
	add := func(ks ...lkv1.Kind) {
		for _, k := range ks {
			if !slices.Contains(out, k) {
				out = append(out, k)
			}
		}
	}
	for _, raw := range names {
		for _, n := range splitList(raw) {
			s := singular(lkv1.Slugify(n))
			if k, ok := lkv1.KindFromSlug(s); ok {
				add(k)
				continue
			}
			if ks, ok := entityTypeGroups[s]; ok {
				add(ks...)
				continue
			}
			if ks, ok := entityTypeGroups[strings.ReplaceAll(s, "-", "")]; ok {
				add(ks...)
				continue
			}
			if k, ok := lkv1.KindFromSlug(strings.ReplaceAll(s, "magicitem", "magic-item")); ok {
				add(k)
				continue
			}
			return nil, argErr(param, fmt.Sprintf("unknown entity type %q", n), entityTypeNames()...)
		}
	}
	return out, nil
}

var gameSystemNames = []string{"5e-2014", "5e-2024", "a5e"}

// gameSystems validates game_system: "5e-2014", "2014", "5e-2024", "a5e".
func gameSystems(v string) ([]string, error) {
	return closedSet("game_system", v, gameSystemNames, func(s string) string {
		s = lkv1.Slugify(s)
		switch s {
		case "2014", "5e", "srd-5.1", "5.1":
			return "5e-2014"
		case "2024", "srd-5.2", "5.2", "5.5e":
			return "5e-2024"
		}
		return s
	})
}
