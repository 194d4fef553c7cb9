package lorekeeperv1

import (
	"strings"
)

// TextPart is a headed part of a rule's text: "Surprise" in The Order of
// Combat, "Death Saving Throws" in Damage and Healing. The books head a part
// with a markdown heading ("### Death Saving Throws") or with a paragraph
// that opens in bold ("**Surprise.** If a combatant ..." or "**Surprise**"
// on its own line).
type TextPart struct {
	Name  string // the heading, without its marks or closing period
	Text  string // the part, its heading line included
	Level int    // 1-6 for a markdown heading, BoldLevel for a bold one
}

// BoldLevel is the TextPart.Level of a part headed in bold: below every
// markdown heading.
const BoldLevel = 7

// TextParts returns the headed parts of text, in order. A part runs to the
// next heading; a markdown heading's part also holds the bold-headed parts
// under it, up to the next markdown heading of its level or above.
func TextParts(text string) []TextPart {
	type head struct {
		name  string
		start int // byte offset of the heading's line
		level int
	}
	var heads []head
	for off := 0; off < len(text); {
		end := strings.IndexByte(text[off:], '\n')
		if end < 0 {
			end = len(text)
		} else {
			end += off
		}
		if name, level := heading(text[off:end]); name != "" {
			heads = append(heads, head{name, off, level})
		}
		off = end + 1
	}
	if len(heads) == 0 {
		return nil
	}
	parts := make([]TextPart, len(heads))
	for i, h := range heads {
		end := len(text)
		for _, next := range heads[i+1:] {
			if next.level <= h.level || h.level == BoldLevel {
				end = next.start
				break
			}
		}
		parts[i] = TextPart{Name: h.name, Text: strings.TrimSpace(text[h.start:end]), Level: h.level}
	}
	return parts
}

// maxHeadingWords bounds a bold lead-in read as a heading: longer bold runs
// are emphasis, not a part's name.
const maxHeadingWords = 8

// heading returns the heading a line opens with and its level, or "".
func heading(line string) (string, int) {
	line = strings.TrimSpace(line)
	if n := len(line) - len(strings.TrimLeft(line, "#")); n > 0 && n <= 6 {
		return headingName(strings.Trim(line, "# \t")), n
	}
	// Bold lead-ins, italic or not: **Surprise.** ***Surprise.*** _**Surprise.**_
	line = strings.TrimLeft(line, "_")
	if !strings.HasPrefix(line, "**") {
		return "", 0
	}
	rest := strings.TrimLeft(line, "*")
	end := strings.Index(rest, "**")
	if end <= 0 {
		return "", 0
	}
	name := headingName(rest[:end])
	if len(strings.Fields(name)) > maxHeadingWords {
		return "", 0
	}
	return name, BoldLevel
}

// headingName strips a heading's emphasis and closing punctuation.
func headingName(s string) string {
	s = strings.Trim(s, "*_ \t")
	s = strings.TrimRight(s, ".:")
	return strings.TrimSpace(strings.Trim(s, "*_"))
}
