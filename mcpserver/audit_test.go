package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"text/tabwriter"

	"lorekeeper.dev/ingest/open5e"
	"lorekeeper.dev/ingest/open5esnapshot"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// The content audit: every entity of the bundled Open5e snapshot, as the
// normaliser makes it and as the cards render it. A card must show no
// placeholder, no section heading with nothing under it, no structured fact
// that its own text contradicts, and its kind's key facts wherever the
// source has them. The checks here are written apart from the normaliser's
// cross-check, so that one does not vouch for itself.

type auditRow struct {
	checked, corrected, corrections, contradictions, faults int
}

var (
	snapOnce sync.Once
	snap     []*lkv1.Entity
	snapErr  error
)

// snapshot is the bundled snapshot's entities, normalised once per run.
func snapshot(t *testing.T) []*lkv1.Entity {
	t.Helper()
	snapOnce.Do(func() { snap, snapErr = open5e.SnapshotEntities(context.Background()) })
	if snapErr != nil {
		t.Fatal(snapErr)
	}
	return snap
}

// packV2Records is the record count of the bundled pack's v2 content
// endpoints, from their first pages, less the items that are served as
// the weapon or armor record they repeat (ingest/open5e/twins.go).
func packV2Records(t *testing.T) int {
	t.Helper()
	h, err := open5esnapshot.NewHandler()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ep := range open5e.V2Endpoints {
		b, _ := h.File(ep.Version + "/" + ep.Name + "/page-1.json")
		var p struct{ Count int }
		if err := json.Unmarshal(b, &p); err != nil {
			t.Fatalf("%s: %v", ep, err)
		}
		n += p.Count
	}
	for page := 1; ; page++ {
		b, ok := h.File(fmt.Sprintf("v2/items/page-%d.json", page))
		if !ok {
			break
		}
		var p struct {
			Results []struct {
				Key           string
				Weapon, Armor *struct{ Key string }
			}
		}
		if err := json.Unmarshal(b, &p); err != nil {
			t.Fatalf("v2/items page %d: %v", page, err)
		}
		for _, r := range p.Results {
			for _, g := range []*struct{ Key string }{r.Weapon, r.Armor} {
				if g != nil && (g.Key == r.Key || g.Key+"-armor" == r.Key) {
					n--
				}
			}
		}
	}
	return n
}

func TestAudit_snapshotCards(t *testing.T) {
	es := snapshot(t)
	// Every record of the pack's v2 content endpoints is audited (the
	// ingest tests check the counts per document and the v1 fill-ins).
	// The editions split from one core record share its source URL; the
	// v1 sections filed under a v2 book are v1 records.
	records := map[string]bool{}
	for _, e := range es {
		if e.GetDocument().GetSource() == lkv1.Source_SOURCE_OPEN5E_V2 && strings.Contains(e.GetSourceUrl(), "/v2/") {
			records[e.GetSourceUrl()] = true
		}
	}
	if got, want := len(records), packV2Records(t); got != want || want == 0 {
		t.Errorf("%d v2 records among the entities, want the pack's %d", got, want)
	}
	rows := map[string]*auditRow{}
	var total auditRow
	reported := map[string]int{}
	report := func(kind, key, format string, args ...any) {
		// Every fault counts; the first few of each kind are shown.
		if reported[kind]++; reported[kind] <= 5 || testing.Verbose() {
			t.Errorf("%s: "+format, append([]any{key}, args...)...)
		}
	}
	for _, p := range es {
		e := entityFromProto(p, "")
		card := renderEntity(&e)
		id := p.GetKind().Slug() + "\t" + p.GetDocument().GetKey()
		r := rows[id]
		if r == nil {
			r = &auditRow{}
			rows[id] = r
		}
		r.checked++
		if n := len(p.GetCorrections()); n > 0 {
			r.corrected++
			r.corrections += n
		}
		for _, f := range auditPlaceholders(card) {
			r.faults++
			report("placeholder", e.Key, "placeholder %q", f)
		}
		for _, f := range auditHeadings(card) {
			r.faults++
			report("heading", e.Key, "empty section %q", f)
		}
		for _, f := range auditContradictions(&e) {
			r.contradictions++
			report("contradiction", e.Key, "%s", f)
		}
		for _, f := range auditTextFields(&e) {
			r.faults++
			report("text fields", e.Key, "%s", f)
		}
		for _, f := range auditKeyFacts(p, &e, card) {
			r.faults++
			report("key facts", e.Key, "%s", f)
		}
		for _, f := range auditPrinted(&e, card) {
			r.faults++
			report("as printed", e.Key, "%s", f)
		}
		if strings.TrimSpace(summary(&e)) == "" || summary(&e) == strings.ReplaceAll(e.Kind, "-", " ") {
			r.faults++
			report("summary", e.Key, "search line has no summary: %q", summary(&e))
		}
		if headingMarks.MatchString(summary(&e)) {
			r.faults++
			report("summary", e.Key, "search line prints a heading's marks: %q", summary(&e))
		}
		if e.Item != nil && e.Item.Base != "" && !strings.Contains(summary(&e), "("+e.Item.Base+")") {
			r.faults++
			report("summary", e.Key, "search line does not say what the item is made from (%s): %q", e.Item.Base, summary(&e))
		}
	}

	ids := make([]string, 0, len(rows))
	for id := range rows {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "kind\tdocument\tchecked\tcorrected\tcorrections\tcontradictions left\tother faults\t")
	for _, id := range ids {
		r := rows[id]
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t\n", id, r.checked, r.corrected, r.corrections, r.contradictions, r.faults)
		total.checked += r.checked
		total.corrected += r.corrected
		total.corrections += r.corrections
		total.contradictions += r.contradictions
		total.faults += r.faults
	}
	fmt.Fprintf(tw, "total\t\t%d\t%d\t%d\t%d\t%d\t\n", total.checked, total.corrected, total.corrections, total.contradictions, total.faults)
	tw.Flush()
	t.Logf("content audit of the snapshot's cards:\n%s", b.String())
	if total.contradictions != 0 || total.faults != 0 {
		t.Errorf("%d contradictions and %d other faults left (by check: %v)", total.contradictions, total.faults, reported)
	}
}

var (
	// placeholderLine is a paragraph that is only a bracketed stand-in,
	// possibly after a block's name: "[Column data]".
	placeholderLine = regexp.MustCompile(`(?m)^(?:\*\*\*[^*]+\*\*\*\s*|-\s*)?\[[^\[\]()]{1,40}\]\s*$`)
	knownStandIns   = regexp.MustCompile(`(?i)\[(column data|none provided)\]`)
	// zeroWorth is a price standing in for none: a free material "worth 0 gp".
	zeroWorth = regexp.MustCompile(`(?i)\bworth 0(?:\.0+)? gp\b`)
	// emptyBlockLine is a block's name with no text after it.
	emptyBlockLine = regexp.MustCompile(`^\*\*\*[^*]+\.\*\*\*\s*$`)
	// boldLine is a bold line standing as a heading.
	boldLine = regexp.MustCompile(`^\*\*[^*]+\*\*\s*$`)
)

func auditPlaceholders(card string) []string {
	out := placeholderLine.FindAllString(card, -1)
	out = append(out, knownStandIns.FindAllString(card, -1)...)
	return append(out, zeroWorth.FindAllString(card, -1)...)
}

// auditHeadings finds the headings with nothing under them before the
// next heading of the same or a higher level, the footnotes or the
// citation, and the named blocks with no text.
func auditHeadings(card string) []string {
	var out []string
	lines := strings.Split(card, "\n")
	level := func(l string) int {
		n := len(l) - len(strings.TrimLeft(l, "#"))
		if n > 0 && strings.HasPrefix(l[n:], " ") {
			return n
		}
		return 0
	}
	for i, l := range lines {
		if h := level(l); h > 0 {
			next := ""
			for _, m := range lines[i+1:] {
				if strings.TrimSpace(m) != "" {
					next = m
					break
				}
			}
			if next == "" || strings.HasPrefix(next, "*Source:") || strings.HasPrefix(next, "*Corrected from the source") {
				out = append(out, l)
			} else if n := level(next); n > 0 && n <= h {
				out = append(out, l)
			}
		}
		if emptyBlockLine.MatchString(l) {
			// A block whose text is a table has the table under its name.
			next := ""
			for _, m := range lines[i+1:] {
				if strings.TrimSpace(m) != "" {
					next = m
					break
				}
			}
			if !strings.HasPrefix(next, "|") {
				out = append(out, l)
			}
		}
		// A bold line standing as a heading needs something under it too.
		if boldLine.MatchString(l) {
			next := ""
			for _, m := range lines[i+1:] {
				if strings.TrimSpace(m) != "" {
					next = m
					break
				}
			}
			if next == "" || level(next) > 0 || strings.HasPrefix(next, "*Source:") {
				out = append(out, l)
			}
		}
	}
	return out
}

var (
	// headingMarks are a markdown heading's marks inside a one-line text.
	headingMarks  = regexp.MustCompile(`(^|\s)#{1,6}\s`)
	summaryToHit  = regexp.MustCompile(`^([+-]\d+) to hit`)
	summaryReach  = regexp.MustCompile(`reach (\d+) ft\.`)
	summaryRange  = regexp.MustCompile(`range (\d+(?:/\d+)?) ft\.`)
	summaryDice   = regexp.MustCompile(`\b(\d+d\d+)([+-]\d+)?\b`)
	damageTypeRe  = regexp.MustCompile(`\b(acid|bludgeoning|cold|fire|force|lightning|necrotic|piercing|poison|psychic|radiant|slashing|thunder)\b`)
	abilityWordRe = regexp.MustCompile(`(?i)\b(strength|dexterity|constitution|intelligence|wisdom|charisma)\b`)
)

// namesUngiven reports whether text does nothing but name an action that
// no block of e gives ("The lich uses Paralyzing Touch."): its attack
// summary is the source's structured data, the only stat line there is.
func namesUngiven(e *Entity, text string) bool {
	given, names := namedBlock(e, text)
	return names && given == ""
}

// givenText is the text of the action text only names, where a block of e
// gives it, else text.
func givenText(e *Entity, text string) string {
	if given, _ := namedBlock(e, text); given != "" {
		return given
	}
	return text
}

// namedBlock is the text of e's block giving the action text only names
// ("The dread knight makes a cursed greatsword attack."), "" when no block
// does, and whether text only names one.
func namedBlock(e *Entity, text string) (string, bool) {
	named, ok := open5e.NamedAction(text)
	if !ok {
		return "", false
	}
	for _, bl := range e.Blocks {
		name, _, _ := strings.Cut(bl.Name, " (")
		if _, ref := open5e.NamedAction(bl.Text); strings.EqualFold(name, named) && !ref {
			return bl.Text, true
		}
	}
	return "", true
}

// squash lower-cases s and drops its spaces, so that "19 (2d10 + 8)" reads
// "19(2d10+8)".
func squash(s string) string {
	return strings.ToLower(strings.NewReplacer(" ", "", "\n", "", "−", "-", "–", "-").Replace(s))
}

// auditContradictions checks the structured facts a card shows against the
// entity's own text: each attack summary against its action's text, a
// spell's damage and saving throw against its description.
func auditContradictions(e *Entity) []string {
	var out []string
	for _, bl := range e.Blocks {
		if bl.Attack == "" {
			continue
		}
		if strings.TrimSpace(bl.Text) == "" || namesUngiven(e, bl.Text) {
			continue
		}
		// A block only naming an action the creature gives ("The dread
		// knight makes a cursed greatsword attack.") is checked against
		// that action's text.
		text := squash(givenText(e, bl.Text))
		say := func(format string, args ...any) {
			out = append(out, fmt.Sprintf("%s: attack %q: ", bl.Name, bl.Attack)+fmt.Sprintf(format, args...))
		}
		if m := summaryToHit.FindStringSubmatch(bl.Attack); m != nil && !strings.Contains(text, m[1]) {
			say("the text has no %s", m[1])
		}
		if m := summaryReach.FindStringSubmatch(bl.Attack); m != nil && !strings.Contains(text, "reach"+m[1]) {
			say("the text has no reach %s", m[1])
		}
		if m := summaryRange.FindStringSubmatch(bl.Attack); m != nil && !strings.Contains(text, "range"+m[1]) {
			say("the text has no range %s", m[1])
		}
		for _, m := range summaryDice.FindAllStringSubmatch(bl.Attack, -1) {
			// The dice with their bonus, closed: "(2d10+8)", or "(2d6)"
			// when the summary has no bonus.
			if want := "(" + m[1] + m[2] + ")"; !strings.Contains(text, want) {
				say("the text has no %s", want)
			}
		}
		for _, typ := range damageTypeRe.FindAllString(bl.Attack, -1) {
			if !strings.Contains(text, typ) {
				say("the text never says %s", typ)
			}
		}
	}
	if s := e.Spell; s != nil && strings.TrimSpace(e.Description+e.HigherLevel) != "" {
		text := e.Description + "\n" + e.HigherLevel
		sq := squash(text)
		for _, d := range s.DamageTypes {
			if !regexp.MustCompile(`(?i)\b` + regexp.QuoteMeta(d) + `\b`).MatchString(text) {
				out = append(out, fmt.Sprintf("spell damage type %q is not in the text", d))
			}
		}
		for _, m := range summaryDice.FindAllString(squash(s.DamageRoll), -1) {
			if !strings.Contains(sq, m) {
				out = append(out, fmt.Sprintf("spell damage roll %q is not in the text", m))
			}
		}
		if a := s.SavingThrowAbility; a != "" && !abilityWordRe.MatchString(text) {
			out = append(out, fmt.Sprintf("spell saving throw %q is not in the text", a))
		} else if a != "" && !strings.Contains(strings.ToLower(text), a) {
			out = append(out, fmt.Sprintf("spell saving throw %q is not in the text", a))
		}
	}
	return out
}

var (
	// rolledDamage is damage a text rolls: "22 (4d10) fire damage",
	// "2d8 radiant damage", "an extra 1d6 Cold damage".
	rolledDamage = regexp.MustCompile(`(?i)\b\d+d\d+(?:\s*[+−-]\s*\d+)?\)?\s+(acid|bludgeoning|cold|fire|force|lightning|necrotic|piercing|poison|psychic|radiant|slashing|thunder)\s+damage\b`)
	// takenBySelf is damage the caster takes or a text says can't be
	// dealt: "you take 1d10 necrotic damage", "... to you".
	takenBySelf = regexp.MustCompile(`(?i)\byou\b[^.;]*\btake\s+[^.;]*$|\bcan't\b[^.;]*$`)
	// calledSave is a saving throw a text calls for.
	calledSave = regexp.MustCompile(`(?i)\b(strength|dexterity|constitution|intelligence|wisdom|charisma)\s+saving throw\b`)
	// orBe is a condition a failed save inflicts, in so many words: "or be
	// frightened", "or become paralyzed", "or be knocked prone" (not after
	// "can't": "can't take the Hide action or become invisible").
	orBe        = regexp.MustCompile(`(?i)\bor (?:be|become)\s+(?:knocked\s+)?(blinded|charmed|deafened|frightened|grappled|incapacitated|invisible|paralyzed|petrified|poisoned|prone|restrained|stunned|unconscious)\b`)
	conditionRe = regexp.MustCompile(`(?i)\b(blinded|charmed|deafened|exhaustion|frightened|grappled|incapacitated|invisible|paralyzed|petrified|poisoned|prone|restrained|stunned|unconscious)\b`)
)

// auditTextFields checks that the fields that filter say what a spell's
// description and each creature block's text say, read apart from the
// normaliser: every damage type the text rolls (other than what the caster
// takes) in the damage types, a saving throw the text calls for in the
// saving throw, a condition a failed save inflicts ("or be frightened") in
// the conditions, and no condition the text never names.
func auditTextFields(e *Entity) []string {
	var out []string
	check := func(what, text string, types []string, save string, conditions []string) {
		for _, m := range rolledDamage.FindAllStringSubmatchIndex(text, -1) {
			typ := strings.ToLower(text[m[2]:m[3]])
			before := text[strings.LastIndexAny(text[:m[0]], ".;\n")+1 : m[0]]
			if takenBySelf.MatchString(before) || strings.HasPrefix(text[m[1]:], " to you") || slices.Contains(types, typ) {
				continue
			}
			out = append(out, fmt.Sprintf("%s: the text deals %s damage, the damage types say %q", what, typ, types))
		}
		if m := calledSave.FindStringSubmatch(text); m != nil && save == "" {
			out = append(out, fmt.Sprintf("%s: the text calls for a %s saving throw, the field has none", what, m[1]))
		} else if save != "" && !strings.Contains(strings.ToLower(text), save) {
			out = append(out, fmt.Sprintf("%s: saving throw %q is not in the text", what, save))
		}
		for _, m := range orBe.FindAllStringSubmatchIndex(text, -1) {
			before := text[strings.LastIndexAny(text[:m[0]], ".;\n")+1 : m[0]]
			if c := strings.ToLower(text[m[2]:m[3]]); !slices.Contains(conditions, c) && !strings.Contains(before, "can't") {
				out = append(out, fmt.Sprintf("%s: the text inflicts %s, the conditions say %q", what, c, conditions))
			}
		}
		for _, c := range conditions {
			if !slices.ContainsFunc(conditionRe.FindAllString(text, -1), func(w string) bool { return strings.EqualFold(w, c) }) {
				out = append(out, fmt.Sprintf("%s: condition %q is not in the text", what, c))
			}
		}
	}
	if s := e.Spell; s != nil {
		check("spell", e.Description, s.DamageTypes, s.SavingThrowAbility, s.Conditions)
	}
	if e.Creature != nil {
		for _, bl := range e.Blocks {
			check(bl.Name, bl.Text+" "+bl.Attack, bl.DamageTypes, bl.SavingThrow, bl.Conditions)
		}
	}
	return out
}

// auditKeyFacts checks that the card shows its kind's key facts where the
// entity has them.
func auditKeyFacts(p *lkv1.Entity, e *Entity, card string) []string {
	var out []string
	need := func(what, s string) {
		if !strings.Contains(card, s) {
			out = append(out, "card does not show "+what)
		}
	}
	switch {
	case e.Spell != nil:
		s := e.Spell
		if s.Level == 0 {
			need("the level", "cantrip")
		} else {
			need("the level", lkv1.Ordinal(s.Level)+"-level")
		}
		if s.School != "" && !strings.Contains(strings.ToLower(card), strings.ToLower(s.School)) {
			out = append(out, "card does not show the school")
		}
		for _, f := range []struct{ label, v string }{
			{"**Casting Time:**", s.CastingTime}, {"**Range:**", s.Range},
			{"**Components:**", s.Components}, {"**Duration:**", s.Duration},
		} {
			if f.v != "" {
				need(f.label, f.label)
			}
		}
	case e.Creature != nil:
		need("armor class", "**Armor Class** ")
		need("hit points", "**Hit Points** ")
		if len(e.Creature.Speed) > 0 || e.Creature.SpeedText != "" {
			need("speed", "**Speed** ")
		}
		if e.Creature.AbilityScores != nil {
			need("ability scores", "| STR | DEX | CON | INT | WIS | CHA |")
		}
		if e.Creature.ChallengeRatingText != "" {
			need("challenge", "**Challenge** "+e.Creature.ChallengeRatingText)
		}
		c := e.Creature
		if c.InitiativeBonus != nil && e.GameSystem == "5e-2024" {
			need("initiative", fmt.Sprintf("**Initiative** %s (", signed(*c.InitiativeBonus)))
		}
		if c.LegendaryIntro != "" {
			need("the legendary actions' paragraph", firstWords(c.LegendaryIntro, 8))
		} else if c.LegendaryPerRound > 0 {
			need("the legendary actions a round", fmt.Sprint(c.LegendaryPerRound))
		}
		for _, bl := range e.Blocks {
			if emptyBlock(bl) || bl.Name == "" {
				continue
			}
			// The lines of the blocks of that name (an action and a
			// legendary action can share one).
			l := strings.ToLower(strings.Join(blockLines(card, bl.Name), "\n"))
			dashless := strings.NewReplacer("–", "-", "—", "-").Replace
			switch {
			case l == "":
				out = append(out, "card does not show the block "+bl.Name)
			case bl.Usage != "" && !strings.Contains(dashless(l), dashless(strings.ToLower(bl.Usage))) &&
				!regexp.MustCompile(`\(recharge|\d/day`).MatchString(l):
				out = append(out, fmt.Sprintf("%s: card does not show its usage %s", bl.Name, bl.Usage))
			case bl.Cost > 1 && !strings.Contains(l, fmt.Sprintf("costs %d actions", bl.Cost)):
				out = append(out, fmt.Sprintf("%s: card does not show its cost %d", bl.Name, bl.Cost))
			case bl.Form != "" && !strings.Contains(l, strings.ToLower(bl.Form)):
				out = append(out, fmt.Sprintf("%s: card does not show its form %s", bl.Name, bl.Form))
			}
		}
	case e.Item != nil:
		it := e.Item
		if it.Rarity != "" {
			need("rarity", it.Rarity)
		}
		if it.CostGP != nil && *it.CostGP > 0 {
			need("cost", "**Cost:** "+num(*it.CostGP)+" gp")
		}
		// Open5e's weapons and armor carry no cost (their copies among
		// the items do), and a few items neither cost nor rarity: a card
		// cannot show what the source does not give.
		if w := it.Weapon; w != nil && w.DamageDice != "" {
			need("weapon damage", "**Damage:** "+w.DamageDice)
		}
		if w := it.Weapon; w != nil && w.RangeNormal > 0 {
			need("the weapon's range", fmt.Sprintf("%d/%d", w.RangeNormal, w.RangeLong))
		}
		if w := it.Weapon; w != nil && w.Mastery != "" {
			need("the weapon's mastery", "**Mastery:** "+title(w.Mastery))
			if slices.Contains(w.Properties, w.Mastery) {
				out = append(out, "mastery "+w.Mastery+" listed among the properties")
			}
		}
		if a := it.Armor; a != nil && (a.ACBase > 0 || a.ACDisplay != "") {
			need("armor class", "**Armor Class:**")
		}
		if a := it.Armor; a != nil && a.Category == "shield" {
			need("the shield's bonus", fmt.Sprintf("**Armor Class:** +%d", a.ACBase))
		}
	case e.CharacterOption != nil:
		o := e.CharacterOption
		if o.ClassTable != nil {
			need("the class table", "| Level | Proficiency Bonus | Features |")
			for _, l := range o.ClassTable.Levels {
				need(fmt.Sprintf("table level %d", l.Level), "| "+lkv1.Ordinal(l.Level)+" | ")
			}
		}
		if o.HitDice != "" {
			need("hit dice", "**Hit Dice:** "+o.HitDice)
		}
		for _, bl := range e.Blocks {
			if bl.Level > 0 && bl.Name != "" && strings.TrimSpace(bl.Text) != "" {
				need("a feature's level", "***"+strings.TrimSuffix(featureName(bl), ".")+".***")
			}
		}
	}
	if firstText(e) == "" && e.Spell == nil && e.Creature == nil && e.Item == nil && (e.CharacterOption == nil || e.CharacterOption.ClassTable == nil) {
		out = append(out, "no text at all")
	}
	return out
}

var (
	// sourceMarkup is markup of the source's own tooling that reached a
	// card: a 5etools reference ("Cover|XPHB|Total Cover"), an escaped
	// newline, a table glued to a block's name.
	sourceMarkup = regexp.MustCompile(`\|X?[A-Z]{2,6}\|[A-Za-z\[]|\\[nr]|\*\*\*[^*]+\.\*\*\* \|`)
	// regainedRoll is a roll restored as hit points.
	regainedRoll = regexp.MustCompile(`(?i)regains?\b[^.]{0,40}?\b(\d+d\d+)`)
	// typedDamageRe is "<type>[, <type>][, and <type>] damage" and what
	// comes before it.
	typedDamageRe = regexp.MustCompile(`(?i)((?:acid|bludgeoning|cold|fire|force|lightning|necrotic|piercing|poison|psychic|radiant|slashing|thunder)(?:,?\s*(?:and\s+|or\s+)?(?:acid|bludgeoning|cold|fire|force|lightning|necrotic|piercing|poison|psychic|radiant|slashing|thunder))*)\s+damage`)
	defenceWords  = regexp.MustCompile(`(?i)immun|resist|vulnerab|at least`)
)

// auditPrinted checks that values read as a book prints them: no source
// markup, healing never a damage roll, a spell's damage types dealt (not
// an immunity or a vulnerability in its text), no cost or weight of 0, and
// each fact once in the one-line summaries.
func auditPrinted(e *Entity, card string) []string {
	var out []string
	for _, m := range sourceMarkup.FindAllString(card, 3) {
		out = append(out, fmt.Sprintf("source markup %q on the card", m))
	}
	if s := e.Spell; s != nil && s.DamageRoll != "" {
		text := strings.ToLower(e.Description)
		healed := false
		for _, m := range regainedRoll.FindAllStringSubmatch(text, -1) {
			healed = healed || squash(m[1]) == squash(s.DamageRoll)
		}
		if healed && !regexp.MustCompile(regexp.QuoteMeta(squash(s.DamageRoll))+`[^.]{0,30}damage`).MatchString(squash(text)) {
			out = append(out, fmt.Sprintf("healing %s shown as damage", s.DamageRoll))
		}
	}
	if s := e.Spell; s != nil && len(s.DamageTypes) > 0 {
		text := e.Description + "\n" + e.HigherLevel
		for _, d := range s.DamageTypes {
			dealt, named := false, false
			for _, m := range typedDamageRe.FindAllStringSubmatchIndex(text, -1) {
				if !regexp.MustCompile(`(?i)\b` + d + `\b`).MatchString(text[m[2]:m[3]]) {
					continue
				}
				named = true
				// The two words before the types: "immune to", "resistance against".
				before := strings.Fields(text[:m[2]])
				dealt = dealt || !defenceWords.MatchString(strings.Join(before[max(0, len(before)-2):], " "))
			}
			if named && !dealt {
				out = append(out, fmt.Sprintf("damage type %s is only an immunity, resistance or vulnerability in the text", d))
			}
		}
	}
	if it := e.Item; it != nil {
		if it.CostGP != nil && *it.CostGP == 0 || strings.Contains(card, "**Cost:** 0 gp") {
			out = append(out, "a cost of 0")
		}
		if it.WeightLb != nil && *it.WeightLb == 0 || strings.Contains(card, "**Weight:** 0 lb.") {
			out = append(out, "a weight of 0")
		}
	}
	for _, line := range []string{summary(e), keyFacts(e)} {
		seen := map[string]bool{}
		for _, f := range regexp.MustCompile(` · |, `).Split(line, -1) {
			f = strings.ToLower(strings.TrimSpace(f))
			if f == "" {
				out = append(out, fmt.Sprintf("an empty fact in %q", line))
			} else if seen[f] {
				out = append(out, fmt.Sprintf("%q twice in %q", f, line))
			}
			seen[f] = true
		}
	}
	return out
}

// blockLines are the card's lines of the blocks named name.
func blockLines(card, name string) []string {
	name = "***" + strings.TrimSuffix(name, ".")
	var out []string
	for _, l := range strings.Split(card, "\n") {
		if strings.HasPrefix(l, name+".") || strings.HasPrefix(l, name+" (") {
			out = append(out, l)
		}
	}
	return out
}

func firstWords(s string, n int) string {
	w := strings.Fields(s)
	return strings.Join(w[:min(n, len(w))], " ")
}

// A creature action whose text cannot be read (Tome of Beasts' cave dragon
// repeats its Tail attack's numbers under a legendary action that only
// says "The dragon makes a tail attack.") shows no attack summary: the
// source's numbers are dropped, not shown beside a text they may
// contradict, and the card says so.
func TestAudit_unreadableTextShowsNoSummary(t *testing.T) {
	var p *lkv1.Entity
	for _, e := range snapshot(t) {
		if e.GetKey() == "open5e_v2:tob:creature:adult-cave-dragon" {
			p = e
		}
	}
	if p == nil {
		t.Fatal("no adult cave dragon")
	}
	e := entityFromProto(p, "")
	for _, bl := range e.Blocks {
		if bl.Type == "legendary_action" && bl.Name == "Tail" && bl.Attack != "" {
			t.Errorf("legendary Tail shows %q", bl.Attack)
		}
	}
	card := renderFullEntity(&e)
	if !strings.Contains(card, "***Tail.*** The dragon makes a tail attack.") ||
		!strings.Contains(card, "attack summary +13 to hit, reach 15 ft., 2d8 bludgeoning dropped (the text does not say it)") {
		t.Errorf("card:\n%s", card)
	}
}

// A creature's card lists the saving throws a 2014 stat block does: of a
// record listing all six (SRD 5.2, Black Flag), those beyond the ability's
// modifier; of a record listing some, all it lists.
func TestRender_proficientSavesOnly(t *testing.T) {
	e := Entity{Kind: "creature", Name: "Test Dragon", Creature: &Creature{
		AbilityScores: map[string]int32{"strength": 26, "dexterity": 10, "constitution": 29, "intelligence": 18, "wisdom": 15, "charisma": 23},
		SavingThrows:  map[string]int32{"strength": 8, "dexterity": 6, "constitution": 9, "intelligence": 4, "wisdom": 8, "charisma": 6},
	}}
	card := renderEntity(&e)
	if !strings.Contains(card, "**Saving Throws** Dex +6, Wis +8  \n") {
		t.Errorf("card does not list exactly the proficient saves (Dex +6, Wis +8):\n%s", card)
	}
	// A record listing some saves lists those the creature is proficient
	// in, even where one equals the modifier (the Brownie Mystic's Wis +3).
	e.Creature.SavingThrows = map[string]int32{"strength": 8, "intelligence": 4}
	if card := renderEntity(&e); !strings.Contains(card, "**Saving Throws** Str +8, Int +4  \n") {
		t.Errorf("the saves the record lists are not all shown:\n%s", card)
	}
}

// A healing spell's card and summary say the spellcasting modifier the
// text adds to its roll ("1d4 + your spellcasting ability modifier", "2d8
// plus your spellcasting ability modifier"),
// for every such spell of the catalogue, and only for those.
func TestRender_healingPlusModifier(t *testing.T) {
	with, without := 0, 0
	for _, p := range snapshot(t) {
		if p.GetSpell().GetHealingRoll() == "" {
			continue
		}
		e := entityFromProto(p, "")
		roll := e.Spell.HealingRoll
		// SRD 5.2 words it "2d8 plus your spellcasting ability modifier".
		desc := strings.ReplaceAll(strings.ToLower(e.Description), " ", "")
		plus := strings.Contains(desc, roll+"+yourspellcastingabilitymodifier") || strings.Contains(desc, roll+"plusyourspellcastingabilitymodifier")
		want, sum := "**Healing:** "+roll+"  \n", "heals "+roll+" ·"
		if plus {
			want, sum = "**Healing:** "+roll+" + spellcasting modifier  \n", "heals "+roll+" + spellcasting modifier"
			with++
		} else {
			without++
		}
		if card := renderEntity(&e); !strings.Contains(card, want) {
			t.Errorf("%s: card lacks %q:\n%s", e.Key, want, card)
		}
		if line := keyFacts(&e); !strings.Contains(line+" ·", sum) {
			t.Errorf("%s: summary %q lacks %q", e.Key, line, sum)
		}
	}
	if with == 0 || without == 0 {
		t.Errorf("%d healing spells add the modifier, %d do not: want some of each", with, without)
	}
	t.Logf("%d healing spells add the spellcasting modifier, %d do not", with, without)
}

// A summary line names the other books holding the same entity, and the
// name a book gives it when it is another.
func TestRenderSummaries_alsoIn(t *testing.T) {
	// As the tool makes a summary of a lookup's results.
	out := &LookupOutput{Count: 2, Ranking: "structured", Results: summaries([]Entity{
		{Name: "Giant Hyena", Kind: "creature", DocumentName: "System Reference Document 5.1", DocumentKey: "srd-2014",
			URI: "lorekeeper://entity/x", Alternates: []Alternate{{DocumentKey: "srd-2024"}, {DocumentKey: "bfrd", Name: "Hyena, Giant"}}},
		{Name: "Bulette", Kind: "creature", DocumentName: "System Reference Document 5.1", DocumentKey: "srd-2014", URI: "lorekeeper://entity/y"},
	})}
	text := renderSummaries("creature", out)
	if !strings.Contains(text, "lorekeeper://entity/x · also in srd-2024, bfrd (as Hyena, Giant)\n") ||
		!strings.Contains(text, "lorekeeper://entity/y\n") {
		t.Errorf("summaries:\n%s", text)
	}
}

// Another entry of the same name in the same book is "see also", named by
// its section, on the card and the summary line; a copy in another book
// stays "also in".
func TestRender_seeAlsoSameBook(t *testing.T) {
	e := Entity{Name: "Speed", Kind: "rule", DocumentName: "System Reference Document 5.1", DocumentKey: "srd-2014",
		URI: "lorekeeper://entity/a", Rule: &Rule{SectionName: "Monsters"}, Alternates: []Alternate{
			{DocumentKey: "srd-2014", DocumentName: "System Reference Document 5.1", Name: "Speed (Races)", URI: "lorekeeper://entity/b"},
			{DocumentKey: "srd-2024", DocumentName: "System Reference Document 5.2", URI: "lorekeeper://entity/c"},
		}}
	card := renderEntity(&e)
	if !strings.Contains(card, "*See also: Speed (Races) · lorekeeper://entity/b*\n") ||
		!strings.Contains(card, "*Also in: System Reference Document 5.2 (srd-2024) · lorekeeper://entity/c*\n") ||
		strings.Contains(card, "Also in: System Reference Document 5.1") {
		t.Errorf("card:\n%s", card)
	}
	text := renderSummaries("rule", &LookupOutput{Count: 1, Ranking: "structured", Results: summaries([]Entity{e})})
	if !strings.Contains(text, "lorekeeper://entity/a · also in srd-2024 · see also Speed (Races)\n") {
		t.Errorf("summary:\n%s", text)
	}
}

// A summary line ends its facts with one stop, whatever they end with
// ("6 lb.", an ellipsis), for every entity of the catalogue.
func TestRenderSummaries_oneStop(t *testing.T) {
	var es []Entity
	for _, p := range snapshot(t) {
		es = append(es, entityFromProto(p, ""))
	}
	text := renderSummaries("entity", &LookupOutput{Count: len(es), Ranking: "structured", Results: summaries(es)})
	n := 0
	for _, l := range strings.Split(text, "\n") {
		if !strings.HasPrefix(l, "- **") {
			continue
		}
		n++
		i := strings.LastIndex(l, " *") // the document, after the facts
		before, ok := l[:max(i, 0)], i > 0
		if !ok || strings.HasSuffix(before, "..") || strings.HasSuffix(before, "….") || !(strings.HasSuffix(before, ".") || strings.HasSuffix(before, "…") || strings.HasSuffix(before, "?") || strings.HasSuffix(before, "!")) {
			t.Errorf("summary line: %q", l)
		}
	}
	if n != len(es) {
		t.Errorf("%d summary lines for %d entities", n, len(es))
	}
}

// The card never shows a placeholder, even one that reaches it.
func TestRender_placeholders(t *testing.T) {
	e := Entity{Kind: "class", Name: "Test", Description: "[Column data]", CharacterOption: &CharacterOption{},
		Blocks: []Block{{Type: "feature", Name: "Rages", Text: "[Column data]"}, {Type: "feature", Name: "Rage", Text: "You rage.", Level: 1}}}
	p := &lkv1.Entity{Kind: lkv1.Kind_KIND_CLASS, Name: e.Name, Description: e.Description, Blocks: []*lkv1.TextBlock{
		{Type: "feature", Name: "Rages", Text: "[Column data]"}, {Type: "feature", Name: "Rage", Text: "You rage.", Level: 1},
	}, Details: &lkv1.Entity_CharacterOption{CharacterOption: &lkv1.CharacterOptionDetails{}}}
	for _, e := range []Entity{e, entityFromProto(p, "")} {
		card := renderEntity(&e)
		if strings.Contains(card, "[Column data]") || strings.Contains(card, "Rages") || !strings.Contains(card, "***Rage (level 1).*** You rage.") {
			t.Errorf("card:\n%s", card)
		}
		if got := summary(&e); got != "class: features Rage (1)" {
			t.Errorf("summary %q", got)
		}
	}
}

// SRD 5.1 classes show their own columns (Open5e keeps them in its v1
// records) on the card and in the structured table.
func TestAudit_srd51ClassColumns(t *testing.T) {
	byKey := map[string]*lkv1.Entity{}
	for _, e := range snapshot(t) {
		byKey[e.GetKey()] = e
	}
	for _, c := range []struct {
		class, header, row string
		level              int
		columns            map[string]string
	}{
		{"barbarian", "| Level | Proficiency Bonus | Features | Rages | Rage Damage |", "| 20th | +6 | Primal Champion | Unlimited | +4 |", 20, map[string]string{"Rages": "Unlimited", "Rage Damage": "+4"}},
		{"monk", "| Level | Proficiency Bonus | Features | Martial Arts | Ki Points | Unarmored Movement |", "| 1st | +2 | Martial Arts, Unarmored Defense | 1d4 | — | — |", 5, map[string]string{"Martial Arts": "1d6", "Ki Points": "5", "Unarmored Movement": "+10 ft."}},
		{"rogue", "| Level | Proficiency Bonus | Features | Sneak Attack |", "| 3rd | +2 | Roguish Archetype | 2d6 |", 3, map[string]string{"Sneak Attack": "2d6"}},
	} {
		t.Run(c.class, func(t *testing.T) {
			p := byKey["open5e_v2:srd-2014:class:"+c.class]
			if p == nil {
				t.Fatal("not in the snapshot")
			}
			e := entityFromProto(p, "")
			card := renderEntity(&e)
			for _, want := range []string{c.header, c.row} {
				if !strings.Contains(card, want) {
					t.Errorf("card lacks %q:\n%s", want, card)
				}
			}
			got := e.CharacterOption.ClassTable.Levels[c.level-1].Columns
			for k, v := range c.columns {
				if got[k] != v {
					t.Errorf("level %d %s = %q, want %q (%v)", c.level, k, got[k], v, got)
				}
			}
		})
	}
}

// A material's cost and consumption are said once: by its own words when
// they say them ("a diamond worth 300+ GP, which the spell consumes"),
// after them otherwise.
func TestRender_materialSaidOnce(t *testing.T) {
	cost := 300.0
	for _, tt := range []struct{ material, want string }{
		{"a diamond worth 300+ GP, which the spell consumes", "M (a diamond worth 300+ GP, which the spell consumes)  \n"},
		{"A lead-based ink worth at least 10gp, which the spell consumes", "M (A lead-based ink worth at least 10gp, which the spell consumes)  \n"},
		{"a diamond", "M (a diamond, worth 300 gp, consumed)  \n"},
	} {
		e := Entity{Kind: "spell", Name: "Test", Spell: &Spell{Components: "V, S, M", MaterialSpecified: tt.material, MaterialCostGP: &cost, MaterialConsumed: true}}
		if card := renderEntity(&e); !strings.Contains(card, tt.want) {
			t.Errorf("%q: components %q, want %q", tt.material, componentsLine(card), tt.want)
		}
	}
}

// A spell the source gives no description says so, rather than ending
// after its stats (SRD 5.2's Greater Invisibility).
func TestRender_spellWithoutText(t *testing.T) {
	e := Entity{Kind: "spell", Name: "Greater Invisibility", Spell: &Spell{Level: 4, School: "illusion"}}
	if card := renderEntity(&e); !strings.Contains(card, "The source gives no description of this spell") {
		t.Errorf("card of a spell without text:\n%s", card)
	}
	e.Description = "A creature you touch has the Invisible condition."
	if card := renderEntity(&e); strings.Contains(card, "no description") {
		t.Errorf("card of a spell with text says it has none:\n%s", card)
	}
}
