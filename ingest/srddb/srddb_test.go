package srddb_test

import (
	"strings"
	"testing"

	"lorekeeper.dev/ingest/srddb"
)

// The embedded transcription reads whole: every kind the cross-check
// compares, each class's twenty levels, and its licence.
func TestLoad(t *testing.T) {
	db, err := srddb.Load()
	if err != nil {
		t.Fatal(err)
	}
	for what, n := range map[string]int{
		"monsters": len(db.Monsters), "spells": len(db.Spells), "magic items": len(db.MagicItems),
		"equipment": len(db.Equipment), "conditions": len(db.Conditions), "classes": len(db.Classes), "classes' levels": len(db.Levels),
	} {
		if n == 0 {
			t.Errorf("no %s", what)
		}
	}
	if len(db.Conditions) != 15 || len(db.Classes) != 12 {
		t.Errorf("%d conditions, %d classes; the SRD has 15 and 12", len(db.Conditions), len(db.Classes))
	}
	for class, levels := range db.Levels {
		if len(levels) != 20 {
			t.Errorf("%s: %d levels", class, len(levels))
		}
	}
	if w := db.Monsters["wight"]; w == nil || strings.Join(w.DamageImmunities, ",") != "poison" {
		t.Errorf("wight: %+v", w)
	}
	if !strings.HasPrefix(db.License, "MIT License") {
		t.Errorf("licence %.40q", db.License)
	}
}
