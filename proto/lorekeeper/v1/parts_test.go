package lorekeeperv1_test

import (
	"reflect"
	"testing"

	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

func TestTextParts(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []lkv1.TextPart
	}{
		{"none", "Roll a d20. **Not** a heading, mid-line.", nil},
		{
			"bold lead-ins",
			"Intro.\n\n**Surprise.** If a combatant is surprised...\n\n**Initiative Order.** A combatant's check...\nMore.",
			[]lkv1.TextPart{
				{Name: "Surprise", Text: "**Surprise.** If a combatant is surprised...", Level: lkv1.BoldLevel},
				{Name: "Initiative Order", Text: "**Initiative Order.** A combatant's check...\nMore.", Level: lkv1.BoldLevel},
			},
		},
		{
			"a bold line heads the paragraphs after it",
			"**Surprise**\n\nA band of adventurers...\n\nThe GM determines...",
			[]lkv1.TextPart{{Name: "Surprise", Text: "**Surprise**\n\nA band of adventurers...\n\nThe GM determines...", Level: lkv1.BoldLevel}},
		},
		{
			"markdown headings hold their bold parts",
			"## Dropping to 0\n\n### Death Saving Throws\n\nRoll a d20.\n\n***Rolling 1 or 20.*** When you...\n\n### Stabilizing\n\nThe best way...\n\n## Next",
			[]lkv1.TextPart{
				{Name: "Dropping to 0", Text: "## Dropping to 0\n\n### Death Saving Throws\n\nRoll a d20.\n\n***Rolling 1 or 20.*** When you...\n\n### Stabilizing\n\nThe best way...", Level: 2},
				{Name: "Death Saving Throws", Text: "### Death Saving Throws\n\nRoll a d20.\n\n***Rolling 1 or 20.*** When you...", Level: 3},
				{Name: "Rolling 1 or 20", Text: "***Rolling 1 or 20.*** When you...", Level: lkv1.BoldLevel},
				{Name: "Stabilizing", Text: "### Stabilizing\n\nThe best way...", Level: 3},
				{Name: "Next", Text: "## Next", Level: 2},
			},
		},
		{"italic bold lead-in", "_**Crowbar.**_ Using a crowbar...", []lkv1.TextPart{{Name: "Crowbar", Text: "_**Crowbar.**_ Using a crowbar...", Level: lkv1.BoldLevel}}},
		{"long bold runs are emphasis", "**You can't take a reaction until the start of your next turn.** Then...", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := lkv1.TextParts(tt.text); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("TextParts:\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}
