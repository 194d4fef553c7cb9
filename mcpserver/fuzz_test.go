package mcpserver_test

import (
	"context"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lorekeeper.dev/mcpserver"
)

func FuzzChallengeRating(f *testing.F) {
	for _, s := range []string{`0.25`, `"1/4"`, `"1/8"`, `"30"`, `5`, `"a lot"`, `"1/0"`, `null`, `"  1 / 2 "`, `true`, `"1e400"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var c mcpserver.ChallengeRating
		if err := json.Unmarshal([]byte(in), &c); err != nil {
			return
		}
		// Whatever parses as a plain number means that number.
		var n float64
		if err := json.Unmarshal([]byte(in), &n); err == nil && float64(c) != n {
			t.Errorf("%s: got %v, want %v", in, float64(c), n)
		}
		var s string
		if err := json.Unmarshal([]byte(in), &s); err == nil {
			if v, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil && float64(c) != v && !math.IsNaN(v) {
				t.Errorf("%q: got %v, want %v", s, float64(c), v)
			}
		}
	})
}

// FuzzToolArguments sends arbitrary strings as the free-text and
// closed-set arguments: every call must end in a result (success or an
// error result), never a protocol error, a panic or a leaked internal.
func FuzzToolArguments(f *testing.F) {
	for _, s := range []string{"", "fire*", "Evocation", "magic_items", "1/4", "%", "\x00", "weapon,armor", "💥", strings.Repeat("a", 300)} {
		f.Add(s)
	}
	h := newHarness(f)
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return // JSON would replace the bytes; nothing new to learn
		}
		calls := []struct {
			tool string
			args map[string]any
		}{
			{"lookup_spell", map[string]any{"name": s, "school": s, "casting_time": s, "class_key": s}},
			{"lookup_creature", map[string]any{"cr": s, "type": s}},
			{"lookup_equipment", map[string]any{"type": s, "rarity": s, "requires_attunement": s}},
			{"lookup_character_option", map[string]any{"type": s, "parent": s}},
			{"lookup_rule", map[string]any{"rule_type": s, "section": s}},
			{"search_dnd_content", map[string]any{"query": s, "entity_types": []string{s}, "documents": []string{s}}},
			{"list_documents", map[string]any{"source": s, "format": s}},
		}
		for _, c := range calls {
			res, err := h.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
			if err != nil {
				t.Fatalf("%s(%q): protocol error %v", c.tool, s, err)
			}
			if res.IsError && strings.Contains(text(res), "goroutine") {
				t.Fatalf("%s(%q): %s", c.tool, s, text(res))
			}
		}
	})
}

// FuzzPartyLevels: plan_encounter's party_levels is parsed into 1 to 12
// levels or refused; a party it accepts with levels 1-20 has a budget
// between the lowest and highest rows of the table.
func FuzzPartyLevels(f *testing.F) {
	for _, s := range []string{"3,3,4,5", "1", "20 20", "", "3;;4", "-1", "99999999999999999999", "1,2,3,4,5,6,7,8,9,10,11,12,13"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		levels, err := mcpserver.ParseLevels(in)
		if err != nil {
			return
		}
		if len(levels) == 0 || len(levels) > 12 {
			t.Fatalf("%q: %d levels accepted", in, len(levels))
		}
		budget, err := mcpserver.EncounterBudget(levels, "moderate")
		inRange := true
		for _, l := range levels {
			inRange = inRange && l >= 1 && l <= 20
		}
		switch {
		case !inRange && err == nil:
			t.Errorf("%q: levels %v outside 1-20 accepted", in, levels)
		case inRange && (err != nil || budget < 75*len(levels) || budget > 13200*len(levels)):
			t.Errorf("%q: budget %d, %v", in, budget, err)
		}
	})
}
