package open5e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"lorekeeper.dev/ingest/open5e"
	"lorekeeper.dev/ingest/open5esnapshot"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

func TestClassProgression_wizard(t *testing.T) {
	for _, key := range []string{"open5e_v2:srd-2014:class:wizard", "open5e_v2:srd-2024:class:wizard"} {
		t.Run(key, func(t *testing.T) {
			e := find(t, key)
			p := e.GetCharacterOption().GetProgression()
			if len(p.GetLevels()) != 20 {
				t.Fatalf("%d levels, want 20", len(p.GetLevels()))
			}
			l5 := p.GetLevels()[4]
			if l5.GetLevel() != 5 || l5.GetProficiencyBonus() != 3 || !slices.Equal(l5.GetSpellSlots(), []int32{4, 3, 2}) {
				t.Errorf("level 5: %v", l5)
			}
			l20 := p.GetLevels()[19]
			if l20.GetProficiencyBonus() != 6 || !slices.Equal(l20.GetSpellSlots(), []int32{4, 3, 3, 3, 3, 2, 2, 1, 1}) {
				t.Errorf("level 20: %v", l20)
			}
			// Columns: the class's own, then the slots 1st to 9th, each
			// with a value per level where it has one.
			cols := p.GetColumns()
			if len(cols) < 10 || cols[len(cols)-9] != "1st" || cols[len(cols)-1] != "9th" {
				t.Errorf("columns %q", cols)
			}
			for _, l := range p.GetLevels() {
				if len(l.GetValues()) != len(cols) {
					t.Errorf("level %d: %d values for %d columns", l.GetLevel(), len(l.GetValues()), len(cols))
				}
			}
			if !slices.Contains(p.GetLevels()[0].GetFeatures(), "Spellcasting") {
				t.Errorf("level 1 features %q", p.GetLevels()[0].GetFeatures())
			}
			// No column placeholder is left as a block, and the blocks come
			// in level order.
			last := int32(0)
			for _, b := range e.GetBlocks() {
				if strings.Contains(b.GetText(), "[Column data]") || b.GetName() == "1st" || b.GetName() == "Proficiency Bonus" {
					t.Errorf("column block left: %v", b)
				}
				if b.GetLevel() < last {
					t.Errorf("block %q (level %d) after level %d", b.GetName(), b.GetLevel(), last)
				}
				last = b.GetLevel()
			}
		})
	}
	// SRD 5.1 lists the 2nd-level slots of level 4 twice (2 and 3) and
	// those of level 3 not at all: level 3 has 2, and the repair is recorded.
	wiz := find(t, "open5e_v2:srd-2014:class:wizard")
	if got := wiz.GetCharacterOption().GetProgression().GetLevels()[2].GetSpellSlots(); !slices.Equal(got, []int32{4, 2}) {
		t.Errorf("wizard level 3 slots %v, want [4 2]", got)
	}
	if !hasCorrection(wiz, "Wizard table", "class_table") {
		t.Errorf("wizard corrections %v", wiz.GetCorrections())
	}
	var asi *lkv1.TextBlock
	for _, b := range wiz.GetBlocks() {
		if b.GetName() == "Ability Score Improvement" {
			asi = b
		}
	}
	if asi == nil || asi.GetLevel() != 4 || !slices.Equal(asi.GetLevels(), []int32{4, 8, 12, 16, 19}) {
		t.Errorf("ability score improvement: %v", asi)
	}
}

// Every class of every document that has the data gets a whole table;
// subclasses get none but list their features by level.
func TestClassProgression_everyClass(t *testing.T) {
	classes, subclasses := 0, 0
	for _, e := range snapshot(t) {
		p := e.GetCharacterOption().GetProgression()
		switch e.GetKind() {
		case lkv1.Kind_KIND_CLASS:
			classes++
			if len(p.GetLevels()) != 20 {
				t.Errorf("%s: %d table levels", e.GetKey(), len(p.GetLevels()))
				continue
			}
			if pb := p.GetLevels()[0].GetProficiencyBonus(); pb != 2 {
				t.Errorf("%s: level 1 proficiency bonus %d", e.GetKey(), pb)
			}
			caster := e.GetCharacterOption().GetCasterType()
			if (caster == "FULL" || caster == "HALF") && len(p.GetLevels()[19].GetSpellSlots()) == 0 {
				t.Errorf("%s: a %s caster without spell slots", e.GetKey(), caster)
			}
		case lkv1.Kind_KIND_SUBCLASS:
			subclasses++
			if p != nil {
				t.Errorf("%s: a subclass with a class table", e.GetKey())
			}
			leveled := 0
			for _, b := range e.GetBlocks() {
				if b.GetLevel() > 0 {
					leveled++
				}
			}
			if leveled == 0 && len(e.GetBlocks()) > 0 {
				t.Errorf("%s: no feature has a level", e.GetKey())
			}
		}
	}
	// The pack's v2 classes, told apart by subclass_of; v1 repeats them.
	wantClasses, wantSubclasses := 0, 0
	h, err := open5esnapshot.NewHandler()
	if err != nil {
		t.Fatal(err)
	}
	for n := 1; ; n++ {
		b, ok := h.File(fmt.Sprintf("v2/classes/page-%d.json", n))
		if !ok {
			break
		}
		var page struct {
			Results []struct {
				SubclassOf json.RawMessage `json:"subclass_of"`
			}
		}
		if err := json.Unmarshal(b, &page); err != nil {
			t.Fatal(err)
		}
		for _, r := range page.Results {
			if string(r.SubclassOf) == "null" || len(r.SubclassOf) == 0 {
				wantClasses++
			} else {
				wantSubclasses++
			}
		}
	}
	if classes != wantClasses || subclasses != wantSubclasses || classes == 0 {
		t.Errorf("%d classes and %d subclasses, want %d and %d", classes, subclasses, wantClasses, wantSubclasses)
	}
	rogue := find(t, "open5e_v2:srd-2024:class:rogue").GetCharacterOption().GetProgression()
	if i := slices.Index(rogue.GetColumns(), "Sneak Attack"); i < 0 || rogue.GetLevels()[4].GetValues()[i] != "3d6" {
		t.Errorf("2024 rogue: columns %q", rogue.GetColumns())
	}
	barb := find(t, "open5e_v2:srd-2024:class:barbarian").GetCharacterOption().GetProgression()
	if i := slices.Index(barb.GetColumns(), "Rages"); i < 0 || barb.GetLevels()[2].GetValues()[i] != "3" {
		t.Errorf("2024 barbarian: columns %q", barb.GetColumns())
	}
}

func hasCorrection(e *lkv1.Entity, subject, field string) bool {
	return slices.ContainsFunc(e.GetCorrections(), func(c *lkv1.Correction) bool {
		return c.GetSubject() == subject && c.GetField() == field
	})
}

func attackOf(t *testing.T, e *lkv1.Entity, name string) string {
	t.Helper()
	for _, b := range e.GetBlocks() {
		if b.GetName() == name && b.GetType() == "action" {
			return b.GetAttack()
		}
	}
	t.Fatalf("%s: no action %s", e.GetKey(), name)
	return ""
}

// Open5e's SRD 5.1 attacks say "thunder" and drop the damage bonus; the
// text says otherwise, and the text wins.
func TestCrossCheck_adultRedDragon(t *testing.T) {
	e := find(t, "open5e_v2:srd-2014:creature:adult-red-dragon")
	for name, want := range map[string]string{
		"Bite": "+14 to hit, reach 10 ft., 2d10+8 piercing plus 2d6 fire",
		"Claw": "+14 to hit, reach 5 ft., 2d6+8 slashing",
		"Tail": "+14 to hit, reach 15 ft., 2d8+8 bludgeoning",
	} {
		if got := attackOf(t, e, name); got != want {
			t.Errorf("%s: got %q, want %q", name, got, want)
		}
	}
	want := map[string]string{
		"Bite damage_type": "thunder -> piercing", "Bite damage": "2d10 -> 2d10+8",
		"Claw damage_type": "thunder -> slashing", "Claw damage": "2d6 -> 2d6+8",
	}
	got := map[string]string{}
	for _, c := range e.GetCorrections() {
		got[c.GetSubject()+" "+c.GetField()] = c.GetSourceValue() + " -> " + c.GetCorrectedValue()
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("correction %s: got %q, want %q", k, got[k], w)
		}
	}
}

// creature is a v2 creature record with one action.
func creature(desc, attack string) string {
	return fmt.Sprintf(`{"key":"x_beast","name":"Beast","document":{"key":"x"},"actions":[
		{"name":"Bite","desc":%q,"action_type":"ACTION","attacks":[%s]}]}`, desc, attack)
}

const thunderBite = `{"to_hit_mod":5,"reach":5,"damage_die_count":1,"damage_die_type":"D6","damage_type":{"key":"thunder"}}`

func TestCrossCheck_attacks(t *testing.T) {
	for _, c := range []struct {
		name, desc, attack string
		want               string
		fields             []string
	}{
		{"agrees", "Melee Weapon Attack: +5 to hit, reach 5 ft., one target. Hit: 6 (1d6 + 3) thunder damage.",
			`{"to_hit_mod":5,"reach":5,"damage_die_count":1,"damage_die_type":"D6","damage_bonus":3,"damage_type":{"key":"thunder"}}`,
			"+5 to hit, reach 5 ft., 1d6+3 thunder", nil},
		{"type and bonus", "Melee Weapon Attack: +5 to hit, reach 5 ft., one target. Hit: 6 (1d6 + 3) piercing damage.", thunderBite,
			"+5 to hit, reach 5 ft., 1d6+3 piercing", []string{"damage", "damage_type"}},
		{"to hit and reach", "Melee Weapon Attack: +7 to hit, reach 10 ft., one target. Hit: 4 (1d6 + 1) thunder damage.",
			`{"to_hit_mod":5,"reach":5,"damage_die_count":1,"damage_die_type":"D6","damage_bonus":1,"damage_type":{"key":"thunder"}}`,
			"+7 to hit, reach 10 ft., 1d6+1 thunder", []string{"to_hit", "reach"}},
		{"srd 5.2 wording, type in the extra field", "Melee Attack Roll: +4, reach 5 ft. 5 (1d6 + 2) Necrotic damage, and the target's Strength score decreases by 1d4.",
			`{"to_hit_mod":4,"reach":5,"damage_die_count":1,"damage_die_type":"D6","damage_bonus":2,"extra_damage_type":{"key":"necrotic"}}`,
			"+4 to hit, reach 5 ft., 1d6+2 necrotic", nil},
		{"range without unit", "Ranged Weapon Attack: +4 to hit, range 80/320, one target. Hit: 8 (1d8 + 2) piercing damage.",
			`{"to_hit_mod":4,"range":80,"damage_die_count":1,"damage_die_type":"D8","damage_bonus":2,"damage_type":{"key":"piercing"}}`,
			"+4 to hit, range 80/320 ft., 1d8+2 piercing", []string{"range"}},
		{"versatile", "Melee or Ranged Weapon Attack: +4 to hit, reach 5 ft. or range 20/60 ft., one creature. Hit: 5 (1d6 + 2) piercing damage, or 6 (1d8 + 2) piercing damage if used with two hands to make a melee attack.",
			`{"to_hit_mod":4,"reach":5,"range":20,"long_range":60,"damage_die_count":1,"damage_die_type":"D8","damage_type":{"key":"thunder"}},` +
				`{"to_hit_mod":4,"range":20,"long_range":60,"damage_die_count":1,"damage_die_type":"D6","damage_type":{"key":"thunder"}}`,
			"+4 to hit, reach 5 ft. or range 20/60 ft., 1d8+2 piercing or 1d6+2 piercing", []string{"damage", "damage_type"}},
		{"flat damage", "Melee Weapon Attack: +3 to hit, reach 5 ft., one creature. Hit: 2 (1 + 1) bludgeoning damage.",
			`{"to_hit_mod":3,"reach":5,"damage_die_count":1,"damage_die_type":"D0","damage_type":{"key":"bludgeoning"}}`,
			"+3 to hit, reach 5 ft., 2 bludgeoning", []string{"damage"}},
		{"choice of types", "Melee Weapon Attack: +10 to hit, reach 0 ft., one creature. Hit: 31 (5d8 + 9) bludgeoning, piercing, or slashing damage.",
			`{"to_hit_mod":10,"damage_die_count":5,"damage_die_type":"D8","damage_bonus":9,"damage_type":{"key":"slashing"}}`,
			"+10 to hit, reach 0 ft., 5d8+9 bludgeoning, piercing, or slashing", nil},
		{"no text to check against", "", thunderBite, "+5 to hit, reach 5 ft., 1d6 thunder", nil},
		{"a type without dice", "Melee Weapon Attack: +2 to hit, reach 5 ft., one target. Hit: 2 (1d4) bludgeoning damage.",
			`{"to_hit_mod":2,"reach":5,"damage_type":{"key":"thunder"}}`,
			"+2 to hit, reach 5 ft., 1d4 bludgeoning", []string{"damage_type"}},
		{"untyped main damage", "Melee Weapon Attack: +13 to hit, reach 15 ft., one target. Hit: 18 (3d6 + 8) plus 3 (1d6) poison damage.",
			`{"to_hit_mod":13,"reach":15,"damage_die_count":3,"damage_die_type":"D6","extra_damage_type":{"key":"poison"}}`,
			"+13 to hit, reach 15 ft., 3d6+8 plus 1d6 poison", []string{"damage", "damage_type"}},
		{"text without a to-hit", "The beast bites whatever comes within its reach.", thunderBite, "", []string{"attack"}},
		// Naming an action the creature does not give: the structured
		// attack is the only stat line there is.
		{"text naming an action not given", "The beast makes a bite attack.", thunderBite, "+5 to hit, reach 5 ft., 1d6 thunder", nil},
		{"damage the text does not type", "Melee Weapon Attack: +5 to hit, reach 5 ft., one target. Hit: 18 (3d8 + 5) plus 1d4 Strength damage.", thunderBite, "", []string{"attack"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, err := open5e.NormalizeRecord(endpoint("v2", "creatures"), []byte(creature(c.desc, c.attack)), nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := e.GetBlocks()[0].GetAttack(); got != c.want {
				t.Errorf("attack %q, want %q", got, c.want)
			}
			var fields []string
			for _, f := range e.GetCorrections() {
				if f.GetSubject() != "Bite" {
					t.Errorf("correction subject %q", f.GetSubject())
				}
				if !slices.Contains(fields, f.GetField()) {
					fields = append(fields, f.GetField())
				}
			}
			if !slices.Equal(fields, c.fields) {
				t.Errorf("corrected %q, want %q (%v)", fields, c.fields, e.GetCorrections())
			}
		})
	}
}

// TestCrossCheck_namedActionGiven: a legendary action naming an action the
// creature gives is that action's, and its own structured attack, which
// the text cannot confirm, is dropped; an action given only by a cost in
// its name or by naming it again is not given.
func TestCrossCheck_namedActionGiven(t *testing.T) {
	for _, c := range []struct {
		name, claw string
		want       string
	}{
		{"given", `{"name":"Claw","desc":"Melee Weapon Attack: +5 to hit, reach 5 ft., one target. Hit: 6 (1d6 + 3) slashing damage.","action_type":"ACTION"}`, ""},
		{"given with its cost", `{"name":"Claw (Costs 2 Actions)","desc":"Melee Weapon Attack: +5 to hit, reach 5 ft., one target. Hit: 6 (1d6 + 3) slashing damage.","action_type":"ACTION"}`, ""},
		{"named again", `{"name":"Claw (Costs 2 Actions)","desc":"The beast makes one claw attack.","action_type":"ACTION"}`, "+7 to hit, reach 5 ft., 2d6+4 slashing"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := fmt.Sprintf(`{"key":"x_beast","name":"Beast","document":{"key":"x"},"actions":[%s,
				{"name":"Claw","desc":"The beast makes one claw attack.","action_type":"LEGENDARY_ACTION","attacks":[
					{"to_hit_mod":7,"reach":5,"damage_die_count":2,"damage_die_type":"D6","damage_bonus":4,"damage_type":{"key":"slashing"}}]}]}`, c.claw)
			e, err := open5e.NormalizeRecord(endpoint("v2", "creatures"), []byte(rec), nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range e.GetBlocks() {
				if b.GetType() == "legendary_action" && b.GetAttack() != c.want {
					t.Errorf("legendary Claw's attack %q, want %q", b.GetAttack(), c.want)
				}
			}
		})
	}
}

func TestCrossCheck_spells(t *testing.T) {
	spell := func(desc, fields string) string {
		return fmt.Sprintf(`{"key":"x_spell","name":"Spell","document":{"key":"x"},"level":3,"desc":%q,%s}`, desc, fields)
	}
	for _, c := range []struct {
		name, rec string
		want      string
		fields    []string
	}{
		{"agrees", spell("Each creature must make a Dexterity saving throw, taking 8d6 fire damage on a failed save.",
			`"damage_types":["fire"],"damage_roll":"8d6","saving_throw_ability":"dexterity"`), "fire 8d6 dexterity", nil},
		{"another spell's fields", spell("You touch a willing creature. Its movement is unaffected by difficult terrain.",
			`"damage_types":["cold"],"damage_roll":"10d6","saving_throw_ability":"constitution"`), "  ",
			[]string{"damage_types", "damage_roll", "saving_throw_ability"}},
		{"wrong ones replaced", spell("The target makes a Wisdom saving throw or takes 3d6 psychic damage.",
			`"damage_types":["cold"],"damage_roll":"10d6","saving_throw_ability":"constitution"`), "psychic 3d6 wisdom",
			[]string{"damage_types", "damage_roll", "saving_throw_ability"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, err := open5e.NormalizeRecord(endpoint("v2", "spells"), []byte(c.rec), nil)
			if err != nil {
				t.Fatal(err)
			}
			s := e.GetSpell()
			if got := strings.Join(s.GetDamageTypes(), ",") + " " + s.GetDamageRoll() + " " + s.GetSavingThrowAbility(); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
			var fields []string
			for _, f := range e.GetCorrections() {
				fields = append(fields, f.GetField())
			}
			if !slices.Equal(fields, c.fields) {
				t.Errorf("corrected %q, want %q", fields, c.fields)
			}
		})
	}
}

// Placeholders are never kept as text.
func TestNormalize_noPlaceholders(t *testing.T) {
	for _, e := range snapshot(t) {
		texts := []string{e.GetDescription(), e.GetHigherLevel()}
		for _, b := range e.GetBlocks() {
			texts = append(texts, b.GetText())
		}
		for _, s := range texts {
			if strings.Contains(s, "[Column data]") || strings.Contains(strings.ToLower(s), "[none provided]") {
				t.Errorf("%s: placeholder in %q", e.GetKey(), s)
			}
		}
	}
}

// FuzzCrossCheck_attacks feeds action texts and structured attacks to the
// cross-check: it must never panic, and whatever attack summary it keeps
// must only name damage types and a to-hit that the text itself gives,
// unless the text only names an action the creature does not give.
func FuzzCrossCheck_attacks(f *testing.F) {
	f.Add("Melee Weapon Attack: +14 to hit, reach 10 ft., one target. Hit: 19 (2d10 + 8) piercing damage plus 7 (2d6) fire damage.", 14, 10, 0, 2, 10, "thunder")
	f.Add("Melee or Ranged Weapon Attack: +4 to hit, reach 5 ft. or range 20/60 ft., one creature. Hit: 5 (1d6 + 2) piercing damage, or 6 (1d8 + 2) piercing damage if used with two hands.", 4, 5, 20, 1, 8, "thunder")
	f.Add("Melee Attack Roll: +4, reach 5 ft. 4 (1d4 + 2) Bludgeoning damage.", 4, 5, 0, 1, 4, "")
	f.Add("Hit: 18 (3d6 + 8) plus 3 (1d6) poison damage. +13 to hit", 13, 15, 0, 3, 6, "poison")
	f.Add("The dragon makes a tail attack.", 13, 15, 0, 2, 8, "bludgeoning")
	f.Fuzz(func(t *testing.T, desc string, toHit, reach, rng, count, die int, typ string) {
		attack := fmt.Sprintf(`{"to_hit_mod":%d,"reach":%d,"range":%d,"damage_die_count":%d,"damage_die_type":"D%d","damage_type":{"key":%q}}`,
			toHit, reach, rng, count, die, typ)
		e, err := open5e.NormalizeRecord(endpoint("v2", "creatures"), []byte(creature(desc, attack)), nil)
		if err != nil {
			return // not valid UTF-8, and the like
		}
		if len(e.GetBlocks()) == 0 || strings.TrimSpace(e.GetBlocks()[0].GetText()) == "" {
			return // nothing to check against: the source's summary stands
		}
		if _, ok := open5e.NamedAction(e.GetBlocks()[0].GetText()); ok {
			return // it names an action the creature (one action) does not give
		}
		b := e.GetBlocks()[0]
		text := strings.ToLower(b.GetText())
		for _, w := range strings.FieldsFunc(b.GetAttack(), func(r rune) bool { return r == ' ' || r == ',' }) {
			if slices.Contains([]string{"acid", "bludgeoning", "cold", "fire", "force", "lightning", "necrotic", "piercing", "poison", "psychic", "radiant", "slashing", "thunder"}, w) &&
				!strings.Contains(text, w) {
				t.Fatalf("summary %q names %s, which the text %q does not", b.GetAttack(), w, b.GetText())
			}
		}
		if hit, _, ok := strings.Cut(b.GetAttack(), " to hit"); ok && !strings.Contains(strings.ReplaceAll(b.GetText(), " ", ""), strings.TrimPrefix(hit, "+")) {
			t.Fatalf("summary %q has a to-hit the text %q does not", b.GetAttack(), b.GetText())
		}
	})
}

// SRD 5.1's v2 class records lack the class's own columns; the v1 records
// of the same book have them, and every SRD 5.1 class ends up with them,
// in the book's order, beside the v2 columns and slots it had.
func TestClassProgression_srd51ColumnsFromV1(t *testing.T) {
	for _, c := range []struct {
		class string
		cols  []string
		level int
		want  map[string]string
	}{
		{"barbarian", []string{"Rages", "Rage Damage"}, 9, map[string]string{"Rages": "4", "Rage Damage": "+3"}},
		{"barbarian", []string{"Rages", "Rage Damage"}, 20, map[string]string{"Rages": "Unlimited", "Rage Damage": "+4"}},
		{"monk", []string{"Martial Arts", "Ki Points", "Unarmored Movement"}, 1, map[string]string{"Martial Arts": "1d4", "Ki Points": "", "Unarmored Movement": ""}},
		{"monk", []string{"Martial Arts", "Ki Points", "Unarmored Movement"}, 6, map[string]string{"Martial Arts": "1d6", "Ki Points": "6", "Unarmored Movement": "+15 ft."}},
		{"rogue", []string{"Sneak Attack"}, 11, map[string]string{"Sneak Attack": "6d6"}},
		{"bard", []string{"Cantrips Known", "Spells Known", "1st", "2nd", "3rd", "4th", "5th", "6th", "7th", "8th", "9th"}, 5, map[string]string{"Cantrips Known": "3", "Spells Known": "8", "3rd": "2"}},
		{"ranger", []string{"Spells Known", "1st", "2nd", "3rd", "4th", "5th"}, 2, map[string]string{"Spells Known": "2", "1st": "2"}},
		{"sorcerer", []string{"Sorcery Points", "Cantrips Known", "Spells Known", "1st", "2nd", "3rd", "4th", "5th", "6th", "7th", "8th", "9th"}, 3, map[string]string{"Sorcery Points": "3", "Spells Known": "4"}},
		{"warlock", []string{"Cantrips Known", "Spells Known", "Spell Slots", "Slot Level", "Invocations Known"}, 5, map[string]string{"Spell Slots": "2", "Slot Level": "3rd", "Invocations Known": "3"}},
		{"fighter", nil, 1, map[string]string{}},
		{"wizard", []string{"Cantrips Known", "1st", "2nd", "3rd", "4th", "5th", "6th", "7th", "8th", "9th"}, 5, map[string]string{"Cantrips Known": "4", "3rd": "2"}},
	} {
		t.Run(fmt.Sprint(c.class, "/", c.level), func(t *testing.T) {
			p := find(t, "open5e_v2:srd-2014:class:"+c.class).GetCharacterOption().GetProgression()
			if !slices.Equal(p.GetColumns(), c.cols) {
				t.Fatalf("columns %q, want %q", p.GetColumns(), c.cols)
			}
			for _, l := range p.GetLevels() {
				if len(l.GetValues()) != len(c.cols) {
					t.Fatalf("level %d: %d values for %d columns", l.GetLevel(), len(l.GetValues()), len(c.cols))
				}
			}
			row := p.GetLevels()[c.level-1]
			for col, want := range c.want {
				if got := row.GetValues()[slices.Index(c.cols, col)]; got != want {
					t.Errorf("level %d %s = %q, want %q", c.level, col, got, want)
				}
			}
		})
	}
}

// v1Monsters fetches the pack's v1 monsters, normalised, and its catalogue.
func v1Monsters(t *testing.T) (open5e.EndpointResult, *open5e.Catalog) {
	t.Helper()
	up := newUpstream(t)
	c, err := open5e.NewClient(up.srv.URL, &open5e.ClientOptions{PageSize: 1000})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cat, err := open5e.FetchCatalog(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	v1 := open5e.FetchEndpoint(ctx, c, endpoints("v1/monsters")[0], cat, nil)
	if !v1.Complete() {
		t.Fatalf("v1 monsters: %v %v", v1.Err, v1.Invalid)
	}
	return v1, cat
}

// Every SRD 5.1 creature has the subtype its v1 record gives (v2 has
// none), and the book's grouping as its group, never as its subtype.
func TestCreatureSubtypes_srd51(t *testing.T) {
	v1, _ := v1Monsters(t)
	want := map[string]string{}
	for _, e := range v1.Entities {
		if e.GetDocument().GetKey() == "wotc-srd" {
			want[strings.ToLower(e.GetName())] = e.GetCreature().GetSubtype()
		}
	}
	checked, withSubtype := 0, 0
	for _, e := range snapshot(t) {
		cr := e.GetCreature()
		if cr == nil || e.GetDocument().GetKey() != "srd-2014" {
			continue
		}
		checked++
		if cr.GetSubtype() != "" {
			withSubtype++
		}
		if w := want[strings.ToLower(e.GetName())]; cr.GetSubtype() != w {
			t.Errorf("%s: subtype %q, want %q", e.GetName(), cr.GetSubtype(), w)
		}
		if cr.GetGroup() != "" && cr.GetSubtype() == cr.GetGroup() {
			t.Errorf("%s: group %q as its subtype", e.GetName(), cr.GetGroup())
		}
	}
	if checked != 325 || withSubtype == 0 {
		t.Errorf("checked %d SRD 5.1 creatures (%d with a subtype), want 325", checked, withSubtype)
	}
	for key, w := range map[string][2]string{
		"open5e_v2:srd-2014:creature:barbed-devil":     {"devil", "Devils"},
		"open5e_v2:srd-2014:creature:adult-red-dragon": {"", "Dragons, Chromatic"},
		"open5e_v2:srd-2014:creature:acolyte":          {"any race", ""},
		"open5e_v2:srd-2014:creature:werewolf":         {"human", "Lycanthropes"},
	} {
		cr := find(t, key).GetCreature()
		if cr.GetSubtype() != w[0] || cr.GetGroup() != w[1] {
			t.Errorf("%s: subtype %q group %q, want %q %q", key, cr.GetSubtype(), cr.GetGroup(), w[0], w[1])
		}
	}
}

// Creature Codex writes a numbered list in wiki markup ("# " a line); under
// a trait's name it must not become five top-level headings.
func TestNormalize_wikiNumberedList(t *testing.T) {
	e := find(t, "open5e_v2:ccdx:creature:spawn-of-chernobog")
	var text string
	for _, b := range e.GetBlocks() {
		if b.GetName() == "Night's Blood" {
			text = b.GetText()
		}
	}
	for i, want := range []string{"1. The creature can't speak", "2. The creature's eyes turn", "5. When the blackened veins"} {
		if !strings.Contains(text, "\n"+want) {
			t.Errorf("item %d: no line %q in %q", i, want, text)
		}
	}
	if strings.Contains(text, "\n# ") {
		t.Errorf("a wiki list item is left as a heading: %q", text)
	}
}

// TestCreatureActions_fromV1: every action, bonus action, reaction and
// legendary action of a creature's v1 record is on its v2 creature, once
// (Tome of Beasts 3's v2 records lack most of theirs), and every creature
// of a book whose v1 records give actions has some.
func TestCreatureActions_fromV1(t *testing.T) {
	v1, cat := v1Monsters(t)
	twins := map[string]*lkv1.Entity{}
	for _, e := range v1.Entities {
		for _, doc := range cat.V2Twins(e.GetDocument().GetKey()) {
			twins[doc+"/"+strings.ToLower(e.GetName())] = e
		}
	}
	name := func(n string) string {
		if i := strings.Index(n, "("); i > 0 {
			n = n[:i]
		}
		return strings.TrimSpace(strings.ToLower(n))
	}
	// sayWords is text's words between spaces: " a b c ".
	sayWords := func(text string) string {
		f := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
		return " " + strings.Join(f, " ") + " "
	}
	opening := func(text string) string {
		f := strings.Fields(sayWords(text))
		return " " + strings.Join(f[:min(12, len(f))], " ") + " "
	}
	intro := regexp.MustCompile(`(?i)^the .+ can take \S+ legendary actions?\.?$`)
	filled, noActions := map[string]int{}, 0
	for _, e := range snapshot(t) {
		tw := twins[e.GetDocument().GetKey()+"/"+strings.ToLower(e.GetName())]
		if e.GetCreature() == nil || tw == nil || !strings.HasPrefix(e.GetKey(), "open5e_v2:") {
			continue
		}
		var rec struct {
			Actions []struct {
				Name string `json:"name"`
			} `json:"actions"`
		}
		if err := json.Unmarshal(e.GetSourceRecord(), &rec); err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		actions := 0
		for _, b := range e.GetBlocks() {
			if b.GetType() == "trait" {
				continue
			}
			actions++
			if k := b.GetType() + "/" + strings.ToLower(b.GetName()); seen[k] {
				t.Errorf("%s: %s %q twice", e.GetKey(), b.GetType(), b.GetName())
			} else {
				seen[k] = true
			}
			if !slices.ContainsFunc(rec.Actions, func(a struct {
				Name string `json:"name"`
			}) bool {
				return strings.TrimSpace(a.Name) == b.GetName()
			}) {
				filled[e.GetDocument().GetKey()]++
			}
		}
		v1Actions := 0
		for _, b := range tw.GetBlocks() {
			if b.GetType() == "trait" || len(strings.Fields(b.GetName())) > 8 || intro.MatchString(b.GetName()) {
				continue
			}
			v1Actions++
			if !slices.ContainsFunc(e.GetBlocks(), func(have *lkv1.TextBlock) bool {
				return name(have.GetName()) == name(b.GetName()) || strings.Contains(sayWords(have.GetText()), opening(b.GetText()))
			}) {
				t.Errorf("%s: v1's %s %q is not on the card", e.GetKey(), b.GetType(), b.GetName())
			}
		}
		if v1Actions > 0 && actions == 0 {
			noActions++
			t.Errorf("%s: no actions, though its v1 record gives %d", e.GetKey(), v1Actions)
		}
	}
	if filled["tob3"] == 0 {
		t.Error("no Tome of Beasts 3 action filled from v1: the test checks nothing the records lack")
	}
	t.Logf("actions filled from the v1 records, per book: %v", filled)
}
