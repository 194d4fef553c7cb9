package open5e_test

import (
	"fmt"
	"testing"

	"lorekeeper.dev/ingest/open5e"
)

// A creature action's usage limit and legendary cost as its name gives
// them win over contradicting structured values, with a correction; agreeing
// values are left alone.
func TestNormalizeRecord_usageFromName(t *testing.T) {
	for _, c := range []struct {
		name, actionType, usage string
		cost                    int
		wantUsage               string
		wantCost                int32
		wantFix                 string
	}{
		{"Fire Breath (Recharge 5–6)", "ACTION", `{"type": "RECHARGE_ON_ROLL", "param": 6}`, 1, "RECHARGE_ON_ROLL 5", 0, "usage"},
		{"Fire Breath (Recharge 5-6)", "ACTION", `{"type": "RECHARGE_ON_ROLL", "param": 5}`, 1, "RECHARGE_ON_ROLL 5", 0, ""},
		{"Teleport (Recharge 4-6)", "ACTION", `{"type": "RECHARGE", "param": 4}`, 1, "RECHARGE 4", 0, ""},
		{"Arcane Doubling (2/Day)", "ACTION", `{"type": "PER_DAY", "param": 144}`, 1, "PER_DAY 2", 0, "usage"},
		{"Wing Attack (Costs 2 Actions)", "LEGENDARY_ACTION", `null`, 3, "", 2, "legendary_cost"},
		{"Wing Attack", "LEGENDARY_ACTION", `null`, 2, "", 2, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := fmt.Sprintf(`{"key": "test_beast", "name": "Beast", "document": {"key": "test"}, "actions": [
				{"name": %q, "desc": "It acts.", "action_type": %q, "usage_limits": %s, "legendary_action_cost": %d, "attacks": []}]}`,
				c.name, c.actionType, c.usage, c.cost)
			e, err := open5e.NormalizeRecord(endpoint("v2", "creatures"), []byte(rec), nil)
			if err != nil {
				t.Fatal(err)
			}
			b := e.GetBlocks()[0]
			got := ""
			if u := b.GetUsage(); u != nil {
				got = fmt.Sprintf("%s %d", u.GetType(), u.GetParam())
			}
			if got != c.wantUsage || b.GetLegendaryCost() != c.wantCost {
				t.Errorf("usage %q cost %d, want %q %d", got, b.GetLegendaryCost(), c.wantUsage, c.wantCost)
			}
			fix := ""
			if fs := e.GetCorrections(); len(fs) == 1 {
				fix = fs[0].GetField()
			} else if len(fs) > 1 {
				t.Errorf("corrections %v", fs)
			}
			if fix != c.wantFix {
				t.Errorf("correction %q, want %q", fix, c.wantFix)
			}
		})
	}
}
