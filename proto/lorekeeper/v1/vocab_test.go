package lorekeeperv1_test

import (
	"testing"

	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

func TestKind_Slug(t *testing.T) {
	seen := map[string]lkv1.Kind{}
	for _, k := range lkv1.Kinds() {
		s := k.Slug()
		if s == "" {
			t.Errorf("%v has no slug", k)
			continue
		}
		if other, dup := seen[s]; dup {
			t.Errorf("%v and %v share slug %q", k, other, s)
		}
		seen[s] = k
		got, ok := lkv1.KindFromSlug(s)
		if !ok || got != k {
			t.Errorf("KindFromSlug(%q) = %v, %v; want %v, true", s, got, ok, k)
		}
	}
	if got, want := len(seen), len(lkv1.Kind_name)-1; got != want {
		t.Errorf("%d kinds with slugs, want %d", got, want)
	}
	if _, ok := lkv1.KindFromSlug("vehicle"); ok {
		t.Error(`KindFromSlug("vehicle") is ok, want not ok`)
	}
}

func TestSubjectAndURI(t *testing.T) {
	tests := []struct {
		name, got, want string
	}{
		{"subject", lkv1.Subject(lkv1.Source_SOURCE_OPEN5E_V2, lkv1.Kind_KIND_MAGIC_ITEM), "lorekeeper.entity.open5e_v2.magic-item"},
		{"uri", lkv1.EntityURI("open5e_v2:srd-2014:spell:fireball"), "lorekeeper://entity/open5e_v2:srd-2014:spell:fireball"},
		{"key from uri", lkv1.KeyFromURI("lorekeeper://entity/orcbrew:book:spell:x"), "orcbrew:book:spell:x"},
		{"key from key", lkv1.KeyFromURI("orcbrew:book:spell:x"), "orcbrew:book:spell:x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("got %q, want %q", tt.got, tt.want)
			}
		})
	}
	for _, s := range []lkv1.Source{lkv1.Source_SOURCE_OPEN5E_V1, lkv1.Source_SOURCE_OPEN5E_V2, lkv1.Source_SOURCE_ORCBREW} {
		if got, ok := lkv1.SourceFromSlug(s.Slug()); !ok || got != s {
			t.Errorf("SourceFromSlug(%q) = %v, %v", s.Slug(), got, ok)
		}
	}
}

func TestCastingTimeKey(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"action", "action"},
		{"1 action", "action"},
		{"1 Action", "action"},
		{"an action", "action"},
		{"bonus-action", "bonus-action"},
		{"1 bonus action", "bonus-action"},
		{"1 Bonus Action", "bonus-action"},
		{"bonus", "bonus-action"},
		{"reaction", "reaction"},
		{"1 reaction, which you take when you are hit", "reaction"},
		{"1 reaction which you take when you are hit", "reaction"},
		{"1minute", "1-minute"},
		{"1 minute", "1-minute"},
		{"minute", "1-minute"},
		{"1-minutes", "1-minute"},
		{"10minutes", "10-minutes"},
		{"10 Minutes", "10-minutes"},
		{"10-minutes", "10-minutes"},
		{"1hour", "1-hour"},
		{"8 hours", "8-hours"},
		{"24hours", "24-hours"},
		{"1 round", "1-round"},
		{"round", "1-round"},
		{"1-round", "1-round"},
		{"turn", "1-turn"},
		{"1 day", "1-day"},
		{"Special", "special"},
		{"", ""},
	} {
		if got := lkv1.CastingTimeKey(c.in); got != c.want {
			t.Errorf("CastingTimeKey(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestChallengeRating(t *testing.T) {
	for _, c := range []struct {
		text string
		num  float64
	}{{"0", 0}, {"1/8", 0.125}, {"1/4", 0.25}, {"1/2", 0.5}, {"1", 1}, {"17", 17}, {"30", 30}} {
		got, ok := lkv1.ParseChallengeRating(c.text)
		if !ok || got != c.num {
			t.Errorf("ParseChallengeRating(%q) = %v, %v; want %v", c.text, got, ok, c.num)
		}
		if back := lkv1.ChallengeRatingText(c.num); back != c.text {
			t.Errorf("ChallengeRatingText(%v) = %q, want %q", c.num, back, c.text)
		}
	}
	if got, ok := lkv1.ParseChallengeRating(" 1 / 4 "); !ok || got != 0.25 {
		t.Errorf(`ParseChallengeRating(" 1 / 4 ") = %v, %v; want 0.25`, got, ok)
	}
	for _, bad := range []string{"", "x", "1/0", "NaN", "Inf", "1/NaN", "a/2"} {
		if got, ok := lkv1.ParseChallengeRating(bad); ok {
			t.Errorf("ParseChallengeRating(%q) = %v, want failure", bad, got)
		}
	}
}

func TestAbilityName(t *testing.T) {
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{"dex", "dexterity", true}, {"DEX", "dexterity", true}, {" Dexterity ", "dexterity", true},
		{"int", "intelligence", true}, {"cha", "charisma", true}, {"Luck", "luck", false}, {"", "", false},
	} {
		got := lkv1.AbilityName(c.in)
		if got != c.want || lkv1.IsAbility(got) != c.ok {
			t.Errorf("AbilityName(%q) = %q (an ability: %v); want %q (%v)", c.in, got, lkv1.IsAbility(got), c.want, c.ok)
		}
	}
	for _, a := range lkv1.Abilities() {
		if got := lkv1.AbilityName(a[:3]); got != a {
			t.Errorf("AbilityName(%q) = %q, want %q", a[:3], got, a)
		}
	}
	if n := len(lkv1.Abilities()); n != 6 {
		t.Errorf("%d abilities, want 6", n)
	}
}

func TestEntityKey(t *testing.T) {
	key := lkv1.EntityKey(lkv1.Source_SOURCE_OPEN5E_V2, "srd-2014", lkv1.Kind_KIND_MAGIC_ITEM, "bag-of-holding")
	if want := "open5e_v2:srd-2014:magic-item:bag-of-holding"; key != want {
		t.Fatalf("EntityKey = %q, want %q", key, want)
	}
	want := lkv1.KeyParts{Source: lkv1.Source_SOURCE_OPEN5E_V2, Document: "srd-2014", Kind: lkv1.Kind_KIND_MAGIC_ITEM, Slug: "bag-of-holding"}
	if got, ok := lkv1.ParseEntityKey(key); !ok || got != want {
		t.Errorf("ParseEntityKey(%q) = %+v, %v; want %+v", key, got, ok, want)
	}
	for _, bad := range []string{"", "open5e_v2:srd-2014:spell", "vehicles:srd:spell:x", "orcbrew:book:vehicle:x",
		"orcbrew::spell:x", "orcbrew:book:spell:"} {
		if got, ok := lkv1.ParseEntityKey(bad); ok {
			t.Errorf("ParseEntityKey(%q) = %+v, want failure", bad, got)
		}
	}
}

func TestKindGroups(t *testing.T) {
	seen := map[lkv1.Kind]bool{}
	for _, group := range [][]lkv1.Kind{lkv1.EquipmentKinds(), lkv1.CharacterOptionKinds(), lkv1.RuleKinds()} {
		for _, k := range group {
			if seen[k] {
				t.Errorf("%v is in two groups", k)
			}
			seen[k] = true
		}
	}
	// Spells, creatures and encounters have lookups of their own.
	if got, want := len(seen), len(lkv1.Kinds())-3; got != want {
		t.Errorf("groups hold %d kinds, want %d", got, want)
	}
}

func TestOrdinal(t *testing.T) {
	for n, want := range map[int32]string{0: "0th", 1: "1st", 2: "2nd", 3: "3rd", 4: "4th", 9: "9th", 11: "11th",
		12: "12th", 13: "13th", 20: "20th", 21: "21st", 22: "22nd", 103: "103rd", 111: "111th"} {
		if got := lkv1.Ordinal(n); got != want {
			t.Errorf("Ordinal(%d) = %q, want %q", n, got, want)
		}
	}
}
