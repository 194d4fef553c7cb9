package srd52

import (
	"fmt"
	"regexp"
	"strings"
)

// Entry is a Rules Glossary entry: "#### Grappled [Condition]" and its text.
type Entry struct {
	// Name is the entry's name without its tag: "Grappled".
	Name string
	// Tag is the family the glossary files it in, without its brackets:
	// "Condition", "Action", "Area of Effect", "Attitude", "Hazard"; empty
	// for most entries.
	Tag string
	// Text is the entry's whole markdown, its "See also" sentence
	// included.
	Text string
	// SeeAlso is what its "See also" sentence names, in its order.
	SeeAlso []Ref
	// Tables are the tables of Text.
	Tables []Table
	// Line is the heading's line in the glossary file, from 1.
	Line int
}

// Ref is a name a "See also" gives: another entry ("Grappled"), or a
// chapter and the sections of it it points to ("Playing the Game"
// ("D20 Tests" and "Proficiency")).
type Ref struct {
	Name     string
	Sections []string
}

// glossarySection is the glossary's heading over its entries.
const glossarySection = "Rules Definitions"

// glossary reads the entries of the glossary chapter: the headings under
// "Rules Definitions", each with its tag and "See also" names.
func glossary(c *Chapter) ([]*Entry, error) {
	var defs *Section
	for _, s := range c.Sections {
		if s.Name == glossarySection {
			defs = s
		}
	}
	if defs == nil || len(defs.Sections) == 0 {
		return nil, fmt.Errorf("%s: no entries under %q", c.File, glossarySection)
	}
	var out []*Entry
	for _, s := range defs.Sections {
		name, tag := splitTag(s.Name)
		e := &Entry{Name: name, Tag: tag, Text: s.Markdown(s.Level + 1), Line: s.Line, Tables: s.Tables}
		if e.Text == "" {
			return nil, fmt.Errorf("%s:%d: glossary entry %q has no text", c.File, s.Line, s.Name)
		}
		e.SeeAlso = seeAlso(e.Text)
		out = append(out, e)
	}
	return out, nil
}

var tagged = regexp.MustCompile(`^(.*?)\s*\[([^\[\]]+)\]$`)

// splitTag parts "Grappled [Condition]" into "Grappled" and "Condition".
func splitTag(heading string) (name, tag string) {
	if m := tagged.FindStringSubmatch(heading); m != nil && m[1] != "" {
		return m[1], strings.TrimSpace(m[2])
	}
	return heading, ""
}

// seeAlsoMark opens an entry's cross-references: *See also* "Grappled."
var seeAlsoMark = regexp.MustCompile(`[*_]See also[*_]`)

// quoted is a name in quotes, straight or curly, with the punctuation the
// sentence puts inside them ("Friendly," "Influence.").
var quoted = regexp.MustCompile(`["“]([^"”]+)["”]`)

// seeAlso reads the names of the "See also" sentences of text: each
// quoted name, and after a chapter's name the quoted names in the
// parentheses that follow it, which are that chapter's sections.
func seeAlso(text string) []Ref {
	var refs []Ref
	for _, loc := range seeAlsoMark.FindAllStringIndex(text, -1) {
		rest := text[loc[1]:]
		if end := strings.IndexByte(rest, '\n'); end >= 0 {
			rest = rest[:end]
		}
		depth := 0
		for i := 0; i < len(rest); i++ {
			switch rest[i] {
			case '(':
				depth++
				continue
			case ')':
				depth = max(depth-1, 0)
				continue
			}
			m := quoted.FindStringSubmatchIndex(rest[i:])
			if m == nil {
				break
			}
			// Only a quote that starts here: what lies between is read
			// character by character for its parentheses.
			if m[0] != 0 {
				continue
			}
			name := strings.TrimSpace(strings.TrimRight(rest[i+m[2]:i+m[3]], ".,;: "))
			if name != "" {
				if depth > 0 && len(refs) > 0 {
					last := &refs[len(refs)-1]
					last.Sections = append(last.Sections, name)
				} else {
					refs = append(refs, Ref{Name: name})
				}
			}
			i += m[1] - 1
		}
	}
	return refs
}
