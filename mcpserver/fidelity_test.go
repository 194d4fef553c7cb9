package mcpserver_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lorekeeper.dev/mcpserver"
)

// The class table through MCP: structured, as markdown, and in the entity
// resource.
func TestClassTable_wizard(t *testing.T) {
	h := newHarness(t)
	res := h.call(t, "lookup_character_option", map[string]any{"type": "class", "name": "wizard", "documents": []string{"srd-2014"}})
	mustOK(t, res)
	out := decode[mcpserver.LookupOutput](t, res)
	if out.Count != 1 || out.Results[0].CharacterOption == nil {
		t.Fatalf("out = %+v", out)
	}
	checkWizardTable(t, out.Results[0].CharacterOption.ClassTable)
	md := text(res)
	wantContains(t, md, "### The Wizard",
		"| Level | Proficiency Bonus | Features | Cantrips Known | 1st | 2nd | 3rd | 4th | 5th | 6th | 7th | 8th | 9th |",
		"| 5th | +3 | — | 4 | 4 | 3 | 2 | — | — | — | — | — | — |",
		"| 1st | +2 | Arcane Recovery, Spellcasting | 3 | 2 |",
		"***Ability Score Improvement (levels 4, 8, 12, 16, 19).***",
		"*Corrected from the source in 1 place", "`corrections`, or detail=\"full\"")
	if strings.Contains(md, "[Column data]") {
		t.Error("placeholder rendered")
	}
	// The features follow the table, in level order.
	table, recovery, tradition := strings.Index(md, "| 20th |"), strings.Index(md, "***Arcane Recovery (level 1).***"), strings.Index(md, "***Arcane Tradition (level 2).***")
	if table < 0 || recovery < table || tradition < recovery {
		t.Errorf("table at %d, level 1 feature at %d, level 2 feature at %d", table, recovery, tradition)
	}

	e := readEntityJSON(t, h, "lorekeeper://entity/open5e_v2:srd-2014:class:wizard")
	checkWizardTable(t, e.CharacterOption.ClassTable)
	if len(e.Corrections) != 1 || e.Corrections[0].Field != "class_table" {
		t.Errorf("resource corrections %+v", e.Corrections)
	}
}

func checkWizardTable(t *testing.T, ct *mcpserver.ClassTable) {
	t.Helper()
	if ct == nil || len(ct.Levels) != 20 {
		t.Fatalf("class table %+v", ct)
	}
	l5 := ct.Levels[4]
	if l5.Level != 5 || l5.ProficiencyBonus != 3 || !slices.Equal(l5.SpellSlots, []int32{4, 3, 2}) ||
		l5.Columns["1st"] != "4" || l5.Columns["2nd"] != "3" || l5.Columns["3rd"] != "2" || l5.Columns["Cantrips Known"] != "4" {
		t.Errorf("level 5: %+v", l5)
	}
	if _, ok := l5.Columns["4th"]; ok {
		t.Errorf("level 5 has a 4th-level slot column: %+v", l5.Columns)
	}
}

func readEntityJSON(t *testing.T, h *harness, uri string) mcpserver.Entity {
	t.Helper()
	res, err := h.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatal(err)
	}
	var e mcpserver.Entity
	if err := json.Unmarshal([]byte(res.Contents[1].Text), &e); err != nil {
		t.Fatal(err)
	}
	return e
}

// The SRD 5.1 dragon's attacks as its text gives them, the card saying in a
// line that it was corrected, the corrections listed in the structured
// result, with detail="full" and in the resource.
func TestCorrections_adultRedDragon(t *testing.T) {
	h := newHarness(t)
	res := h.call(t, "lookup_creature", map[string]any{"name": "adult red dragon"})
	mustOK(t, res)
	out := decode[mcpserver.LookupOutput](t, res)
	if out.Count != 1 {
		t.Fatalf("out = %+v", out)
	}
	check := func(t *testing.T, e mcpserver.Entity) {
		t.Helper()
		attacks := map[string]string{}
		for _, b := range e.Blocks {
			if b.Attack != "" {
				attacks[b.Name] = b.Attack
			}
		}
		if attacks["Bite"] != "+14 to hit, reach 10 ft., 2d10+8 piercing plus 2d6 fire" || attacks["Claw"] != "+14 to hit, reach 5 ft., 2d6+8 slashing" {
			t.Errorf("attacks %q", attacks)
		}
		if !slices.Contains(e.Corrections, mcpserver.Correction{Subject: "Bite", Field: "damage_type", SourceValue: "thunder", CorrectedValue: "piercing"}) ||
			!slices.Contains(e.Corrections, mcpserver.Correction{Subject: "Claw", Field: "damage_type", SourceValue: "thunder", CorrectedValue: "slashing"}) {
			t.Errorf("corrections %+v", e.Corrections)
		}
	}
	check(t, out.Results[0])
	check(t, readEntityJSON(t, h, out.Results[0].URI))
	md := text(res)
	// One line says the card was corrected and where the corrections are;
	// detail="full" and the resource list them.
	wantContains(t, md, "***Bite.*** *+14 to hit, reach 10 ft., 2d10+8 piercing plus 2d6 fire.*",
		"*Corrected from the source in ", "`corrections`, or detail=\"full\"")
	if strings.Contains(md, "thunder") || strings.Count(md, "Corrected from the source") != 1 {
		t.Errorf("the default card lists the corrections:\n%s", md)
	}
	full := h.call(t, "lookup_creature", map[string]any{"name": "adult red dragon", "detail": "full"})
	mustOK(t, full)
	wantContains(t, text(full), "*Corrected from the source in ", "- *Bite: damage 2d10 → 2d10+8; damage type thunder → piercing*")
	r, err := h.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: out.Results[0].URI})
	if err != nil {
		t.Fatal(err)
	}
	wantContains(t, r.Contents[0].Text, "- *Bite: damage 2d10 → 2d10+8; damage type thunder → piercing*")
}

// A feat whose text is all in its benefits still gets a summary line.
func TestSearch_summaryFromBenefits(t *testing.T) {
	h := newHarness(t)
	res := h.call(t, "search_dnd_content", map[string]any{"query": "street fighter", "semantic": false})
	mustOK(t, res)
	wantContains(t, text(res), "**Street Fighter** — feat: Your Strength or Constitution score increases by 1")
}
