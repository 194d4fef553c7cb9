package relevance

import (
	_ "embed"
	"fmt"
	"strings"
	"sync"

	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

//go:embed aliases.tsv
var aliasesTSV string

// Alias types, as aliases.tsv names them.
const (
	AliasWizard  = "wizard"   // a book name with a wizard's name the SRD leaves out
	AliasRenamed = "renamed"  // the same entity named differently in SRD 5.1 and 5.2
	AliasNotOpen = "not-open" // a well-known name no open document carries
	AliasShort   = "short"    // an abbreviation players type ("AoO", "HP")
)

// Alias is a row of the alias table: Known is the name players know; Name
// is the name open content uses, or, for AliasNotOpen, a description of
// the thing to search by meaning.
type Alias struct {
	Type  string
	Kind  lkv1.Kind
	Known string
	Name  string
}

// AliasTable is the parsed alias table. It is read-only once built.
type AliasTable struct {
	rows      []Alias
	spellings [][]string // per row
	// grams: per row and spelling, its trigrams, to skip the edit distance
	// of spellings that share too few.
	grams [][]map[string]bool
	// byKey: a normalised spelling of a known name -> the rows (renamed
	// rows are entered both ways).
	byKey map[string][]Alias
	// byTarget: kind and lower-case open name -> the known names.
	byTarget map[string][]string
}

// Aliases returns the table in aliases.tsv, parsed once.
var Aliases = sync.OnceValue(func() *AliasTable {
	t, err := ParseAliases(aliasesTSV)
	if err != nil {
		panic(err) // the embedded file is tested
	}
	return t
})

// ParseAliases parses an alias table (the format of aliases.tsv).
func ParseAliases(text string) (*AliasTable, error) {
	t := &AliasTable{byKey: map[string][]Alias{}, byTarget: map[string][]string{}}
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 4 {
			return nil, fmt.Errorf("alias table line %d: %d columns, want 4", i+1, len(f))
		}
		kind, ok := lkv1.KindFromSlug(f[1])
		if !ok {
			return nil, fmt.Errorf("alias table line %d: unknown kind %q", i+1, f[1])
		}
		a := Alias{Type: f[0], Kind: kind, Known: strings.TrimSpace(f[2]), Name: strings.TrimSpace(f[3])}
		if a.Known == "" || a.Name == "" {
			return nil, fmt.Errorf("alias table line %d: empty name", i+1)
		}
		switch a.Type {
		case AliasWizard, AliasNotOpen, AliasShort:
			t.add(a)
		case AliasRenamed:
			t.add(a)
			t.add(Alias{Type: a.Type, Kind: a.Kind, Known: a.Name, Name: a.Known})
		default:
			return nil, fmt.Errorf("alias table line %d: unknown type %q", i+1, a.Type)
		}
	}
	return t, nil
}

func (t *AliasTable) add(a Alias) {
	t.rows = append(t.rows, a)
	sp := spellings(a.Known)
	t.spellings = append(t.spellings, sp)
	gs := make([]map[string]bool, len(sp))
	for i, k := range sp {
		gs[i] = map[string]bool{}
		for _, g := range Trigrams(k) {
			gs[i][g] = true
		}
	}
	t.grams = append(t.grams, gs)
	for _, k := range t.spellings[len(t.spellings)-1] {
		t.byKey[k] = append(t.byKey[k], a)
	}
	if a.Type != AliasNotOpen {
		tk := targetKey(a.Kind, a.Name)
		t.byTarget[tk] = append(t.byTarget[tk], a.Known)
	}
}

func targetKey(k lkv1.Kind, name string) string { return k.Slug() + "\x00" + strings.ToLower(name) }

// spellings are the normalised forms a known name is typed in: as is
// ("melfs acid arrow") and with possessives dropped ("melf acid arrow").
func spellings(known string) []string {
	out := []string{NormalizeName(known)}
	r := strings.NewReplacer("'s ", " ", "’s ", " ")
	if p := NormalizeName(r.Replace(known + " ")); p != out[0] {
		out = append(out, p)
	}
	return out
}

// Rows returns every row (renamed rows both ways).
func (t *AliasTable) Rows() []Alias { return t.rows }

// Lookup returns the rows whose known name is name, as people type it
// (any case, with or without apostrophes or the possessive "s").
func (t *AliasTable) Lookup(name string) []Alias { return t.byKey[NormalizeName(name)] }

// KnownAs returns the known names of the entity of kind named name (open
// content's name): the words search indexes it under as well.
func (t *AliasTable) KnownAs(kind lkv1.Kind, name string) []string {
	return t.byTarget[targetKey(kind, name)]
}

// Near returns the rows whose known name is within typo distance of name
// (NameSimilarity at least minSim), with their similarity.
func (t *AliasTable) Near(name string, minSim float64) map[*Alias]float64 {
	q := NormalizeName(name)
	qt := Trigrams(q)
	out := map[*Alias]float64{}
	for i := range t.rows {
		a := &t.rows[i]
		if a.Type == AliasShort {
			continue // two or three letters are near too much
		}
		best := 0.0
		for j, k := range t.spellings[i] {
			if d := len(k) - len(q); float64(max(d, -d)) > (1-minSim)*float64(max(len(k), len(q))) {
				continue // too different in length to be near
			}
			shared := 0
			for _, g := range qt {
				if t.grams[i][j][g] {
					shared++
				}
			}
			if 2*float64(shared)/float64(len(qt)+len(t.grams[i][j])) < SuggestDice {
				continue // too few letters in common to be near
			}
			best = max(best, NameSimilarity(q, k))
		}
		if best >= minSim {
			out[a] = best
		}
	}
	return out
}
