package srd52

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Spell is a spell as the Spells chapter prints it.
type Spell struct {
	// Name is the heading: "Divine Smite".
	Name string
	// Level is 0 for a cantrip; School is lower-case ("evocation");
	// Classes as the level line lists them ("Paladin").
	Level   int
	School  string
	Classes []string
	// The stat lines, as printed (without their labels): "Bonus Action,
	// which you take immediately after hitting a target with a Melee
	// weapon or an Unarmed Strike"; "Self"; "V, S, M (a grasshopper's
	// hind leg)"; "Concentration, up to 1 minute".
	CastingTime, Range, Components, Duration string
	// Text is the description after the stat lines, markdown, its
	// "Using a Higher-Level Spell Slot" or "Cantrip Upgrade" paragraph
	// included.
	Text string
	// Line is the heading's line in the file, from 1.
	Line int
}

// misprints are the spell names the text misprints, with the name the SRD
// gives the spell (its Open5e record and its class lists agree).
var misprints = map[string]string{
	"Thunderwavea": "Thunderwave",
}

// spells reads every spell of the Spells chapter: the sections, at any
// level, that open with a level line and a Casting Time.
func spells(c *Chapter) ([]*Spell, error) {
	var out []*Spell
	var err error
	c.Walk(func(s *Section) {
		if err != nil || !strings.Contains(s.Text, "**Casting Time:**") {
			return
		}
		var sp *Spell
		if sp, err = parseSpell(s); err != nil {
			err = fmt.Errorf("%s:%d: %w", c.File, s.Line, err)
			return
		}
		out = append(out, sp)
	})
	if err == nil && len(out) == 0 {
		err = fmt.Errorf("%s: no spells (sections with a **Casting Time:** line)", c.File)
	}
	return out, err
}

// statLabel is a stat line's label: "**Casting Time:**".
var statLabel = regexp.MustCompile(`\*\*(Casting Time|Range|Components?|Duration):\*\*`)

// durationValue is what a Duration line can say; the text runs the
// description into it in a few spells ("... up to 10 minutes You touch
// a willing creature."), which is cut off at the end of the match.
var durationValue = regexp.MustCompile(`^(?i)(?:(?:concentration,? )?up to )?(?:\d+ (?:rounds?|minutes?|hours?|days?)|instantaneous|until dispelled(?: or triggered)?|special)`)

var (
	spellLevel = regexp.MustCompile(`^\*Level (\d) (\w+) \(([^)]*)\)\*$`)
	cantrip    = regexp.MustCompile(`^\*(\w+) Cantrip \(([^)]*)\)\*$`)
)

func parseSpell(s *Section) (*Spell, error) {
	sp := &Spell{Name: s.Name, Line: s.Line}
	if n, ok := misprints[sp.Name]; ok {
		sp.Name = n
	}
	text := s.Markdown(5)
	lines := strings.Split(text, "\n")
	var body []string
	levelRead := false
	for i, l := range lines {
		t := strings.TrimSpace(l)
		switch {
		case !levelRead && t != "":
			if err := sp.readLevel(t); err != nil {
				return nil, err
			}
			levelRead = true
		case statLabel.MatchString(t) && len(body) == 0:
			rest := sp.readStats(t)
			if rest != "" {
				body = append(body, rest)
			}
		default:
			if len(body) > 0 || t != "" {
				body = append(body, lines[i])
			}
		}
	}
	sp.Text = strings.TrimSpace(strings.Join(body, "\n"))
	switch {
	case sp.CastingTime == "":
		return nil, fmt.Errorf("spell %q: no Casting Time", sp.Name)
	case sp.Duration == "":
		return nil, fmt.Errorf("spell %q: no Duration", sp.Name)
	case sp.Text == "":
		return nil, fmt.Errorf("spell %q: no description", sp.Name)
	}
	return sp, nil
}

// readLevel reads "*Level 1 Evocation (Paladin)*" or "*Evocation Cantrip
// (Sorcerer, Wizard)*".
func (sp *Spell) readLevel(line string) error {
	var classes string
	if m := spellLevel.FindStringSubmatch(line); m != nil {
		sp.Level, _ = strconv.Atoi(m[1])
		sp.School, classes = strings.ToLower(m[2]), m[3]
	} else if m := cantrip.FindStringSubmatch(line); m != nil {
		sp.School, classes = strings.ToLower(m[1]), m[2]
	} else {
		return fmt.Errorf("spell %q: the line after its heading is not its level and school: %q", sp.Name, line)
	}
	for _, c := range strings.Split(classes, ",") {
		if c = strings.TrimSpace(c); c != "" {
			sp.Classes = append(sp.Classes, c)
		}
	}
	return nil
}

// readStats reads the stat lines on line (most lines carry one, a few all
// four) and returns what follows the Duration on it: description the text
// ran into it.
func (sp *Spell) readStats(line string) string {
	locs := statLabel.FindAllStringSubmatchIndex(line, -1)
	rest := ""
	for i, m := range locs {
		end := len(line)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		v := strings.TrimSpace(line[m[1]:end])
		switch line[m[2]:m[3]] {
		case "Casting Time":
			sp.CastingTime = v
		case "Range":
			sp.Range = v
		case "Component", "Components":
			sp.Components = v
		case "Duration":
			if d := durationValue.FindString(v); d != "" && len(d) < len(v) {
				v, rest = d, strings.TrimSpace(v[len(d):])
			}
			sp.Duration = v
		}
	}
	return rest
}
