package open5e

import (
	"encoding/json"
	"strings"

	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// Open5e's v2 keeps each SRD weapon and armor twice: a record of
// /v2/weapons/ or /v2/armor/ (damage, properties, AC) and a record of
// /v2/items/ (cost, weight, description) whose nested weapon or armor is
// the first. A DM wants one Longsword per book: the weapon or armor entity
// takes the item's cost, weight and text, and the item is left out.

// itemTwinOf is the key of the weapon or armor record an item record is a
// twin of, or "": the item's nested weapon or armor when it is the same
// thing ("srd_longsword" in "srd_longsword"; "srd_hide" in
// "srd_hide-armor"), not a different item built on one (a Staff arcane
// focus on the Quarterstaff).
func itemTwinOf(e *lkv1.Entity) string {
	if e.GetKind() != lkv1.Kind_KIND_ITEM || e.GetDocument().GetSource() != lkv1.Source_SOURCE_OPEN5E_V2 {
		return ""
	}
	var rec struct {
		Key    string `json:"key"`
		Weapon *struct {
			Key string `json:"key"`
		} `json:"weapon"`
		Armor *struct {
			Key string `json:"key"`
		} `json:"armor"`
	}
	if json.Unmarshal(e.GetSourceRecord(), &rec) != nil {
		return ""
	}
	for _, n := range []string{keyOf(rec.Weapon), keyOf(rec.Armor)} {
		if n != "" && (n == rec.Key || n+"-armor" == rec.Key) {
			return n
		}
	}
	return ""
}

func keyOf(p *struct {
	Key string `json:"key"`
}) string {
	if p == nil {
		return ""
	}
	return p.Key
}

// mergeItemTwins completes each weapon or armor entity from its item twin:
// cost, weight and description. It returns the entities it changed.
func mergeItemTwins(gear, items []*lkv1.Entity, _ *Catalog) []*lkv1.Entity {
	twins := map[string]*lkv1.Entity{}
	for _, it := range items {
		if k := itemTwinOf(it); k != "" {
			twins[k] = it
		}
	}
	var changed []*lkv1.Entity
	for _, e := range gear {
		it, g := twins[e.GetSourceKey()], e.GetItem()
		if it == nil || g == nil {
			continue
		}
		src := it.GetItem()
		if src.CostGp != nil {
			g.CostGp = src.CostGp
		}
		if src.WeightLb != nil {
			g.WeightLb = src.WeightLb
		}
		if e.Description == "" && !isPlaceholder(it.GetDescription()) && !trivialDescription(it) {
			e.Description = it.GetDescription()
		}
		changed = append(changed, e)
	}
	return changed
}

// trivialDescription reports whether the item's text only names it ("A
// hand crossbow.", "A shield."): no card is better for it.
func trivialDescription(it *lkv1.Entity) bool {
	d := strings.ToLower(strings.TrimSuffix(strings.TrimSpace(it.GetDescription()), "."))
	return d == "" || len(strings.Fields(d)) <= 4 && !strings.ContainsAny(d, ",;:")
}

// withoutItemTwins leaves out the items that are a weapon or armor entity
// too (mergeItemTwins gave it their facts).
func withoutItemTwins(es []*lkv1.Entity) []*lkv1.Entity {
	out := es[:0:0]
	for _, e := range es {
		if itemTwinOf(e) == "" {
			out = append(out, e)
		}
	}
	return out
}
