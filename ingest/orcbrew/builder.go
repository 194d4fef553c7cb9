package orcbrew

import (
	"fmt"
	"sort"
	"strings"

	"lorekeeper.dev/ingest/edn"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// OrcPub's character builder keeps what a race, class, background or feat
// grants as data for the builder to apply (proficiencies, ability
// increases, spells, what a class gains at each level) rather than as text.
// builderBlocks writes those fields as the blocks a card shows, so that a
// DM reading the card sees what the builder would give: "Ability Score
// Increase. Strength +1, Constitution +1".

// builderFields are the builder's fields read into blocks, in card order,
// with the block's name.
var builderFields = []struct{ field, name string }{
	{"abilities", "Ability Score Increase"},
	{"ability-increases", "Ability Score Increase"},
	{"darkvision", "Darkvision"},
	{"languages", "Languages"},
	{"profs", "Proficiencies"},
	{"spells", "Spells"},
	{"spellcasting", "Spellcasting"},
	{"subclass-title", "Subclass"},
	{"ability-increase-levels", "Ability Score Improvement"},
	{"equipment", "Equipment"},
}

// propNames name the builder's :props as a card says them; others are
// written from their key ("max-hp-bonus" -> "Max hp bonus").
var propNames = map[string]string{
	"armor-prof": "Armor Proficiencies", "weapon-prof": "Weapon Proficiencies", "tool-prof": "Tool Proficiencies",
	"skill-prof": "Skill Proficiencies", "skill-prof-or-expertise": "Skill Proficiency or Expertise",
	"tool-prof-or-expertise": "Tool Proficiency or Expertise", "language": "Languages",
	"damage-resistance": "Damage Resistances", "damage-immunity": "Damage Immunities",
	"damage-vulnerability": "Damage Vulnerabilities", "condition-immunity": "Condition Immunities",
	"saving-throw-advantage": "Advantage on Saving Throws Against", "max-hp-bonus": "Hit Point Maximum Bonus",
	"flying-speed": "Flying Speed", "swimming-speed": "Swimming Speed", "climbing-speed": "Climbing Speed",
	"speed": "Speed Bonus", "initiative": "Initiative Bonus", "num-attacks": "Attacks per Action",
	"spell": "Spell", "weapon-prof-choice": "Weapon Proficiencies of Your Choice",
	"language-choice": "Languages of Your Choice", "skill-tool-choice": "Skills or Tools of Your Choice",
	"tortle-ac": "Tortle AC (natural armor)", "lizardfolk-ac": "Lizardfolk AC (natural armor)",
}

// builderBlocks writes the builder's fields of r as blocks of type typ.
func builderBlocks(r rec, typ string) []*lkv1.TextBlock {
	var blocks []*lkv1.TextBlock
	add := func(name, text string, level int32) {
		if text = strings.TrimSpace(text); text != "" {
			blocks = append(blocks, &lkv1.TextBlock{Type: typ, Name: name, Text: text, Level: level})
		}
	}
	for _, f := range builderFields {
		v := r.get(f.field)
		switch f.field {
		case "abilities":
			add(f.name, abilityBonuses(r), 0)
		case "ability-increases":
			add(f.name, abilityIncreases(v), 0)
		case "darkvision":
			if n, ok := toNum(v); ok && n > 0 {
				add(f.name, fmt.Sprintf("%s ft.", edn.String(v)), 0)
			}
		case "profs":
			// A class's saving throws are its own field (saving_throws).
			if m, ok := v.(edn.Map); ok {
				rest := edn.Map{}
				for k, x := range m {
					if nameOf(k) != "save" {
						rest[k] = x
					}
				}
				add(f.name, words(rest), 0)
			}
		case "spells":
			add(f.name, grantedSpells(v), 0)
		case "spellcasting":
			add(f.name, spellcasting(v), 0)
		case "subclass-title":
			if t := strings.TrimSpace(r.str("subclass-title")); t != "" {
				text := "Chosen from this class's subclasses."
				if lvl := r.int32("subclass-level"); lvl > 0 {
					text = fmt.Sprintf("Chosen at level %d from this class's subclasses.", lvl)
				}
				add(t, text, 0)
			}
		case "ability-increase-levels":
			if s := words(v); s != "" {
				add(f.name, "At levels "+s+".", 0)
			}
		case "equipment":
			add(f.name, equipment(r), 0)
		default:
			add(f.name, words(v), 0)
		}
	}
	if props, ok := r.get("props").(edn.Map); ok {
		for _, k := range sortedKeys(props) {
			add(propName(nameOf(k)), propText(nameOf(k), props[k]), 0)
		}
	}
	for i, m := range mapsIn(r.get("level-modifiers")) {
		mr := rec{m: m, d: r.d, where: r.where + " :level-modifiers"}
		typ := nameOf(mr.get("type"))
		if typ == "" {
			if v := mr.get("value"); v != nil {
				r.d.warnf("%s: ignored :level-modifiers entry %d: no :type for its :value %s", r.where, i+1, clip(edn.String(v)))
			}
			continue
		}
		text := propText(typ, mr.get("value"))
		if text == "" {
			text = "Yes."
		}
		add(propName(typ), text, mr.int32("level"))
	}
	for _, m := range mapsIn(r.get("level-selections")) {
		sr := rec{m: m, d: r.d, where: r.where + " :level-selections"}
		what := humanize(nameOf(sr.get("type")))
		if what == "" {
			continue
		}
		text := "Choose one."
		if n := sr.int32("num"); n > 1 {
			text = fmt.Sprintf("Choose %d.", n)
		}
		add(what, text, sr.int32("level"))
	}
	return blocks
}

// propText is a prop's or level modifier's value as a card says it:
// speeds in feet, a switch as "Yes.", a spell as its name and ability.
func propText(key string, v any) string {
	s := words(v)
	switch {
	case s == "yes":
		return "Yes."
	case strings.HasSuffix(key, "-speed") && s != "":
		if _, ok := toNum(v); ok {
			return s + " ft."
		}
	}
	return s
}

func propName(key string) string {
	if n, ok := propNames[key]; ok {
		return n
	}
	return humanize(key)
}

// mapsIn returns the maps among a vector's elements.
func mapsIn(v any) []edn.Map {
	var items []any
	switch x := v.(type) {
	case edn.Vector:
		items = x
	case edn.Set:
		items = x
	}
	var out []edn.Map
	for _, it := range items {
		if m, ok := it.(edn.Map); ok {
			out = append(out, m)
		}
	}
	return out
}

// term is a key or keyword as a card says it: abilities in full
// ("Strength"), others as words ("animal handling").
func term(v any) string {
	n := nameOf(v)
	if a := lkv1.AbilityName(n); lkv1.IsAbility(a) {
		return title(a)
	}
	return strings.ReplaceAll(n, "-", " ")
}

func title(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// words writes any builder value as text: a map of names to true as the
// names ("acrobatics, arcana"), of names to numbers as "name n", a choice
// {:choose 2 :options {...}} as "choose 2: ...", nested maps as
// "key: value; ...", lists joined by commas.
func words(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case bool:
		if x {
			return "yes"
		}
		return ""
	case string:
		return strings.TrimSpace(x)
	case edn.Keyword:
		return term(x)
	case int64, float64:
		return edn.String(x)
	case edn.Vector, edn.Set:
		var parts []string
		for _, e := range listOf(x) {
			if s := words(e); s != "" {
				parts = append(parts, s)
			}
		}
		return strings.Join(parts, ", ")
	case edn.Map:
		// A spell: {:key :guidance :ability :orcpub.dnd.e5.character/wis}.
		if k, ok := x[edn.Keyword("key")]; ok {
			if a := x[edn.Keyword("ability")]; a != nil {
				return humanize(nameOf(k)) + " (" + term(a) + ")"
			}
			return humanize(nameOf(k))
		}
		if opts, ok := x[edn.Keyword("options")]; ok {
			s := words(opts)
			if s == "" {
				return ""
			}
			if n, ok := toNum(x[edn.Keyword("choose")]); ok && n > 0 {
				return fmt.Sprintf("choose %s from %s", edn.String(x[edn.Keyword("choose")]), s)
			}
			return "from " + s
		}
		var names, parts []string
		for _, k := range sortedKeys(x) {
			switch val := x[k].(type) {
			case bool:
				if val {
					names = append(names, term(k))
				}
			case int64, float64:
				if n, _ := toNum(val); n == 1 {
					names = append(names, term(k))
				} else if n != 0 {
					names = append(names, fmt.Sprintf("%s %s", term(k), edn.String(val)))
				}
			default:
				if s := words(val); s != "" {
					parts = append(parts, term(k)+": "+s)
				}
			}
		}
		if len(names) > 0 {
			parts = append([]string{strings.Join(names, ", ")}, parts...)
		}
		return strings.Join(parts, "; ")
	}
	return ""
}

func listOf(v any) []any {
	switch x := v.(type) {
	case edn.Vector:
		return x
	case edn.Set:
		return x
	}
	return nil
}

// abilityBonuses writes :abilities {:orcpub.dnd.e5.character/str 1} as
// "Strength +1".
func abilityBonuses(r rec) string {
	m, ok := r.get("abilities").(edn.Map)
	if !ok {
		return ""
	}
	var parts []string
	for _, k := range sortedKeys(m) {
		n, ok := toNum(m[k])
		if !ok {
			r.d.warnf("%s: ignored :abilities %s: %s, want a number", r.where, edn.String(k), typeName(m[k]))
			continue
		}
		if n != 0 {
			parts = append(parts, fmt.Sprintf("%s %+g", term(k), n))
		}
	}
	return strings.Join(parts, ", ")
}

// abilityIncreases writes a feat's :ability-increases: pairs [1 :con] as
// "Constitution +1", a set of abilities as a choice of one (with :saves?,
// its saving throws too).
func abilityIncreases(v any) string {
	var pairs, choice []string
	saves := false
	for _, e := range listOf(v) {
		switch x := e.(type) {
		case edn.Vector:
			if len(x) == 2 {
				if n, ok := toNum(x[0]); ok {
					who := term(x[1])
					if who == "any" {
						who = "any ability of your choice"
					}
					pairs = append(pairs, fmt.Sprintf("%s %+g", who, n))
				}
			}
		case edn.Keyword:
			if nameOf(x) == "saves?" {
				saves = true
				continue
			}
			choice = append(choice, term(x))
		}
	}
	if len(choice) > 0 {
		sort.Strings(choice)
		s := "+1 to one of " + strings.Join(choice, ", ")
		if saves {
			s += ", and proficiency in its saving throws"
		}
		pairs = append(pairs, s)
	}
	return strings.Join(pairs, ", ")
}

// grantedSpells writes a race's :spells [{:value {:key :aid :level 2
// :ability ...}}] as "Aid (from level 2; Charisma)".
func grantedSpells(v any) string {
	var parts []string
	for _, m := range mapsIn(v) {
		val, ok := m[edn.Keyword("value")].(edn.Map)
		if !ok {
			continue
		}
		name := humanize(nameOf(val[edn.Keyword("key")]))
		if name == "" {
			continue
		}
		var notes []string
		if n, ok := toNum(val[edn.Keyword("level")]); ok && n > 0 {
			notes = append(notes, fmt.Sprintf("from level %g", n))
		}
		if a := val[edn.Keyword("ability")]; a != nil {
			notes = append(notes, term(a))
		}
		if len(notes) > 0 {
			name += " (" + strings.Join(notes, "; ") + ")"
		}
		parts = append(parts, name)
	}
	return strings.Join(parts, ", ")
}

// spellcasting writes a class's :spellcasting: its ability, its spell
// list, and the spells known by class level and the list by spell level.
func spellcasting(v any) string {
	m, ok := v.(edn.Map)
	if !ok {
		return ""
	}
	var parts []string
	if a := m[edn.Keyword("ability")]; a != nil {
		parts = append(parts, "Spellcasting ability "+term(a))
	}
	if l := nameOf(m[edn.Keyword("spell-list-kw")]); l != "" {
		parts = append(parts, "the "+l+" spell list")
	}
	if known, ok := m[edn.Keyword("spells-known")].(edn.Map); ok {
		parts = append(parts, "spells known gained by level: "+byNumber(known, func(v any) string { return words(v) }))
	}
	if list, ok := m[edn.Keyword("spell-list")].(edn.Map); ok {
		parts = append(parts, "spells by spell level: "+byNumber(list, func(v any) string {
			var names []string
			for _, s := range listOf(v) {
				names = append(names, term(s))
			}
			sort.Strings(names)
			return strings.Join(names, ", ")
		}))
	}
	if len(parts) == 0 {
		return ""
	}
	return title(strings.Join(parts, "; ")) + "."
}

// byNumber writes a map keyed by level, in level order: "1: 2, 2: 1".
func byNumber(m edn.Map, val func(any) string) string {
	keys := make([]any, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, _ := toNum(keys[i])
		b, _ := toNum(keys[j])
		return a < b
	})
	var parts []string
	for _, k := range keys {
		if s := val(m[k]); s != "" {
			parts = append(parts, edn.String(k)+": "+s)
		}
	}
	return strings.Join(parts, "; ")
}

// equipment writes a background's :equipment, :equipment-choices and
// :treasure as one line.
func equipment(r rec) string {
	var parts []string
	if s := words(r.get("equipment")); s != "" {
		parts = append(parts, s)
	}
	for _, c := range listOf(r.get("equipment-choices")) {
		cm, ok := c.(edn.Map)
		if !ok {
			continue
		}
		opts := words(cm[edn.Keyword("options")])
		if opts == "" {
			continue
		}
		name, _ := cm[edn.Keyword("name")].(string)
		if name = strings.TrimSpace(name); name != "" {
			opts = name + " (one of " + opts + ")"
		} else {
			opts = "one of " + opts
		}
		parts = append(parts, opts)
	}
	if t, ok := r.get("treasure").(edn.Map); ok {
		for _, k := range sortedKeys(t) {
			if n, ok := toNum(t[k]); ok && n > 0 {
				parts = append(parts, fmt.Sprintf("%s %s", edn.String(t[k]), nameOf(k)))
			}
		}
	}
	return strings.Join(parts, "; ")
}
