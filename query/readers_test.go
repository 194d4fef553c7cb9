package query_test

import (
	"slices"
	"strings"
	"testing"

	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
	"lorekeeper.dev/query"
)

// readCase is a row of a reader's table: a question asked through a tool
// and what the reader must read in it, as understandCase writes it
// ("field=value", "docs=a,b", "order=field desc"); none: it must read
// nothing there (the reader's negative rows).
type readCase struct {
	tool, q string
	want    []string
}

// readerTables are the readers' tables by facet, each in the reader's own
// test file (read_<facet>_test.go). Every table runs on every change: a
// reading added for one phrasing cannot move another's unseen.
var readerTables = map[string][]readCase{
	"cr":               crReads,
	"party":            partyReads,
	"level":            levelReads,
	"amount":           amountReads,
	"damage":           damageReads,
	"spell-switch":     spellSwitchReads,
	"equipment-switch": equipmentSwitchReads,
	"legendary":        legendaryReads,
	"book":             bookReads,
	"edition":          editionReads,
	"effect":           effectReads,
	"value":            valueReads,
	"condition":        conditionReads,
	"environment":      environmentReads,
	"companion":        companionReads,
	"size":             sizeReads,
	"kind":             kindReads,
	"how-it-works":     howItWorksReads,
	"superlative":      superlativeReads,
}

// toolKinds are the kinds each tool's questions are read against.
var toolKinds = map[string][]lkv1.Kind{
	"lookup_spell":            {lkv1.Kind_KIND_SPELL},
	"lookup_creature":         {lkv1.Kind_KIND_CREATURE},
	"lookup_equipment":        lkv1.EquipmentKinds(),
	"lookup_character_option": lkv1.CharacterOptionKinds(),
	"lookup_rule":             lkv1.RuleKinds(),
	"search_dnd_content":      lkv1.Kinds(),
}

// TestReaders runs every reader's table: each question must read as the
// row says in that reader's facet (the other readers' readings are theirs
// to check), from words the question says.
func TestReaders(t *testing.T) {
	st := snapshotStore(t)
	svc := query.NewService(st, nil, nil)
	for _, facet := range query.Facets() {
		rows, ok := readerTables[facet]
		if !ok || len(rows) == 0 {
			t.Errorf("reader %q has no table", facet)
			continue
		}
		negative := 0
		for _, c := range rows {
			if len(c.want) == 0 {
				negative++
			}
			t.Run(facet+"/"+c.q, func(t *testing.T) {
				kinds, ok := toolKinds[c.tool]
				if !ok {
					t.Fatalf("no tool %s", c.tool)
				}
				all, err := query.Readings(svc, c.q, kinds)
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, r := range all[facet] {
					got = append(got, r.Said)
					if r.Words == "" || !strings.Contains(strings.ToLower(strings.ReplaceAll(c.q, "-", " ")), r.Words) {
						t.Errorf("%s: words %q are not the question's", r.Said, r.Words)
					}
				}
				want := slices.Clone(c.want)
				slices.Sort(got)
				slices.Sort(want)
				if !slices.Equal(got, want) {
					t.Errorf("%s(%q): %s read %q, want %q (all: %v)", c.tool, c.q, facet, got, want, all)
				}
			})
		}
		if negative == 0 {
			t.Errorf("reader %q: its table has no question it must not read", facet)
		}
	}
}
