package mcpserver

import (
	"strings"
	"testing"
)

// compare_editions lists a difference in every field the cards show: the
// 2024 Longsword's mastery, the 2024 dragon's initiative, the weapons'
// properties; and none between two versions that print the same.
func TestDifferences_everyFieldShown(t *testing.T) {
	byKey := map[string]*Entity{}
	for _, p := range snapshot(t) {
		switch p.GetKey() {
		case "open5e_v2:srd-2014:weapon:longsword", "open5e_v2:srd-2024:weapon:longsword",
			"open5e_v2:srd-2014:creature:adult-red-dragon", "open5e_v2:srd-2024:creature:adult-red-dragon",
			"open5e_v2:srd-2014:weapon:dagger", "open5e_v2:srd-2024:weapon:dagger":
			e := entityFromProto(p, "")
			byKey[p.GetKey()] = &e
		}
	}
	diff := func(a, b string) string {
		var out []string
		for _, d := range differences(byKey["open5e_v2:srd-2014:"+a], byKey["open5e_v2:srd-2024:"+b]) {
			out = append(out, d.field+": "+d.old+" → "+d.new)
		}
		return strings.Join(out, "\n")
	}
	for _, tc := range []struct{ a, b, want string }{
		{"weapon:longsword", "weapon:longsword", "mastery: (none) → Sap"},
		{"weapon:dagger", "weapon:dagger", "mastery: (none) → Nick"},
		{"creature:adult-red-dragon", "creature:adult-red-dragon", "initiative: (none) → +12 (22)"},
	} {
		if got := diff(tc.a, tc.b); !strings.Contains(got, tc.want) {
			t.Errorf("%s: differences\n%s\nlack %q", tc.a, got, tc.want)
		}
	}
	if got := differences(byKey["open5e_v2:srd-2014:weapon:dagger"], byKey["open5e_v2:srd-2014:weapon:dagger"]); len(got) != 0 {
		t.Errorf("a card differs from itself: %v", got)
	}
}
