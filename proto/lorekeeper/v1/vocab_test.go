package lorekeeperv1_test

import (
	"testing"

	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

func TestKind_Slug(t *testing.T) {
	seen := map[string]lkv1.Kind{}
	for _, k := range lkv1.Kinds() {
		s := k.Slug()
		if s == "" {
			t.Errorf("%v has no slug", k)
			continue
		}
		if other, dup := seen[s]; dup {
			t.Errorf("%v and %v share slug %q", k, other, s)
		}
		seen[s] = k
		got, ok := lkv1.KindFromSlug(s)
		if !ok || got != k {
			t.Errorf("KindFromSlug(%q) = %v, %v; want %v, true", s, got, ok, k)
		}
	}
	if got, want := len(seen), len(lkv1.Kind_name)-1; got != want {
		t.Errorf("%d kinds with slugs, want %d", got, want)
	}
	if _, ok := lkv1.KindFromSlug("vehicle"); ok {
		t.Error(`KindFromSlug("vehicle") is ok, want not ok`)
	}
}

func TestSubjectAndURI(t *testing.T) {
	tests := []struct {
		name, got, want string
	}{
		{"subject", lkv1.Subject(lkv1.Source_SOURCE_OPEN5E_V2, lkv1.Kind_KIND_MAGIC_ITEM), "lorekeeper.entity.open5e_v2.magic-item"},
		{"uri", lkv1.EntityURI("open5e_v2:srd-2014:spell:fireball"), "lorekeeper://entity/open5e_v2:srd-2014:spell:fireball"},
		{"key from uri", lkv1.KeyFromURI("lorekeeper://entity/orcbrew:book:spell:x"), "orcbrew:book:spell:x"},
		{"key from key", lkv1.KeyFromURI("orcbrew:book:spell:x"), "orcbrew:book:spell:x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("got %q, want %q", tt.got, tt.want)
			}
		})
	}
	for _, s := range []lkv1.Source{lkv1.Source_SOURCE_OPEN5E_V1, lkv1.Source_SOURCE_OPEN5E_V2, lkv1.Source_SOURCE_ORCBREW} {
		if got, ok := lkv1.SourceFromSlug(s.Slug()); !ok || got != s {
			t.Errorf("SourceFromSlug(%q) = %v, %v", s.Slug(), got, ok)
		}
	}
}
