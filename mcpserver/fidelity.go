package mcpserver

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// What keeps a card faithful to its source: the class table, the features
// in level order, the footnote listing what was corrected from the
// source's own text, and no placeholder ever shown.

func classTable(p *lkv1.ClassProgression) *ClassTable {
	if len(p.GetLevels()) == 0 {
		return nil
	}
	t := &ClassTable{Columns: nonNil(p.GetColumns())}
	for _, l := range p.GetLevels() {
		row := ClassLevel{Level: l.GetLevel(), ProficiencyBonus: l.GetProficiencyBonus(), Features: l.GetFeatures(), SpellSlots: l.GetSpellSlots()}
		for i, v := range l.GetValues() {
			if v == "" || i >= len(t.Columns) {
				continue
			}
			if row.Columns == nil {
				row.Columns = map[string]string{}
			}
			row.Columns[t.Columns[i]] = v
		}
		t.Levels = append(t.Levels, row)
	}
	return t
}

// renderClassTable writes the class table as markdown: Level | Proficiency
// Bonus | Features | the class's columns. Nothing when there is no table.
func renderClassTable(b *strings.Builder, name string, t *ClassTable) {
	if t == nil || len(t.Levels) == 0 {
		return
	}
	fmt.Fprintf(b, "### The %s\n\n", name)
	slots := slices.ContainsFunc(t.Columns, isSlotColumn)
	if slots {
		b.WriteString("*1st–9th: spell slots per spell level.*\n\n")
	}
	b.WriteString("| Level | Proficiency Bonus | Features |")
	for _, c := range t.Columns {
		fmt.Fprintf(b, " %s |", cell(c))
	}
	b.WriteString("\n|---|---|---|")
	for range t.Columns {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, l := range t.Levels {
		pb := "—"
		if l.ProficiencyBonus != 0 {
			pb = signed(l.ProficiencyBonus)
		}
		features := "—"
		if len(l.Features) > 0 {
			features = cell(strings.Join(l.Features, ", "))
		}
		fmt.Fprintf(b, "| %s | %s | %s |", lkv1.Ordinal(l.Level), pb, features)
		for _, c := range t.Columns {
			v := l.Columns[c]
			if v == "" {
				v = "—"
			}
			fmt.Fprintf(b, " %s |", cell(v))
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
}

var slotColumn = regexp.MustCompile(`^[1-9](st|nd|rd|th)$`)

func isSlotColumn(c string) bool { return slotColumn.MatchString(c) }

// cell makes s safe inside a table cell.
func cell(s string) string {
	return strings.ReplaceAll(strings.Join(strings.Fields(s), " "), "|", "\\|")
}

// featureName is a block's name with the levels it is gained at:
// "Ability Score Improvement (levels 4, 8, 12, 16, 19)".
func featureName(bl Block) string {
	levels := bl.Levels
	if len(levels) == 0 && bl.Level > 0 {
		levels = []int32{bl.Level}
	}
	switch len(levels) {
	case 0:
		return bl.Name
	case 1:
		return fmt.Sprintf("%s (level %d)", bl.Name, levels[0])
	}
	ls := make([]string, len(levels))
	for i, l := range levels {
		ls[i] = fmt.Sprint(l)
	}
	return fmt.Sprintf("%s (levels %s)", bl.Name, strings.Join(ls, ", "))
}

// byLevel returns the blocks with those without a level first, then the
// others in level order, keeping the source's order among equals.
func byLevel(blocks []Block) []Block {
	less := func(a, b Block) int { return int(a.Level) - int(b.Level) }
	if slices.IsSortedFunc(blocks, less) {
		return blocks
	}
	out := slices.Clone(blocks)
	slices.SortStableFunc(out, less)
	return out
}

// correctionFields name the corrected fields as a footnote says them.
var correctionFields = map[string]string{
	"to_hit": "to hit", "damage_type": "damage type", "extra_damage": "extra damage",
	"attack": "attack summary", "damage_types": "damage types", "damage_roll": "damage roll",
	"saving_throw_ability": "saving throw", "class_table": "", "reaction_condition": "casting time condition",
	"glossary": "Rules Glossary entry", "base": "made from",
}

// renderCorrections footnotes, in one line, that the card corrects its
// source and where the corrections are: a DM needs to know a card was
// corrected, not each correction in the fight. full (detail="full", a
// resource, the CLI) lists them after it, one line per block: "Bite:
// damage 2d10 → 2d10+8; damage type thunder → piercing".
//
// A field read from another source (the SRD 5.2 text) says so in a line of
// its own, renderSourced.
func renderCorrections(b *strings.Builder, cs []Correction, full bool) {
	own, sourced := splitCorrections(cs)
	renderSourced(b, sourced)
	if len(own) == 0 {
		return
	}
	cs = own
	if !full {
		fmt.Fprintf(b, "*Corrected from the source in %d %s, where its data disagreed with the book's text: see the result's `corrections`, or detail=\"full\".*\n\n", len(cs), plural("place", len(cs)))
		return
	}
	fmt.Fprintf(b, "*Corrected from the source in %d %s, where its data disagreed with the book's text:*\n", len(cs), plural("place", len(cs)))
	var (
		subjects  []string
		bySubject = map[string][]string{}
	)
	for _, c := range cs {
		field, ok := correctionFields[c.Field]
		if !ok {
			field = strings.ReplaceAll(c.Field, "_", " ")
		}
		what := strings.TrimSpace(field + " " + c.SourceValue)
		if c.CorrectedValue == "" {
			what += " dropped (the text does not say it)"
		} else {
			what += " → " + c.CorrectedValue
		}
		if b, ok := strings.CutPrefix(c.Basis, "srd: "); ok {
			// Decided against SRD 5.1's second transcription.
			what += " (" + b + ")"
		}
		if _, ok := bySubject[c.Subject]; !ok {
			subjects = append(subjects, c.Subject)
		}
		bySubject[c.Subject] = append(bySubject[c.Subject], what)
	}
	for _, s := range subjects {
		label := s
		if label != "" {
			label += ": "
		}
		fmt.Fprintf(b, "- *%s%s*\n", label, strings.Join(bySubject[s], "; "))
	}
	b.WriteString("\n")
}

// splitCorrections parts the corrections from the entity's own text from
// those read in another source (Correction.Source).
func splitCorrections(cs []Correction) (own, sourced []Correction) {
	for _, c := range cs {
		if c.Source == "" {
			own = append(own, c)
		} else {
			sourced = append(sourced, c)
		}
	}
	return own, sourced
}

// renderSourced footnotes the fields taken from another source, a line per
// source: "From the SRD 5.2 text (this record lacked or misstated them):
// casting time 1 minute → 10 minutes; reaction condition which you take
// ...".
func renderSourced(b *strings.Builder, cs []Correction) {
	var order []string
	by := map[string][]string{}
	for _, c := range cs {
		field, ok := correctionFields[c.Field]
		if !ok {
			field = strings.ReplaceAll(c.Field, "_", " ")
		}
		what := field + " " + c.CorrectedValue
		if c.SourceValue != "" {
			what = field + " " + c.SourceValue + " → " + c.CorrectedValue
		}
		if _, seen := by[c.Source]; !seen {
			order = append(order, c.Source)
		}
		by[c.Source] = append(by[c.Source], what)
	}
	for _, src := range order {
		fmt.Fprintf(b, "*From the %s (this record lacked or misstated it): %s.*\n\n", src, strings.Join(by[src], "; "))
	}
}

var placeholderText = regexp.MustCompile(`^\[[^\[\]()]{1,40}\]$`)

// isPlaceholder reports whether s is a source's stand-in for missing text
// ("[Column data]"), which is never shown.
func isPlaceholder(s string) bool {
	return placeholderText.MatchString(strings.TrimSpace(s))
}

// shown is s, or nothing when s is a placeholder.
func shown(s string) string {
	if isPlaceholder(s) {
		return ""
	}
	return s
}

// withoutPlaceholders is e, or a copy of it without its placeholder texts.
func withoutPlaceholders(e *Entity) *Entity {
	blocks := slices.ContainsFunc(e.Blocks, func(bl Block) bool { return isPlaceholder(bl.Text) })
	if !blocks && !isPlaceholder(e.Description) && !isPlaceholder(e.HigherLevel) {
		return e
	}
	c := *e
	c.Description, c.HigherLevel = shown(e.Description), shown(e.HigherLevel)
	if blocks {
		c.Blocks = slices.Clone(e.Blocks)
		for i := range c.Blocks {
			c.Blocks[i].Text = shown(c.Blocks[i].Text)
		}
	}
	return &c
}

// firstText is the entity's first text worth a summary: its description,
// else for a class its features by level, else the first of its blocks
// (benefits, traits, features) with text.
func firstText(e *Entity) string {
	if d := strings.TrimSpace(e.Description); d != "" && !isPlaceholder(d) {
		return d
	}
	if e.Kind == "class" || e.Kind == "subclass" {
		var fs []string
		for _, bl := range byLevel(e.Blocks) {
			if bl.Level > 0 && bl.Name != "" {
				fs = append(fs, fmt.Sprintf("%s (%d)", bl.Name, bl.Level))
			}
		}
		if len(fs) > 0 {
			return "features " + strings.Join(fs, ", ")
		}
	}
	for _, bl := range e.Blocks {
		if t := strings.TrimSpace(bl.Text); t != "" && !isPlaceholder(t) {
			return t
		}
	}
	return ""
}

// itemSummary says what an item is in a line: "weapon, 1d8 slashing",
// "item (adventuring gear), 1 gp", "magic item, rare"; an item with none
// of these facts is described by its first text.
func itemSummary(e *Entity) string {
	it := e.Item
	s := strings.ReplaceAll(e.Kind, "-", " ")
	switch {
	case e.Kind == "item" && it.Category != "":
		s += " (" + strings.ReplaceAll(it.Category, "-", " ") + ")"
	case it.Base != "":
		s += " (" + it.Base + ")" // "magic item (warhammer)"
	}
	var facts []string
	if it.Rarity != "" {
		facts = append(facts, it.Rarity)
	}
	if w := it.Weapon; w != nil && w.DamageDice != "" {
		facts = append(facts, strings.TrimSpace(w.DamageDice+" "+w.DamageType))
	}
	if a := it.Armor; a != nil {
		switch {
		case a.ACDisplay != "":
			facts = append(facts, "AC "+a.ACDisplay)
		case a.ACBase > 0:
			facts = append(facts, fmt.Sprintf("AC %d", a.ACBase))
		}
	}
	if it.CostGP != nil && *it.CostGP > 0 {
		facts = append(facts, num(*it.CostGP)+" gp")
	}
	if len(facts) > 0 {
		return s + ", " + strings.Join(facts, ", ")
	}
	if t := shortText(firstText(e)); t != "" {
		return s + ": " + t
	}
	return s
}
