package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"text/tabwriter"

	"google.golang.org/protobuf/reflect/protoreflect"

	"lorekeeper.dev/ingest"
	"lorekeeper.dev/ingest/open5e"
	"lorekeeper.dev/ingest/orcbrew"
	"lorekeeper.dev/ingest/srd52"
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

// fieldTally counts a shape's map entries met in the data (a wildcard
// entry is one) and the distinct source paths with values under them.
type fieldTally struct {
	mapped, excluded, pathsMapped, pathsExcluded map[string]bool
}

// miss is a field-map fault: a source path of a shape, and the Entity
// field it maps to.
type miss struct{ shape, path, to string }

// fieldMapRun walks entities' source records against their shapes' field
// maps and collects the faults: fields with values neither mapped nor
// excluded, mapped fields whose Entity field is empty, and Entity fields
// with a value that the card does not show.
type fieldMapRun struct {
	unmapped, unset, offCard map[miss]int
	example                  map[miss]string
	badPaths, noCheck        map[miss]bool
	tallies                  map[string]*fieldTally
}

func newFieldMapRun() *fieldMapRun {
	return &fieldMapRun{
		unmapped: map[miss]int{}, unset: map[miss]int{}, offCard: map[miss]int{}, example: map[miss]string{},
		badPaths: map[miss]bool{}, noCheck: map[miss]bool{}, tallies: map[string]*fieldTally{},
	}
}

// entity checks one entity of shape against fm. excused says whether an
// empty Entity field is explained (a correction, a warning of the import).
func (r *fieldMapRun) entity(t *testing.T, shape string, fm ingest.FieldMap, p *lkv1.Entity, excused func(path string) bool) {
	t.Helper()
	tl := r.tallies[shape]
	if tl == nil {
		tl = &fieldTally{mapped: map[string]bool{}, excluded: map[string]bool{}, pathsMapped: map[string]bool{}, pathsExcluded: map[string]bool{}}
		r.tallies[shape] = tl
	}
	d := json.NewDecoder(bytes.NewReader(p.GetSourceRecord()))
	d.UseNumber()
	var rec any
	if err := d.Decode(&rec); err != nil {
		t.Fatalf("%s: source record: %v", p.GetKey(), err)
	}
	targets := map[string]bool{}
	for _, l := range leaves(rec, "", nil) {
		if fm.Defaults[l.path] == l.value {
			continue
		}
		to, excluded, known := fm.Lookup(l.path)
		m := miss{shape, l.path, to}
		switch {
		case !known:
			r.unmapped[m]++
			r.example[m] = p.GetKey()
		case excluded:
			tl.excluded[fm.Entry(l.path)] = true
			tl.pathsExcluded[l.path] = true
		default:
			tl.mapped[fm.Entry(l.path)] = true
			tl.pathsMapped[l.path] = true
			set, ok := targetSet(p.ProtoReflect(), to)
			switch {
			case !ok:
				r.badPaths[m] = true
			case set:
				targets[to] = true
			case !excused(l.path):
				r.unset[m]++
				r.example[m] = p.GetKey()
			}
		}
	}
	if len(targets) == 0 {
		return
	}
	e := entityFromProto(p, "")
	card := flatten(renderEntity(&e))
	lower := strings.ToLower(card)
	for to := range targets {
		lacks, ok := checkCard(to, &e, card, lower)
		m := miss{shape, "", to}
		if !ok {
			r.noCheck[m] = true
			continue
		}
		if len(lacks) > 0 {
			r.offCard[m]++
			r.example[m] = p.GetKey() + ": " + strings.Join(lacks, "; ")
		}
	}
}

// report fails t on every fault and logs the tally: per shape, the
// fields mapped and excluded, and the exclusions.
func (r *fieldMapRun) report(t *testing.T, what string) {
	t.Helper()
	list := func(format string, ms map[miss]int) {
		keys := make([]miss, 0, len(ms))
		for m := range ms {
			keys = append(keys, m)
		}
		sort.Slice(keys, func(i, j int) bool { return fmt.Sprint(keys[i]) < fmt.Sprint(keys[j]) })
		for _, m := range keys {
			t.Errorf(format, m.shape, m.path, m.to, ms[m], r.example[m])
		}
	}
	list("%s %s: has values but is neither mapped nor excluded%s in %d records (e.g. %s)", r.unmapped)
	list("%s %s: has a value but the entity's field %s is empty in %d records (e.g. %s)", r.unset)
	list("%s%s: the card does not show the entity's %s in %d entities (e.g. %s)", r.offCard)
	for m := range r.badPaths {
		t.Errorf("%s %s: mapped to %q, which is no Entity field", m.shape, m.path, m.to)
	}
	for m := range r.noCheck {
		t.Errorf("%s: mapped to %q, which has no card check (cardFacts) and is not in notCardFacts", m.shape, m.to)
	}

	shapes := make([]string, 0, len(r.tallies))
	for s := range r.tallies {
		shapes = append(shapes, s)
	}
	sort.Strings(shapes)
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "shape\tentries mapped\tentries excluded\tpaths mapped\tpaths excluded\texcluded\t")
	for _, s := range shapes {
		var ex []string
		for k := range r.tallies[s].excluded {
			ex = append(ex, k)
		}
		sort.Strings(ex)
		tl := r.tallies[s]
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%s\t\n", s, len(tl.mapped), len(tl.excluded), len(tl.pathsMapped), len(tl.pathsExcluded), strings.Join(ex, " "))
	}
	tw.Flush()
	t.Logf("source fields with values in %s, by shape (entries: the map's, a wildcard one; paths: distinct source paths under them):\n%s", what, b.String())
}

func TestFieldMap_snapshot(t *testing.T) {
	run := newFieldMapRun()
	for _, e := range snapshot(t) {
		shape := shapeOf(e)
		fm, ok := open5e.FieldMaps[shape]
		if e.GetDocument().GetSource() == lkv1.Source_SOURCE_SRD_TEXT {
			fm, ok = srd52.FieldMap, true
		}
		if !ok {
			t.Errorf("%s: no field map for shape %q", e.GetKey(), shape)
			continue
		}
		run.entity(t, shape, fm, e, func(string) bool { return dropped(e) })
	}
	run.report(t, "the snapshot")
}

// orcbrewTestdata are the OrcBrew files the project holds (copied from the
// data pack, licences in its README): the good samples and the broken ones
// that still import.
const orcbrewTestdata = "../ingest/edn/testdata"

func TestFieldMap_orcbrew(t *testing.T) {
	run := newFieldMapRun()
	files, err := filepath.Glob(filepath.Join(orcbrewTestdata, "orcbrew*", "*.orcbrew"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no OrcBrew test data under %s (%v)", orcbrewTestdata, err)
	}
	decoded, entities := 0, 0
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f, err := orcbrew.Decode(filepath.Base(path), data, nil)
		if err != nil {
			continue // a file that cannot be read at all has no fields to map
		}
		decoded++
		for _, e := range f.Entities {
			entities++
			shape := orcbrew.ContentKind(e.GetKind())
			fm, ok := orcbrew.FieldMaps[shape]
			if !ok {
				t.Errorf("%s: no field map for content kind %q", e.GetKey(), shape)
				continue
			}
			// A value of the wrong type is a warning of the import, read
			// as absent: {:abilities {:str "lots"}}.
			excused := func(p string) bool {
				last := p[strings.LastIndexAny(p, ".]")+1:]
				for _, w := range f.Warnings {
					if strings.Contains(w, ":"+e.GetSourceKey()) && strings.Contains(w, last) {
						return true
					}
				}
				return false
			}
			run.entity(t, "orcbrew/"+shape, fm, e, excused)
			for _, f := range builderValuesOffCard(fm, e, excused) {
				t.Errorf("%s: %s", e.GetKey(), f)
			}
		}
	}
	if decoded < 2 || entities == 0 {
		t.Fatalf("%d files decoded, %d entities: the test data is missing", decoded, entities)
	}
	t.Logf("%d OrcBrew files (%d decoded), %d entities", len(files), decoded, entities)
	run.report(t, "the OrcBrew test data")
}

// Every entry of every field map names an Entity field, whether or not
// the data at hand has the source field.
func TestFieldMap_targetsAreEntityFields(t *testing.T) {
	maps := map[string]ingest.FieldMap{}
	for k, v := range open5e.FieldMaps {
		maps[k] = v
	}
	for k, v := range orcbrew.FieldMaps {
		maps["orcbrew/"+k] = v
	}
	maps["srd-5.2-markdown"] = srd52.FieldMap
	empty := (&lkv1.Entity{}).ProtoReflect()
	for shape, fm := range maps {
		for path, to := range fm.Mapped {
			if _, ok := targetSet(empty, to); !ok {
				t.Errorf("%s %s: mapped to %q, which is no Entity field", shape, path, to)
			}
			for _, f := range strings.Split(to, "|") {
				_, check := cardFacts[f]
				_, not := notCardFacts[f]
				if !check && !not {
					t.Errorf("%s %s: mapped to %q, which has no card check (cardFacts) and is not in notCardFacts", shape, path, f)
				}
			}
		}
	}
}

// builderValuesOffCard checks the OrcBrew builder's values one by one:
// the blocks that builderBlocks writes are many facts in one text, which
// the per-field check (blocks.text: every block's text is on the card)
// cannot tell apart, so each value of a source field mapped into them
// must be on the card: a keyword as its words ("animal-handling" ->
// "animal handling", an ability in full), a name switched on
// ({:acrobatics true}) as its name, a number as itself.
func builderValuesOffCard(fm ingest.FieldMap, p *lkv1.Entity, excused func(path string) bool) []string {
	d := json.NewDecoder(bytes.NewReader(p.GetSourceRecord()))
	d.UseNumber()
	var rec any
	if err := d.Decode(&rec); err != nil {
		return []string{err.Error()}
	}
	e := entityFromProto(p, "")
	lower := strings.ToLower(flatten(renderEntity(&e)))
	var out []string
	for _, l := range leaves(rec, "", nil) {
		to, excluded, known := fm.Lookup(l.path)
		if !known || excluded || excused(l.path) || !(strings.HasPrefix(to, "blocks.text") || to == "character_option.prerequisite") {
			continue
		}
		v := l.value
		if v == "true" {
			v = l.path[strings.LastIndexAny(l.path, ".]")+1:]
		}
		if i := strings.LastIndexByte(v, '/'); i >= 0 {
			v = v[i+1:]
		}
		if a := lkv1.AbilityName(v); lkv1.IsAbility(a) {
			v = a
		}
		if strings.HasSuffix(v, "?") {
			continue // a flag of the builder's (:saves?), written as words
		}
		if !strings.Contains(v, " ") {
			v = strings.ReplaceAll(v, "-", " ") // a keyword
		}
		v = strings.ToLower(v)
		if !strings.Contains(lower, v) {
			out = append(out, fmt.Sprintf("%s = %q: the card does not show %q", l.path, l.value, v))
		}
	}
	return out
}
