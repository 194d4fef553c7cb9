package mcpserver

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// The markdown renderings: what a DM would paste. One card per entity, a
// citation line under each.

// Card renders an entity of a GetEntity response as the MCP tools and
// resources show it: the markdown card, citation included. The CLI's get
// prints it too, so that a DM sees one card whichever way they ask.
func Card(p *lkv1.Entity, uri string) string {
	e := entityFromProto(p, uri)
	return renderFullEntity(&e)
}

// renderEntity renders one entity as a markdown card, its corrections
// footnoted in a line.
func renderEntity(e *Entity) string { return render(e, false) }

// renderFullEntity renders one entity as a markdown card with its
// corrections listed (detail="full", a resource).
func renderFullEntity(e *Entity) string { return render(e, true) }

func render(e *Entity, full bool) string {
	e = withoutPlaceholders(e)
	var b strings.Builder
	switch {
	case e.Spell != nil:
		renderSpell(&b, e)
	case e.Creature != nil:
		renderCreature(&b, e)
	case e.Item != nil:
		renderItem(&b, e)
	default:
		renderGeneric(&b, e)
	}
	renderCorrections(&b, e.Corrections, full)
	renderCitation(&b, e)
	return strings.TrimRight(b.String(), "\n") + "\n"
}

func title(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// pricedWords is a price in words: "300 gp", "300+ GP", "10gp".
var pricedWords = regexp.MustCompile(`\d[\d,]*\+?\s*gp\b`)

// line writes a "**Label** value" line with a markdown hard break.
func line(b *strings.Builder, label, value string) {
	if value == "" {
		return
	}
	fmt.Fprintf(b, "**%s** %s  \n", label, value)
}

// healing is a spell's healing as a card says it: its roll, and the
// spellcasting modifier when the text adds it ("regains hit points equal
// to 1d4 + your spellcasting ability modifier": Healing Word heals
// 1d4 + modifier, not 1d4; SRD 5.2 writes "plus").
func healing(roll, desc string) string {
	if roll == "" {
		return ""
	}
	for _, m := range plusModifier.FindAllStringSubmatch(desc, -1) {
		if strings.ReplaceAll(m[1], " ", "") == roll {
			return roll + " + spellcasting modifier"
		}
	}
	return roll
}

// plusModifier is a roll the text adds the caster's modifier to: "1d4 +
// your spellcasting ability modifier", SRD 5.2's "2d8 plus your ...".
var plusModifier = regexp.MustCompile(`(?i)\b(\d+d\d+(?:\s*\+\s*\d+)?)\s*(?:\+|plus)\s*your spellcasting ability modifier`)

func renderSpell(b *strings.Builder, e *Entity) {
	s := e.Spell
	fmt.Fprintf(b, "## %s\n", e.Name)
	kind := fmt.Sprintf("%s-level %s", lkv1.Ordinal(s.Level), s.School)
	if s.Level == 0 {
		kind = title(s.School) + " cantrip"
	}
	if s.Ritual {
		kind += " (ritual)"
	}
	fmt.Fprintf(b, "*%s*\n\n", kind)
	line(b, "Casting Time:", castingTime(s.CastingTime))
	rng := s.Range
	if s.Area != "" && !strings.Contains(strings.ToLower(rng), strings.ToLower(s.Area)) {
		// As the books print it: "Self (15-foot cone)".
		rng = strings.TrimSpace(rng + " (" + s.Area + ")")
	}
	line(b, "Range:", rng)
	comp := s.Components
	if s.MaterialSpecified != "" {
		m := strings.TrimSuffix(s.MaterialSpecified, ".")
		said := strings.ToLower(m)
		// What the material's own words say is not said again ("a diamond
		// worth 300+ GP, which the spell consumes").
		if s.MaterialCostGP != nil && *s.MaterialCostGP > 0 && !pricedWords.MatchString(said) {
			// Spells That Don't Suck gives 64 free materials a cost of 0.
			m += fmt.Sprintf(", worth %s gp", num(*s.MaterialCostGP))
		}
		if s.MaterialConsumed && !strings.Contains(said, "consum") {
			m += ", consumed"
		}
		comp += " (" + m + ")"
	}
	line(b, "Components:", comp)
	dur := s.Duration
	if s.Concentration && !strings.Contains(strings.ToLower(dur), "concentration") {
		// As the books print it: "Concentration, up to 1 minute" (Open5e's
		// v2 records drop the "up to").
		if d := strings.ToLower(dur); d != "" && d[0] >= '0' && d[0] <= '9' {
			dur = "up to " + dur
		}
		dur = "Concentration, " + dur
	}
	line(b, "Duration:", dur)
	line(b, "Classes:", strings.Join(s.Classes, ", "))
	line(b, "Subclasses:", s.Subclasses)
	if s.DamageRoll != "" || len(s.DamageTypes) > 0 {
		// The types alone where the record gives no roll (Acid Splash).
		line(b, "Damage:", strings.TrimSpace(s.DamageRoll+" "+strings.Join(s.DamageTypes, ", ")))
	}
	line(b, "Healing:", healing(s.HealingRoll, e.Description))
	if s.SavingThrowAbility != "" {
		line(b, "Saving Throw:", title(s.SavingThrowAbility))
	}
	if s.AttackRoll {
		line(b, "Attack:", "spell attack")
	}
	if s.ReactionCondition != "" {
		line(b, "Trigger:", s.ReactionCondition)
	}
	b.WriteString("\n")
	if e.Description != "" {
		b.WriteString(strings.TrimSpace(e.Description) + "\n\n")
	} else {
		// SRD 5.2's Greater Invisibility: a card of stats alone would
		// look cut off.
		b.WriteString("*The source gives no description of this spell; its other books' copies may.*\n\n")
	}
	if e.HigherLevel != "" {
		b.WriteString("***At Higher Levels.*** " + strings.TrimSpace(e.HigherLevel) + "\n\n")
	}
}

func signed(n int32) string {
	if n >= 0 {
		return "+" + strconv.Itoa(int(n))
	}
	return strconv.Itoa(int(n))
}

func abbrev(ability string) string {
	if len(ability) < 3 {
		return ability
	}
	return title(ability[:3])
}

func renderCreature(b *strings.Builder, e *Entity) {
	c := e.Creature
	fmt.Fprintf(b, "## %s\n", e.Name)
	typ := c.Type
	if c.Subtype != "" {
		typ += " (" + c.Subtype + ")"
	}
	head := strings.TrimSpace(title(c.Size) + " " + typ)
	if c.Alignment != "" {
		head += ", " + c.Alignment
	}
	fmt.Fprintf(b, "*%s*\n\n", head)
	top := b.Len()
	// The book's heading it is grouped under ("Dragons, Chromatic").
	line(b, "Group", c.Group)

	// A value the source does not give (an OrcBrew monster's armor class,
	// hit points, scores) is left out: no creature has 0 of any.
	if c.ArmorClass > 0 {
		ac := strconv.Itoa(int(c.ArmorClass))
		if c.ArmorDetail != "" {
			ac += " (" + c.ArmorDetail + ")"
		}
		line(b, "Armor Class", ac)
	}
	if showInitiative(e) {
		// As SRD 5.2 prints it: the modifier, then the score (10 + it).
		line(b, "Initiative", fmt.Sprintf("%s (%d)", signed(*c.InitiativeBonus), 10+*c.InitiativeBonus))
	}
	if c.HitPoints > 0 {
		hp := strconv.Itoa(int(c.HitPoints))
		if c.HitDice != "" {
			hp += " (" + c.HitDice + ")"
		}
		line(b, "Hit Points", hp)
	}
	line(b, "Speed", speed(c))
	if b.Len() > top {
		b.WriteString("\n")
	}

	if len(c.AbilityScores) > 0 {
		b.WriteString("| STR | DEX | CON | INT | WIS | CHA |\n|:---:|:---:|:---:|:---:|:---:|:---:|\n|")
		for _, a := range lkv1.Abilities() {
			if s, ok := c.AbilityScores[a]; ok {
				fmt.Fprintf(b, " %d (%s) |", s, signed(modifier(s)))
			} else {
				b.WriteString(" — |")
			}
		}
		b.WriteString("\n\n")
	}

	var saves []string
	for _, a := range lkv1.Abilities() {
		if v, ok := c.SavingThrows[a]; ok && !plainSave(c, a, v) {
			saves = append(saves, abbrev(a)+" "+signed(v))
		}
	}
	line(b, "Saving Throws", strings.Join(saves, ", "))
	var skills []string
	for _, k := range sortedKeys(c.Skills) {
		skills = append(skills, title(strings.ReplaceAll(strings.ReplaceAll(k, "_", " "), "-", " "))+" "+signed(c.Skills[k]))
	}
	line(b, "Skills", strings.Join(skills, ", "))
	for _, l := range defenseLines(c) {
		line(b, l.label, l.text)
	}
	senses := c.Senses
	if c.PassivePerception > 0 && !strings.Contains(strings.ToLower(senses), "passive perception") {
		if senses != "" {
			senses += ", "
		}
		senses += fmt.Sprintf("passive Perception %d", c.PassivePerception)
	}
	line(b, "Senses", senses)
	lang := c.Languages
	if lang == "" {
		lang = "—"
	}
	line(b, "Languages", lang)
	chal := c.ChallengeRatingText
	if c.ExperiencePoints > 0 {
		chal += fmt.Sprintf(" (%s XP)", thousands(c.ExperiencePoints))
	}
	line(b, "Challenge", chal)
	if c.ProficiencyBonus > 0 {
		line(b, "Proficiency Bonus", signed(c.ProficiencyBonus))
	}
	line(b, "Environments", strings.Join(environments(c.Environments), ", "))
	b.WriteString("\n")

	if e.Description != "" {
		b.WriteString(strings.TrimSpace(e.Description) + "\n\n")
	}
	sections := []struct{ typ, heading string }{
		{"trait", ""},
		{"action", "Actions"},
		{"bonus_action", "Bonus Actions"},
		{"reaction", "Reactions"},
		{"legendary_action", "Legendary Actions"},
		{"mythic_action", "Mythic Actions"},
		{"lair_action", "Lair Actions"},
	}
	for _, s := range sections {
		first := true
		for _, bl := range e.Blocks {
			if bl.Type != s.typ || emptyBlock(bl) {
				continue
			}
			if first && s.heading != "" {
				fmt.Fprintf(b, "### %s\n\n", s.heading)
				if s.typ == "legendary_action" {
					writeLegendaryIntro(b, c)
				}
			}
			first = false
			writeBlock(b, bl)
		}
	}
	// Blocks of other types (sources may carry more) are not lost.
	for _, bl := range e.Blocks {
		known := false
		for _, s := range sections {
			known = known || bl.Type == s.typ
		}
		if !known {
			writeBlock(b, bl)
		}
	}
}

// defenseLine is a creature's damage or condition line as the card prints it.
type defenseLine struct{ label, text string }

// defenseLines are the creature's damage and condition lines as the book
// prints them ("necrotic; bludgeoning, piercing, and slashing from
// nonmagical attacks not made with silvered weapons"), or, for a source
// that gives keys alone, the keys. Black Flag's resistances and
// vulnerabilities can be to conditions too: "Resistances blinded".
func defenseLines(c *Creature) []defenseLine {
	lines := []struct {
		label   string
		list    []string
		entries []Defense
	}{
		{"Damage Vulnerabilities", c.DamageVulnerabilities, c.DamageVulnerabilityEntries},
		{"Damage Resistances", c.DamageResistances, c.DamageResistanceEntries},
		{"Damage Immunities", c.DamageImmunities, c.DamageImmunityEntries},
		{"Condition Immunities", c.ConditionImmunities, c.ConditionImmunityEntries},
	}
	var out []defenseLine
	for _, l := range lines {
		if len(l.entries) == 0 {
			if len(l.list) > 0 {
				out = append(out, defenseLine{l.label, strings.Join(l.list, ", ")})
			}
			continue
		}
		texts := make([]string, len(l.entries))
		label := l.label
		for i, d := range l.entries {
			texts[i] = d.Text
			if strings.HasPrefix(label, "Damage ") && slices.ContainsFunc(d.Types, isCondition) {
				label = strings.TrimPrefix(label, "Damage ")
			}
		}
		out = append(out, defenseLine{label, strings.Join(texts, "; ")})
	}
	return out
}

func isCondition(k string) bool { return slices.Contains(lkv1.Conditions(), k) }

// emptyBlock reports whether a block has nothing to show.
func emptyBlock(bl Block) bool {
	return strings.TrimSpace(bl.Text) == "" && bl.Attack == ""
}

// showInitiative reports whether the card prints the initiative: 2024
// stat blocks print it; older ones only say the Dexterity modifier, which
// Open5e copies into initiative_bonus, so there it is shown only when it
// says something else.
func showInitiative(e *Entity) bool {
	c := e.Creature
	if c.InitiativeBonus == nil {
		return false
	}
	if e.GameSystem == "5e-2024" {
		return true
	}
	dex, ok := c.AbilityScores["dexterity"]
	return !ok || modifier(dex) != *c.InitiativeBonus
}

// plainSave reports whether a saving throw is only the ability's modifier
// in a record listing all six saves (SRD 5.2 and Black Flag), which the
// ability table shows already. A 2014 stat block lists only the saves a
// creature is proficient in, each shown even when it equals the modifier
// (Tome of Beasts 3's Brownie Mystic: Wis +3).
func plainSave(c *Creature, ability string, v int32) bool {
	score, ok := c.AbilityScores[ability]
	return ok && score > 0 && modifier(score) == v && len(c.SavingThrows) == len(lkv1.Abilities())
}

// writeLegendaryIntro writes the paragraph before the legendary actions,
// or, where the source has none, how many the creature can take.
func writeLegendaryIntro(b *strings.Builder, c *Creature) {
	switch {
	case c.LegendaryIntro != "":
		b.WriteString(strings.TrimSpace(c.LegendaryIntro) + "\n\n")
	case c.LegendaryPerRound > 0:
		fmt.Fprintf(b, "*Legendary Action Uses: %d.*\n\n", c.LegendaryPerRound)
	}
}

// blockName is a block's name with what a stat block prints after it:
// "Fire Breath (Recharge 5–6)", "Wing Attack (Costs 2 Actions)",
// "Bite (Vampire Form Only)"; a name that says it already is left alone.
func blockName(bl Block) string {
	name := strings.TrimSuffix(bl.Name, ".")
	l := strings.ToLower(name)
	var notes []string
	if bl.Form != "" && !strings.Contains(l, strings.ToLower(bl.Form)) {
		notes = append(notes, bl.Form)
	}
	if bl.Usage != "" && !strings.Contains(l, "recharge") && !strings.Contains(l, "/day") {
		notes = append(notes, bl.Usage)
	}
	if bl.Cost > 1 && !strings.Contains(l, "cost") {
		notes = append(notes, fmt.Sprintf("Costs %d Actions", bl.Cost))
	}
	if len(notes) > 0 {
		name += " (" + strings.Join(notes, "; ") + ")"
	}
	return name
}

func writeBlock(b *strings.Builder, bl Block) {
	if emptyBlock(bl) {
		return
	}
	text := strings.TrimSpace(bl.Text)
	if bl.Attack != "" && !strings.Contains(text, bl.Attack) {
		text = "*" + bl.Attack + ".* " + text
	}
	if bl.Name != "" && strings.HasPrefix(text, "|") {
		// A table cannot start on the name's line.
		fmt.Fprintf(b, "***%s.***\n\n%s\n\n", blockName(bl), text)
	} else if bl.Name != "" {
		fmt.Fprintf(b, "***%s.*** %s\n\n", blockName(bl), text)
	} else {
		fmt.Fprintf(b, "- %s\n\n", text)
	}
}

func speed(c *Creature) string {
	if len(c.Speed) == 0 {
		return c.SpeedText
	}
	var parts []string
	if w, ok := c.Speed["walk"]; ok {
		parts = append(parts, fmt.Sprintf("%d ft.", w))
	}
	for _, mode := range []string{"burrow", "climb", "fly", "swim"} {
		if v, ok := c.Speed[mode]; ok && v > 0 {
			p := fmt.Sprintf("%s %d ft.", mode, v)
			if mode == "fly" && c.Speed["hover"] > 0 {
				p += " (hover)"
			}
			parts = append(parts, p)
		}
	}
	if len(parts) == 0 {
		return c.SpeedText
	}
	return strings.Join(parts, ", ")
}

// environments are the environment keys as words ("forest-or-jungle"
// -> "forest or jungle").
func environments(keys []string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = strings.ReplaceAll(k, "-", " ")
	}
	return out
}

// casterTypes say a class's spellcasting progression; a class without
// spellcasting (NONE) or with its own (OTHER) says nothing here.
var casterTypes = map[string]string{"FULL": "full caster", "HALF": "half caster", "THIRD": "third caster", "PACT": "pact magic"}

func thousands(n int32) string {
	s := strconv.Itoa(int(n))
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func renderItem(b *strings.Builder, e *Entity) {
	it := e.Item
	fmt.Fprintf(b, "## %s\n", e.Name)
	var head []string
	switch {
	case it.Weapon != nil && !it.IsMagic:
		w := it.Weapon
		cls := "martial"
		if w.IsSimple {
			cls = "simple"
		}
		reach := "melee"
		if w.IsRanged {
			reach = "ranged"
		}
		head = append(head, fmt.Sprintf("Weapon (%s %s)", cls, reach))
	case it.Armor != nil && !it.IsMagic:
		if it.Armor.Category == "shield" {
			head = append(head, "Shield")
		} else {
			head = append(head, fmt.Sprintf("Armor (%s)", it.Armor.Category))
		}
	default:
		cat := strings.ReplaceAll(it.Category, "-", " ")
		if cat == "" {
			cat = strings.ReplaceAll(e.Kind, "-", " ")
		}
		if it.Base != "" {
			cat += " (" + it.Base + ")"
		}
		head = append(head, title(cat))
	}
	if it.Rarity != "" {
		r := it.Rarity
		if it.RequiresAttunement {
			att := "requires attunement"
			if it.AttunementDetail != "" {
				att = it.AttunementDetail
			}
			r += " (" + att + ")"
		}
		head = append(head, r)
	} else if it.RequiresAttunement {
		head = append(head, "requires attunement")
	}
	fmt.Fprintf(b, "*%s*\n\n", strings.Join(head, ", "))
	mark := b.Len()
	if it.CostGP != nil && *it.CostGP > 0 {
		line(b, "Cost:", num(*it.CostGP)+" gp")
	}
	if it.WeightLb != nil && *it.WeightLb > 0 {
		line(b, "Weight:", num(*it.WeightLb)+" lb.")
	}
	if w := it.Weapon; w != nil {
		if w.DamageDice == "" && w.DamageType == "" {
			line(b, "Damage:", "none")
		} else {
			line(b, "Damage:", strings.TrimSpace(w.DamageDice+" "+w.DamageType))
		}
		var props []string
		for _, p := range w.Properties {
			switch {
			case p == "versatile" && w.VersatileDice != "":
				p += " (" + w.VersatileDice + ")"
			case p == "thrown" && w.RangeNormal > 0:
				p += fmt.Sprintf(" (range %d/%d)", w.RangeNormal, w.RangeLong)
			}
			props = append(props, p)
		}
		line(b, "Properties:", strings.Join(props, ", "))
		line(b, "Mastery:", title(w.Mastery))
		if w.IsRanged && w.RangeNormal > 0 {
			line(b, "Range:", fmt.Sprintf("%d/%d ft.", w.RangeNormal, w.RangeLong))
		}
	}
	if a := it.Armor; a != nil {
		ac := a.ACDisplay
		if ac == "" {
			ac = strconv.Itoa(int(a.ACBase))
			if a.Category == "shield" {
				ac = "+" + ac
			}
			if a.ACAddDex {
				ac += " + Dex modifier"
				if a.ACMaxDex > 0 {
					ac += fmt.Sprintf(" (max %d)", a.ACMaxDex)
				}
			}
		}
		line(b, "Armor Class:", ac)
		if a.StrengthRequired > 0 {
			line(b, "Strength:", fmt.Sprintf("Str %d", a.StrengthRequired))
		}
		if a.StealthDisadvantage {
			line(b, "Stealth:", "Disadvantage")
		}
	}
	if b.Len() > mark {
		b.WriteString("\n")
	}
	if e.Description != "" {
		b.WriteString(strings.TrimSpace(e.Description) + "\n\n")
	}
	for _, bl := range e.Blocks {
		writeBlock(b, bl)
	}
}

func renderGeneric(b *strings.Builder, e *Entity) {
	fmt.Fprintf(b, "## %s\n", e.Name)
	sub := strings.ReplaceAll(e.Kind, "-", " ")
	if o := e.CharacterOption; o != nil && o.ParentName != "" {
		sub += " of " + o.ParentName
	}
	if r := e.Rule; r != nil {
		if r.Category != "" && !strings.EqualFold(r.Category, e.Kind) {
			sub += " · " + r.Category
		}
		if len(r.HeadingPath) > 0 {
			sub += " · " + strings.Join(r.HeadingPath, " › ")
		} else if r.SectionName != "" {
			sub += " · " + r.SectionName
		}
	}
	fmt.Fprintf(b, "*%s*\n\n", title(sub))
	if o := e.CharacterOption; o != nil {
		mark := b.Len()
		line(b, "Prerequisite:", o.Prerequisite)
		line(b, "Feat Type:", strings.ToLower(o.FeatType))
		line(b, "Hit Dice:", o.HitDice)
		line(b, "Spellcasting:", casterTypes[o.CasterType])
		line(b, "Primary Abilities:", strings.Join(o.PrimaryAbilities, ", "))
		line(b, "Saving Throws:", strings.Join(o.SavingThrows, ", "))
		line(b, "Size:", title(o.Size)) // "medium" in v2 records
		if o.Speed > 0 {
			line(b, "Speed:", fmt.Sprintf("%d ft.", o.Speed))
		}
		if b.Len() > mark {
			b.WriteString("\n")
		}
	}
	if r := e.Rule; r != nil && r.Ability != "" {
		line(b, "Ability:", title(r.Ability))
		b.WriteString("\n")
	}
	if e.Description != "" {
		b.WriteString(strings.TrimSpace(e.Description) + "\n\n")
	}
	if o := e.CharacterOption; o != nil {
		renderClassTable(b, e.Name, o.ClassTable)
	}
	for _, bl := range byLevel(e.Blocks) {
		if bl.Name != "" {
			bl.Name = featureName(bl)
		}
		writeBlock(b, bl)
	}
	if r := e.Rule; r != nil && len(r.SeeAlso) > 0 {
		links := make([]string, len(r.SeeAlso))
		for i, l := range r.SeeAlso {
			links[i] = l.Name
			if l.URI != "" {
				links[i] += " (" + l.URI + ")"
			}
		}
		fmt.Fprintf(b, "*See also: %s.*\n\n", strings.Join(links, ", "))
	}
}

func renderCitation(b *strings.Builder, e *Entity) {
	src := e.DocumentName
	if src == "" {
		src = e.DocumentKey
	}
	parts := []string{e.DocumentKey, e.DocumentSource}
	if e.GameSystem != "" {
		parts = append(parts, e.GameSystem)
	}
	score := ""
	if e.SimilarityScore != nil {
		score = fmt.Sprintf(" · similarity %.3f", *e.SimilarityScore)
	}
	fmt.Fprintf(b, "*Source: %s (%s) · %s%s*\n", src, strings.Join(parts, ", "), e.URI, score)
	for _, a := range e.Alternates {
		if a.DocumentKey == e.DocumentKey {
			// Another entry of the same name in the same book, not a
			// copy (the query service names it by its section).
			fmt.Fprintf(b, "*See also: %s · %s*\n", cmp.Or(a.Name, e.Name), a.URI)
			continue
		}
		as := ""
		if a.Name != "" {
			as = " as " + a.Name
		}
		fmt.Fprintf(b, "*Also in: %s (%s)%s · %s*\n", a.DocumentName, a.DocumentKey, as, a.URI)
	}
}

// renderLookup renders a lookup tool's result: a header, the notes, then
// the cards.
// renderLookup renders a lookup: the first cards results as cards (all of
// them when cards < 0), the others one line each.
func renderLookup(noun string, out *LookupOutput, cards int) string {
	var b strings.Builder
	if out.Count == 0 {
		b.WriteString(out.Message + "\n")
	} else {
		fmt.Fprintf(&b, "Found %d %s (%s ranking).\n", out.Count, plural(noun, out.Count), out.Ranking)
	}
	if cards >= 0 && out.Count > cards {
		fmt.Fprintf(&b, "The first %d in full, the other %d one line each: read a URI for one in full, or repeat the call with detail=\"full\".\n", cards, out.Count-cards)
	}
	renderNotes(&b, out.FallbackReason, out.Warnings)
	renderPartNote(&b, noun, out)
	renderUnderstood(&b, out.understood)
	for i := range out.Results {
		e := &out.Results[i]
		if cards >= 0 && i >= cards {
			if i == cards {
				b.WriteString("\n---\n\n")
			}
			fmt.Fprintf(&b, "- **%s** — %s *%s (%s)* · %s\n", e.Name, sentence(keyFacts(e)), e.DocumentName, e.DocumentKey, e.URI)
			continue
		}
		b.WriteString("\n---\n\n")
		if cards < 0 {
			b.WriteString(renderFullEntity(e))
		} else {
			b.WriteString(lookupCard(e, out.Part))
		}
	}
	renderVariants(&b, out.Variants)
	return b.String()
}

// renderPartNote says that the name asked for is a part of the results
// (name_match "part"), not their name.
func renderPartNote(b *strings.Builder, noun string, out *LookupOutput) {
	if out.Part != "" && out.Count > 0 {
		fmt.Fprintf(b, "\n> No %s is named '%s': it is a part of each result below.\n", noun, out.Part)
	}
}

// lookupCard is e's card, or when part is set and e holds a part so named
// (name_match "part"), that part's.
func lookupCard(e *Entity, part string) string {
	if p, ok := partOf(e, part); ok {
		return renderPart(e, p)
	}
	return renderEntity(e)
}

// partOf finds the part of e named name: a headed part of its text
// (lkv1.TextParts) or a named block (a class's feature).
func partOf(e *Entity, name string) (Block, bool) {
	if name == "" {
		return Block{}, false
	}
	if p, ok := textPart(e.Description, name); ok {
		return p, true
	}
	for _, bl := range e.Blocks {
		if strings.EqualFold(bl.Name, name) && bl.Text != "" {
			bl.Text = fmt.Sprintf("***%s.*** %s", featureName(bl), strings.TrimSpace(bl.Text))
			return bl, true
		}
	}
	for _, bl := range e.Blocks {
		if p, ok := textPart(bl.Text, name); ok {
			return p, true
		}
	}
	return Block{}, false
}

// textPart is the part of text headed name (lkv1.TextParts), its heading
// left out when it has a line of its own: the card heads the part.
func textPart(text, name string) (Block, bool) {
	for _, p := range lkv1.TextParts(text) {
		if !strings.EqualFold(p.Name, name) {
			continue
		}
		text := p.Text
		if first, rest, _ := strings.Cut(text, "\n"); strings.EqualFold(strings.Trim(first, "#*_.: "), p.Name) {
			text = rest
		}
		return Block{Name: p.Name, Text: strings.TrimSpace(text)}, true
	}
	return Block{}, false
}

// renderPart is the card of a part of e: what a name asked for when it
// heads a part of e rather than naming e ("surprise" in The Order of
// Combat), the whole a URI away.
func renderPart(e *Entity, part Block) string {
	var b strings.Builder
	kind := strings.ReplaceAll(e.Kind, "-", " ")
	fmt.Fprintf(&b, "## %s\n*Part of %s (%s)*\n\n%s\n\n", part.Name, e.Name, kind, part.Text)
	fmt.Fprintf(&b, "*The whole %s: read %s, or repeat the call with detail=\"full\".*\n", kind, e.URI)
	renderCitation(&b, e)
	return b.String()
}

// nameArgument is the name a lookup input asked for, if any.
func nameArgument(in any) string {
	if n, ok := in.(interface{ nameArg() string }); ok {
		return strings.TrimSpace(n.nameArg())
	}
	return ""
}

// noMatchMessage says that a lookup found nothing, and what is near: the
// suggestions grouped by name with their documents ("Did you mean Fireball
// (srd-2014, srd-2024)?"), and, for a well-known name outside open content,
// that plainly.
func noMatchMessage(noun, name string, out *LookupOutput) string {
	hint := "Try a wildcard name (\"fire*\"), fewer filters, semantic_query, or search_dnd_content."
	if name == "" {
		return fmt.Sprintf("No %s matched. %s", plural(noun, 2), hint)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "No %s named '%s'", noun, name)
	if noun == "rule" {
		// lookup_rule has looked in every edition (otherEditions): no
		// book holds it, and an assistant must not explain it from memory
		// as if one did.
		b.WriteString(" in the open content LoreKeeper holds")
	}
	b.WriteString(".")
	if out.NotOpenContent != "" {
		fmt.Fprintf(&b, " %s is not in any open-licensed document LoreKeeper holds (the SRD and the other open books leave it out).", out.NotOpenContent)
	}
	byName := map[string][]string{}
	var order []string
	var meaning []string
	for _, sg := range out.Suggestions {
		if sg.Via == "counterpart" {
			fmt.Fprintf(&b, " Its open counterpart is %s (%s, %s), which names itself the open stand-in for %s.", sg.Name, sg.Document, sg.URI, out.NotOpenContent)
			continue
		}
		if sg.Via == "meaning" {
			meaning = append(meaning, fmt.Sprintf("%s (%s)", sg.Name, sg.Document))
			continue
		}
		if _, ok := byName[sg.Name]; !ok {
			order = append(order, sg.Name)
		}
		if !slices.Contains(byName[sg.Name], sg.Document) {
			byName[sg.Name] = append(byName[sg.Name], sg.Document)
		}
	}
	if len(order) > 0 {
		parts := make([]string, len(order))
		for i, n := range order {
			parts[i] = fmt.Sprintf("%s (%s)", n, strings.Join(byName[n], ", "))
		}
		fmt.Fprintf(&b, " Did you mean %s?", strings.Join(parts, ", "))
	}
	if len(meaning) > 0 {
		fmt.Fprintf(&b, " Nearest open content by description: %s.", strings.Join(meaning, ", "))
	}
	if len(order) == 0 && len(meaning) == 0 {
		b.WriteString(" " + hint)
	}
	return b.String()
}

func renderNotes(b *strings.Builder, fallback string, warnings []string) {
	if fallback != "" {
		fmt.Fprintf(b, "\n> Note: semantic ranking was unavailable (%s); results are ranked by keyword instead.\n", fallback)
	}
	for _, w := range warnings {
		fmt.Fprintf(b, "\n> Warning: %s\n", w)
	}
}

func plural(noun string, n int) string {
	if n == 1 {
		return noun
	}
	if strings.HasSuffix(noun, "s") {
		return noun + "es"
	}
	return noun + "s"
}

// renderSearch renders search_dnd_content's groups compactly: a line per
// result with its summary and URI, so that an assistant can pick one and
// look it up or read its resource.
func renderSearch(out *SearchOutput) string {
	var b strings.Builder
	if out.Count == 0 {
		b.WriteString(out.Message + "\n")
	} else {
		fmt.Fprintf(&b, "Found %d %s for %q in %d %s (%s ranking); %d on this page.\n", out.Total, plural("result", int(out.Total)), out.Query, len(out.Groups), plural("content type", len(out.Groups)), out.Ranking, out.Count)
	}
	renderUnderstood(&b, out.understood)
	if out.NotOpenContent != "" {
		fmt.Fprintf(&b, "\n> %s is not in any open-licensed document LoreKeeper holds (the SRD and the other open books leave it out); these are the nearest open content.\n", out.NotOpenContent)
	}
	renderNotes(&b, out.FallbackReason, out.Warnings)
	for _, g := range out.Groups {
		fmt.Fprintf(&b, "\n### %s (%d)\n\n", title(strings.ReplaceAll(g.EntityType, "-", " ")), g.Count)
		for i := range g.Results {
			e := &g.Results[i]
			if g.brief {
				fmt.Fprintf(&b, "- **%s** *(%s)* · %s\n", e.Name, e.DocumentKey, e.URI)
				continue
			}
			score := ""
			if e.SimilarityScore != nil {
				score = fmt.Sprintf(" · similarity %.3f", *e.SimilarityScore)
			}
			fmt.Fprintf(&b, "- **%s** — %s *%s (%s)* · %s%s\n", e.Name, sentence(summary(e)), e.DocumentName, e.DocumentKey, e.URI, score)
		}
	}
	return b.String()
}

// summary is a one-line description of an entity.
func summary(e *Entity) string {
	switch {
	case e.Spell != nil:
		if e.Spell.Level == 0 {
			return title(e.Spell.School) + " cantrip"
		}
		return fmt.Sprintf("%s-level %s", lkv1.Ordinal(e.Spell.Level), e.Spell.School)
	case e.Creature != nil:
		return fmt.Sprintf("%s %s, CR %s", title(e.Creature.Size), e.Creature.Type, e.Creature.ChallengeRatingText)
	case e.Item != nil:
		return itemSummary(e)
	}
	text := shortText(firstText(e))
	if text == "" {
		return strings.ReplaceAll(e.Kind, "-", " ")
	}
	return strings.ReplaceAll(e.Kind, "-", " ") + ": " + text
}

// shortText is s on one line, cut at a word near 100 bytes, without the
// marks of the headings it runs into ("## Dexterity Checks").
func shortText(s string) string {
	words := strings.Fields(s)
	words = slices.DeleteFunc(words, func(w string) bool { return strings.Trim(w, "#") == "" })
	text := strings.Join(words, " ")
	if len(text) > 100 {
		cut := strings.LastIndex(text[:100], " ")
		if cut < 50 {
			cut = 100
		}
		return text[:cut] + "…"
	}
	// The search line puts its own full stop after the summary.
	return strings.TrimRight(text, ".")
}

// renderDocuments renders list_documents as aligned columns, then each
// document's licence notes and notices (the same notice said once for
// every document that carries it).
func renderDocuments(out *DocumentsOutput) string {
	var b strings.Builder
	b.WriteString(renderDocumentList(out))
	renderNotes(&b, "", out.Warnings)
	return b.String()
}

func renderDocumentList(out *DocumentsOutput) string {
	if out.Count == 0 {
		return out.Message + "\n"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d documents (pass the KEY in a tool's documents parameter):\n\n", out.Count)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tNAME\tSOURCE\tENTITIES\tPUBLISHER\tSYSTEM\tLICENCE")
	for _, d := range out.Documents {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\n", d.DocumentKey, d.DocumentName, d.SourceAPI, d.EntityCount, d.Publisher, d.GameSystem, d.License)
	}
	tw.Flush()
	var notes []string
	var notices []string
	keysOf := map[string][]string{}
	for _, d := range out.Documents {
		if d.LicenseNote != "" {
			notes = append(notes, fmt.Sprintf("- %s: the records disagree: %s.", d.DocumentKey, d.LicenseNote))
		}
		if n := strings.TrimSpace(d.Notice); n != "" {
			if keysOf[n] == nil {
				notices = append(notices, n)
			}
			keysOf[n] = append(keysOf[n], d.DocumentKey)
		}
	}
	if len(notes) > 0 {
		b.WriteString("\nLicence notes:\n" + strings.Join(notes, "\n") + "\n")
	}
	if len(notices) > 0 {
		b.WriteString("\nNotices (OGL section 15, attributions):\n")
		for _, n := range notices {
			fmt.Fprintf(&b, "- %s: %s\n", strings.Join(keysOf[n], ", "), strings.ReplaceAll(n, "\n\n", " "))
		}
	}
	return b.String()
}

// castingTime prints the normalised keys some sources use ("action",
// "bonus-action") as a book would ("1 action", "1 bonus action").
func castingTime(s string) string {
	switch s {
	case "action", "bonus-action", "reaction":
		return "1 " + strings.ReplaceAll(s, "-", " ")
	}
	return s
}
