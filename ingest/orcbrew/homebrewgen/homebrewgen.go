// Package homebrewgen writes synthetic OrcBrew homebrew for benchmarks at
// scale: spells and monsters recombined from the bundled Open5e snapshot's
// own texts (one entity's name words, statistics and paragraphs with
// another's), so a store of any size holds text the way real homebrew
// does. It is deterministic: the same Options write the same bytes.
package homebrewgen

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"lorekeeper.dev/ingest/open5esnapshot"
)

// Options say what to write. Zero Files means one file.
type Options struct {
	Spells, Monsters int
	// Files spreads the entities over this many files, one book each.
	Files int
	// Seed picks the recombination.
	Seed uint64
}

// WriteDir writes the homebrew into dir as Files OrcBrew files, returning
// their paths.
func WriteDir(dir string, opts Options) ([]string, error) {
	src, err := loadSources()
	if err != nil {
		return nil, err
	}
	files := max(opts.Files, 1)
	rng := rand.New(rand.NewPCG(opts.Seed, 0x5eed))
	names := map[string]bool{}
	var paths []string
	for f := range files {
		var b strings.Builder
		book := fmt.Sprintf("Synthetic Tome %02d", f+1)
		fmt.Fprintf(&b, "{%s\n {:orcpub.dnd.e5/spells\n  {", edn(book))
		for i := range share(opts.Spells, files, f) {
			writeSpell(&b, src, rng, names, book, i)
		}
		b.WriteString("}\n  :orcpub.dnd.e5/monsters\n  {")
		for i := range share(opts.Monsters, files, f) {
			writeMonster(&b, src, rng, names, book, i)
		}
		b.WriteString("}}}\n")
		p := filepath.Join(dir, fmt.Sprintf("synthetic-%02d.orcbrew", f+1))
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			return nil, fmt.Errorf("write synthetic homebrew: %w", err)
		}
		paths = append(paths, p)
	}
	return paths, nil
}

// share is file f's part of n entities spread over files.
func share(n, files, f int) int {
	s := n / files
	if f < n%files {
		s++
	}
	return s
}

type spell struct {
	Name        string `json:"name"`
	Desc        string `json:"desc"`
	HigherLevel string `json:"higher_level"`
	Level       int    `json:"level"`
	School      struct {
		Key string `json:"key"`
	} `json:"school"`
	Classes []struct {
		Key string `json:"key"`
	} `json:"classes"`
	CastingTime   string `json:"casting_time"`
	RangeText     string `json:"range_text"`
	Duration      string `json:"duration"`
	Concentration bool   `json:"concentration"`
	Ritual        bool   `json:"ritual"`
	Verbal        bool   `json:"verbal"`
	Somatic       bool   `json:"somatic"`
	Material      bool   `json:"material"`
	MaterialSpec  string `json:"material_specified"`
	SavingThrow   string `json:"saving_throw_ability"`
}

type creature struct {
	Name string `json:"name"`
	Type struct {
		Key string `json:"key"`
	} `json:"type"`
	Size struct {
		Key string `json:"key"`
	} `json:"size"`
	CR        float64 `json:"challenge_rating"`
	Alignment string  `json:"alignment"`
	AC        int     `json:"armor_class"`
	HP        int     `json:"hit_points"`
	Abilities struct {
		Str int `json:"strength"`
		Dex int `json:"dexterity"`
		Con int `json:"constitution"`
		Int int `json:"intelligence"`
		Wis int `json:"wisdom"`
		Cha int `json:"charisma"`
	} `json:"ability_scores"`
	Speed   map[string]any `json:"speed"`
	Traits  []block        `json:"traits"`
	Actions []block        `json:"actions"`
}

type block struct {
	Name string `json:"name"`
	Desc string `json:"desc"`
}

type sources struct {
	spells    []spell
	creatures []creature
}

// loadSources reads the snapshot's v2 spells and creatures, in page order.
func loadSources() (*sources, error) {
	h, err := open5esnapshot.NewHandler()
	if err != nil {
		return nil, fmt.Errorf("open the bundled snapshot: %w", err)
	}
	var src sources
	for _, ep := range []string{"spells", "creatures"} {
		for page := 1; ; page++ {
			b, ok := h.File(fmt.Sprintf("v2/%s/page-%d.json", ep, page))
			if !ok {
				break
			}
			var p struct{ Results json.RawMessage }
			if err := json.Unmarshal(b, &p); err != nil {
				return nil, fmt.Errorf("read v2/%s page %d: %w", ep, page, err)
			}
			var err error
			if ep == "spells" {
				var ss []spell
				err = json.Unmarshal(p.Results, &ss)
				src.spells = append(src.spells, ss...)
			} else {
				var cs []creature
				err = json.Unmarshal(p.Results, &cs)
				src.creatures = append(src.creatures, cs...)
			}
			if err != nil {
				return nil, fmt.Errorf("read v2/%s page %d: %w", ep, page, err)
			}
		}
	}
	if len(src.spells) < 2 || len(src.creatures) < 2 {
		return nil, fmt.Errorf("the bundled snapshot has %d spells and %d creatures: too few to recombine", len(src.spells), len(src.creatures))
	}
	return &src, nil
}

// newName joins the first word of one name with the rest of another's,
// numbered when the pair was taken already.
func newName(rng *rand.Rand, names map[string]bool, pick func() string) string {
	for range 8 {
		a, b := strings.Fields(pick()), strings.Fields(pick())
		if len(a) == 0 || len(b) == 0 {
			continue
		}
		n := a[0] + " " + b[len(b)-1]
		if len(b) > 1 && rng.IntN(2) == 0 {
			n = a[0] + " " + strings.Join(b[1:], " ")
		}
		if !names[strings.ToLower(n)] {
			names[strings.ToLower(n)] = true
			return n
		}
	}
	for i := 2; ; i++ {
		n := strings.Fields(pick())[0] + " " + strings.Fields(pick())[0] + " " + roman(i)
		if !names[strings.ToLower(n)] {
			names[strings.ToLower(n)] = true
			return n
		}
	}
}

func roman(n int) string {
	vals := []int{1000, 900, 500, 400, 100, 90, 50, 40, 10, 9, 5, 4, 1}
	syms := []string{"M", "CM", "D", "CD", "C", "XC", "L", "XL", "X", "IX", "V", "IV", "I"}
	var b strings.Builder
	for i, v := range vals {
		for n >= v {
			b.WriteString(syms[i])
			n -= v
		}
	}
	return b.String()
}

// mix is the first half of a's paragraphs and the second half of b's.
func mix(a, b string) string {
	pa, pb := strings.Split(a, "\n\n"), strings.Split(b, "\n\n")
	out := append(pa[:(len(pa)+1)/2:(len(pa)+1)/2], pb[len(pb)/2:]...)
	return strings.TrimSpace(strings.Join(out, "\n\n"))
}

func writeSpell(b *strings.Builder, src *sources, rng *rand.Rand, names map[string]bool, book string, i int) {
	pick := func() *spell { return &src.spells[rng.IntN(len(src.spells))] }
	name := newName(rng, names, func() string { return pick().Name })
	a, c := pick(), pick()
	fmt.Fprintf(b, "\n   :synthetic-spell-%d\n   {:name %s :option-pack %s :level %d :school %s",
		i, edn(name), edn(book), a.Level, edn(c.School.Key))
	b.WriteString(" :spell-lists {")
	for _, cl := range a.Classes {
		fmt.Fprintf(b, "%s true ", keyword(cl.Key))
	}
	fmt.Fprintf(b, "} :casting-time %s :range %s :duration %s :concentration %t :ritual %t",
		edn(a.CastingTime), edn(c.RangeText), edn(a.Duration), a.Concentration, a.Ritual)
	fmt.Fprintf(b, " :components {:verbal %t :somatic %t :material %t :material-component %s}",
		a.Verbal, a.Somatic, a.Material, edn(a.MaterialSpec))
	if a.SavingThrow != "" {
		fmt.Fprintf(b, " :save %s", edn(a.SavingThrow))
	}
	fmt.Fprintf(b, " :description %s}", edn(mix(a.Desc+"\n\n"+a.HigherLevel, c.Desc)))
}

func writeMonster(b *strings.Builder, src *sources, rng *rand.Rand, names map[string]bool, book string, i int) {
	pick := func() *creature { return &src.creatures[rng.IntN(len(src.creatures))] }
	name := newName(rng, names, func() string { return pick().Name })
	a, c := pick(), pick()
	fmt.Fprintf(b, "\n   :synthetic-monster-%d\n   {:name %s :option-pack %s :type %s :size %s :alignment %s",
		i, edn(name), edn(book), keyword(a.Type.Key), keyword(c.Size.Key), edn(a.Alignment))
	fmt.Fprintf(b, " :challenge %s :armor-class %d :hit-points %d :speed %s",
		strconv.FormatFloat(a.CR, 'f', -1, 64), a.AC, c.HP, edn(speedText(a.Speed)))
	ab := a.Abilities
	fmt.Fprintf(b, " :abilities {:str %d :dex %d :con %d :int %d :wis %d :cha %d}", ab.Str, ab.Dex, ab.Con, ab.Int, ab.Wis, ab.Cha)
	b.WriteString(" :traits [")
	for _, t := range half(a.Traits, c.Traits) {
		fmt.Fprintf(b, "{:name %s :description %s} ", edn(t.Name), edn(t.Desc))
	}
	b.WriteString("] :actions [")
	for _, t := range half(c.Actions, a.Actions) {
		fmt.Fprintf(b, "{:name %s :description %s} ", edn(t.Name), edn(t.Desc))
	}
	b.WriteString("]}")
}

// half is the first half of a's blocks and the second half of b's.
func half(a, b []block) []block {
	return append(a[:(len(a)+1)/2:(len(a)+1)/2], b[len(b)/2:]...)
}

func speedText(sp map[string]any) string {
	var modes []string
	for m, v := range sp {
		if f, ok := v.(float64); ok && f > 0 && m != "unit" {
			modes = append(modes, m)
		}
	}
	sort.Strings(modes)
	var parts []string
	for _, m := range modes {
		parts = append(parts, fmt.Sprintf("%s %v ft.", m, sp[m]))
	}
	return strings.Join(parts, ", ")
}

var ednEscapes = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", `\r`, "\t", `\t`)

// edn is s as an EDN string.
func edn(s string) string { return `"` + ednEscapes.Replace(s) + `"` }

// keyword is s as an EDN keyword (s is an Open5e key: letters, digits and
// hyphens), or nil when empty.
func keyword(s string) string {
	s = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return '-'
	}, strings.ToLower(s))
	if s == "" {
		return "nil"
	}
	return ":" + s
}
