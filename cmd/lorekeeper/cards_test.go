package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lorekeeper.dev/embedder/badgerstore"
	"lorekeeper.dev/mcpserver"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
	"lorekeeper.dev/query"
)

// The cards a DM runs a fight from, through the MCP tools over the whole
// bundled snapshot: the real query service over real Badger (no vectors:
// these are name and filter lookups) and the real MCP SDK client. One
// subtest per row of issue #26's table.

// cardsSession is an MCP session over the whole snapshot.
func cardsSession(t *testing.T) *mcp.ClientSession {
	t.Helper()
	return storeSession(t, snapshotStore(t))
}

// storeSession is an MCP session over st, in process.
func storeSession(t *testing.T, st *badgerstore.Store) *mcp.ClientSession {
	t.Helper()
	svc := query.NewService(st, nil, &query.Options{Version: "test"})
	srv := mcpserver.New(lkv1.NewQueryServiceClient(query.NewInProcessConn(svc, nil)), &mcpserver.Options{Version: "test"})
	ct, sst := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(context.Background(), sst, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "cards-test", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// lookup calls a lookup tool and returns its markdown and structured result.
func lookup(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) (string, mcpserver.LookupOutput) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: %v", tool, args, err)
	}
	var md strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			md.WriteString(tc.Text)
		}
	}
	if res.IsError {
		t.Fatalf("%s %v: tool error: %s", tool, args, md.String())
	}
	var out mcpserver.LookupOutput
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s: structured content: %v", tool, err)
	}
	return md.String(), out
}

func mustContain(t *testing.T, s string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(s, w) {
			t.Errorf("missing %q in:\n%s", w, s)
		}
	}
}

func mustNotContain(t *testing.T, s string, bad ...string) {
	t.Helper()
	for _, w := range bad {
		if strings.Contains(s, w) {
			t.Errorf("has %q in:\n%s", w, s)
		}
	}
}

func only(t *testing.T, out mcpserver.LookupOutput) mcpserver.Entity {
	t.Helper()
	if len(out.Results) != 1 {
		t.Fatalf("%d results, want 1: %+v", len(out.Results), out.Results)
	}
	return out.Results[0]
}

func TestCards_issueTable(t *testing.T) {
	cs := cardsSession(t)

	t.Run("adult red dragon: recharge, legendary cost and count", func(t *testing.T) {
		md, out := lookup(t, cs, "lookup_creature", map[string]any{"name": "adult red dragon", "documents": []string{"srd-2014"}})
		mustContain(t, md, "***Fire Breath (Recharge 5–6).***", "***Wing Attack (Costs 2 Actions).***", "can take 3 legendary actions")
		e := only(t, out)
		var usage, cost bool
		for _, b := range e.Blocks {
			usage = usage || (b.Name == "Fire Breath" && b.Usage == "Recharge 5–6")
			cost = cost || (b.Name == "Wing Attack" && b.Type == "legendary_action" && b.Cost == 2)
		}
		if !usage || !cost || e.Creature.LegendaryPerRound != 3 {
			t.Errorf("structured: recharge %v, wing attack cost %v, legendary actions a round %d", usage, cost, e.Creature.LegendaryPerRound)
		}
	})

	t.Run("srd-2024 lich: initiative", func(t *testing.T) {
		md, out := lookup(t, cs, "lookup_creature", map[string]any{"name": "lich", "documents": []string{"srd-2024"}})
		mustContain(t, md, "**Initiative** +17 (27)")
		if ib := only(t, out).Creature.InitiativeBonus; ib == nil || *ib != 17 {
			t.Errorf("initiative_bonus %v, want 17", ib)
		}
	})

	t.Run("hand crossbow and longbow: ranged, with their range", func(t *testing.T) {
		for name, rng := range map[string]string{"crossbow, hand": "30/120 ft.", "longbow": "150/600 ft."} {
			md, out := lookup(t, cs, "lookup_equipment", map[string]any{"name": name, "documents": []string{"srd-2014"}})
			mustContain(t, md, "(martial ranged)", "**Range:** "+rng)
			mustNotContain(t, md, "martial melee")
			for _, e := range out.Results {
				if w := e.Item.Weapon; w == nil || !w.IsRanged || w.RangeNormal == 0 || w.RangeLong == 0 {
					t.Errorf("%s: weapon %+v", e.Key, w)
				}
			}
		}
	})

	t.Run("cure wounds and healing word: healing, not damage", func(t *testing.T) {
		for name, roll := range map[string]string{"cure wounds": "2d8", "healing word": "2d4"} {
			md, out := lookup(t, cs, "lookup_spell", map[string]any{"name": name, "game_system": "2024"})
			mustContain(t, md, "**Healing:** "+roll)
			mustNotContain(t, md, "**Damage:**")
			e := only(t, out)
			if e.Spell.DamageRoll != "" || e.Spell.HealingRoll != roll {
				t.Errorf("%s: damage_roll %q, healing_roll %q", name, e.Spell.DamageRoll, e.Spell.HealingRoll)
			}
			sum, _ := lookup(t, cs, "lookup_spell", map[string]any{"name": name, "game_system": "2024", "detail": "summary"})
			mustContain(t, sum, "heals "+roll)
			mustNotContain(t, sum, " .", "· "+roll)
		}
	})

	t.Run("wall of ice: cold only, not found by psychic", func(t *testing.T) {
		md, out := lookup(t, cs, "lookup_spell", map[string]any{"name": "wall of ice", "game_system": "2024"})
		mustContain(t, md, "**Damage:** 10d6 cold")
		if got := only(t, out).Spell.DamageTypes; len(got) != 1 || got[0] != "cold" {
			t.Errorf("damage_types %v", got)
		}
		_, out = lookup(t, cs, "lookup_spell", map[string]any{"name": "wall of ice", "game_system": "2024", "damage_type": "psychic"})
		if len(out.Results) != 0 {
			t.Errorf("damage_type psychic finds %v", out.Results[0].Key)
		}
		_, out = lookup(t, cs, "lookup_spell", map[string]any{"name": "prismatic wall", "game_system": "2024"})
		for _, d := range only(t, out).Spell.DamageTypes {
			if d == "force" {
				t.Error("prismatic wall deals force damage")
			}
		}
	})

	t.Run("alarm: casting time in words", func(t *testing.T) {
		md, out := lookup(t, cs, "lookup_spell", map[string]any{"name": "alarm"})
		mustContain(t, md, "**Casting Time:** 1 minute")
		mustNotContain(t, md, "1minute")
		for _, e := range out.Results {
			if strings.Contains(e.Spell.CastingTime, "1minute") {
				t.Errorf("%s: casting_time %q", e.Key, e.Spell.CastingTime)
			}
		}
	})

	t.Run("longsword: one per book", func(t *testing.T) {
		// Without documents the other book's copy is an alternate (many
		// books, one name); each book's is one weapon, item merged in.
		_, out := lookup(t, cs, "lookup_equipment", map[string]any{"name": "longsword"})
		books := map[string]int{}
		for _, e := range out.Results {
			books[e.DocumentKey]++
			for _, a := range e.Alternates {
				books[a.DocumentKey]++
			}
		}
		if len(out.Results) != 1 || len(books) != 2 || books["srd-2014"] != 1 || books["srd-2024"] != 1 {
			t.Errorf("%d longsword results, by book (alternates included) %v", len(out.Results), books)
		}
		for _, doc := range []string{"srd-2014", "srd-2024"} {
			_, one := lookup(t, cs, "lookup_equipment", map[string]any{"name": "longsword", "documents": []string{doc}})
			if len(one.Results) != 1 {
				t.Errorf("%s: %d longswords, want one", doc, len(one.Results))
			}
			for _, e := range one.Results {
				w := e.Item.Weapon
				if e.Kind != "weapon" || w == nil || w.DamageDice != "1d8" || e.Item.CostGP == nil || *e.Item.CostGP != 15 || e.Item.WeightLb == nil {
					t.Errorf("%s: %s, weapon %+v, cost %v, weight %v", e.Key, e.Kind, w, e.Item.CostGP, e.Item.WeightLb)
				}
			}
		}
		md, _ := lookup(t, cs, "lookup_equipment", map[string]any{"name": "chain mail", "documents": []string{"srd-2014"}})
		mustContain(t, md, "**Cost:** 75 gp", "**Weight:** 55 lb.", "**Armor Class:** 16")
	})

	t.Run("vorpal sword, flame tongue, +1 longsword, studded leather: the family", func(t *testing.T) {
		for _, c := range []struct {
			name string
			want []string
		}{
			{"vorpal sword", []string{"Vorpal Sword (Longsword)", "Vorpal Sword (Scimitar)", "Vorpal Longsword", "Vorpal Greatsword"}},
			{"flame tongue", []string{"Flame Tongue (Rapier)", "Flame Tongue Dagger", "Flame Tongue Longsword"}},
			{"+1 longsword", []string{"Longsword (+1)"}},
			{"studded leather", []string{"Studded Leather Armor", "Studded Leather Armor (+1)"}},
		} {
			md, out := lookup(t, cs, "lookup_equipment", map[string]any{"name": c.name})
			have := map[string]bool{}
			for _, e := range out.Results {
				have[e.Name] = true
			}
			for _, v := range out.Variants {
				have[v.Name] = true
				if v.URI == "" || v.DocumentKey == "" {
					t.Errorf("%s: variant %+v", c.name, v)
				}
			}
			for _, w := range c.want {
				if !have[w] {
					t.Errorf("%s: %q neither a result nor a variant (results %d, variants %v)", c.name, w, len(out.Results), out.Variants)
				}
				if !strings.Contains(md, w) {
					t.Errorf("%s: the text does not name %q", c.name, w)
				}
			}
		}
	})

	t.Run("magic items and acid: no cost of 0", func(t *testing.T) {
		md, out := lookup(t, cs, "lookup_equipment", map[string]any{"type": "item", "cost_max": 1, "documents": []string{"srd-2014"}, "limit": 50, "detail": "full"})
		for _, e := range out.Results {
			if e.Item.CostGP == nil || *e.Item.CostGP > 1 || *e.Item.CostGP == 0 {
				t.Errorf("%s: cost %v matched cost_max 1", e.Key, e.Item.CostGP)
			}
		}
		mustNotContain(t, md, "**Acid**", " 0 gp")
		md, _ = lookup(t, cs, "lookup_equipment", map[string]any{"name": "wings of flying", "documents": []string{"srd-2014"}})
		mustNotContain(t, md, "0 gp", "0 lb.")
	})

	t.Run("2024 stat blocks and potions: no source markup", func(t *testing.T) {
		for _, c := range []struct{ name, doc string }{{"gelatinous cube", "srd-2024"}, {"behir", "srd-2024"}, {"kraken", "srd-2024"}, {"potion of healing", "srd-2014"}} {
			tool := "lookup_creature"
			if c.name == "potion of healing" {
				tool = "lookup_equipment"
			}
			md, _ := lookup(t, cs, tool, map[string]any{"name": c.name, "documents": []string{c.doc}})
			mustNotContain(t, md, "|XPHB|", `\n`)
		}
		md, _ := lookup(t, cs, "lookup_creature", map[string]any{"name": "gelatinous cube", "documents": []string{"srd-2024"}})
		mustContain(t, md, "have Total Cover", "(see the Ooze Cube trait)")
		md, _ = lookup(t, cs, "lookup_equipment", map[string]any{"name": "potion of healing", "documents": []string{"srd-2014"}})
		mustContain(t, md, "\n| Healing          | Common    | 2d4 + 2     |")
	})

	t.Run("summaries: each fact once", func(t *testing.T) {
		for _, name := range []string{"chain mail", "dagger"} {
			md, _ := lookup(t, cs, "lookup_equipment", map[string]any{"name": name, "documents": []string{"srd-2014"}, "detail": "summary"})
			for _, l := range strings.Split(md, "\n") {
				if !strings.HasPrefix(l, "- **") {
					continue
				}
				seen := map[string]bool{}
				for _, f := range strings.FieldsFunc(l, func(r rune) bool { return r == '·' || r == ',' || r == '—' }) {
					f = strings.TrimSpace(f)
					if seen[f] && f != "" {
						t.Errorf("%q twice in %q", f, l)
					}
					seen[f] = true
				}
			}
		}
	})

	t.Run("2024 weapons mastery, shield +2, paladin table", func(t *testing.T) {
		md, out := lookup(t, cs, "lookup_equipment", map[string]any{"name": "handaxe", "documents": []string{"srd-2024"}})
		mustContain(t, md, "**Mastery:** Vex")
		for _, e := range out.Results {
			if w := e.Item.Weapon; w == nil || w.Mastery != "vex" || strings.Contains(strings.Join(w.Properties, ","), "vex") {
				t.Errorf("%s: weapon %+v", e.Key, w)
			}
		}
		md, out = lookup(t, cs, "lookup_equipment", map[string]any{"name": "shield", "documents": []string{"srd-2024"}})
		mustContain(t, md, "*Shield*", "**Armor Class:** +2")
		mustNotContain(t, md, "Armor (heavy)")
		for _, e := range out.Results {
			if a := e.Item.Armor; a != nil && a.Category != "shield" {
				t.Errorf("%s: armor category %q", e.Key, a.Category)
			}
		}
		md, _ = lookup(t, cs, "lookup_character_option", map[string]any{"name": "paladin", "type": "class", "documents": []string{"srd-2024"}})
		mustContain(t, md, "***Core Paladin Traits.***\n\n|||\n|---|---|")
		mustNotContain(t, md, "***Core Paladin Traits.*** |")
	})
}

// lorekeeper get prints the card MCP shows for the same entity (the
// resource's markdown), stat line and all.
func TestGet_printsTheMCPCard(t *testing.T) {
	st := snapshotStore(t, lkv1.Kind_KIND_SPELL, lkv1.Kind_KIND_CREATURE)
	node := startQueryNodes(t, st, 1)[0]
	cs := storeSession(t, st)
	for _, key := range []string{"open5e_v2:srd-2014:spell:fireball", "open5e_v2:srd-2014:creature:adult-red-dragon"} {
		var out, errOut strings.Builder
		if err := runGet(context.Background(), []string{"--grpc-addr", node.addr, key}, &out, &errOut); err != nil {
			t.Fatalf("get %s: %v (%s)", key, err, errOut.String())
		}
		res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: lkv1.EntityURI(key)})
		if err != nil {
			t.Fatal(err)
		}
		if out.String() != res.Contents[0].Text {
			t.Errorf("get %s prints:\n%s\nMCP shows:\n%s", key, out.String(), res.Contents[0].Text)
		}
	}
	var out, errOut strings.Builder
	if err := runGet(context.Background(), []string{"--grpc-addr", node.addr, "open5e_v2:srd-2014:spell:fireball"}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	mustContain(t, out.String(), "*3rd-level evocation*", "**Casting Time:** 1 action", "**Range:** 150 feet",
		"**Components:** V, S, M", "**Damage:** 8d6 fire", "**Saving Throw:** Dexterity", "*Source: System Reference Document 5.1")
}
