package query_test

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
	"lorekeeper.dev/query"
)

// Every filter of every lookup, for recall as well as precision: each case
// asks with a filter, and the set of keys returned must equal the set
// computed by brute force over the snapshot with the filter written on the
// entity itself.
func TestLookup_Filters(t *testing.T) {
	svc := query.NewService(snapshotStore(t), nil, &query.Options{MaxLimit: 1 << 20})
	ctx := context.Background()
	all := &lkv1.Common{Limit: 1 << 20}
	named := func(name string) *lkv1.Common { return &lkv1.Common{Name: name, Limit: 1 << 20} }
	tests := []struct {
		name    string
		call    func() (*lkv1.LookupResponse, error)
		ok      func(e *lkv1.Entity) bool
		must    []string // names that must be among the results
		mustNot []string // names that must not be
	}{
		{name: "spells level 3 evocation", call: func() (*lkv1.LookupResponse, error) {
			return svc.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: all, Levels: []int32{3}, Schools: []string{"Evocation"}})
		}, ok: func(e *lkv1.Entity) bool {
			return isSpell(e) && e.GetSpell().GetLevel() == 3 && lower(e.GetSpell().GetSchool()) == "evocation"
		}, must: []string{"Fireball"}},
		{name: "fire* level 3 evocation", call: func() (*lkv1.LookupResponse, error) {
			return svc.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: named("fire*"), Levels: []int32{3}, Schools: []string{"evocation"}})
		}, ok: func(e *lkv1.Entity) bool {
			return isSpell(e) && strings.HasPrefix(lower(e.GetName()), "fire") && e.GetSpell().GetLevel() == 3 && lower(e.GetSpell().GetSchool()) == "evocation"
		}, must: []string{"Fireball"}},
		{name: "*light* anywhere in the name", call: func() (*lkv1.LookupResponse, error) {
			return svc.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: named("*light*")})
		}, ok: func(e *lkv1.Entity) bool { return isSpell(e) && strings.Contains(lower(e.GetName()), "light") }},
		{name: "levels 1,2,3", call: func() (*lkv1.LookupResponse, error) {
			return svc.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: all, Levels: []int32{1, 2, 3}})
		}, ok: func(e *lkv1.Entity) bool { l := e.GetSpell().GetLevel(); return isSpell(e) && l >= 1 && l <= 3 }},
		{name: "level range 2-4", call: func() (*lkv1.LookupResponse, error) {
			return svc.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: all, LevelRange: &lkv1.IntRange{Min: proto.Int32(2), Max: proto.Int32(4)}})
		}, ok: func(e *lkv1.Entity) bool { l := e.GetSpell().GetLevel(); return isSpell(e) && l >= 2 && l <= 4 }},
		{name: "cantrips", call: func() (*lkv1.LookupResponse, error) {
			return svc.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: all, LevelRange: &lkv1.IntRange{Max: proto.Int32(0)}})
		}, ok: func(e *lkv1.Entity) bool { return isSpell(e) && e.GetSpell().GetLevel() == 0 }},
		{name: "schools evocation or illusion", call: func() (*lkv1.LookupResponse, error) {
			return svc.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: all, Schools: []string{"evocation", "illusion"}})
		}, ok: func(e *lkv1.Entity) bool {
			s := lower(e.GetSpell().GetSchool())
			return isSpell(e) && (s == "evocation" || s == "illusion")
		}},
		{name: "wizard concentration ritual", call: func() (*lkv1.LookupResponse, error) {
			return svc.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: all, Classes: []string{"Wizard"}, Concentration: proto.Bool(true), Ritual: proto.Bool(true)})
		}, ok: func(e *lkv1.Entity) bool {
			s := e.GetSpell()
			return isSpell(e) && hasValue(s.GetClasses(), "wizard") && s.GetConcentration() && s.GetRitual()
		}},
		{name: "not concentration", call: func() (*lkv1.LookupResponse, error) {
			return svc.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: all, Concentration: proto.Bool(false)})
		}, ok: func(e *lkv1.Entity) bool { return isSpell(e) && !e.GetSpell().GetConcentration() }},
		{name: "casting time 1 bonus action", call: func() (*lkv1.LookupResponse, error) {
			return svc.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: all, CastingTimes: []string{"1 Bonus Action"}})
		}, ok: castingTime("1 bonus action", "bonus action"), must: []string{"Misty Step"}},
		{name: "casting time 1 round", call: func() (*lkv1.LookupResponse, error) {
			return svc.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: all, CastingTimes: []string{"1 round"}})
		}, ok: castingTime("1 round", "round"), must: []string{"Torrent of Fire", "Beast Within"}},
		{name: "casting time round, minute or 10 minutes", call: func() (*lkv1.LookupResponse, error) {
			return svc.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: all, CastingTimes: []string{"round", "Minute", "10 Minutes"}})
		}, ok: func(e *lkv1.Entity) bool {
			return castingTime("1 round", "round", "1 minute", "minute", "10 minutes")(e)
		}, must: []string{"Torrent of Fire", "Identify"}},
		{name: "casting time 1 hour", call: func() (*lkv1.LookupResponse, error) {
			return svc.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: all, CastingTimes: []string{"1 hour"}})
		}, ok: castingTime("1 hour", "hour")},
		{name: "casting time reaction", call: func() (*lkv1.LookupResponse, error) {
			return svc.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: all, CastingTimes: []string{"Reaction"}})
		}, ok: castingTime("1 reaction", "reaction"), must: []string{"Shield"}},
		{name: "level 3+ fire damage, action", call: func() (*lkv1.LookupResponse, error) {
			return svc.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: all, LevelRange: &lkv1.IntRange{Min: proto.Int32(3)},
				DamageTypes: []string{"fire"}, CastingTimes: []string{"action"}})
		}, ok: func(e *lkv1.Entity) bool {
			s := e.GetSpell()
			return isSpell(e) && s.GetLevel() >= 3 && hasValue(s.GetDamageTypes(), "fire") && castingTime("1 action", "action")(e)
		}},
		{name: "verbal only, dex save", call: func() (*lkv1.LookupResponse, error) {
			return svc.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: all, Verbal: proto.Bool(true), Somatic: proto.Bool(false), Material: proto.Bool(false), SavingThrows: []string{"dex"}})
		}, ok: func(e *lkv1.Entity) bool {
			s := e.GetSpell()
			return isSpell(e) && s.GetVerbal() && !s.GetSomatic() && !s.GetMaterial() && lower(s.GetSavingThrowAbility()) == "dexterity"
		}},
		{name: "somatic and material, wisdom save", call: func() (*lkv1.LookupResponse, error) {
			return svc.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: all, Somatic: proto.Bool(true), Material: proto.Bool(true), SavingThrows: []string{"Wisdom"}})
		}, ok: func(e *lkv1.Entity) bool {
			s := e.GetSpell()
			return isSpell(e) && s.GetSomatic() && s.GetMaterial() && lower(s.GetSavingThrowAbility()) == "wisdom"
		}},
		{name: "cr 5 undead", call: func() (*lkv1.LookupResponse, error) {
			return svc.LookupCreatures(ctx, &lkv1.LookupCreaturesRequest{Common: all, Cr: proto.Float64(5), Types: []string{"undead"}})
		}, ok: func(e *lkv1.Entity) bool {
			return isCreature(e) && e.GetCreature().GetChallengeRating() == 5 && lower(e.GetCreature().GetType()) == "undead"
		}},
		{name: "cr 1/4", call: func() (*lkv1.LookupResponse, error) {
			return svc.LookupCreatures(ctx, &lkv1.LookupCreaturesRequest{Common: all, Cr: proto.Float64(0.25)})
		}, ok: func(e *lkv1.Entity) bool { return isCreature(e) && e.GetCreature().GetChallengeRating() == 0.25 }},
		{name: "cr 1-3", call: func() (*lkv1.LookupResponse, error) {
			return svc.LookupCreatures(ctx, &lkv1.LookupCreaturesRequest{Common: all, CrRange: &lkv1.DoubleRange{Min: proto.Float64(1), Max: proto.Float64(3)}})
		}, ok: func(e *lkv1.Entity) bool {
			cr := e.GetCreature().GetChallengeRating()
			return isCreature(e) && cr >= 1 && cr <= 3
		}},
		{name: "medium beasts cr <= 1", call: func() (*lkv1.LookupResponse, error) {
			return svc.LookupCreatures(ctx, &lkv1.LookupCreaturesRequest{Common: all, CrRange: &lkv1.DoubleRange{Max: proto.Float64(1)}, Types: []string{"beast"}, Sizes: []string{"Medium"}})
		}, ok: func(e *lkv1.Entity) bool {
			cr := e.GetCreature()
			return isCreature(e) && cr.GetChallengeRating() <= 1 && lower(cr.GetType()) == "beast" && lower(cr.GetSize()) == "medium"
		}},
		{name: "dragons or undead", call: func() (*lkv1.LookupResponse, error) {
			return svc.LookupCreatures(ctx, &lkv1.LookupCreaturesRequest{Common: all, Types: []string{"dragon", "undead"}})
		}, ok: func(e *lkv1.Entity) bool {
			ty := lower(e.GetCreature().GetType())
			return isCreature(e) && (ty == "dragon" || ty == "undead")
		}},
		{name: "large, str >= 16, int < 10", call: func() (*lkv1.LookupResponse, error) {
			return svc.LookupCreatures(ctx, &lkv1.LookupCreaturesRequest{Common: all, Sizes: []string{"large"}, Abilities: []*lkv1.AbilityFilter{
				{Ability: "strength", Range: &lkv1.IntRange{Min: proto.Int32(16)}},
				{Ability: "int", Range: &lkv1.IntRange{Max: proto.Int32(9)}}}})
		}, ok: func(e *lkv1.Entity) bool {
			a := e.GetCreature().GetAbilityScores()
			return isCreature(e) && a != nil && lower(e.GetCreature().GetSize()) == "large" && a.GetStrength() >= 16 && a.GetIntelligence() < 10
		}},
		{name: "dex, con, wis and cha ranges", call: func() (*lkv1.LookupResponse, error) {
			return svc.LookupCreatures(ctx, &lkv1.LookupCreaturesRequest{Common: all, Abilities: []*lkv1.AbilityFilter{
				{Ability: "DEX", Range: &lkv1.IntRange{Min: proto.Int32(14)}},
				{Ability: "constitution", Range: &lkv1.IntRange{Min: proto.Int32(14)}},
				{Ability: "wis", Range: &lkv1.IntRange{Min: proto.Int32(12), Max: proto.Int32(16)}},
				{Ability: "Cha", Range: &lkv1.IntRange{Max: proto.Int32(8)}}}})
		}, ok: func(e *lkv1.Entity) bool {
			a := e.GetCreature().GetAbilityScores()
			return isCreature(e) && a != nil && a.GetDexterity() >= 14 && a.GetConstitution() >= 14 &&
				a.GetWisdom() >= 12 && a.GetWisdom() <= 16 && a.GetCharisma() <= 8
		}},
		{name: "ac and hp ranges, legendary", call: func() (*lkv1.LookupResponse, error) {
			return svc.LookupCreatures(ctx, &lkv1.LookupCreaturesRequest{Common: all, ArmorClass: &lkv1.IntRange{Min: proto.Int32(18)},
				HitPoints: &lkv1.IntRange{Min: proto.Int32(100), Max: proto.Int32(300)}, Legendary: proto.Bool(true)})
		}, ok: func(e *lkv1.Entity) bool {
			cr := e.GetCreature()
			return isCreature(e) && cr.GetArmorClass() >= 18 && cr.GetHitPoints() >= 100 && cr.GetHitPoints() <= 300 && cr.GetHasLegendaryActions()
		}},
		{name: "not legendary", call: func() (*lkv1.LookupResponse, error) {
			return svc.LookupCreatures(ctx, &lkv1.LookupCreaturesRequest{Common: all, Legendary: proto.Bool(false)})
		}, ok: func(e *lkv1.Entity) bool { return isCreature(e) && !e.GetCreature().GetHasLegendaryActions() }},
		{name: "immune to fire", call: func() (*lkv1.LookupResponse, error) {
			return svc.LookupCreatures(ctx, &lkv1.LookupCreaturesRequest{Common: all, DamageImmunities: []string{"fire"}})
		}, ok: func(e *lkv1.Entity) bool {
			c := e.GetCreature()
			return isCreature(e) && defends(c.GetDamageImmunities(), c.GetDamageImmunityEntries(), "fire", always)
		}, must: []string{"Fire Elemental"}},
		{name: "immune to slashing, always", call: func() (*lkv1.LookupResponse, error) {
			return svc.LookupCreatures(ctx, &lkv1.LookupCreaturesRequest{Common: all, DamageImmunities: []string{"slashing"}})
		}, ok: func(e *lkv1.Entity) bool {
			c := e.GetCreature()
			return isCreature(e) && defends(c.GetDamageImmunities(), c.GetDamageImmunityEntries(), "slashing", always)
		}, mustNot: []string{"Werewolf"}},
		{name: "immune to nonmagical slashing", call: func() (*lkv1.LookupResponse, error) {
			return svc.LookupCreatures(ctx, &lkv1.LookupCreaturesRequest{Common: all, DamageImmunities: []string{"Nonmagical slashing"}})
		}, ok: func(e *lkv1.Entity) bool {
			c := e.GetCreature()
			return isCreature(e) && defends(c.GetDamageImmunities(), c.GetDamageImmunityEntries(), "slashing", againstNonmagical)
		}, must: []string{"Werewolf"}},
		{name: "resistant to cold", call: func() (*lkv1.LookupResponse, error) {
			return svc.LookupCreatures(ctx, &lkv1.LookupCreaturesRequest{Common: all, DamageResistances: []string{"cold"}})
		}, ok: func(e *lkv1.Entity) bool {
			c := e.GetCreature()
			return isCreature(e) && defends(c.GetDamageResistances(), c.GetDamageResistanceEntries(), "cold", always)
		}},
		{name: "resistant to bludgeoning, whatever limits it", call: func() (*lkv1.LookupResponse, error) {
			return svc.LookupCreatures(ctx, &lkv1.LookupCreaturesRequest{Common: all, DamageResistances: []string{"any bludgeoning"}})
		}, ok: func(e *lkv1.Entity) bool {
			c := e.GetCreature()
			return isCreature(e) && defends(c.GetDamageResistances(), c.GetDamageResistanceEntries(), "bludgeoning", anyway)
		}, must: []string{"Wight"}},
		{name: "vulnerable to radiant", call: func() (*lkv1.LookupResponse, error) {
			return svc.LookupCreatures(ctx, &lkv1.LookupCreaturesRequest{Common: all, DamageVulnerabilities: []string{"radiant"}})
		}, ok: func(e *lkv1.Entity) bool {
			c := e.GetCreature()
			return isCreature(e) && defends(c.GetDamageVulnerabilities(), c.GetDamageVulnerabilityEntries(), "radiant", always)
		}},
		{name: "forest or swamp dwellers (environments)", call: func() (*lkv1.LookupResponse, error) {
			return svc.LookupCreatures(ctx, &lkv1.LookupCreaturesRequest{Common: all, Environments: []string{"Forest-or-Jungle", "swamp-or-marsh"}})
		}, ok: func(e *lkv1.Entity) bool {
			env := e.GetCreature().GetEnvironments()
			return isCreature(e) && (hasValue(env, "forest-or-jungle") || hasValue(env, "swamp-or-marsh"))
		}},
		{name: "all equipment", call: func() (*lkv1.LookupResponse, error) {
			return svc.LookupEquipment(ctx, &lkv1.LookupEquipmentRequest{Common: all})
		}, ok: func(e *lkv1.Entity) bool { return slices.Contains(lkv1.EquipmentKinds(), e.GetKind()) }},
		{name: "finesse and light weapons", call: func() (*lkv1.LookupResponse, error) {
			return svc.LookupEquipment(ctx, &lkv1.LookupEquipmentRequest{Common: all, Kinds: []lkv1.Kind{lkv1.Kind_KIND_WEAPON}, Properties: []string{"finesse", "Light"}})
		}, ok: func(e *lkv1.Entity) bool {
			p := e.GetItem().GetWeapon().GetProperties()
			return e.GetKind() == lkv1.Kind_KIND_WEAPON && hasValue(p, "finesse") && hasValue(p, "light")
		}, must: []string{"Dagger"}},
		{name: "simple 1d6 piercing", call: func() (*lkv1.LookupResponse, error) {
			return svc.LookupEquipment(ctx, &lkv1.LookupEquipmentRequest{Common: all, IsSimple: proto.Bool(true), DamageDice: []string{"1d6"}, DamageTypes: []string{"piercing"}})
		}, ok: func(e *lkv1.Entity) bool {
			w := e.GetItem().GetWeapon()
			return isEquipment(e) && w != nil && w.GetIsSimple() && lower(w.GetDamageDice()) == "1d6" && lower(w.GetDamageType()) == "piercing"
		}},
		{name: "martial weapons", call: func() (*lkv1.LookupResponse, error) {
			return svc.LookupEquipment(ctx, &lkv1.LookupEquipmentRequest{Common: all, IsSimple: proto.Bool(false)})
		}, ok: func(e *lkv1.Entity) bool {
			w := e.GetItem().GetWeapon()
			return isEquipment(e) && w != nil && !w.GetIsSimple()
		}},
		{name: "rare magic items with attunement", call: func() (*lkv1.LookupResponse, error) {
			return svc.LookupEquipment(ctx, &lkv1.LookupEquipmentRequest{Common: all, Kinds: []lkv1.Kind{lkv1.Kind_KIND_MAGIC_ITEM}, Rarities: []string{"rare"}, RequiresAttunement: proto.Bool(true)})
		}, ok: func(e *lkv1.Entity) bool {
			it := e.GetItem()
			return e.GetKind() == lkv1.Kind_KIND_MAGIC_ITEM && lower(it.GetRarity()) == "rare" && it.GetRequiresAttunement()
		}},
		{name: "very rare, any spelling", call: func() (*lkv1.LookupResponse, error) {
			return svc.LookupEquipment(ctx, &lkv1.LookupEquipmentRequest{Common: all, Rarities: []string{"Very-Rare"}, IsMagic: proto.Bool(true)})
		}, ok: func(e *lkv1.Entity) bool {
			return isEquipment(e) && lower(e.GetItem().GetRarity()) == "very rare" && e.GetItem().GetIsMagic()
		}},
		{name: "mundane items", call: func() (*lkv1.LookupResponse, error) {
			return svc.LookupEquipment(ctx, &lkv1.LookupEquipmentRequest{Common: all, IsMagic: proto.Bool(false), RequiresAttunement: proto.Bool(false)})
		}, ok: func(e *lkv1.Entity) bool {
			it := e.GetItem()
			return isEquipment(e) && it != nil && !it.GetIsMagic() && !it.GetRequiresAttunement()
		}},
		{name: "cost 10-100 gp, weight <= 5 lb", call: func() (*lkv1.LookupResponse, error) {
			return svc.LookupEquipment(ctx, &lkv1.LookupEquipmentRequest{Common: all, CostGp: &lkv1.DoubleRange{Min: proto.Float64(10), Max: proto.Float64(100)}, WeightLb: &lkv1.DoubleRange{Max: proto.Float64(5)}})
		}, ok: func(e *lkv1.Entity) bool {
			it := e.GetItem()
			return isEquipment(e) && it.CostGp != nil && it.GetCostGp() >= 10 && it.GetCostGp() <= 100 && it.WeightLb != nil && it.GetWeightLb() <= 5
		}},
		{name: "weight >= 20 lb", call: func() (*lkv1.LookupResponse, error) {
			return svc.LookupEquipment(ctx, &lkv1.LookupEquipmentRequest{Common: all, WeightLb: &lkv1.DoubleRange{Min: proto.Float64(20)}})
		}, ok: func(e *lkv1.Entity) bool {
			it := e.GetItem()
			return isEquipment(e) && it.WeightLb != nil && it.GetWeightLb() >= 20
		}},
		{name: "heavy armor with stealth disadvantage, ac >= 16", call: func() (*lkv1.LookupResponse, error) {
			return svc.LookupEquipment(ctx, &lkv1.LookupEquipmentRequest{Common: all, ArmorCategories: []string{"heavy"}, StealthDisadvantage: proto.Bool(true), ArmorClass: &lkv1.IntRange{Min: proto.Int32(16)}})
		}, ok: func(e *lkv1.Entity) bool {
			a := e.GetItem().GetArmor()
			return isEquipment(e) && a != nil && lower(a.GetCategory()) == "heavy" && a.GetStealthDisadvantage() && a.GetAcBase() >= 16
		}, must: []string{"Plate"}},
		{name: "light or medium armor without stealth disadvantage", call: func() (*lkv1.LookupResponse, error) {
			return svc.LookupEquipment(ctx, &lkv1.LookupEquipmentRequest{Common: all, ArmorCategories: []string{"light", "medium"}, StealthDisadvantage: proto.Bool(false)})
		}, ok: func(e *lkv1.Entity) bool {
			a := e.GetItem().GetArmor()
			c := lower(a.GetCategory())
			return isEquipment(e) && a != nil && (c == "light" || c == "medium") && !a.GetStealthDisadvantage()
		}},
		{name: "potions", call: func() (*lkv1.LookupResponse, error) {
			return svc.LookupEquipment(ctx, &lkv1.LookupEquipmentRequest{Common: all, Categories: []string{"potion"}})
		}, ok: func(e *lkv1.Entity) bool { return isEquipment(e) && lower(e.GetItem().GetCategory()) == "potion" }},
		{name: "subclasses of wizard", call: func() (*lkv1.LookupResponse, error) {
			return svc.LookupCharacterOptions(ctx, &lkv1.LookupCharacterOptionsRequest{Common: all, Kinds: []lkv1.Kind{lkv1.Kind_KIND_SUBCLASS}, Parent: "Wizard"})
		}, ok: func(e *lkv1.Entity) bool {
			co := e.GetCharacterOption()
			return e.GetKind() == lkv1.Kind_KIND_SUBCLASS && (lower(co.GetParentName()) == "wizard" ||
				lkv1.Slugify(co.GetParentName()) == "wizard" || lower(co.GetParentKey()) == "wizard")
		}},
		{name: "character options, all kinds", call: func() (*lkv1.LookupResponse, error) {
			return svc.LookupCharacterOptions(ctx, &lkv1.LookupCharacterOptionsRequest{Common: named("*elf*")})
		}, ok: func(e *lkv1.Entity) bool {
			return slices.Contains(lkv1.CharacterOptionKinds(), e.GetKind()) && strings.Contains(lower(e.GetName()), "elf")
		}},
		{name: "feats and backgrounds", call: func() (*lkv1.LookupResponse, error) {
			return svc.LookupCharacterOptions(ctx, &lkv1.LookupCharacterOptionsRequest{Common: all, Kinds: []lkv1.Kind{lkv1.Kind_KIND_FEAT, lkv1.Kind_KIND_BACKGROUND}})
		}, ok: func(e *lkv1.Entity) bool {
			return e.GetKind() == lkv1.Kind_KIND_FEAT || e.GetKind() == lkv1.Kind_KIND_BACKGROUND
		}},
		{name: "conditions", call: func() (*lkv1.LookupResponse, error) {
			return svc.LookupRules(ctx, &lkv1.LookupRulesRequest{Common: all, Kinds: []lkv1.Kind{lkv1.Kind_KIND_CONDITION}})
		}, ok: func(e *lkv1.Entity) bool { return e.GetKind() == lkv1.Kind_KIND_CONDITION }},
		{name: "all rules", call: func() (*lkv1.LookupResponse, error) {
			return svc.LookupRules(ctx, &lkv1.LookupRulesRequest{Common: all})
		}, ok: func(e *lkv1.Entity) bool { return slices.Contains(lkv1.RuleKinds(), e.GetKind()) }},
		{name: "*radiant* damage type", call: func() (*lkv1.LookupResponse, error) {
			return svc.LookupRules(ctx, &lkv1.LookupRulesRequest{Common: named("*radiant*"), Kinds: []lkv1.Kind{lkv1.Kind_KIND_DAMAGE_TYPE}})
		}, ok: func(e *lkv1.Entity) bool {
			return e.GetKind() == lkv1.Kind_KIND_DAMAGE_TYPE && strings.Contains(lower(e.GetName()), "radiant")
		}},
		{name: "rules in a section", call: func() (*lkv1.LookupResponse, error) {
			return svc.LookupRules(ctx, &lkv1.LookupRulesRequest{Common: all, Kinds: []lkv1.Kind{lkv1.Kind_KIND_RULE}, Sections: []string{"Attacking"}})
		}, ok: func(e *lkv1.Entity) bool { return e.GetKind() == lkv1.Kind_KIND_RULE && inSection(e, "attacking") }},
		{name: "game system 5e-2024", call: func() (*lkv1.LookupResponse, error) {
			return svc.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: &lkv1.Common{Limit: 1 << 20, GameSystems: []string{"5E-2024"}}})
		}, ok: func(e *lkv1.Entity) bool { return isSpell(e) && lower(e.GetDocument().GetGameSystem()) == "5e-2024" }},
		{name: "game system a5e or 5e-2014", call: func() (*lkv1.LookupResponse, error) {
			return svc.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: &lkv1.Common{Limit: 1 << 20, GameSystems: []string{"a5e", "5e-2014"}}})
		}, ok: func(e *lkv1.Entity) bool {
			g := lower(e.GetDocument().GetGameSystem())
			return isSpell(e) && (g == "a5e" || g == "5e-2014")
		}},
		{name: "game system a5e creatures", call: func() (*lkv1.LookupResponse, error) {
			return svc.LookupCreatures(ctx, &lkv1.LookupCreaturesRequest{Common: &lkv1.Common{Limit: 1 << 20, GameSystems: []string{"a5e"}}})
		}, ok: func(e *lkv1.Entity) bool { return isCreature(e) && lower(e.GetDocument().GetGameSystem()) == "a5e" }},
		{name: "source open5e_v1", call: func() (*lkv1.LookupResponse, error) {
			return svc.LookupEquipment(ctx, &lkv1.LookupEquipmentRequest{Common: &lkv1.Common{Limit: 1 << 20, Sources: []lkv1.Source{lkv1.Source_SOURCE_OPEN5E_V1}}})
		}, ok: func(e *lkv1.Entity) bool {
			return isEquipment(e) && e.GetDocument().GetSource() == lkv1.Source_SOURCE_OPEN5E_V1
		}},
		{name: "documents by key and alias", call: func() (*lkv1.LookupResponse, error) {
			return svc.LookupCreatures(ctx, &lkv1.LookupCreaturesRequest{Common: &lkv1.Common{Limit: 1 << 20, Documents: docs("srd-5.2", "TOH")}})
		}, ok: func(e *lkv1.Entity) bool {
			d := lower(e.GetDocument().GetKey())
			return isCreature(e) && (d == "srd-2024" || d == "toh")
		}},
	}
	entities := map[string]*lkv1.Entity{} // by key, the last write winning as in the store
	for _, e := range snap.entities {
		entities[e.GetKey()] = e
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := tt.call()
			if err != nil {
				t.Fatal(err)
			}
			got := returnedKeys(resp.GetResults())
			want := map[string]bool{}
			for k, e := range entities {
				if tt.ok(e) {
					want[k] = true
				}
			}
			if len(want) == 0 {
				t.Fatal("no entity of the snapshot passes the filter; the case tests nothing")
			}
			for k := range got {
				if !want[k] {
					t.Errorf("%s (%s) does not pass the filter", entities[k].GetName(), k)
				}
			}
			missed := 0
			for k := range want {
				if !got[k] {
					if missed++; missed <= 10 {
						t.Errorf("%s (%s) passes the filter and was not returned", entities[k].GetName(), k)
					}
				}
			}
			if missed > 0 {
				t.Errorf("recall: %d of %d entities that pass the filter were not returned", missed, len(want))
			}
			for _, name := range tt.must {
				if !slices.Contains(names(resp.GetResults()), name) {
					t.Errorf("%s is not among the %d results", name, len(got))
				}
			}
			for _, name := range tt.mustNot {
				if slices.Contains(names(resp.GetResults()), name) {
					t.Errorf("%s is among the results", name)
				}
			}
		})
	}
}

func lower(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

func isSpell(e *lkv1.Entity) bool    { return e.GetKind() == lkv1.Kind_KIND_SPELL }
func isCreature(e *lkv1.Entity) bool { return e.GetKind() == lkv1.Kind_KIND_CREATURE }
func isEquipment(e *lkv1.Entity) bool {
	return slices.Contains(lkv1.EquipmentKinds(), e.GetKind())
}

// hasValue reports whether list holds v, in any case.
func hasValue(list []string, v string) bool {
	return slices.ContainsFunc(list, func(s string) bool { return lower(s) == v })
}

// castingTime is a spell whose casting time, as the source wrote it, is
// one of forms, or one of them followed by more words: "1 round" is
// "1 round", "1 Round", "1-round" or "1round" but not "10 rounds".
func castingTime(forms ...string) func(*lkv1.Entity) bool {
	glued := regexp.MustCompile(`(\d)([a-z])`)
	return func(e *lkv1.Entity) bool {
		if !isSpell(e) {
			return false
		}
		ct := lower(e.GetSpell().GetCastingTime())
		if i := strings.IndexAny(ct, ",("); i >= 0 {
			ct = ct[:i]
		}
		ct = glued.ReplaceAllString(strings.ReplaceAll(ct, "-", " "), "$1 $2")
		ct = strings.Join(strings.Fields(ct), " ")
		for _, f := range forms {
			if ct == f || strings.HasPrefix(ct, f+" ") {
				return true
			}
		}
		return false
	}
}

// How far a damage filter reaches (see defends).
const (
	always = iota
	againstNonmagical
	anyway
)

// defends reports whether a creature's damage line (its entries, or the
// keys alone where a source gives no more) covers typ: always; or also
// where a qualifier limits it to nonmagical attacks (the werewolf's
// "from nonmagical attacks not made with silvered weapons"); or whatever
// limits it.
func defends(list []string, entries []*lkv1.Defense, typ string, reach int) bool {
	if len(entries) == 0 {
		return hasValue(list, typ)
	}
	for _, d := range entries {
		if !hasValue(d.GetTypes(), typ) {
			continue
		}
		q := lower(d.GetQualifier())
		switch {
		case q == "", reach == anyway:
			return true
		case reach == againstNonmagical && (strings.Contains(q, "nonmagic") || strings.Contains(q, "non-magic") || strings.Contains(q, "non magic")):
			return true
		}
	}
	return false
}

// inSection reports whether a rule is in the section named (by key, name
// or slug).
func inSection(e *lkv1.Entity, section string) bool {
	r := e.GetRule()
	return lower(r.GetSection()) == section || lower(r.GetSectionName()) == section || lkv1.Slugify(r.GetSectionName()) == section
}

// The documents warning names the documents that match nothing stored, and
// only those: a known document whose entities the other filters rule out
// (no 9th-level ritual in SRD 5.1) is an ordinary empty answer.
func TestLookup_DocumentsWarning(t *testing.T) {
	c := client(t)
	nine, yes := int32(9), true
	tests := []struct {
		name string
		docs []string
		want string // in the one warning; "" for none
	}{
		{"known document, nothing passes the filters", []string{"srd-2014"}, ""},
		{"known document by alias", []string{"srd-5.1"}, ""},
		{"unknown document", []string{"srd-2099"}, `"srd-2099"`},
		{"one known, one unknown", []string{"srd-2014", "srd-2099"}, `["srd-2099"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := c.LookupSpells(t.Context(), &lkv1.LookupSpellsRequest{Common: &lkv1.Common{Documents: docs(tt.docs...)}, Levels: []int32{nine}, Ritual: &yes})
			if err != nil {
				t.Fatal(err)
			}
			got := resp.GetWarnings()
			switch {
			case tt.want == "" && len(got) != 0:
				t.Errorf("warnings %q, want none", got)
			case tt.want != "" && (len(got) != 1 || !strings.Contains(got[0], tt.want) || strings.Contains(got[0], `"srd-2014"`)):
				t.Errorf("warnings %q, want one naming %s alone", got, tt.want)
			}
			sr, err := c.Search(t.Context(), &lkv1.SearchRequest{Query: "ritual of the ninth level", Documents: docs(tt.docs...), Semantic: new(false)})
			if err != nil {
				t.Fatal(err)
			}
			if got := sr.GetWarnings(); (tt.want == "") != (len(got) == 0) {
				t.Errorf("search warnings %q, want a warning: %v", got, tt.want != "")
			}
		})
	}
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
