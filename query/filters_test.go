package query_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// Every filter of every lookup: each case asks with a filter, wants some
// results, and checks every result against the filter on the entity
// itself.
func TestLookup_Filters(t *testing.T) {
	c := client(t)
	ctx := context.Background()
	all := func(n uint32) *lkv1.Common { return &lkv1.Common{Limit: n} }
	tests := []struct {
		name string
		call func() (*lkv1.LookupResponse, error)
		ok   func(e *lkv1.Entity) bool
	}{
		{"spells level 3 evocation", func() (*lkv1.LookupResponse, error) {
			return c.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: all(100), Levels: []int32{3}, Schools: []string{"Evocation"}})
		}, func(e *lkv1.Entity) bool {
			return e.GetSpell().GetLevel() == 3 && e.GetSpell().GetSchool() == "evocation"
		}},
		{"fire* level 3 evocation", func() (*lkv1.LookupResponse, error) {
			return c.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: common("fire*", 10), Levels: []int32{3}, Schools: []string{"evocation"}})
		}, func(e *lkv1.Entity) bool {
			return strings.HasPrefix(strings.ToLower(e.GetName()), "fire") && e.GetSpell().GetLevel() == 3 && e.GetSpell().GetSchool() == "evocation"
		}},
		{"levels 1,2,3", func() (*lkv1.LookupResponse, error) {
			return c.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: all(100), Levels: []int32{1, 2, 3}})
		}, func(e *lkv1.Entity) bool { l := e.GetSpell().GetLevel(); return l >= 1 && l <= 3 }},
		{"level range 2-4", func() (*lkv1.LookupResponse, error) {
			return c.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: all(100), LevelRange: &lkv1.IntRange{Min: proto.Int32(2), Max: proto.Int32(4)}})
		}, func(e *lkv1.Entity) bool { l := e.GetSpell().GetLevel(); return l >= 2 && l <= 4 }},
		{"schools evocation or illusion", func() (*lkv1.LookupResponse, error) {
			return c.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: all(100), Schools: []string{"evocation", "illusion"}})
		}, func(e *lkv1.Entity) bool { s := e.GetSpell().GetSchool(); return s == "evocation" || s == "illusion" }},
		{"wizard concentration ritual", func() (*lkv1.LookupResponse, error) {
			return c.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: all(100), Classes: []string{"wizard"}, Concentration: proto.Bool(true), Ritual: proto.Bool(true)})
		}, func(e *lkv1.Entity) bool {
			s := e.GetSpell()
			return slices.Contains(s.GetClasses(), "wizard") && s.GetConcentration() && s.GetRitual()
		}},
		{"not concentration", func() (*lkv1.LookupResponse, error) {
			return c.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: all(50), Concentration: proto.Bool(false)})
		}, func(e *lkv1.Entity) bool { return !e.GetSpell().GetConcentration() }},
		{"casting time 1 bonus action", func() (*lkv1.LookupResponse, error) {
			return c.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: all(100), CastingTimes: []string{"1 Bonus Action"}})
		}, func(e *lkv1.Entity) bool { return e.GetSpell().GetCastingTimeKey() == "bonus-action" }},
		{"level 3+ fire damage, action", func() (*lkv1.LookupResponse, error) {
			return c.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: all(100), LevelRange: &lkv1.IntRange{Min: proto.Int32(3)},
				DamageTypes: []string{"fire"}, CastingTimes: []string{"action"}})
		}, func(e *lkv1.Entity) bool {
			s := e.GetSpell()
			return s.GetLevel() >= 3 && slices.Contains(s.GetDamageTypes(), "fire") && s.GetCastingTimeKey() == "action"
		}},
		{"verbal only, dex save", func() (*lkv1.LookupResponse, error) {
			return c.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: all(100), Verbal: proto.Bool(true), Somatic: proto.Bool(false), Material: proto.Bool(false), SavingThrows: []string{"dex"}})
		}, func(e *lkv1.Entity) bool {
			s := e.GetSpell()
			return s.GetVerbal() && !s.GetSomatic() && !s.GetMaterial() && s.GetSavingThrowAbility() == "dexterity"
		}},
		{"cr 5 undead", func() (*lkv1.LookupResponse, error) {
			return c.LookupCreatures(ctx, &lkv1.LookupCreaturesRequest{Common: all(100), Cr: proto.Float64(5), Types: []string{"undead"}})
		}, func(e *lkv1.Entity) bool {
			return e.GetCreature().GetChallengeRating() == 5 && e.GetCreature().GetType() == "undead"
		}},
		{"cr 1-3", func() (*lkv1.LookupResponse, error) {
			return c.LookupCreatures(ctx, &lkv1.LookupCreaturesRequest{Common: all(100), CrRange: &lkv1.DoubleRange{Min: proto.Float64(1), Max: proto.Float64(3)}})
		}, func(e *lkv1.Entity) bool { cr := e.GetCreature().GetChallengeRating(); return cr >= 1 && cr <= 3 }},
		{"medium beasts cr <= 1", func() (*lkv1.LookupResponse, error) {
			return c.LookupCreatures(ctx, &lkv1.LookupCreaturesRequest{Common: all(100), CrRange: &lkv1.DoubleRange{Max: proto.Float64(1)}, Types: []string{"beast"}, Sizes: []string{"Medium"}})
		}, func(e *lkv1.Entity) bool {
			cr := e.GetCreature()
			return cr.GetChallengeRating() <= 1 && cr.GetType() == "beast" && cr.GetSize() == "medium"
		}},
		{"dragons or undead", func() (*lkv1.LookupResponse, error) {
			return c.LookupCreatures(ctx, &lkv1.LookupCreaturesRequest{Common: all(100), Types: []string{"dragon", "undead"}})
		}, func(e *lkv1.Entity) bool { ty := e.GetCreature().GetType(); return ty == "dragon" || ty == "undead" }},
		{"large, str >= 16, int < 10", func() (*lkv1.LookupResponse, error) {
			return c.LookupCreatures(ctx, &lkv1.LookupCreaturesRequest{Common: all(100), Sizes: []string{"large"}, Abilities: []*lkv1.AbilityFilter{
				{Ability: "strength", Range: &lkv1.IntRange{Min: proto.Int32(16)}},
				{Ability: "int", Range: &lkv1.IntRange{Max: proto.Int32(9)}}}})
		}, func(e *lkv1.Entity) bool {
			a := e.GetCreature().GetAbilityScores()
			return e.GetCreature().GetSize() == "large" && a.GetStrength() >= 16 && a.GetIntelligence() < 10
		}},
		{"ac and hp ranges, legendary", func() (*lkv1.LookupResponse, error) {
			return c.LookupCreatures(ctx, &lkv1.LookupCreaturesRequest{Common: all(100), ArmorClass: &lkv1.IntRange{Min: proto.Int32(18)},
				HitPoints: &lkv1.IntRange{Min: proto.Int32(100), Max: proto.Int32(300)}, Legendary: proto.Bool(true)})
		}, func(e *lkv1.Entity) bool {
			cr := e.GetCreature()
			return cr.GetArmorClass() >= 18 && cr.GetHitPoints() >= 100 && cr.GetHitPoints() <= 300 && cr.GetHasLegendaryActions()
		}},
		{"immune to fire", func() (*lkv1.LookupResponse, error) {
			return c.LookupCreatures(ctx, &lkv1.LookupCreaturesRequest{Common: all(100), DamageImmunities: []string{"fire"}})
		}, func(e *lkv1.Entity) bool { return hasWord(e.GetCreature().GetDamageImmunities(), "fire") }},
		{"resistant to cold", func() (*lkv1.LookupResponse, error) {
			return c.LookupCreatures(ctx, &lkv1.LookupCreaturesRequest{Common: all(100), DamageResistances: []string{"cold"}})
		}, func(e *lkv1.Entity) bool { return hasWord(e.GetCreature().GetDamageResistances(), "cold") }},
		{"finesse and light weapons", func() (*lkv1.LookupResponse, error) {
			return c.LookupEquipment(ctx, &lkv1.LookupEquipmentRequest{Common: all(100), Kinds: []lkv1.Kind{lkv1.Kind_KIND_WEAPON}, Properties: []string{"finesse", "light"}})
		}, func(e *lkv1.Entity) bool {
			p := e.GetItem().GetWeapon().GetProperties()
			return e.GetKind() == lkv1.Kind_KIND_WEAPON && slices.Contains(p, "finesse") && slices.Contains(p, "light")
		}},
		{"simple 1d6 piercing", func() (*lkv1.LookupResponse, error) {
			return c.LookupEquipment(ctx, &lkv1.LookupEquipmentRequest{Common: all(100), IsSimple: proto.Bool(true), DamageDice: []string{"1d6"}, DamageTypes: []string{"piercing"}})
		}, func(e *lkv1.Entity) bool {
			w := e.GetItem().GetWeapon()
			return w.GetIsSimple() && w.GetDamageDice() == "1d6" && w.GetDamageType() == "piercing"
		}},
		{"rare magic items with attunement", func() (*lkv1.LookupResponse, error) {
			return c.LookupEquipment(ctx, &lkv1.LookupEquipmentRequest{Common: all(100), Kinds: []lkv1.Kind{lkv1.Kind_KIND_MAGIC_ITEM}, Rarities: []string{"rare"}, RequiresAttunement: proto.Bool(true)})
		}, func(e *lkv1.Entity) bool {
			it := e.GetItem()
			return e.GetKind() == lkv1.Kind_KIND_MAGIC_ITEM && it.GetRarity() == "rare" && it.GetRequiresAttunement()
		}},
		{"very rare, any spelling", func() (*lkv1.LookupResponse, error) {
			return c.LookupEquipment(ctx, &lkv1.LookupEquipmentRequest{Common: all(20), Rarities: []string{"Very-Rare"}, IsMagic: proto.Bool(true)})
		}, func(e *lkv1.Entity) bool { return e.GetItem().GetRarity() == "very rare" && e.GetItem().GetIsMagic() }},
		{"cost 10-100 gp, weight <= 5 lb", func() (*lkv1.LookupResponse, error) {
			return c.LookupEquipment(ctx, &lkv1.LookupEquipmentRequest{Common: all(100), CostGp: &lkv1.DoubleRange{Min: proto.Float64(10), Max: proto.Float64(100)}, WeightLb: &lkv1.DoubleRange{Max: proto.Float64(5)}})
		}, func(e *lkv1.Entity) bool {
			it := e.GetItem()
			return it.CostGp != nil && it.GetCostGp() >= 10 && it.GetCostGp() <= 100 && it.WeightLb != nil && it.GetWeightLb() <= 5
		}},
		{"heavy armor with stealth disadvantage, ac >= 16", func() (*lkv1.LookupResponse, error) {
			return c.LookupEquipment(ctx, &lkv1.LookupEquipmentRequest{Common: all(100), ArmorCategories: []string{"heavy"}, StealthDisadvantage: proto.Bool(true), ArmorClass: &lkv1.IntRange{Min: proto.Int32(16)}})
		}, func(e *lkv1.Entity) bool {
			a := e.GetItem().GetArmor()
			return a.GetCategory() == "heavy" && a.GetStealthDisadvantage() && a.GetAcBase() >= 16
		}},
		{"potions", func() (*lkv1.LookupResponse, error) {
			return c.LookupEquipment(ctx, &lkv1.LookupEquipmentRequest{Common: all(100), Categories: []string{"potion"}})
		}, func(e *lkv1.Entity) bool { return e.GetItem().GetCategory() == "potion" }},
		{"subclasses of wizard", func() (*lkv1.LookupResponse, error) {
			return c.LookupCharacterOptions(ctx, &lkv1.LookupCharacterOptionsRequest{Common: all(100), Kinds: []lkv1.Kind{lkv1.Kind_KIND_SUBCLASS}, Parent: "Wizard"})
		}, func(e *lkv1.Entity) bool {
			return e.GetKind() == lkv1.Kind_KIND_SUBCLASS && strings.EqualFold(e.GetCharacterOption().GetParentName(), "wizard")
		}},
		{"character options, all kinds", func() (*lkv1.LookupResponse, error) {
			return c.LookupCharacterOptions(ctx, &lkv1.LookupCharacterOptionsRequest{Common: common("*elf*", 50)})
		}, func(e *lkv1.Entity) bool { return strings.Contains(strings.ToLower(e.GetName()), "elf") }},
		{"conditions", func() (*lkv1.LookupResponse, error) {
			return c.LookupRules(ctx, &lkv1.LookupRulesRequest{Common: all(100), Kinds: []lkv1.Kind{lkv1.Kind_KIND_CONDITION}})
		}, func(e *lkv1.Entity) bool { return e.GetKind() == lkv1.Kind_KIND_CONDITION }},
		{"*radiant* damage type", func() (*lkv1.LookupResponse, error) {
			return c.LookupRules(ctx, &lkv1.LookupRulesRequest{Common: common("*radiant*", 10), Kinds: []lkv1.Kind{lkv1.Kind_KIND_DAMAGE_TYPE}})
		}, func(e *lkv1.Entity) bool {
			return e.GetKind() == lkv1.Kind_KIND_DAMAGE_TYPE && e.GetName() == "Radiant"
		}},
		{"rules in a section", func() (*lkv1.LookupResponse, error) {
			return c.LookupRules(ctx, &lkv1.LookupRulesRequest{Common: all(100), Kinds: []lkv1.Kind{lkv1.Kind_KIND_RULE}, Sections: []string{"Attacking"}})
		}, func(e *lkv1.Entity) bool { return e.GetRule().GetSection() == "attacking" }},
		{"opportunity attacks in a section", func() (*lkv1.LookupResponse, error) {
			return c.LookupRules(ctx, &lkv1.LookupRulesRequest{Common: common("opportunity attacks", 10), Sections: []string{"attacking"}})
		}, func(e *lkv1.Entity) bool { return e.GetName() == "Opportunity Attacks" }},
		{"game system 5e-2024", func() (*lkv1.LookupResponse, error) {
			return c.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: &lkv1.Common{Limit: 100, GameSystems: []string{"5E-2024"}}})
		}, func(e *lkv1.Entity) bool { return e.GetDocument().GetGameSystem() == "5e-2024" }},
		{"game system a5e", func() (*lkv1.LookupResponse, error) {
			return c.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: &lkv1.Common{Limit: 100, GameSystems: []string{"a5e"}}})
		}, func(e *lkv1.Entity) bool { return e.GetDocument().GetGameSystem() == "a5e" }},
		{"source open5e_v1", func() (*lkv1.LookupResponse, error) {
			return c.LookupEquipment(ctx, &lkv1.LookupEquipmentRequest{Common: &lkv1.Common{Limit: 100, Sources: []lkv1.Source{lkv1.Source_SOURCE_OPEN5E_V1}}})
		}, func(e *lkv1.Entity) bool { return e.GetDocument().GetSource() == lkv1.Source_SOURCE_OPEN5E_V1 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := tt.call()
			if err != nil {
				t.Fatal(err)
			}
			if len(resp.GetResults()) == 0 {
				t.Fatal("no results; want some")
			}
			for _, r := range resp.GetResults() {
				if !tt.ok(r.GetEntity()) {
					t.Errorf("%s (%s) does not pass the filter", r.GetEntity().GetName(), r.GetEntity().GetKey())
				}
			}
		})
	}
}

func hasWord(list []string, w string) bool {
	for _, s := range list {
		if strings.Contains(strings.ToLower(s), w) {
			return true
		}
	}
	return false
}

// documents: None = all, [] = nothing, a list = any of them (keys, names,
// aliases, any case).
func TestLookup_Documents(t *testing.T) {
	st := snapshotStore(t)
	c := client(t)
	ctx := context.Background()
	spells := func(name string, limit uint32, d *lkv1.DocumentFilter) *lkv1.LookupResponse {
		t.Helper()
		resp, err := c.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: &lkv1.Common{Name: name, Limit: limit, Documents: d}})
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	tests := []struct {
		name  string
		docs  *lkv1.DocumentFilter
		want  []string // document keys of the results
		empty bool
	}{
		{name: "alias srd-5e", docs: docs("srd-5e"), want: []string{"srd-2014"}},
		{name: "alias srd", docs: docs("SRD"), want: []string{"srd-2014"}},
		{name: "alias srd-5.1", docs: docs("srd-5.1"), want: []string{"srd-2014"}},
		{name: "alias srd-5.2", docs: docs("srd-5.2"), want: []string{"srd-2024"}},
		{name: "key any case", docs: docs("SRD-2024"), want: []string{"srd-2024"}},
		{name: "document name", docs: docs("System Reference Document 5.1"), want: []string{"srd-2014"}},
		{name: "two documents, one unknown", docs: docs("srd-5e", "tce"), want: []string{"srd-2014"}},
		{name: "three documents", docs: docs("srd-2014", "srd-2024", "a5e-ag"), want: []string{"a5e-ag", "srd-2014", "srd-2024"}},
		{name: "unknown document", docs: docs("non-existent"), empty: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := spells("fireball", 0, tt.docs)
			if tt.empty {
				if len(resp.GetResults()) != 0 || len(resp.GetWarnings()) == 0 {
					t.Errorf("results %v, warnings %v; want none and a warning", names(resp.GetResults()), resp.GetWarnings())
				}
				return
			}
			if got := docKeys(resp.GetResults()); !slices.Equal(got, tt.want) {
				t.Errorf("documents of Fireball results = %v, want %v", got, tt.want)
			}
		})
	}
	t.Run("none means all", func(t *testing.T) {
		resp := spells("", 100, nil)
		if d := docKeys(resp.GetResults()); len(d) < 3 {
			t.Errorf("documents = %v, want many", d)
		}
	})
	t.Run("empty list means nothing, without reading", func(t *testing.T) {
		before := st.Stats().EntityReads
		resp := spells("fireball", 0, docs())
		if len(resp.GetResults()) != 0 {
			t.Errorf("results %v, want none", names(resp.GetResults()))
		}
		if st.Stats().EntityReads != before {
			t.Error("documents=[] read entities")
		}
		sr, err := c.Search(ctx, &lkv1.SearchRequest{Query: "fireball", Documents: docs()})
		if err != nil || len(sr.GetGroups()) != 0 {
			t.Errorf("search with documents=[]: %v, %v; want no groups", sr.GetGroups(), err)
		}
	})
	t.Run("one entity from one document", func(t *testing.T) {
		for _, call := range []func() (*lkv1.LookupResponse, error){
			func() (*lkv1.LookupResponse, error) {
				return c.LookupEquipment(ctx, &lkv1.LookupEquipmentRequest{Common: &lkv1.Common{Name: "longsword", Documents: docs("srd-5e")}, Kinds: []lkv1.Kind{lkv1.Kind_KIND_WEAPON}})
			},
			func() (*lkv1.LookupResponse, error) {
				return c.LookupCharacterOptions(ctx, &lkv1.LookupCharacterOptionsRequest{Common: &lkv1.Common{Name: "wizard", Documents: docs("srd-5e")}, Kinds: []lkv1.Kind{lkv1.Kind_KIND_CLASS}})
			},
		} {
			resp, err := call()
			if err != nil {
				t.Fatal(err)
			}
			if rs := resp.GetResults(); len(rs) != 1 || rs[0].GetEntity().GetDocument().GetKey() != "srd-2014" {
				t.Errorf("results %v from %v; want exactly one, from srd-2014", names(rs), docKeys(rs))
			}
		}
	})
	t.Run("level 3 from two documents", func(t *testing.T) {
		resp, err := c.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: &lkv1.Common{Limit: 100, Documents: docs("srd-5e", "tce")}, Levels: []int32{3}})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.GetResults()) == 0 || !slices.Equal(docKeys(resp.GetResults()), []string{"srd-2014"}) {
			t.Errorf("documents %v of %d results, want srd-2014 only", docKeys(resp.GetResults()), len(resp.GetResults()))
		}
	})
}
