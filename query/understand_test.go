package query_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"lorekeeper.dev/embedder/badgerstore"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
	"lorekeeper.dev/query"
)

// understandCase is a question and what its words say in the filters'
// vocabulary: "field=value" ("!" before the value: negated), "docs=a,b",
// "order=field desc|asc".
type understandCase struct {
	tool, q string
	want    []string
}

var understandCases = []understandCase{
	{"lookup_creature", "CR 1/2 hyena-headed raiders", []string{"challenge_rating=1/2"}},
	{"lookup_creature", "challenge rating 5 monstrosity", []string{"challenge_rating=5", "creature_type=monstrosity"}},
	{"lookup_spell", "firbolt cantrip", []string{"level=0"}},
	{"lookup_spell", "3rd-level wizard spell that deals fire damage", []string{"level=3", "class=wizard", "damage_type=fire"}},
	{"lookup_spell", "a concentration spell I can cast as a bonus action", []string{"concentration=true", "casting_time=bonus-action"}},
	{"lookup_spell", "ritual from the evocation school", []string{"ritual=true", "school=evocation"}},
	{"lookup_spell", "healing spells for a cleric", []string{"healing=true", "class=cleric"}},
	{"lookup_spell", "a necromancy spell that does not heal", []string{"school=necromancy", "healing=false"}},
	{"lookup_spell", "what does healing word do", nil}, // a name
	{"lookup_creature", "a Large undead", []string{"size=large", "creature_type=undead"}},
	{"lookup_creature", "fiend immune to fire", []string{"creature_type=fiend", "damage_immunity=fire"}},
	{"lookup_creature", "monsters weak to fire", []string{"damage_vulnerability=fire"}},
	{"lookup_creature", "undead with a weakness to radiant damage", []string{"creature_type=undead", "damage_vulnerability=radiant"}},
	{"lookup_equipment", "medium armor with no stealth disadvantage", []string{"armor_category=medium", "category=armor", "stealth_disadvantage=false"}},
	{"lookup_equipment", "best medium armor that won't ruin my stealth rolls", []string{"armor_category=medium", "category=armor", "stealth_disadvantage=false", "order=armor_class desc"}},
	{"lookup_equipment", "one-handed weapon with reach", []string{"property=!two-handed", "property=reach", "category=weapon"}},
	{"lookup_equipment", "two-handed finesse weapons", []string{"property=two-handed", "property=finesse", "category=weapon"}},
	{"lookup_equipment", "simple ranged weapon", []string{"is_simple=true", "ranged=true", "category=weapon"}},
	{"lookup_equipment", "bow with the longest range", []string{"order=range desc"}},
	{"lookup_equipment", "the cheapest heavy armor", []string{"armor_category=heavy", "category=armor", "order=cost_gp asc"}},
	{"lookup_equipment", "light armor for a rogue", []string{"armor_category=light", "category=armor"}},
	{"lookup_equipment", "a light weapon", []string{"property=light", "category=weapon"}},
	// A property or category is said of equipment: not of a light source
	// (what sheds light); a sword ends Longsword's name.
	{"lookup_equipment", "a cheap light source", []string{"cost_max=50", "effect=light"}},
	{"lookup_equipment", "a two-handed sword", []string{"property=two-handed"}},
	{"lookup_equipment", "a sword I can swing with one or two hands", []string{"property=versatile"}},
	{"lookup_equipment", "light and finesse", []string{"armor_category=light", "property=light", "property=finesse"}},
	{"lookup_creature", "the strongest dragon", []string{"creature_type=dragon", "order=challenge_rating desc"}},
	{"lookup_creature", "undead with the most hit points", []string{"creature_type=undead", "order=hit_points desc"}},
	{"search_dnd_content", "CR 5 undead from the SRD", []string{"challenge_rating=5", "creature_type=undead", "docs=srd-2014,srd-2024"}},
	{"search_dnd_content", "Tome of Beasts dragons", []string{"creature_type=dragon", "docs=tob"}},
	{"lookup_spell", "2024 rituals", []string{"ritual=true", "docs=srd-2024"}},
	{"lookup_spell", "SRD 5.1 cantrips", []string{"level=0", "docs=srd-2014"}},
	{"lookup_creature", "beasts from Level Up", []string{"creature_type=beast", "docs=a5e"}},
	// Bounds, as the lookups' own cr_min / cr_max / level_min / level_max.
	{"lookup_creature", "undead under CR 1", []string{"creature_type=undead", "cr_max=1/2"}},
	{"lookup_creature", "a fiend of at least CR 5", []string{"creature_type=fiend", "cr_min=5"}},
	{"lookup_creature", "CR 5 to 10 dragons", []string{"cr_min=5", "cr_max=10", "creature_type=dragon"}},
	{"lookup_spell", "3rd level or lower evocation", []string{"level_max=3", "school=evocation"}},
	// A character's level: the spells it reaches, by the class's caster type.
	{"lookup_spell", "fire spells a 5th level wizard can cast", []string{"level_max=3", "class=wizard", "damage_type=fire"}},
	{"lookup_spell", "healing for my level 5 paladin", []string{"healing=true", "level_max=2", "class=paladin"}},
	{"lookup_spell", "best spells for an 11th level warlock", []string{"level_max=5", "class=warlock"}},
	{"lookup_spell", "spells for a 1st level ranger", []string{"class=ranger"}},
	{"lookup_spell", "5th level wizard spells", []string{"level=5", "class=wizard"}},
	{"lookup_spell", "cold cantrips", []string{"level=0", "damage_type=cold"}},
	{"lookup_equipment", "piercing weapons", []string{"category=weapon", "damage_type=piercing"}},
	// A party's level bounds a monster's challenge rating (the SRD's definition).
	// The nearest to the party's level first, when no other order is said.
	{"lookup_creature", "something I can throw at level 8 players", []string{"cr_max=8", "order=challenge_rating desc"}},
	{"lookup_creature", "a dragon I can throw at level 8 players", []string{"cr_max=8", "creature_type=dragon", "order=challenge_rating desc"}},
	{"lookup_creature", "undead horde for a level 3 party in a crypt", []string{"cr_max=3", "creature_type=undead", "order=challenge_rating desc"}},
	{"lookup_creature", "a boss for my 5th level party", []string{"cr_max=5", "order=challenge_rating desc"}},
	{"lookup_creature", "the weakest giant for my level 5 party", []string{"cr_max=5", "creature_type=giant", "order=challenge_rating asc"}},
	{"lookup_spell", "healing up to 2nd level", []string{"healing=true", "level_max=2"}},
	{"lookup_spell", "level 3 or higher necromancy", []string{"level_min=3", "school=necromancy"}},
	{"lookup_creature", "no more than CR 4", []string{"cr_max=4"}},
	{"lookup_creature", "fiends above CR 20", []string{"creature_type=fiend", "cr_min=21"}},
	{"lookup_creature", "beasts below CR 0", []string{"creature_type=beast"}},
	{"lookup_equipment", "a weapon under 10 gp", []string{"category=weapon", "cost_max=10"}},
	{"lookup_equipment", "armor lighter than 20 lb", []string{"category=armor", "weight_max=20"}},
	{"lookup_equipment", "gear of 5 sp or less", []string{"cost_max=0.5"}},
	{"lookup_equipment", "a 50 gp gem", nil},
	// "Legendary" of a creature, and the kind a search's question names.
	{"search_dnd_content", "monsters with legendary actions CR 10 or lower", []string{"entity_type=creature", "legendary=true", "cr_max=10"}},
	{"search_dnd_content", "feats for a spellcaster", []string{"entity_type=feat"}},
	{"lookup_creature", "a legendary dragon", []string{"legendary=true", "creature_type=dragon"}},
	{"lookup_equipment", "legendary sword", []string{"rarity=legendary"}},
	// A reading the lookup's kinds have no field for leaves its words to
	// the others: "legendary dragon" of equipment is a rarity.
	{"lookup_equipment", "legendary dragon scale armor", []string{"rarity=legendary", "category=armor"}},
	{"search_dnd_content", "spells that affect all creatures in an area", nil},
	// Said twice, a filter is read once.
	{"lookup_creature", "a big dumb giant for my party, the weakest kind of giant", []string{"creature_type=giant", "order=challenge_rating asc"}},
	// Nothing to read: a size before no creature, a type inside a
	// creature's name, fields the lookup's kinds do not have, no words of
	// the vocabulary.
	{"lookup_spell", "scatter a large group of enemies", nil},
	{"lookup_creature", "giant rat", nil},
	{"lookup_spell", "the strongest reach", nil},
	{"lookup_spell", "healin word", nil},
	{"lookup_rule", "what happens when I fall", nil},
	// Ways of moving, from creatures' speeds.
	{"lookup_creature", "CR 3 monster that can fly", []string{"challenge_rating=3", "movement=fly"}},
	{"lookup_creature", "flying undead", []string{"movement=fly", "creature_type=undead"}},
	{"lookup_creature", "swimming monsters for an underwater fight", []string{"movement=swim"}},
	{"lookup_creature", "burrowing beasts", []string{"movement=burrow", "creature_type=beast"}},
	{"lookup_spell", "a spell to fly", []string{"effect=fly"}},
	// A name of several words the question mostly is keeps a filter's
	// word, when something of the kinds asked bears it: a rule, a feat
	// or a class's feature here, not equipment.
	{"search_dnd_content", "how does two-weapon fighting work", nil},
	{"search_dnd_content", "destroy undead", nil},
	{"search_dnd_content", "how do beast spells work", nil},
	{"lookup_equipment", "a weapon for two-weapon fighting", []string{"category=weapon"}},
	{"search_dnd_content", "what does the poisoned condition do", nil},
	{"search_dnd_content", "a poison that paralyzes", []string{"category=poison", "condition_inflicted=paralyzed"}},
	{"search_dnd_content", "tell me about the longsword weapon", nil},
	// A question about how the game works, asked of the rules among other
	// kinds, asks for the rules and reads no filter in what it is about (a
	// book still narrows it); one that is mostly a name asks for what
	// bears it, the rules too when only they bear it (a rule's name, or a
	// part's: "heavy armor" heads one of Armor); asked of spells alone,
	// the filters are read.
	{"search_dnd_content", "how does concentration work", ruleKinds()},
	{"search_dnd_content", "what does advantage mean", ruleKinds()},
	{"search_dnd_content", "rules for ranged attacks in melee", ruleKinds()}, // a rule's name
	{"search_dnd_content", "how long does it take to don heavy armor", ruleKinds()},
	{"search_dnd_content", "how long will it take to stabilize a dying creature", ruleKinds()},
	{"search_dnd_content", "what happens when a Large creature drops to 0 hit points", ruleKinds()},
	{"search_dnd_content", "how does the magic work in 2024", ruleKinds("docs=srd-2024")},
	{"search_dnd_content", "can I cast two spells in one turn", ruleKinds()},
	{"search_dnd_content", "how do spell slots work", nil},
	{"search_dnd_content", "how does sneak attack work", nil},
	{"lookup_spell", "how does concentration work", []string{"concentration=true"}},
	{"search_dnd_content", "concentration spells that work underwater", []string{"concentration=true", "entity_type=spell"}},
	// A level said of a named spell is the slot it is cast with.
	{"lookup_spell", "how much damage does fireball do at 5th level", nil},
	{"lookup_spell", "cure wounds at level 3", nil},
	{"lookup_spell", "wizard spells at 3rd level", []string{"level=3", "class=wizard"}},
	// "Best" is the highest armor class of armor only.
	{"lookup_equipment", "best weapon for a rogue", []string{"category=weapon"}},
	{"lookup_creature", "the best dragon for my party", []string{"creature_type=dragon"}},
}

// ruleKinds is what a question about how the game works understands (the
// rules' kinds asked for), sorted with more.
func ruleKinds(more ...string) []string {
	var out []string
	for _, k := range lkv1.RuleKinds() {
		out = append(out, "entity_type="+k.Slug())
	}
	out = append(out, more...)
	slices.Sort(out)
	return out
}

// call runs a question through the tool's RPC with extra filters.
func (c understandCase) call(ctx context.Context, cl lkv1.QueryServiceClient, com *lkv1.Common) (*lkv1.LookupResponse, error) {
	com.SemanticQuery = c.q
	switch c.tool {
	case "lookup_spell":
		return cl.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: com})
	case "lookup_creature":
		return cl.LookupCreatures(ctx, &lkv1.LookupCreaturesRequest{Common: com})
	case "lookup_equipment":
		return cl.LookupEquipment(ctx, &lkv1.LookupEquipmentRequest{Common: com})
	case "lookup_rule":
		return cl.LookupRules(ctx, &lkv1.LookupRulesRequest{Common: com})
	}
	return nil, fmt.Errorf("no lookup %s", c.tool)
}

// understood writes what a response understood as understandCase.want
// does, sorted.
func understood(u *lkv1.Understood) []string {
	var out []string
	for _, f := range u.GetFilters() {
		for _, v := range f.GetValues() {
			if f.GetNegated() {
				v = "!" + v
			}
			out = append(out, f.GetField()+"="+v)
		}
	}
	if len(u.GetDocuments()) > 0 {
		out = append(out, "docs="+strings.Join(u.GetDocuments(), ","))
	}
	if u.GetOrderBy() != "" {
		dir := "asc"
		if u.GetDescending() {
			dir = "desc"
		}
		out = append(out, "order="+u.GetOrderBy()+" "+dir)
	}
	slices.Sort(out)
	return out
}

func TestUnderstand(t *testing.T) {
	cl := client(t)
	ctx := context.Background()
	for _, c := range understandCases {
		t.Run(c.q, func(t *testing.T) {
			var u *lkv1.Understood
			if c.tool == "search_dnd_content" {
				resp, err := cl.Search(ctx, &lkv1.SearchRequest{Query: c.q, Limit: 1})
				if err != nil {
					t.Fatal(err)
				}
				u = resp.GetUnderstood()
			} else {
				resp, err := c.call(ctx, cl, &lkv1.Common{Limit: 1})
				if err != nil {
					t.Fatal(err)
				}
				u = resp.GetUnderstood()
			}
			want := slices.Clone(c.want)
			slices.Sort(want)
			if got := understood(u); !slices.Equal(got, want) {
				t.Errorf("%s(%q) understood %q, want %q", c.tool, c.q, got, want)
			}
			for _, f := range u.GetFilters() {
				if f.GetWords() == "" || !strings.Contains(strings.ToLower(strings.ReplaceAll(c.q, "-", " ")), f.GetWords()) {
					t.Errorf("%s: words %q are not the question's", f.GetField(), f.GetWords())
				}
			}
		})
	}
}

// holds reports whether e has an understood filter's value, from the
// entity's own filterable fields (badgerstore.EntityFields), and whether
// its kind has the field at all.
func holds(e *lkv1.Entity, f *lkv1.UnderstoodFilter) (has, applies bool) {
	fields := badgerstore.EntityFields(e)
	for prefix, field := range map[string]string{"cr_": badgerstore.FieldCR, "level_": badgerstore.FieldLevel,
		"cost_": badgerstore.FieldCost, "weight_": badgerstore.FieldWeight} {
		if bound, ok := strings.CutPrefix(f.GetField(), prefix); ok {
			x, ok := fields.Numbers[field]
			want, _ := lkv1.ParseChallengeRating(f.GetValues()[0])
			return ok && (bound == "max" && x <= want || bound == "min" && x >= want), ok
		}
	}
	field := map[string]string{"challenge_rating": badgerstore.FieldCR, "is_simple": badgerstore.FieldSimple}[f.GetField()]
	if field == "" {
		field = f.GetField()
	}
	if x, ok := fields.Numbers[field]; ok {
		want, _ := lkv1.ParseChallengeRating(f.GetValues()[0])
		return x == want, true
	}
	if b, ok := fields.Bools[field]; ok {
		return strconv.FormatBool(b) == f.GetValues()[0], true
	}
	kws, ok := fields.Keywords[field]
	if field == badgerstore.FieldDamageType {
		// An item deals the types its text rolls too (Flame Tongue: fire).
		kws = append(slices.Clone(kws), fields.Keywords[badgerstore.FieldDamageDealt]...)
	}
	for _, v := range f.GetValues() {
		if slices.Contains(kws, v) {
			return !f.GetNegated(), true
		}
	}
	switch {
	case f.GetNegated() && (ok || hasField(e, field)):
		return true, true
	case ok || hasField(e, field):
		return false, true
	}
	return false, false
}

// hasField: the kinds whose entities may lack a keyword field's values
// and still have the field (a spell with no damage type, a weapon with no
// properties).
func hasField(e *lkv1.Entity, field string) bool {
	switch field {
	case badgerstore.FieldDamageType:
		return e.GetKind() == lkv1.Kind_KIND_SPELL || e.GetKind() == lkv1.Kind_KIND_WEAPON
	case badgerstore.FieldProperty:
		return e.GetKind() == lkv1.Kind_KIND_WEAPON
	case badgerstore.FieldClass:
		return e.GetKind() == lkv1.Kind_KIND_SPELL
	case badgerstore.FieldDamageImmunity, badgerstore.FieldDamageResistance, badgerstore.FieldDamageVulnerability, badgerstore.FieldMovement:
		return e.GetKind() == lkv1.Kind_KIND_CREATURE
	}
	return false
}

// TestUnderstood_matchesRankFirst: over every result of a question (all
// pages), no result contradicting an understood filter ranks above one
// matching them all; with a superlative, the results matching every
// filter that lead come in the field's order.
func TestUnderstood_matchesRankFirst(t *testing.T) {
	cl := client(t)
	ctx := context.Background()
	for _, c := range []understandCase{
		{tool: "lookup_creature", q: "CR 1/2 hyena-headed raiders who serve a demon lord"},
		{tool: "lookup_spell", q: "3rd-level wizard spell that deals fire damage"},
		{tool: "lookup_spell", q: "firbolt cantrip"},
		{tool: "lookup_equipment", q: "one-handed weapon with reach"},
		{tool: "lookup_equipment", q: "best medium armor that won't ruin my stealth rolls"},
		{tool: "lookup_creature", q: "a Large undead that flies"},
		{tool: "lookup_spell", q: "2024 concentration spells"},
		{tool: "lookup_creature", q: "undead of CR 3 or lower that drain life"},
		{tool: "lookup_spell", q: "at least 6th level necromancy"},
		{tool: "lookup_equipment", q: "a finesse weapon under 10 gp"},
	} {
		t.Run(c.q, func(t *testing.T) {
			var results []*lkv1.Result
			var u *lkv1.Understood
			cursor := ""
			for page := 0; page < 100; page++ {
				resp, err := c.call(ctx, cl, &lkv1.Common{Limit: 100, Cursor: cursor})
				if err != nil {
					t.Fatal(err)
				}
				if page == 0 {
					u = resp.GetUnderstood()
				}
				results = append(results, resp.GetResults()...)
				if cursor = resp.GetNextCursor(); cursor == "" {
					break
				}
			}
			if len(u.GetFilters()) == 0 {
				t.Fatalf("nothing understood of %q", c.q)
			}
			docs := u.GetDocuments()
			firstContradiction, lastMatch, matches := -1, -1, 0
			for i, r := range results {
				all, contradicts := true, false
				for _, f := range u.GetFilters() {
					has, applies := holds(r.GetEntity(), f)
					all = all && has
					contradicts = contradicts || applies && !has
				}
				if len(docs) > 0 {
					// The copy shown is the one ranked (the authoritative one).
					in := slices.Contains(docs, r.GetEntity().GetDocument().GetKey())
					all, contradicts = all && in, contradicts || !in
				}
				if all {
					matches++
					lastMatch = i
				}
				if contradicts && firstContradiction < 0 {
					firstContradiction = i
				}
			}
			if matches == 0 || firstContradiction < 0 {
				t.Fatalf("%d of %d results match every filter, first contradiction at %d: nothing to compare", matches, len(results), firstContradiction)
			}
			if lastMatch > firstContradiction {
				t.Errorf("%s (matching %v) ranks %d, below %s (contradicting) at %d", names(results)[lastMatch], understood(u), lastMatch,
					names(results)[firstContradiction], firstContradiction)
			}
		})
	}
}

// TestUnderstood_superlative: the first result of a superlative is the
// best, by its field, of every result matching the filters (all results,
// when the question has no filter).
func TestUnderstood_superlative(t *testing.T) {
	cl := client(t)
	ctx := context.Background()
	for _, c := range []struct {
		understandCase
		value func(e *lkv1.Entity) float64
		kinds []lkv1.Kind // lookup_equipment's kinds filter
		books bool        // every book, not SRD 5.1's alone
	}{
		// The armor is ordered, not the magic items made of it (the issue's
		// Breastplate, not Mithral Armor (Half-Plate), whose text lifts
		// its stealth disadvantage).
		{understandCase{tool: "lookup_equipment", q: "best medium armor that won't ruin my stealth rolls"}, func(e *lkv1.Entity) float64 {
			if e.GetKind() != lkv1.Kind_KIND_ARMOR {
				return math.NaN()
			}
			return float64(e.GetItem().GetArmor().GetAcBase())
		}, nil, false},
		{understandCase{tool: "lookup_creature", q: "the strongest fiend"}, func(e *lkv1.Entity) float64 {
			return e.GetCreature().GetChallengeRating()
		}, nil, false},
		{understandCase{tool: "lookup_creature", q: "the weakest undead"}, func(e *lkv1.Entity) float64 {
			return -e.GetCreature().GetChallengeRating()
		}, nil, false},
		// A party's level: the fairest fights first.
		{understandCase{tool: "lookup_creature", q: "a dragon for a level 10 party"}, func(e *lkv1.Entity) float64 {
			return e.GetCreature().GetChallengeRating()
		}, nil, false},
		{understandCase{tool: "lookup_equipment", q: "bow with the longest range"}, func(e *lkv1.Entity) float64 {
			return float64(e.GetItem().GetWeapon().GetRangeLong())
		}, nil, false},
		// Every item matching the filters is ordered, those whose text
		// has none of the question's other words too (Plate, among the
		// armor).
		{understandCase{tool: "lookup_equipment", q: "heavy armor with the best armor class"}, func(e *lkv1.Entity) float64 {
			return float64(e.GetItem().GetArmor().GetAcBase())
		}, []lkv1.Kind{lkv1.Kind_KIND_ARMOR}, false},
		// Among magic armor without a price, the priced armor is ordered
		// (NaN: no value, compared with nothing).
		{understandCase{tool: "lookup_equipment", q: "the cheapest heavy armor"}, func(e *lkv1.Entity) float64 {
			if e.GetItem().CostGp == nil {
				return math.NaN()
			}
			return -e.GetItem().GetCostGp()
		}, nil, true},
	} {
		t.Run(c.q, func(t *testing.T) {
			com := &lkv1.Common{Limit: 100, Documents: docs("srd-2014")}
			if c.books {
				com.Documents = nil
			}
			resp, err := c.call(ctx, cl, com)
			if c.kinds != nil {
				com.SemanticQuery = c.q
				resp, err = cl.LookupEquipment(ctx, &lkv1.LookupEquipmentRequest{Common: com, Kinds: c.kinds})
			}
			if err != nil {
				t.Fatal(err)
			}
			if resp.GetUnderstood().GetOrderBy() == "" {
				t.Fatalf("no order understood of %q", c.q)
			}
			// Matching: no filter contradicted (property=heavy does not
			// apply to armor).
			var matching []*lkv1.Result
			for _, r := range resp.GetResults() {
				all := true
				for _, f := range resp.GetUnderstood().GetFilters() {
					has, applies := holds(r.GetEntity(), f)
					all = all && (has || !applies)
				}
				if all {
					matching = append(matching, r)
				}
			}
			if len(matching) < 2 {
				t.Fatalf("%d results match: nothing to order", len(matching))
			}
			best := c.value(matching[0].GetEntity())
			if math.IsNaN(best) {
				t.Fatalf("first is %s, which has no value to order by", matching[0].GetEntity().GetName())
			}
			for _, r := range matching {
				if x := c.value(r.GetEntity()); x > best {
					t.Errorf("first is %s (%g); %s has %g", matching[0].GetEntity().GetName(), best, r.GetEntity().GetName(), x)
				}
			}
		})
	}
}

// TestUnderstood_recall: what the words of a question say never drops a
// result the request's own filters would return: every page of a lookup
// (and a search's results) with the understanding hold every result of the
// same request read literally (Options.Literal).
func TestUnderstood_recall(t *testing.T) {
	st := snapshotStore(t)
	cl := client(t)
	literal := lkv1.NewQueryServiceClient(dial(t, query.NewService(st, snap.emb, &query.Options{Literal: true}), nil))
	ctx := context.Background()
	// keys are every result of every page, with the copies folded into
	// each (alternates).
	keys := func(t *testing.T, cl lkv1.QueryServiceClient, c understandCase, com func() *lkv1.Common) map[string]bool {
		out := map[string]bool{}
		add := func(rs []*lkv1.Result) {
			for _, r := range rs {
				out[r.GetEntity().GetKey()] = true
				for _, a := range r.GetAlternates() {
					out[a.GetKey()] = true
				}
			}
		}
		cursor := ""
		for page := 0; page < 100; page++ {
			if c.tool == "search_dnd_content" {
				resp, err := cl.Search(ctx, &lkv1.SearchRequest{Query: c.q, Limit: 100, Documents: com().GetDocuments(), Cursor: cursor})
				if err != nil {
					t.Fatal(err)
				}
				for _, g := range resp.GetGroups() {
					add(g.GetResults())
				}
				cursor = resp.GetNextCursor()
			} else {
				cm := com()
				cm.Cursor = cursor
				resp, err := c.call(ctx, cl, cm)
				if err != nil {
					t.Fatal(err)
				}
				add(resp.GetResults())
				cursor = resp.GetNextCursor()
			}
			if cursor == "" {
				return out
			}
		}
		t.Fatal("over 100 pages")
		return nil
	}
	for _, c := range understandCases {
		if len(c.want) == 0 {
			continue
		}
		for _, d := range [][]string{nil, {"srd-2014", "tob", "deepm"}} {
			t.Run(fmt.Sprint(c.q, d), func(t *testing.T) {
				com := func() *lkv1.Common {
					cm := &lkv1.Common{Limit: 100}
					if d != nil {
						cm.Documents = docs(d...)
					}
					return cm
				}
				with, without := keys(t, cl, c, com), keys(t, literal, c, com)
				if len(without) == 0 {
					t.Fatalf("%s(%q): no results to compare", c.tool, c.q)
				}
				for k := range without {
					if !with[k] {
						t.Errorf("%s(%q, documents %v): %s is returned read literally, not with the filters its words say", c.tool, c.q, d, k)
					}
				}
				if c.tool != "search_dnd_content" && len(with) != len(without) {
					t.Errorf("%s(%q): %d results, %d read literally", c.tool, c.q, len(with), len(without))
				}
			})
		}
	}
}

// TestUnderstood_bm25Terms: a lookup's BM25 reads the words of the
// question not read as filters (nor the kind's own nouns), the whole
// question when nothing was read or nothing else is left.
func TestUnderstood_bm25Terms(t *testing.T) {
	svc := query.NewService(snapshotStore(t), nil, nil)
	spell, armor := lkv1.Kind_KIND_SPELL, lkv1.Kind_KIND_ARMOR
	for _, c := range []struct {
		q    string
		kind lkv1.Kind
		want string
	}{
		{"3rd-level wizard spell that deals fire damage", spell, "that deals"},
		{"stop enemies from moving", spell, "stop enemies from moving"},
		{"fire damage", spell, "fire damage"},
		{"heavy armor with the best armor class", armor, "with the best class"},
		{"Fireball from the SRD", spell, "fireball from the"},
		// The words framing a question are not what it asks about.
		{"what does advantage mean", lkv1.Kind_KIND_RULE, "what does advantage"},
		{"how does concentration work", lkv1.Kind_KIND_RULE, "how does concentration"},
		{"what is the meaning of cover", lkv1.Kind_KIND_RULE, "what is the of cover"},
		{"how does magic work in 2024", lkv1.Kind_KIND_RULE, "how does magic in"},
		{"mean", lkv1.Kind_KIND_RULE, "mean"},
	} {
		got, err := query.BM25Text(svc, c.q, c.kind)
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("%s %q: BM25 reads %q, want %q", c.kind.Slug(), c.q, got, c.want)
		}
	}
}

// TestUnderstand_homebrew: "homebrew" names every OrcBrew document, and
// their entities rank first.
func TestUnderstand_homebrew(t *testing.T) {
	ctx := context.Background()
	snapshotStore(t) // the entities and their cached vectors
	st, _ := srdSpellStore(t, nil)
	svc := query.NewService(st, snap.emb, nil)
	// A homebrew copy of Fire Bolt under another name: the same text and
	// vector, so only the word "homebrew" can put it first.
	var bolt *lkv1.Entity
	for _, e := range snap.entities {
		if e.GetKey() == "open5e_v2:srd-2014:spell:fire-bolt" {
			bolt = proto.Clone(e).(*lkv1.Entity)
		}
	}
	if bolt == nil {
		t.Fatal("no SRD Fire Bolt in the snapshot")
	}
	vec, _, err := snap.store.CachedVector(ctx, snap.store.Model().Name, bolt.GetContentHash())
	if err != nil {
		t.Fatal(err)
	}
	bolt.Document = &lkv1.Document{Key: "kitchen-brew", Name: "Kitchen Brew", Source: lkv1.Source_SOURCE_ORCBREW}
	bolt.Key = lkv1.EntityKey(lkv1.Source_SOURCE_ORCBREW, "kitchen-brew", lkv1.Kind_KIND_SPELL, "ember-dart")
	bolt.Name, bolt.Slug = "Ember Dart", "ember-dart"
	if err := st.Apply(ctx, []badgerstore.Write{{Entity: bolt, Vector: vec}}); err != nil {
		t.Fatal(err)
	}
	resp, err := svc.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: &lkv1.Common{SemanticQuery: "homebrew fire cantrip", Limit: 3}})
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.GetUnderstood().GetDocuments(); !slices.Equal(got, []string{"kitchen-brew"}) {
		t.Errorf("documents understood %q, want [kitchen-brew]", got)
	}
	if rs := resp.GetResults(); len(rs) == 0 || rs[0].GetEntity().GetName() != "Ember Dart" {
		t.Errorf("first result %q, want the homebrew Ember Dart", names(rs))
	}
}

// TestUnderstood_namedSpellAtSlot: a spell named with the level it is cast
// at comes first, not below every spell of that level.
func TestUnderstood_namedSpellAtSlot(t *testing.T) {
	cl := client(t)
	for _, tt := range []struct{ q, want string }{
		{"how much damage does fireball do at 5th level", "Fireball"},
		{"cure wounds at level 3", "Cure Wounds"},
	} {
		resp, err := cl.LookupSpells(t.Context(), &lkv1.LookupSpellsRequest{Common: &lkv1.Common{SemanticQuery: tt.q, Limit: 3}})
		if err != nil {
			t.Fatal(err)
		}
		if got := names(resp.GetResults()); len(got) == 0 || got[0] != tt.want {
			t.Errorf("%q: %v, want %s first", tt.q, got, tt.want)
		}
	}
}

// TestUnderstood_itemDamageDealt: a magic weapon deals the damage its text
// rolls besides its weapon's type, so "fire damage" ranks every Flame
// Tongue first rather than below the items that deal no damage at all.
func TestUnderstood_itemDamageDealt(t *testing.T) {
	cl := client(t)
	com := func(c *lkv1.Common) *lkv1.Common {
		c.Documents = docs("srd-2014")
		return c
	}
	named, err := cl.LookupEquipment(t.Context(), &lkv1.LookupEquipmentRequest{Common: com(&lkv1.Common{Name: "flame tongue*", Limit: 100})})
	if err != nil {
		t.Fatal(err)
	}
	want := names(named.GetResults())
	if len(want) < 2 {
		t.Fatalf("flame tongue*: %v, want its variants", want)
	}
	for _, q := range []string{"a magic sword that deals fire damage", "fire damage weapons"} {
		resp, err := cl.LookupEquipment(t.Context(), &lkv1.LookupEquipmentRequest{Common: com(&lkv1.Common{SemanticQuery: q, Limit: uint32(len(want))})})
		if err != nil {
			t.Fatal(err)
		}
		got := names(resp.GetResults())
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%q: first %d are %v, want the Flame Tongues %v", q, len(want), got, want)
		}
	}
}

// TestUnderstood_questionFrame: the words framing a question ("what does
// X mean", "how does X work") find X, not the texts that say "means" or
// "work".
func TestUnderstood_questionFrame(t *testing.T) {
	cl := client(t)
	for _, q := range []string{"what does advantage mean", "how does advantage work", "what is the meaning of advantage"} {
		resp, err := cl.LookupRules(t.Context(), &lkv1.LookupRulesRequest{Common: &lkv1.Common{SemanticQuery: q, Limit: 2}})
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names(resp.GetResults()) {
			if !strings.HasPrefix(n, "Advantage") {
				t.Errorf("lookup_rule %q: %v, want the rules on advantage first", q, names(resp.GetResults()))
				break
			}
		}
		sr, err := cl.Search(t.Context(), &lkv1.SearchRequest{Query: q, Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		if g := sr.GetGroups(); len(g) == 0 {
			t.Errorf("search %q: no results", q)
		} else if !strings.HasPrefix(names(g[0].GetResults())[0], "Advantage") {
			t.Errorf("search %q: first group %v, want a rule on advantage", q, names(g[0].GetResults()))
		}
	}
}

// TestUnderstood_askedOfAName: a question asking a field of a thing it
// names ("how much does a longsword cost") ranks the thing first.
func TestUnderstood_askedOfAName(t *testing.T) {
	cl := client(t)
	for _, c := range []struct {
		tool, q string
		want    []string // any of them
	}{
		{"lookup_equipment", "how much does a longsword cost", []string{"Longsword"}},
		{"lookup_equipment", "how much does plate armor weigh", []string{"Plate", "Plate Armor"}},
		{"lookup_equipment", "what's the price of a spyglass", []string{"Spyglass"}},
		{"lookup_creature", "how many hit points does an ogre have", []string{"Ogre"}},
	} {
		resp, err := understandCase{tool: c.tool, q: c.q}.call(t.Context(), cl, &lkv1.Common{Limit: 3})
		if err != nil {
			t.Fatal(err)
		}
		if got := names(resp.GetResults()); len(got) == 0 || !slices.Contains(c.want, got[0]) {
			t.Errorf("%s %q: %v, want %s first", c.tool, c.q, got, c.want)
		}
	}
}
