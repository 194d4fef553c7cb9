package ingest

import "strings"

// FieldMap is the field map of one source shape (an Open5e endpoint's
// records, an OrcBrew content kind): where each field of the source goes.
// A field is mapped to the Entity field that carries its fact (a proto
// path such as "creature.initiative_bonus" or "blocks.text"), or excluded
// with the reason no card needs it. The field-map tests walk every record
// the project holds and fail on a field with a value that is in neither
// list, so that new data cannot lose a fact without anyone deciding it
// should.
//
// Paths: "a.b" is field b of object a, "a[].b" field b of each element of
// list a, and a trailing "*" every path that begins with what precedes it.
// An Entity field "a|b" means either of the two.
type FieldMap struct {
	// Mapped: source path -> the Entity field it reaches.
	Mapped map[string]string
	// Excluded: source path -> why nothing carries it.
	Excluded map[string]string
	// Defaults: source path -> a value that the source gives every record
	// and that says nothing ("feet" as a unit); any other value must be
	// mapped or excluded.
	Defaults map[string]string
}

// Lookup says where a source path goes: its Entity field ("" when
// excluded) and whether the map knows the path at all.
func (m FieldMap) Lookup(path string) (to string, excluded, known bool) {
	_, to, excluded, known = m.lookup(path)
	return to, excluded, known
}

// Entry is the map's entry that decides where path goes: the path's own,
// else the longest wildcard covering it ("profs.save.*" before "profs.*");
// "" when none does.
func (m FieldMap) Entry(path string) string {
	e, _, _, _ := m.lookup(path)
	return e
}

func (m FieldMap) lookup(path string) (entry, to string, excluded, known bool) {
	if to, ok := m.Mapped[path]; ok {
		return path, to, false, true
	}
	if _, ok := m.Excluded[path]; ok {
		return path, "", true, true
	}
	best := -1
	for k, t := range m.Mapped {
		if p, ok := strings.CutSuffix(k, "*"); ok && strings.HasPrefix(path, p) && len(p) > best {
			best, entry, to, excluded = len(p), k, t, false
		}
	}
	for k := range m.Excluded {
		if p, ok := strings.CutSuffix(k, "*"); ok && strings.HasPrefix(path, p) && len(p) > best {
			best, entry, to, excluded = len(p), k, "", true
		}
	}
	return entry, to, excluded, best >= 0
}
