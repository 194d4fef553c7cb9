package open5e_test

import (
	"testing"

	"lorekeeper.dev/ingest/ingesttest"
	"lorekeeper.dev/ingest/open5e"
)

// A resync of weapons, armor and items publishes one entity per SRD weapon
// and armor per book: the weapon or armor, with its item twin's cost and
// weight, and no item of the same thing.
func TestFetcher_Sync_itemTwins(t *testing.T) {
	js := ingesttest.JetStream(t, nil)
	up := newUpstream(t)
	f := fetcher(t, js, up.srv.URL, &open5e.Options{Endpoints: endpoints("v2/weapons", "v2/armor", "v2/items")})
	mustSync(t, f)
	byKey := map[string]bool{}
	for _, ev := range events(t, js, 1) {
		e := ev.GetUpsert()
		byKey[e.GetKey()] = true
		switch e.GetKey() {
		case "open5e_v2:srd-2014:weapon:longsword", "open5e_v2:srd-2024:weapon:longsword":
			if e.GetItem().GetCostGp() != 15 || e.GetItem().GetWeightLb() != 3 || e.GetItem().GetWeapon().GetDamageDice() != "1d8" {
				t.Errorf("%s: %v", e.GetKey(), e.GetItem())
			}
		case "open5e_v2:srd-2014:armor:studded-leather":
			if e.GetItem().GetCostGp() != 45 || e.GetItem().GetWeightLb() != 13 {
				t.Errorf("%s: %v", e.GetKey(), e.GetItem())
			}
		}
	}
	for _, k := range []string{"open5e_v2:srd-2014:item:longsword", "open5e_v2:srd-2024:item:longsword", "open5e_v2:srd-2014:item:studded-leather-armor"} {
		if byKey[k] {
			t.Errorf("%s published beside its weapon or armor", k)
		}
	}
	// Items built on a weapon are other things: the Staff (an arcane
	// focus) stays.
	for _, k := range []string{"open5e_v2:srd-2014:weapon:longsword", "open5e_v2:srd-2014:armor:studded-leather", "open5e_v2:srd-2014:item:staff"} {
		if !byKey[k] {
			t.Errorf("%s not published", k)
		}
	}
}
