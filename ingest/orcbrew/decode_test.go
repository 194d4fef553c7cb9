package orcbrew_test

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"lorekeeper.dev/ingest"
	"lorekeeper.dev/ingest/orcbrew"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// The samples live with the parser (../edn/testdata, see its README.md).
const good, bad = "../edn/testdata/orcbrew", "../edn/testdata/orcbrew-bad"

func readSample(t testing.TB, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// hugeString rebuilds the data pack's crafted_huge-string.orcbrew byte for
// byte (3,145,927 bytes): one spell whose :description is a 3 MiB string.
func hugeString() []byte {
	const (
		head     = "{\"Huge Pack\"\n {:orcpub.dnd.e5/spells\n  {:endless-litany\n   {:key :endless-litany\n    :name \"Endless Litany\"\n    :option-pack \"Huge Pack\"\n    :level 3\n    :school \"abjuration\"\n    :description \""
		tail     = "\"}}}}\n"
		sentence = "The ward hums and the air tastes of iron. "
		size     = 3145927
	)
	n := size - len(head) - len(tail)
	return []byte(head + strings.Repeat(sentence, n/len(sentence)+1)[:n] + tail)
}

type fileCase struct {
	file       string
	wantErr    string            // for a file that fails as a whole
	wantBooks  []string          // otherwise
	wantCounts map[string]uint64 // kind slug -> entities
	wantWarns  int
	warnsSay   string // every warning contains this
}

// goodFiles is the expected import of every real sample.
var goodFiles = []fileCase{
	{file: "jnwhiteh-orcbrew-utils_example.orcbrew", wantBooks: []string{"Test"}, wantCounts: map[string]uint64{
		"background": 1, "class": 2, "creature": 1, "encounter": 1, "feat": 1, "invocation": 1,
		"language": 1, "race": 1, "selection": 1, "spell": 1, "subclass": 1, "subrace": 1}},
	{file: "lorekeeper-mcp_sample.orcbrew", wantBooks: []string{"Test Content Pack"}, wantCounts: map[string]uint64{"creature": 2, "spell": 2}},
	{file: "orcpub-dmv_coverage-pak.orcbrew", wantBooks: []string{"Coverage Pak"}, wantCounts: map[string]uint64{"selection": 2, "subclass": 1}},
	{file: "orcpub-dmv_cruft-shapes.orcbrew", wantBooks: []string{"Cruft Shapes"}, wantCounts: map[string]uint64{"class": 1, "spell": 1}},
	{file: "orcpub-dmv_demo-content.orcbrew", wantBooks: []string{"Demo Content"}, wantCounts: map[string]uint64{"background": 1, "feat": 1, "spell": 1}},
	{file: "orcpub-dmv_extensibility-fixtures.orcbrew", wantBooks: []string{"Extensibility Test Pack"}, wantCounts: map[string]uint64{"boon": 1, "invocation": 1, "subclass": 1, "subrace": 1}},
}

// badFiles is how every broken sample ends (MANIFEST section 3).
var badFiles = []fileCase{
	{file: "crafted_truncated.orcbrew", wantErr: "line 9, column 69 (byte offset 240): unexpected end of input inside the string that starts at line 9, column 18"},
	{file: "orcpub-dmv_broken-parse.orcbrew", wantErr: "(byte offset 88): unexpected end of input: map opened at line 1, column 34 is not closed (3 collections open)"},
	{file: "crafted_wrong-top-level-vector.orcbrew", wantErr: "top-level value is a vector, want a map"},
	{file: "crafted_huge-string.orcbrew", wantErr: "line 9, column 18 (byte offset 192): string longer than the limit of 1048576 bytes"},
	{file: "crafted_invalid-utf8.orcbrew", wantBooks: []string{"Bad Bytes Pack"}, wantCounts: map[string]uint64{"spell": 1, "feat": 1}, wantWarns: 7, warnsSay: "invalid UTF-8 byte"},
	{file: "crafted_missing-name.orcbrew", wantBooks: []string{"Nameless Pack"}, wantCounts: map[string]uint64{"spell": 1}, wantWarns: 6, warnsSay: "skipped"},
	{file: "crafted_unknown-entity-kinds.orcbrew", wantBooks: []string{"Odd Kinds Pack"}, wantCounts: map[string]uint64{"feat": 1}, wantWarns: 5, warnsSay: "skipped unknown content kind"},
	{file: "orcpub-dmv_broken-content.orcbrew", wantBooks: []string{"Broken On Purpose"}, wantCounts: map[string]uint64{"class": 1, "feat": 1, "race": 1, "spell": 2, "subclass": 1}, wantWarns: 4, warnsSay: ": ignored"},
	{file: "orcpub-dmv_keyword-trap.orcbrew", wantBooks: []string{"Keyword Trap Pack"}, wantCounts: map[string]uint64{"class": 1}},
}

func sampleData(t testing.TB, dir, file string) []byte {
	if file == "crafted_huge-string.orcbrew" {
		return hugeString()
	}
	return readSample(t, filepath.Join(dir, file))
}

func TestDecode_Samples(t *testing.T) {
	run := func(dir string, cases []fileCase) {
		for _, tt := range cases {
			t.Run(tt.file, func(t *testing.T) {
				f, err := orcbrew.Decode(tt.file, sampleData(t, dir, tt.file), nil)
				if tt.wantErr != "" {
					if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
						t.Fatalf("got error %v, want one containing %q", err, tt.wantErr)
					}
					return
				}
				if err != nil {
					t.Fatalf("got error %v, want success", err)
				}
				if !maps.Equal(f.Counts, tt.wantCounts) {
					t.Errorf("counts: got %v, want %v", f.Counts, tt.wantCounts)
				}
				if strings.Join(f.Books, "|") != strings.Join(tt.wantBooks, "|") {
					t.Errorf("books: got %q, want %q", f.Books, tt.wantBooks)
				}
				if len(f.Warnings) != tt.wantWarns {
					t.Errorf("got %d warnings, want %d: %q", len(f.Warnings), tt.wantWarns, f.Warnings)
				}
				for _, w := range f.Warnings {
					if !strings.Contains(w, tt.warnsSay) {
						t.Errorf("warning %q does not say %q", w, tt.warnsSay)
					}
				}
				var n uint64
				for _, c := range tt.wantCounts {
					n += c
				}
				if uint64(len(f.Entities)) != n {
					t.Errorf("got %d entities, want %d", len(f.Entities), n)
				}
				for _, e := range f.Entities {
					checkEntity(t, tt.file, e)
				}
			})
		}
	}
	run(good, goodFiles)
	run(bad, badFiles)
}

// checkEntity asserts what every decoded entity must satisfy.
func checkEntity(t *testing.T, object string, e *lkv1.Entity) {
	t.Helper()
	want := "orcbrew:" + e.GetDocument().GetKey() + ":" + e.GetKind().Slug() + ":" + e.GetSlug()
	if e.GetKey() != want {
		t.Errorf("key: got %q, want %q", e.GetKey(), want)
	}
	if e.GetDocument().GetSource() != lkv1.Source_SOURCE_ORCBREW || e.GetDocument().GetKey() != lkv1.Slugify(e.GetDocument().GetName()) {
		t.Errorf("%s: document %v", e.GetKey(), e.GetDocument())
	}
	if e.GetSourceUrl() != object || e.GetName() == "" || e.GetFetchedAt() == nil {
		t.Errorf("%s: source_url %q, name %q, fetched_at %v", e.GetKey(), e.GetSourceUrl(), e.GetName(), e.GetFetchedAt())
	}
	if !json.Valid(e.GetSourceRecord()) {
		t.Errorf("%s: source_record is not JSON: %s", e.GetKey(), e.GetSourceRecord())
	}
	if h, err := ingest.ContentHash(e); err != nil || h != e.GetContentHash() || len(h) != 64 {
		t.Errorf("%s: content hash %q, recomputed %q (%v)", e.GetKey(), e.GetContentHash(), h, err)
	}
	if _, err := proto.Marshal(e); err != nil {
		t.Errorf("%s: does not marshal: %v", e.GetKey(), err)
	}
}

func decodeOne(t *testing.T, src string) *lkv1.Entity {
	t.Helper()
	f, err := orcbrew.Decode("x.orcbrew", []byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Entities) != 1 {
		t.Fatalf("got %d entities (%q), want 1", len(f.Entities), f.Warnings)
	}
	return f.Entities[0]
}

func TestDecode_Spell(t *testing.T) {
	tests := []struct {
		name string
		edn  string
		want *lkv1.SpellDetails
	}{
		{"keyword school and components", `{:level 3 :school :evocation :casting-time "1 bonus action" :range "150 feet" :duration "Concentration, up to 1 minute"
		  :components {:verbal true :somatic true :material true :material-component "a diamond worth 300 gp, which the spell consumes"}
		  :spell-lists {:wizard true :sorcerer true :bard false}}`,
			&lkv1.SpellDetails{Level: 3, School: "evocation", Classes: []string{"sorcerer", "wizard"}, Concentration: true,
				CastingTime: "1 bonus action", CastingTimeKey: "bonus-action", Range: "150 feet", Duration: "Concentration, up to 1 minute",
				Verbal: true, Somatic: true, Material: true, MaterialSpecified: "a diamond worth 300 gp, which the spell consumes",
				MaterialCostGp: proto.Float64(300), MaterialConsumed: true}},
		{"string school, ritual, minutes", `{:level 1 :school "Divination" :ritual true :casting-time "10 minutes" :attack-roll? true}`,
			&lkv1.SpellDetails{Level: 1, School: "divination", Ritual: true, CastingTime: "10 minutes", CastingTimeKey: "10-minutes", AttackRoll: true}},
		{"cantrip", `{:level 0 :school "evocation"}`, &lkv1.SpellDetails{School: "evocation"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := `{"B" {:orcpub.dnd.e5/spells {:s ` + strings.Replace(tt.edn, "{", `{:name "S" `, 1) + `}}}`
			got := decodeOne(t, src).GetSpell()
			if !proto.Equal(got, tt.want) {
				t.Errorf("got  %v\nwant %v", got, tt.want)
			}
		})
	}
}

func TestDecode_Creature(t *testing.T) {
	e := decodeOne(t, `{"Monsters" {:orcpub.dnd.e5/monsters {:imp-ling {:name "Impling" :challenge 0.125 :size :small :type :fiend
		:hit-points {:die 6 :die-count 2 :modifier 2} :armor-class 13 :speed {:walk 20 :fly 40 :hover true}
		:str 6 :dex 17 :saving-throws {:dex 5} :skills {:stealth 5}
		:props {:damage-resistance {:fire true :cold false} :condition-immunity {:poisoned true} :language {:infernal true}}
		:traits [{:name "Devil's Sight" :description "Sees in darkness."}
		         {:name "Sting" :type :action :description "Melee Weapon Attack."}
		         {:name "Dodge" :type :reaction :description "Adds 2 to AC."}
		         {:name "Tail" :type :legendary-action :description "Swipes."}]}}}}`)
	c := e.GetCreature()
	want := &lkv1.CreatureDetails{
		ChallengeRating: 0.125, ChallengeRatingText: "1/8", Type: "fiend", Size: "small", ArmorClass: 13,
		HitPoints: 9, HitDice: "2d6+2", Speed: map[string]int32{"walk": 20, "fly": 40, "hover": 1}, SpeedText: "fly 40 ft., walk 20 ft.",
		AbilityScores: &lkv1.AbilityScores{Strength: 6, Dexterity: 17}, SavingThrows: map[string]int32{"dexterity": 5},
		Skills: map[string]int32{"stealth": 5}, DamageResistances: []string{"fire"}, ConditionImmunities: []string{"poisoned"},
		Languages: "Infernal", HasLegendaryActions: true, ExperiencePoints: 25, // the SRD's XP for CR 1/8
	}
	if !proto.Equal(c, want) {
		t.Errorf("got  %v\nwant %v", c, want)
	}
	var types []string
	for _, b := range e.GetBlocks() {
		types = append(types, b.GetType()+":"+b.GetName())
	}
	if got, want := strings.Join(types, ","), "trait:Devil's Sight,action:Sting,reaction:Dodge,legendary_action:Tail"; got != want {
		t.Errorf("blocks: got %s, want %s", got, want)
	}
	if got, want := e.GetKey(), "orcbrew:monsters:creature:impling"; got != want {
		t.Errorf("key: got %s, want %s", got, want)
	}
}

func TestDecode_ChallengeAndSpeedShapes(t *testing.T) {
	tests := []struct {
		edn      string
		wantCR   float64
		wantText string
		wantWalk int32
		wantXP   int32 // the file's, else the SRD's for the rating
	}{
		{`:challenge 0.25 :speed "30 ft., climb 20 ft."`, 0.25, "1/4", 30, 50},
		{`:challenge 1/2 :speed "25 ft."`, 0, "", 25, 0}, // 1/2 is not EDN: the file fails, see below
		{`:challenge "1/2" :speed 40`, 0.5, "1/2", 40, 100},
		{`:challenge 17`, 17, "17", 0, 18000},
		{`:challenge 0`, 0, "0", 0, 10},
		{`:challenge 3 :xp 650`, 3, "3", 0, 650},
		{`:challenge 1.5`, 1.5, "1.5", 0, 0}, // no rating of the table
	}
	for _, tt := range tests {
		t.Run(tt.edn, func(t *testing.T) {
			src := `{"B" {:orcpub.dnd.e5/monsters {:m {:name "M" ` + tt.edn + `}}}}`
			f, err := orcbrew.Decode("x.orcbrew", []byte(src), nil)
			if tt.wantText == "" {
				if err == nil {
					t.Fatal("got no error for a ratio literal, want one")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			c := f.Entities[0].GetCreature()
			if c.GetChallengeRating() != tt.wantCR || c.GetChallengeRatingText() != tt.wantText || c.GetSpeed()["walk"] != tt.wantWalk || c.GetExperiencePoints() != tt.wantXP {
				t.Errorf("got CR %v %q walk %d XP %d, want %v %q %d %d", c.GetChallengeRating(), c.GetChallengeRatingText(), c.GetSpeed()["walk"], c.GetExperiencePoints(),
					tt.wantCR, tt.wantText, tt.wantWalk, tt.wantXP)
			}
		})
	}
}

func TestDecode_CharacterOptions(t *testing.T) {
	f, err := orcbrew.Decode("x.orcbrew", []byte(`{"Opts" {
	  :orcpub.dnd.e5/classes {:warden {:name "Warden" :hit-die 10 :spellcasting {:level-factor 2} :profs {:save {:orcpub.dnd.e5.character/wis true}}
	     :traits [{:name "Vigil" :level 3 :description "Stay awake."}]}}
	  :orcpub.dnd.e5/subclasses {:oath {:name "Oath of Rust" :class :warden} :far {:name "Far Path" :class :ranger}}
	  :orcpub.dnd.e5/races {:gnoll {:name "Gnoll" :size :medium :speed 35}}
	  :orcpub.dnd.e5/subraces {:pack {:name "Pack Gnoll" :race :gnoll}}
	  :orcpub.dnd.e5/feats {:tough {:name "Tough" :prereqs #{:orcpub.dnd.e5.character/con}}}}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[string]*lkv1.Entity{}
	for _, e := range f.Entities {
		byKey[e.GetKey()] = e
	}
	tests := []struct {
		key  string
		want *lkv1.CharacterOptionDetails
	}{
		{"orcbrew:opts:class:warden", &lkv1.CharacterOptionDetails{HitDice: "d10", CasterType: "HALF", SavingThrows: []string{"wisdom"}}},
		{"orcbrew:opts:subclass:oath-of-rust", &lkv1.CharacterOptionDetails{ParentKey: "orcbrew:opts:class:warden", ParentName: "Warden"}},
		{"orcbrew:opts:subclass:far-path", &lkv1.CharacterOptionDetails{ParentName: "Ranger"}},
		{"orcbrew:opts:race:gnoll", &lkv1.CharacterOptionDetails{Size: "medium", Speed: 35}},
		{"orcbrew:opts:subrace:pack-gnoll", &lkv1.CharacterOptionDetails{ParentKey: "orcbrew:opts:race:gnoll", ParentName: "Gnoll"}},
		{"orcbrew:opts:feat:tough", &lkv1.CharacterOptionDetails{Prerequisite: "Constitution"}},
	}
	for _, tt := range tests {
		e, ok := byKey[tt.key]
		if !ok {
			t.Errorf("no entity %s", tt.key)
			continue
		}
		if got := e.GetCharacterOption(); !proto.Equal(got, tt.want) {
			t.Errorf("%s: got %v, want %v", tt.key, got, tt.want)
		}
	}
	// The class's saving throws are its own field, not a Proficiencies block.
	if b := byKey["orcbrew:opts:class:warden"].GetBlocks(); len(b) != 1 || b[0].GetType() != "feature" || b[0].GetLevel() != 3 {
		t.Errorf("class blocks: got %v", b)
	}
}

func TestDecode_Items(t *testing.T) {
	f, err := orcbrew.Decode("x.orcbrew", []byte(`{"Arms" {
	  :orcpub.dnd.e5/magic-items {:ring {:name "Ring of Embers" :type :ring :rarity :very-rare :attunement [:wizard] :description "Warm."}}
	  :orcpub.dnd.e5/weapons {:pike {:name "Glass Pike" :damage-die 10 :damage-die-count 1 :damage-type :piercing :reach? true :heavy? true :two-handed? true}}
	  :orcpub.dnd.e5/armor {:coat {:name "Bone Coat" :type :medium :base-ac 13 :max-dex-mod 2}}}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(f.Counts, map[string]uint64{"magic-item": 1, "weapon": 1, "armor": 1}) {
		t.Fatalf("counts: got %v", f.Counts)
	}
	want := map[string]*lkv1.ItemDetails{
		"orcbrew:arms:magic-item:ring-of-embers": {Category: "ring", IsMagic: true, Rarity: "very rare", RequiresAttunement: true, AttunementDetail: "by a Wizard"},
		"orcbrew:arms:weapon:glass-pike": {Category: "weapon", Weapon: &lkv1.WeaponStats{DamageDice: "1d10", DamageType: "piercing",
			Properties: []string{"heavy", "reach", "two-handed"}}},
		"orcbrew:arms:armor:bone-coat": {Category: "armor", Armor: &lkv1.ArmorStats{Category: "medium", AcBase: 13, AcAddDex: true, AcMaxDex: 2}},
	}
	for _, e := range f.Entities {
		if !proto.Equal(e.GetItem(), want[e.GetKey()]) {
			t.Errorf("%s: got %v, want %v", e.GetKey(), e.GetItem(), want[e.GetKey()])
		}
	}
}

func TestDecode_Slugs(t *testing.T) {
	f, err := orcbrew.Decode("my pack.orcbrew", []byte(`{:orcpub.dnd.e5/spells {
	  :a {:name "Melf's Bolt"} :b {:name "Melfs Bolt"} :c {:name "Melfs-Bolt"} :d {:name "!!!"}}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, e := range f.Entities {
		keys = append(keys, e.GetKey())
	}
	// No :option-pack: the book is named after the object.
	// A name whose slug is taken, or that has none, falls back to the EDN key.
	want := "orcbrew:my-pack:spell:b orcbrew:my-pack:spell:c orcbrew:my-pack:spell:d orcbrew:my-pack:spell:melfs-bolt"
	if got := strings.Join(keys, " "); got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
	if got, want := f.Books, []string{"my pack"}; len(got) != 1 || got[0] != want[0] {
		t.Errorf("books: got %q, want %q", got, want)
	}
}

func TestContentHash(t *testing.T) {
	src := readSample(t, filepath.Join(good, "lorekeeper-mcp_sample.orcbrew"))
	a, err := orcbrew.Decode("a.orcbrew", src, &orcbrew.DecodeOptions{FetchedAt: time.Unix(1, 0)})
	if err != nil {
		t.Fatal(err)
	}
	b, err := orcbrew.Decode("a.orcbrew", src, &orcbrew.DecodeOptions{FetchedAt: time.Unix(2, 0)})
	if err != nil {
		t.Fatal(err)
	}
	changed := []byte(strings.Replace(string(src), "three glowing darts", "four glowing darts", 1))
	c, err := orcbrew.Decode("a.orcbrew", changed, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range a.Entities {
		ha, hb, hc := a.Entities[i].GetContentHash(), b.Entities[i].GetContentHash(), c.Entities[i].GetContentHash()
		if ha != hb {
			t.Errorf("%s: hash depends on fetched_at", a.Entities[i].GetKey())
		}
		if wantChange := a.Entities[i].GetSlug() == "magic-missile"; (ha != hc) != wantChange {
			t.Errorf("%s: hash changed %v, want %v", a.Entities[i].GetKey(), ha != hc, wantChange)
		}
	}
}
