package lorekeeperv1_test

import (
	"testing"

	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

func TestSlugify(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Fireball", "fireball"},
		{"Ancient Red Dragon", "ancient-red-dragon"},
		{"Flame Tongue (Longsword)", "flame-tongue-longsword"},
		{"Tenser's Floating Disk", "tensers-floating-disk"},
		{"Melf’s Acid Arrow", "melfs-acid-arrow"},
		{"  Demo: Spark!  ", "demo-spark"},
		{"Élan Vital", "elan-vital"},
		{"Crossbow, heavy", "crossbow-heavy"},
		{"+1 Longsword", "1-longsword"},
		{"火の玉", "火の玉"},
		{"---", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := lkv1.Slugify(tt.in); got != tt.want {
			t.Errorf("Slugify(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
