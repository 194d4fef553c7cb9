package open5e

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// A v2 class carries its table as features: one per column (feature_type
// CLASS_TABLE_DATA, SPELL_SLOTS or PROFICIENCY_BONUS) whose
// data_for_class_table maps levels to values and whose desc is the
// placeholder "[Column data]", and one per class feature (CLASS_LEVEL_FEATURE)
// whose gained_at lists the levels it comes at. classFeatures turns them into
// the table and the features' text blocks, in level order.

// Column feature types.
const (
	featureTableData = "CLASS_TABLE_DATA"
	featureSlots     = "SPELL_SLOTS"
	featurePB        = "PROFICIENCY_BONUS"
	featureLevel     = "CLASS_LEVEL_FEATURE"
)

const maxClassLevel = 20

// tableColumn is one column of the table as the source gives it.
type tableColumn struct {
	name string
	// key is the column feature's key ("bfrd_mechanist_augmented-items").
	key string
	// spellLevel is the slot level of a SPELL_SLOTS column, else 0.
	spellLevel int
	// byLevel holds the values, index level-1.
	byLevel [maxClassLevel]string
}

// classFeatures reads a v2 class's features: the text blocks of the
// features (column placeholders left out), ordered by the level they are
// gained at; the class table, nil when the source has no column data; and
// the corrections made to the table's data.
func classFeatures(o obj, className string) ([]*lkv1.TextBlock, *lkv1.ClassProgression, []*lkv1.Correction) {
	var (
		blocks   []*lkv1.TextBlock
		columns  []*tableColumn
		slots    []*tableColumn
		pb       *tableColumn
		features [maxClassLevel][]string
		fixes    []*lkv1.Correction
	)
	for _, f := range o.objs("features") {
		typ := f.str("feature_type")
		text := normalizeNewlines(f.str("desc"))
		if isPlaceholder(text) {
			text = ""
		}
		switch typ {
		case featureTableData, featureSlots, featurePB:
			col := &tableColumn{name: f.str("name"), key: f.str("key")}
			fixes = append(fixes, col.read(f.objs("data_for_class_table"), className)...)
			switch typ {
			case featurePB:
				pb = col
			case featureSlots:
				col.spellLevel = spellLevelOf(col.name, f.str("key"))
				if col.spellLevel == 0 {
					columns = append(columns, col)
				} else {
					slots = append(slots, col)
				}
			default:
				columns = append(columns, col)
			}
			// A column is a feature too where the source says more than
			// the placeholder.
			if text == "" {
				continue
			}
		}
		b := &lkv1.TextBlock{Type: "feature", Name: f.str("name"), Text: text}
		for _, g := range f.objs("gained_at") {
			l := g.int32("level")
			if l <= 0 || l > maxClassLevel {
				continue
			}
			if !slices.Contains(b.Levels, l) {
				b.Levels = append(b.Levels, l)
			}
			if typ == featureLevel || typ == "" {
				name := b.Name
				if d := g.str("detail"); d != "" {
					name += " (" + d + ")"
				}
				if !slices.Contains(features[l-1], name) {
					features[l-1] = append(features[l-1], name)
				}
			}
		}
		slices.Sort(b.Levels)
		if len(b.Levels) > 0 {
			b.Level = b.Levels[0]
		}
		if b.Text == "" && b.Name == "" {
			continue
		}
		blocks = append(blocks, b)
	}
	sort.SliceStable(blocks, func(i, j int) bool { return blocks[i].Level < blocks[j].Level })

	if pb == nil && len(columns) == 0 && len(slots) == 0 {
		// No table to carry what a feature has at each level (a
		// subclass's "Heavy Hitter" die: d6 at 7th, d8 at 9th): its text
		// says it.
		for _, b := range blocks {
			b.Text = strings.TrimSpace(b.Text + "\n\n" + levelDetails(o, b.Name))
		}
		return blocks, nil, fixes
	}
	sort.SliceStable(slots, func(i, j int) bool { return slots[i].spellLevel < slots[j].spellLevel })
	all := append(columns, slots...)
	fixes = append(fixes, nameDuplicateColumns(all, className)...)
	p := &lkv1.ClassProgression{}
	for _, c := range all {
		p.Columns = append(p.Columns, c.name)
	}
	for l := 1; l <= maxClassLevel; l++ {
		row := &lkv1.ClassLevel{Level: int32(l), Features: features[l-1]}
		if pb != nil {
			if n, ok := parseInt(pb.byLevel[l-1]); ok {
				row.ProficiencyBonus = n
			}
		}
		for _, c := range all {
			row.Values = append(row.Values, c.byLevel[l-1])
		}
		last := 0
		counts := make([]int32, len(slots))
		for i, c := range slots {
			if n, ok := parseInt(c.byLevel[l-1]); ok && n > 0 {
				counts[i] = n
				last = i + 1
			}
		}
		if last > 0 {
			row.SpellSlots = counts[:last]
		}
		p.Levels = append(p.Levels, row)
	}
	return blocks, p, fixes
}

// levelDetails is what the feature named name has at each level where the
// source gives it ("*d6 at 7th level, d8 at 9th, d10 at 15th.*"), or "".
func levelDetails(o obj, name string) string {
	var parts []string
	for _, f := range o.objs("features") {
		if f.str("name") != name {
			continue
		}
		for _, g := range f.objs("gained_at") {
			if d, l := g.str("detail"), g.int32("level"); d != "" && l > 0 {
				parts = append(parts, fmt.Sprintf("%s at %s level", d, lkv1.Ordinal(l)))
			}
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "*" + strings.Join(parts, ", ") + ".*"
}

// nameDuplicateColumns renames a column that has another column's name
// after its own key, where the key names it otherwise: Black Flag's
// Mechanist has two "Augment Effects Known" columns, the second keyed
// "augmented-items" (its text speaks of "the Augmented Items column").
// Each rename is returned as a correction.
func nameDuplicateColumns(cols []*tableColumn, className string) []*lkv1.Correction {
	var fixes []*lkv1.Correction
	seen := map[string]bool{}
	for _, c := range cols {
		name := strings.ToLower(c.name)
		if seen[name] {
			fromKey := titleFromKey(c.key[strings.LastIndex(c.key, "_")+1:])
			if fromKey != "" && !strings.EqualFold(fromKey, c.name) && !seen[strings.ToLower(fromKey)] {
				fixes = append(fixes, &lkv1.Correction{
					Subject:        className + " table",
					Field:          "class_table",
					SourceValue:    fmt.Sprintf("column %s is named %q, as another column is", c.key, c.name),
					CorrectedValue: fmt.Sprintf("column %s is named %q", c.key, fromKey),
				})
				c.name = fromKey
				name = strings.ToLower(fromKey)
			}
		}
		seen[name] = true
	}
	return fixes
}

// read fills the column from data_for_class_table. A level given twice
// with different values while the level before it has none is the
// source's typo for that level (SRD 5.1's 2nd-level slots list level 4
// twice, 2 and 3, and level 3 not at all): the smaller value goes to the
// level before, since a class table's counts never shrink as levels rise.
// Each such repair is returned as a correction.
func (c *tableColumn) read(data []obj, className string) []*lkv1.Correction {
	var given [maxClassLevel][]string
	for _, d := range data {
		l := d.int32("level")
		v := d.str("column_value")
		if l <= 0 || l > maxClassLevel || v == "" || isPlaceholder(v) {
			continue
		}
		if !slices.Contains(given[l-1], v) {
			given[l-1] = append(given[l-1], v)
		}
	}
	var fixes []*lkv1.Correction
	for i, vs := range given {
		switch len(vs) {
		case 0:
		case 1:
			c.byLevel[i] = vs[0]
		default:
			if i > 0 && len(given[i-1]) == 0 && len(vs) == 2 {
				lo, hi := vs[0], vs[1]
				a, okA := parseInt(lo)
				b, okB := parseInt(hi)
				if okA && okB && b < a {
					lo, hi = hi, lo
				}
				if okA && okB {
					c.byLevel[i-1], c.byLevel[i] = lo, hi
					given[i-1] = []string{lo}
					fixes = append(fixes, &lkv1.Correction{
						Subject:        className + " table",
						Field:          "class_table",
						SourceValue:    fmt.Sprintf("%s: level %d has %s and %s, level %d has nothing", c.name, i+1, vs[0], vs[1], i),
						CorrectedValue: fmt.Sprintf("%s: level %d has %s, level %d has %s", c.name, i, lo, i+1, hi),
					})
					continue
				}
			}
			// Two values and no gap to explain them: keep the first, as the
			// source lists it.
			c.byLevel[i] = vs[0]
		}
	}
	return fixes
}

var ordinalPrefix = regexp.MustCompile(`^(\d)(?:st|nd|rd|th)\b`)

// spellLevelOf reads the slot level of a SPELL_SLOTS column from its name
// ("3rd") or key ("srd_wizard_slots-3rd"); 0 when neither says.
func spellLevelOf(name, key string) int {
	for _, s := range []string{strings.ToLower(name), strings.ToLower(key[strings.LastIndex(key, "-")+1:])} {
		if m := ordinalPrefix.FindStringSubmatch(s); m != nil {
			n, _ := strconv.Atoi(m[1])
			if n >= 1 && n <= 9 {
				return n
			}
		}
	}
	return 0
}

// parseInt reads "+3", "4", "−1" as a number.
func parseInt(s string) (int32, bool) {
	s = strings.TrimSpace(strings.ReplaceAll(s, "−", "-"))
	n, err := strconv.ParseInt(strings.TrimPrefix(s, "+"), 10, 32)
	return int32(n), err == nil
}

var placeholderText = regexp.MustCompile(`^\[[^\[\]()]{1,40}\]$`)

// isPlaceholder reports whether s is a stand-in where the source has no
// text: "[Column data]", "[None provided]".
func isPlaceholder(s string) bool {
	return placeholderText.MatchString(strings.TrimSpace(s))
}

// The v2 records of SRD 5.1 classes lack the class's own table columns
// (the Barbarian's Rages and Rage Damage, the Monk's Martial Arts and Ki
// Points, the Rogue's Sneak Attack, the spells known of the Bard, Ranger,
// Sorcerer and Warlock, ...), which the v1 records of the same book carry in
// their markdown table: mergeV1Tables adds them (see supplements).

// v1Table is a v1 class's markdown table: columns after Level, each with a
// value per level (index level-1).
type v1Table struct {
	columns []string
	values  map[string]*[maxClassLevel]string // by lower-case column name
}

// parseV1Table reads a v1 class record's "table": a markdown table whose
// first column is the level ("1st" ... "20th"). It returns nil when the
// record has no such table.
func parseV1Table(raw []byte) *v1Table {
	o, err := decodeObject(raw)
	if err != nil {
		return nil
	}
	var header []string
	t := &v1Table{values: map[string]*[maxClassLevel]string{}}
	rows := 0
	for _, line := range strings.Split(normalizeNewlines(o.str("table")), "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "|") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		switch {
		case header == nil:
			header = cells
			if len(header) < 2 || !strings.EqualFold(header[0], "level") {
				return nil
			}
			for _, c := range header[1:] {
				t.columns = append(t.columns, c)
				t.values[strings.ToLower(c)] = new([maxClassLevel]string)
			}
		case strings.Trim(line, "|-: ") == "":
			// The separator row.
		default:
			// "1st" ... "20th"
			l, err := strconv.Atoi(strings.TrimRightFunc(cells[0], func(r rune) bool { return r < '0' || r > '9' }))
			if err != nil || l < 1 || l > maxClassLevel {
				continue
			}
			for i, c := range cells[1:min(len(cells), len(header))] {
				if c == "-" || c == "—" || c == "–" {
					c = ""
				}
				t.values[strings.ToLower(header[i+1])][l-1] = c
			}
			rows++
		}
	}
	if rows == 0 {
		return nil
	}
	return t
}

// v1TableSkips are the v1 columns a ClassProgression holds elsewhere: the
// level, proficiency bonus and features have their own fields, and the
// spell slots ("1st" ... "9th") their own list.
func v1TableSkips(col string) bool {
	switch strings.ToLower(col) {
	case "level", "proficiency bonus", "features":
		return true
	}
	return spellLevelOf(col, "") > 0
}

// mergeV1Tables adds to each v2 class the table columns that the v1 record
// of the same class in the same book has and the v2 record lacks; the v2
// record's own values win where both have a column. It returns the classes
// it changed.
func mergeV1Tables(v2, v1 []*lkv1.Entity, cat *Catalog) []*lkv1.Entity {
	tables := map[string]*v1Table{}
	for _, e := range v1 {
		if e.GetKind() == lkv1.Kind_KIND_CLASS {
			if t := parseV1Table(e.GetSourceRecord()); t != nil {
				for _, k := range v2Twins(cat, e) {
					tables[k] = t
				}
			}
		}
	}
	var changed []*lkv1.Entity
	for _, e := range v2 {
		t := tables[twinKey(e.GetDocument().GetKey(), e)]
		p := e.GetCharacterOption().GetProgression()
		if e.GetKind() == lkv1.Kind_KIND_CLASS && t != nil && p != nil && mergeColumns(p, t) {
			changed = append(changed, e)
		}
	}
	return changed
}

// mergeColumns adds t's missing columns to p, reporting whether any was
// added. The class's own columns end up in t's order, followed by any only
// p has, then p's spell slots as they were.
func mergeColumns(p *lkv1.ClassProgression, t *v1Table) bool {
	slotsFrom := len(p.GetColumns())
	for i, c := range p.GetColumns() {
		if spellLevelOf(c, "") > 0 {
			slotsFrom = i
			break
		}
	}
	own := map[string]int{} // lower-case name -> index in p.Columns
	for i, c := range p.GetColumns()[:slotsFrom] {
		own[strings.ToLower(c)] = i
	}
	added := false
	for _, c := range t.columns {
		if _, ok := own[strings.ToLower(c)]; !ok && !v1TableSkips(c) {
			added = true
		}
	}
	if !added {
		return false
	}
	// The new order: index into p.Columns (>= 0) or into t's columns
	// (encoded as -1-i).
	var order []int
	used := map[int]bool{}
	for i, c := range t.columns {
		if v1TableSkips(c) {
			continue
		}
		if j, ok := own[strings.ToLower(c)]; ok {
			order = append(order, j)
			used[j] = true
		} else {
			order = append(order, -1-i)
		}
	}
	for j := range slotsFrom {
		if !used[j] {
			order = append(order, j)
		}
	}
	for j := slotsFrom; j < len(p.GetColumns()); j++ {
		order = append(order, j)
	}
	cols := make([]string, len(order))
	for k, o := range order {
		if o >= 0 {
			cols[k] = p.Columns[o]
		} else {
			cols[k] = t.columns[-1-o]
		}
	}
	for _, l := range p.GetLevels() {
		vals := make([]string, len(order))
		for k, o := range order {
			switch {
			case o >= 0 && o < len(l.Values):
				vals[k] = l.Values[o]
			case o < 0 && l.GetLevel() >= 1 && l.GetLevel() <= maxClassLevel:
				vals[k] = t.values[strings.ToLower(t.columns[-1-o])][l.GetLevel()-1]
			}
		}
		l.Values = vals
	}
	p.Columns = cols
	return true
}
