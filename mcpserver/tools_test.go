package mcpserver_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lorekeeper.dev/mcpserver"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

func TestServer_ListTools(t *testing.T) {
	h := newHarness(t)
	res, err := h.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"lookup_spell": {"name", "level", "level_min", "level_max", "school", "class_key", "concentration", "ritual",
			"casting_time", "damage_type", "game_system", "documents", "semantic_query", "limit"},
		"lookup_creature": {"name", "cr", "cr_min", "cr_max", "challenge_rating", "type", "size", "documents", "semantic_query", "limit"},
		"lookup_equipment": {"type", "item_type", "name", "rarity", "damage_dice", "is_simple", "requires_attunement",
			"is_light", "is_versatile", "is_thrown", "is_finesse", "is_two_handed", "cost_min", "cost_max", "weight_min",
			"weight_max", "documents", "semantic_query", "limit"},
		"lookup_character_option": {"type", "option_type", "name", "documents", "semantic_query", "limit"},
		"lookup_rule":             {"rule_type", "name", "section", "documents", "semantic_query", "limit"},
		"search_dnd_content":      {"query", "entity_types", "content_types", "documents", "semantic", "limit"},
		"list_documents":          {"source", "format"},
	}
	var got []string
	for _, tool := range res.Tools {
		got = append(got, tool.Name)
		params, ok := want[tool.Name]
		if !ok {
			t.Errorf("unexpected tool %q", tool.Name)
			continue
		}
		if len(tool.Description) < 200 {
			t.Errorf("%s: description too thin for an assistant to choose by: %q", tool.Name, tool.Description)
		}
		if tool.Annotations == nil || !tool.Annotations.ReadOnlyHint {
			t.Errorf("%s: not annotated read-only", tool.Name)
		}
		if tool.OutputSchema == nil {
			t.Errorf("%s: no output schema", tool.Name)
		}
		schema, _ := json.Marshal(tool.InputSchema)
		var s struct {
			Properties map[string]struct {
				Description string `json:"description"`
			} `json:"properties"`
			Required []string `json:"required"`
		}
		if err := json.Unmarshal(schema, &s); err != nil {
			t.Fatal(err)
		}
		for _, p := range params {
			prop, ok := s.Properties[p]
			if !ok {
				t.Errorf("%s: no parameter %q", tool.Name, p)
				continue
			}
			if prop.Description == "" {
				t.Errorf("%s.%s: no description", tool.Name, p)
			}
		}
		if tool.Name == "search_dnd_content" && !slices.Equal(s.Required, []string{"query"}) {
			t.Errorf("search_dnd_content required = %v, want [query]", s.Required)
		} else if tool.Name != "search_dnd_content" && len(s.Required) != 0 {
			t.Errorf("%s: required = %v, want none", tool.Name, s.Required)
		}
	}
	// tools/list is read into an assistant's context: keep it compact
	// (output schemas do not repeat the entity schema per tool).
	if b, _ := json.Marshal(res); len(b) > 34<<10 {
		t.Errorf("tools/list is %d bytes", len(b))
	}
	slices.Sort(got)
	if len(got) != len(want) {
		t.Errorf("tools = %v, want the seven", got)
	}
	// Allowed values are listed where the set is closed.
	desc := func(tool, param string) string {
		for _, tl := range res.Tools {
			if tl.Name == tool {
				b, _ := json.Marshal(tl.InputSchema)
				var s struct {
					Properties map[string]struct{ Description string } `json:"properties"`
				}
				json.Unmarshal(b, &s)
				return s.Properties[param].Description
			}
		}
		return ""
	}
	wantContains(t, desc("lookup_spell", "school"), "abjuration", "evocation", "transmutation")
	wantContains(t, desc("lookup_equipment", "type"), "weapon", "armor", "magic-item", "item", "all")
	wantContains(t, desc("lookup_rule", "rule_type"), "condition", "damage-type", "weapon-property", "alignment")
	wantContains(t, desc("lookup_creature", "size"), "tiny", "gargantuan")
	wantContains(t, desc("list_documents", "format"), "json", "text")
}

func TestLookupSpell_Fireball(t *testing.T) {
	h := newHarness(t)
	res := h.call(t, "lookup_spell", map[string]any{"name": "FIREBALL"})
	mustOK(t, res)
	out := decode[mcpserver.LookupOutput](t, res)
	if out.Count != 1 || len(out.Results) != 1 {
		t.Fatalf("count = %d, results = %d, want 1", out.Count, len(out.Results))
	}
	e := out.Results[0]
	if e.Name != "Fireball" || e.Kind != "spell" || e.URI != "lorekeeper://entity/open5e_v2:srd-2014:spell:fireball" {
		t.Errorf("entity = %s %s %s", e.Name, e.Kind, e.URI)
	}
	if e.DocumentKey != "srd-2014" || e.DocumentName != "System Reference Document 5.1" || e.Document != e.DocumentName || e.DocumentSource != "open5e_v2" {
		t.Errorf("document metadata = %q %q %q %q", e.DocumentKey, e.DocumentName, e.Document, e.DocumentSource)
	}
	s := e.Spell
	if s == nil {
		t.Fatal("no spell fields")
	}
	if s.Level != 3 || s.School != "evocation" || s.Components != "V, S, M" || s.DamageRoll != "8d6" ||
		s.SavingThrowAbility != "dexterity" || !slices.Equal(s.Classes, []string{"sorcerer", "wizard"}) ||
		s.Range != "150 feet" || s.Concentration || s.Ritual {
		t.Errorf("spell fields = %+v", s)
	}
	if e.SourceURL == "" || e.Permalink == "" || len(e.Licenses) == 0 {
		t.Errorf("missing source or attribution: %+v", e)
	}
	// Beside the card, the structured entity leaves out the texts the card
	// has (each fact once); detail=full has them too.
	if e.HigherLevel != "" || e.Description != "" {
		t.Errorf("default structured entity repeats the card's text: %q %q", e.Description, e.HigherLevel)
	}
	if !strings.Contains(text(res), "8d6 fire damage") {
		t.Errorf("card lacks the description:\n%s", text(res))
	}
	if full := decode[mcpserver.LookupOutput](t, h.call(t, "lookup_spell", map[string]any{"name": "FIREBALL", "detail": "full"})).Results[0]; full.HigherLevel == "" || full.Description == "" {
		t.Errorf("detail=full without the texts: %+v", full)
	}
	if out.Ranking != "structured" || out.NameMatch != "exact" {
		t.Errorf("ranking %q, name_match %q", out.Ranking, out.NameMatch)
	}
	// No semantic ranking ran: the key must be absent, not zero.
	r0 := raw(t, res)["results"].([]any)[0].(map[string]any)
	if _, ok := r0["similarity_score"]; ok {
		t.Errorf("similarity_score present without semantic ranking")
	}
	wantContains(t, text(res),
		"## Fireball", "*3rd-level evocation*", "**Casting Time:** 1 action", "**Range:** 150 feet",
		"**Components:** V, S, M (A tiny ball of bat guano and sulfur)", "**Duration:** instantaneous",
		"**Classes:** sorcerer, wizard", "**Damage:** 8d6 fire", "**Saving Throw:** Dexterity",
		"20-foot-radius sphere", "***At Higher Levels.***",
		"*Source: System Reference Document 5.1 (srd-2014, open5e_v2, 5e-2014) · lorekeeper://entity/open5e_v2:srd-2014:spell:fireball*")
}

func TestLookupCreature_StatBlocks(t *testing.T) {
	h := newHarness(t)
	t.Run("goblin", func(t *testing.T) {
		res := h.call(t, "lookup_creature", map[string]any{"name": "goblin", "documents": []string{"srd-5e"}})
		mustOK(t, res)
		out := decode[mcpserver.LookupOutput](t, res)
		if out.Count != 1 {
			t.Fatalf("count = %d", out.Count)
		}
		c := out.Results[0].Creature
		if c.ChallengeRating != 0.25 || c.ChallengeRatingText != "1/4" || c.ArmorClass != 15 || c.HitPoints != 7 ||
			c.AbilityScores["dexterity"] != 14 || c.AbilityModifiers["dexterity"] != 2 || c.AbilityModifiers["strength"] != -1 ||
			c.Skills["stealth"] != 6 || c.Speed["walk"] != 30 || c.HasLegendaryActions {
			t.Errorf("creature = %+v", c)
		}
		wantContains(t, text(res),
			"## Goblin", "*Small humanoid (goblinoid), neutral evil*", "**Armor Class** 15 (leather armor, shield)",
			"**Hit Points** 7 (2d6)", "**Speed** 30 ft.", "| STR | DEX | CON | INT | WIS | CHA |",
			"| 8 (-1) | 14 (+2) | 10 (+0) | 10 (+0) | 8 (-1) | 8 (-1) |", "**Skills** Stealth +6",
			"**Senses** darkvision 60 ft., passive Perception 9", "**Languages** Common, Goblin",
			"**Challenge** 1/4 (50 XP)", "### Actions", "***Scimitar.*** Melee Weapon Attack: +4 to hit")
		if strings.Contains(text(res), "Legendary Actions") {
			t.Errorf("goblin rendered with legendary actions")
		}
	})
	t.Run("adult red dragon", func(t *testing.T) {
		res := h.call(t, "lookup_creature", map[string]any{"name": "*red dragon", "cr_min": 10})
		mustOK(t, res)
		out := decode[mcpserver.LookupOutput](t, res)
		if out.Count != 1 || !out.Results[0].Creature.HasLegendaryActions || out.NameMatch != "pattern" {
			t.Fatalf("out = %+v", out)
		}
		wantContains(t, text(res),
			"*Huge dragon, chaotic evil*", "**Speed** 40 ft., climb 40 ft., fly 80 ft.",
			"| 27 (+8) | 10 (+0) | 25 (+7) | 16 (+3) | 13 (+1) | 21 (+5) |",
			"**Saving Throws** Dex +6, Con +13, Wis +7, Cha +11", "**Damage Immunities** fire",
			"**Senses** blindsight 60 ft., darkvision 120 ft., passive Perception 23", "**Challenge** 17 (18,000 XP)",
			"***Legendary Resistance (3/Day).***", "### Actions", "***Fire Breath.***", "### Legendary Actions", "***Wing Attack.***")
		if strings.Index(text(res), "### Actions") > strings.Index(text(res), "### Legendary Actions") {
			t.Errorf("legendary actions before actions")
		}
	})
	t.Run("lair actions", func(t *testing.T) {
		// No SRD creature in the Open5e snapshot carries lair actions, so
		// this case adds one block to the real dragon record.
		for _, e := range h.fake.entities {
			if e.GetSlug() == "adult-red-dragon" {
				e.Blocks = append(e.Blocks, &lkv1.TextBlock{Type: "lair_action", Name: "Magma Eruption", Text: "Magma erupts from a point on the ground."})
				t.Cleanup(func() { e.Blocks = e.Blocks[:len(e.Blocks)-1] })
			}
		}
		res := h.call(t, "lookup_creature", map[string]any{"name": "adult-red-dragon"})
		mustOK(t, res)
		out := decode[mcpserver.LookupOutput](t, res)
		if out.Count != 1 || !out.Results[0].Creature.HasLairActions || out.NameMatch != "slug" {
			t.Fatalf("out = %+v", out)
		}
		tx := text(res)
		wantContains(t, tx, "### Lair Actions", "***Magma Eruption.*** Magma erupts")
		if strings.Index(tx, "### Legendary Actions") > strings.Index(tx, "### Lair Actions") {
			t.Errorf("lair actions before legendary actions")
		}
	})
}

func TestLookupEquipment_Cards(t *testing.T) {
	h := newHarness(t)
	res := h.call(t, "lookup_equipment", map[string]any{"type": "weapon", "name": "longsword"})
	mustOK(t, res)
	out := decode[mcpserver.LookupOutput](t, res)
	if out.Count != 1 {
		t.Fatalf("count = %d", out.Count)
	}
	w := out.Results[0].Item
	if w.Weapon == nil || w.Weapon.DamageDice != "1d8" || w.Weapon.DamageType != "slashing" || w.Weapon.IsSimple ||
		!slices.Equal(w.Weapon.Properties, []string{"versatile"}) || w.CostGP == nil || *w.CostGP != 15 || *w.WeightLb != 3 {
		t.Errorf("weapon = %+v %+v", w, w.Weapon)
	}
	wantContains(t, text(res), "## Longsword", "*Weapon (martial melee)*", "**Cost:** 15 gp", "**Weight:** 3 lb.",
		"**Damage:** 1d8 slashing", "**Properties:** versatile (1d10)")

	res = h.call(t, "lookup_equipment", map[string]any{"item_type": "magic-item", "name": "bag of holding"})
	mustOK(t, res)
	out = decode[mcpserver.LookupOutput](t, res)
	if out.Count != 1 || out.Results[0].Item.Rarity != "uncommon" || !out.Results[0].Item.IsMagic || out.Results[0].Kind != "magic-item" {
		t.Fatalf("out = %+v", out)
	}
	wantContains(t, text(res), "## Bag of Holding", "*Wondrous item, uncommon*", "500 pounds", "lorekeeper://entity/open5e_v2:srd-2014:magic-item:bag-of-holding")

	// The query service filters by kind: the bag is no weapon.
	res = h.call(t, "lookup_equipment", map[string]any{"type": "weapon", "name": "bag of holding"})
	mustOK(t, res)
	if out := decode[mcpserver.LookupOutput](t, res); out.Count != 0 {
		t.Errorf("a weapon lookup found %d results", out.Count)
	}
}

func TestLookupRuleAndCharacterOption(t *testing.T) {
	h := newHarness(t)
	res := h.call(t, "lookup_rule", map[string]any{"rule_type": "condition", "name": "Grappled"})
	mustOK(t, res)
	out := decode[mcpserver.LookupOutput](t, res)
	if out.Count != 1 || out.Results[0].Kind != "condition" || out.Results[0].DocumentKey != "srd-2014" {
		t.Fatalf("out = %+v", out)
	}
	wantContains(t, text(res), "## Grappled", "*Condition*", "speed becomes 0")

	res = h.call(t, "lookup_character_option", map[string]any{"option_type": "feat", "name": "grappler", "documents": []string{"srd-5.2"}})
	mustOK(t, res)
	out = decode[mcpserver.LookupOutput](t, res)
	if out.Count != 1 || out.Results[0].CharacterOption == nil || out.Results[0].CharacterOption.Prerequisite == "" {
		t.Fatalf("out = %+v", out)
	}
	wantContains(t, text(res), "## Grappler", "*Feat*", "**Prerequisite:** Level 4+, Strength or Dexterity 13+",
		"- You have Advantage on attack rolls against a creature Grappled by you.", "(srd-2024, open5e_v2, 5e-2024)")
}

func TestLookup_Semantic(t *testing.T) {
	h := newHarness(t)
	res := h.call(t, "lookup_creature", map[string]any{"semantic_query": "sneaky small raiders"})
	mustOK(t, res)
	out := decode[mcpserver.LookupOutput](t, res)
	if out.Ranking != "hybrid" || out.Count != 2 {
		t.Fatalf("ranking %q count %d", out.Ranking, out.Count)
	}
	for i, e := range out.Results {
		if e.SimilarityScore == nil || *e.SimilarityScore < 0 || *e.SimilarityScore > 1 {
			t.Errorf("result %d: similarity_score = %v", i, e.SimilarityScore)
		}
	}
	if *out.Results[0].SimilarityScore < *out.Results[1].SimilarityScore {
		t.Errorf("not highest first")
	}
	wantContains(t, text(res), "similarity 0.900")

	t.Run("long query is a warning, not an error", func(t *testing.T) {
		res := h.call(t, "lookup_spell", map[string]any{"semantic_query": strings.Repeat("fire and flame ", 60)})
		mustOK(t, res)
		out := decode[mcpserver.LookupOutput](t, res)
		if len(out.Warnings) != 1 {
			t.Errorf("warnings = %v", out.Warnings)
		}
		wantContains(t, text(res), "> Warning: semantic_query is longer than 512 characters and was truncated")
	})

	t.Run("fallback is said", func(t *testing.T) {
		h.fake.mu.Lock()
		h.fake.semanticDown = true
		h.fake.mu.Unlock()
		t.Cleanup(func() { h.fake.mu.Lock(); h.fake.semanticDown = false; h.fake.mu.Unlock() })
		res := h.call(t, "lookup_spell", map[string]any{"semantic_query": "explosions"})
		mustOK(t, res)
		out := decode[mcpserver.LookupOutput](t, res)
		if out.Ranking != "keyword" || out.FallbackReason == "" || out.Results[0].SimilarityScore != nil {
			t.Errorf("out = %+v", out)
		}
		wantContains(t, text(res), "semantic ranking was unavailable (embedding model unavailable)", "ranked by keyword")
		wantContains(t, h.logs.String(), "semantic ranking fell back to keyword")
	})
}

func TestLookup_EmptyIsNotAnError(t *testing.T) {
	h := newHarness(t)
	for _, args := range []map[string]any{
		{"name": "Tarrasque"},
		{"documents": []string{}},
		{"documents": []string{"no-such-book"}},
	} {
		res := h.call(t, "lookup_creature", args)
		mustOK(t, res)
		m := raw(t, res)
		if r, ok := m["results"].([]any); !ok || len(r) != 0 {
			t.Errorf("%v: results = %#v, want []", args, m["results"])
		}
		if args["name"] != nil {
			wantContains(t, text(res), "No creature named 'Tarrasque'.")
		} else {
			wantContains(t, text(res), "No creatures matched")
		}
	}
	// documents=[] is nothing, documents absent is everything.
	res := h.call(t, "lookup_creature", nil)
	if out := decode[mcpserver.LookupOutput](t, res); out.Count != 2 {
		t.Errorf("no documents filter: count = %d, want 2", out.Count)
	}
}

// A name that matches nothing gets did-you-mean suggestions, in the text
// and the structured result, and is not an error.
func TestLookup_Suggestions(t *testing.T) {
	h := newHarness(t)
	res := h.call(t, "lookup_spell", map[string]any{"name": "firebal"})
	mustOK(t, res)
	out := decode[mcpserver.LookupOutput](t, res)
	if out.Count != 0 || len(out.Suggestions) == 0 || out.Suggestions[0].Name != "Fireball" || out.Suggestions[0].URI == "" || out.Suggestions[0].Score <= 0 {
		t.Fatalf("out = %+v, want no results and Fireball suggested", out)
	}
	wantContains(t, text(res), "No spell named 'firebal'. Did you mean Fireball (srd-2014)?")

	res = h.call(t, "lookup_creature", map[string]any{"name": "beholder"})
	mustOK(t, res)
	out = decode[mcpserver.LookupOutput](t, res)
	if out.Count != 0 || out.NotOpenContent != "Beholder" || len(out.Suggestions) == 0 {
		t.Fatalf("out = %+v, want no results, Beholder not open content, and suggestions", out)
	}
	wantContains(t, text(res), "No creature named 'beholder'. Beholder is not in any open-licensed document", "Nearest open content by description: ")
}

func TestSearch_NotOpenContent(t *testing.T) {
	h := newHarness(t)
	res := h.call(t, "search_dnd_content", map[string]any{"query": "beholder"})
	mustOK(t, res)
	if out := decode[mcpserver.SearchOutput](t, res); out.NotOpenContent != "Beholder" {
		t.Errorf("not_open_content = %q, want Beholder", out.NotOpenContent)
	}
	wantContains(t, text(res), "Beholder is not in any open-licensed document")
}

func TestSearch_Grouped(t *testing.T) {
	h := newHarness(t)
	res := h.call(t, "search_dnd_content", map[string]any{"query": "fire"})
	mustOK(t, res)
	out := decode[mcpserver.SearchOutput](t, res)
	var types []string
	for _, g := range out.Groups {
		types = append(types, g.EntityType)
		if g.Count != len(g.Results) || g.Count == 0 {
			t.Errorf("group %s: count %d, %d results", g.EntityType, g.Count, len(g.Results))
		}
		for _, e := range g.Results {
			if e.SimilarityScore == nil || e.URI == "" || e.DocumentKey == "" {
				t.Errorf("group %s: %+v", g.EntityType, e)
			}
		}
	}
	// "fire" is in Fireball and in the red dragon's description text? Only
	// in names and descriptions the fake indexes: Fireball.
	if !slices.Contains(types, "spell") || out.Total == 0 || out.Ranking != "hybrid" {
		t.Errorf("groups = %v, total %d, ranking %s", types, out.Total, out.Ranking)
	}
	wantContains(t, text(res), "### Spell (1)", "**Fireball** — 3rd-level evocation", "lorekeeper://entity/open5e_v2:srd-2014:spell:fireball")

	res = h.call(t, "search_dnd_content", map[string]any{"query": "grappled", "semantic": false})
	mustOK(t, res)
	out = decode[mcpserver.SearchOutput](t, res)
	if out.Ranking != "keyword" {
		t.Errorf("ranking = %s", out.Ranking)
	}
	for _, g := range out.Groups {
		for _, e := range g.Results {
			if e.SimilarityScore != nil {
				t.Errorf("keyword search carries a similarity score")
			}
		}
	}

	res = h.call(t, "search_dnd_content", map[string]any{"query": "fire", "documents": []string{}})
	mustOK(t, res)
	out = decode[mcpserver.SearchOutput](t, res)
	if out.Total != 0 || out.Groups == nil || len(out.Groups) != 0 {
		t.Errorf("documents=[]: %+v", out)
	}
	wantContains(t, text(res), `Nothing matched "fire"`)

	h.fake.mu.Lock()
	h.fake.semanticDown = true
	h.fake.mu.Unlock()
	res = h.call(t, "search_dnd_content", map[string]any{"query": "fire"})
	wantContains(t, text(res), "semantic ranking was unavailable (vector index unavailable)")
}

func TestListDocuments(t *testing.T) {
	h := newHarness(t)
	res := h.call(t, "list_documents", nil)
	mustOK(t, res)
	out := decode[mcpserver.DocumentsOutput](t, res)
	if out.Count != 3 || out.Documents[0].DocumentKey != "srd-2014" || out.Documents[0].EntityCount != 7 ||
		out.Documents[0].EntityTypes["creature"] != 2 || out.Documents[0].SourceAPI != "open5e_v2" ||
		out.Documents[0].Publisher != "Wizards of the Coast" || out.Documents[0].License == "" {
		t.Fatalf("out = %+v", out)
	}
	// format=json: the text is the same list, as parseable JSON.
	jres := h.call(t, "list_documents", map[string]any{"format": "json"})
	mustOK(t, jres)
	var fromText mcpserver.DocumentsOutput
	if err := json.Unmarshal([]byte(text(jres)), &fromText); err != nil || fromText.Count != 3 {
		t.Errorf("json text does not parse: %v", err)
	}

	// By default (and format=text) the text is a table: the JSON is the
	// structured result's alone, not said twice.
	if json.Valid([]byte(text(res))) {
		t.Errorf("the default text is JSON, the structured result said twice:\n%s", text(res))
	}
	res = h.call(t, "list_documents", map[string]any{"format": "text"})
	mustOK(t, res)
	lines := strings.Split(strings.TrimSpace(text(res)), "\n")
	header := lines[2]
	wantContains(t, header, "KEY", "NAME", "SOURCE", "ENTITIES")
	wantContains(t, header, "LICENCE")
	col := strings.Index(header, "SOURCE")
	for _, l := range lines[3 : 3+out.Count] {
		if !strings.HasPrefix(l[col:], "open5e_v2") {
			t.Errorf("columns not aligned:\n%s\n%s", header, l)
		}
	}
	// Each notice once, after the documents that carry it.
	var noticed []string
	for _, d := range out.Documents {
		if d.Notice != "" {
			noticed = append(noticed, d.DocumentKey)
		}
	}
	if len(noticed) == 0 {
		t.Fatal("no document carries a notice")
	}
	wantContains(t, text(res), "Notices (OGL section 15, attributions):\n- "+strings.Join(noticed, ", ")+": "+out.Documents[0].Notice)
	if n := strings.Count(text(res), out.Documents[0].Notice); n != 1 {
		t.Errorf("the SRD's notice is said %d times, want once", n)
	}

	res = h.call(t, "list_documents", map[string]any{"source": "orcbrew"})
	mustOK(t, res)
	if got := strings.TrimSpace(text(res)); got != "No documents are loaded." {
		t.Errorf("empty text = %q", got)
	}
	if out := decode[mcpserver.DocumentsOutput](t, res); out.Count != 0 || out.Documents == nil {
		t.Errorf("empty out = %+v", out)
	}
}

func TestResourceTemplate_Entity(t *testing.T) {
	h := newHarness(t)
	tmpls, err := h.cs.ListResourceTemplates(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, tm := range tmpls.ResourceTemplates {
		uris = append(uris, tm.URITemplate)
	}
	if !slices.Equal(uris, []string{"lorekeeper://document/{source}/{key}", "lorekeeper://document/{source}/{key}/{page}", "lorekeeper://entity/{key}"}) {
		t.Fatalf("templates = %+v", tmpls.ResourceTemplates)
	}
	for _, uri := range []string{
		"lorekeeper://entity/open5e_v2:srd-2014:creature:goblin",
		"lorekeeper://entity/open5e_v2%3Asrd-2014%3Acreature%3Agoblin", // as a client expands {key}
	} {
		res, err := h.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			t.Fatalf("%s: %v", uri, err)
		}
		if len(res.Contents) != 2 {
			t.Fatalf("contents = %d, want markdown and JSON", len(res.Contents))
		}
		md, js := res.Contents[0], res.Contents[1]
		if md.MIMEType != "text/markdown" || js.MIMEType != "application/json" || md.URI != uri {
			t.Errorf("mime types %q %q, uri %q", md.MIMEType, js.MIMEType, md.URI)
		}
		wantContains(t, md.Text, "## Goblin", "**Challenge** 1/4 (50 XP)")
		var e mcpserver.Entity
		if err := json.Unmarshal([]byte(js.Text), &e); err != nil || e.Name != "Goblin" || e.Creature == nil || e.DocumentKey != "srd-2014" {
			t.Errorf("json = %v %+v", err, e)
		}
		if got := h.fake.last().(*lkv1.GetEntityRequest).GetKey(); got != "open5e_v2:srd-2014:creature:goblin" {
			t.Errorf("GetEntity key = %q", got)
		}
	}
	// A URI from a tool result reads back.
	out := decode[mcpserver.LookupOutput](t, h.call(t, "lookup_spell", map[string]any{"name": "fireball"}))
	if _, err := h.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: out.Results[0].URI}); err != nil {
		t.Errorf("reading %s: %v", out.Results[0].URI, err)
	}
	_, err = h.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "lorekeeper://entity/open5e_v2:srd-2014:spell:wish"})
	if err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("missing entity: err = %v", err)
	}
}

func TestLookup_Alternates(t *testing.T) {
	h := newHarness(t)
	h.fake.alternates = map[string][]*lkv1.Alternate{"open5e_v2:srd-2014:spell:fireball": {{
		Key: "open5e_v2:srd-2024:spell:fireball", Uri: "lorekeeper://entity/open5e_v2:srd-2024:spell:fireball",
		DocumentKey: "srd-2024", DocumentName: "System Reference Document 5.2", GameSystem: "5e-2024",
	}}}
	res := h.call(t, "lookup_spell", map[string]any{"name": "fireball"})
	mustOK(t, res)
	out := decode[mcpserver.LookupOutput](t, res)
	if a := out.Results[0].Alternates; len(a) != 1 || a[0].DocumentKey != "srd-2024" || a[0].URI != "lorekeeper://entity/open5e_v2:srd-2024:spell:fireball" {
		t.Errorf("alternates = %+v", a)
	}
	wantContains(t, text(res), "*Also in: System Reference Document 5.2 (srd-2024) · lorekeeper://entity/open5e_v2:srd-2024:spell:fireball*")
}
