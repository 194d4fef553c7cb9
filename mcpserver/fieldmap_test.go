package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"testing"
	"text/tabwriter"

	"google.golang.org/protobuf/reflect/protoreflect"

	"lorekeeper.dev/ingest/open5e"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// The field map over the whole bundled snapshot (STYLE.md §11): every field
// of every source record that carries a value is either mapped to an Entity
// field, which is then set on the entity normalised from that record, or on
// its shape's exclusion list (ingest/open5e/fieldmap.go).

// shapeOf is the source shape of an Open5e entity: "v2/creatures".
func shapeOf(e *lkv1.Entity) string {
	u, err := url.Parse(e.GetSourceUrl())
	if err != nil {
		return ""
	}
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	if len(parts) < 2 {
		return ""
	}
	return parts[0] + "/" + parts[1]
}

// leaf is one field with a value: its path and its value as text.
type leaf struct{ path, value string }

// leaves walks a decoded JSON value and returns its fields with a value.
func leaves(v any, path string, out []leaf) []leaf {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			p := k
			if path != "" {
				p = path + "." + k
			}
			out = leaves(c, p, out)
		}
	case []any:
		for _, c := range x {
			out = leaves(c, path+"[]", out)
		}
	case string:
		// Open5e writes some numbers as text ("0.00" gp).
		if f, err := strconv.ParseFloat(strings.TrimSpace(x), 64); err == nil && f == 0 {
			break
		}
		if s := strings.TrimSpace(x); s != "" && !open5e.IsPlaceholder(s) {
			out = append(out, leaf{path, s})
		}
	case json.Number:
		if f, err := x.Float64(); err == nil && f != 0 {
			out = append(out, leaf{path, x.String()})
		}
	case bool:
		if x {
			out = append(out, leaf{path, "true"})
		}
	}
	return out
}

// targetSet reports whether the Entity field at path (proto field names
// joined by dots; a repeated message field matches when any element has
// the rest of the path) is set in m. ok is false when the path names no
// field.
func targetSet(m protoreflect.Message, path string) (set, ok bool) {
	if a, b, alt := strings.Cut(path, "|"); alt {
		setA, okA := targetSet(m, a)
		setB, okB := targetSet(m, b)
		return setA || setB, okA && okB
	}
	name, rest, _ := strings.Cut(path, ".")
	fd := m.Descriptor().Fields().ByName(protoreflect.Name(name))
	if fd == nil {
		// A oneof's message field is reached by its own name too.
		return false, false
	}
	if rest == "" {
		return m.Has(fd), true
	}
	if fd.Message() == nil {
		return false, false
	}
	if fd.IsList() {
		l := m.Get(fd).List()
		if l.Len() == 0 {
			// Check the path's validity on an empty element.
			_, ok := targetSet(l.NewElement().Message(), rest)
			return false, ok
		}
		for i := range l.Len() {
			if set, ok := targetSet(l.Get(i).Message(), rest); !ok || set {
				return set, ok
			}
		}
		return false, true
	}
	if !m.Has(fd) {
		_, ok := targetSet(m.Get(fd).Message(), rest)
		return false, ok
	}
	return targetSet(m.Get(fd).Message(), rest)
}

// dropped reports whether the cross-check corrected e: a structured value
// that the text contradicts is dropped or replaced (a v1 shield's base AC
// and Dex flag by its bonus), and the card footnotes it.
func dropped(e *lkv1.Entity) bool {
	return len(e.GetCorrections()) > 0
}

// mapKey is the entry of m that path falls under: itself, or a wildcard
// ("document.*"), so that the tally counts the map's entries.
func mapKey(m map[string]string, path string) string {
	if _, ok := m[path]; ok {
		return path
	}
	for k := range m {
		if p, ok := strings.CutSuffix(k, "*"); ok && strings.HasPrefix(path, p) {
			return k
		}
	}
	return path
}

type fieldTally struct {
	mapped, excluded map[string]bool
}

func TestFieldMap_snapshot(t *testing.T) {
	es := snapshot(t)
	type miss struct{ shape, path, to string }
	var (
		unmapped = map[miss]int{}
		unset    = map[miss]int{}
		example  = map[miss]string{}
		tallies  = map[string]*fieldTally{}
		badPaths = map[miss]bool{}
	)
	for _, e := range es {
		shape := shapeOf(e)
		fm, ok := open5e.FieldMaps[shape]
		if !ok {
			t.Errorf("%s: no field map for shape %q", e.GetKey(), shape)
			continue
		}
		tl := tallies[shape]
		if tl == nil {
			tl = &fieldTally{mapped: map[string]bool{}, excluded: map[string]bool{}}
			tallies[shape] = tl
		}
		d := json.NewDecoder(bytes.NewReader(e.GetSourceRecord()))
		d.UseNumber()
		var rec any
		if err := d.Decode(&rec); err != nil {
			t.Fatalf("%s: source record: %v", e.GetKey(), err)
		}
		for _, l := range leaves(rec, "", nil) {
			if fm.Defaults[l.path] == l.value {
				continue
			}
			to, excluded, known := fm.Lookup(l.path)
			m := miss{shape, l.path, to}
			switch {
			case !known:
				unmapped[m]++
				example[m] = e.GetKey()
			case excluded:
				tl.excluded[mapKey(fm.Excluded, l.path)] = true
			default:
				tl.mapped[mapKey(fm.Mapped, l.path)] = true
				set, ok := targetSet(e.ProtoReflect(), to)
				if !ok {
					badPaths[m] = true
				} else if !set && !dropped(e) {
					unset[m]++
					example[m] = e.GetKey()
				}
			}
		}
	}
	report := func(what string, ms map[miss]int) {
		keys := make([]miss, 0, len(ms))
		for m := range ms {
			keys = append(keys, m)
		}
		sort.Slice(keys, func(i, j int) bool { return fmt.Sprint(keys[i]) < fmt.Sprint(keys[j]) })
		for _, m := range keys {
			t.Errorf("%s %s: %s %s in %d records (e.g. %s)", m.shape, m.path, what, m.to, ms[m], example[m])
		}
	}
	report("has values but is neither mapped nor excluded", unmapped)
	report("has a value but the entity's field is empty:", unset)
	for m := range badPaths {
		t.Errorf("%s %s: mapped to %q, which is no Entity field", m.shape, m.path, m.to)
	}

	shapes := make([]string, 0, len(tallies))
	for s := range tallies {
		shapes = append(shapes, s)
	}
	sort.Strings(shapes)
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "shape\tfields mapped\tfields excluded\texcluded\t")
	for _, s := range shapes {
		var ex []string
		for k := range tallies[s].excluded {
			ex = append(ex, k)
		}
		sort.Strings(ex)
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t\n", s, len(tallies[s].mapped), len(tallies[s].excluded), strings.Join(ex, " "))
	}
	tw.Flush()
	t.Logf("source fields with values in the snapshot, by shape:\n%s", b.String())
}
