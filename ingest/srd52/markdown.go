package srd52

import (
	"strings"
)

// Chapter is one file of the text.
type Chapter struct {
	// File is its name in the folder: "01_PlayingTheGame.md".
	File string
	// Title is its "# " heading: "Playing the Game".
	Title string
	// Sections are the sections under the title, in order.
	Sections []*Section
}

// Section is a heading and what stands under it, down to the next heading
// of its level or above.
type Section struct {
	// Level is the heading's: 2 for "##" ... 6.
	Level int
	// Name is the heading without its marks: "Melee Attacks".
	Name string
	// Path is the headings above it, the chapter's title first:
	// ["Playing the Game", "Combat"].
	Path []string
	// Text is the section's own markdown, up to its first subsection:
	// paragraphs, lists, sidebars and tables (each after its "Table:
	// caption" line where it has a caption).
	Text string
	// Line is the heading's line in the file, from 1.
	Line int
	// Tables are the tables of Text, in order.
	Tables []Table
	// Sections are its subsections, in order.
	Sections []*Section
}

// Table is a markdown table of the text.
type Table struct {
	// Caption is the text's name for it: the "Table: Damage Types" line
	// before it, or a heading standing over nothing but the table ("####
	// **Areas of Knowledge**"); empty when it has neither.
	Caption string
	// Header is the first row's cells; Rows the rows after the delimiter
	// row, each row's cells trimmed.
	Header []string
	Rows   [][]string
	// Line is the table's first line in the file, from 1.
	Line int
}

// ParseChapter reads one file of the text: its "# " title and its
// headings, nested by level. Headings inside sidebars ("> ### ...") are
// the sidebar's text, not sections. A heading that stands over nothing but
// a table is that table's caption, written "Table: caption" in the text.
func ParseChapter(file, text string) *Chapter {
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	c := &Chapter{File: file}
	var (
		stack []*Section // the open sections, outermost first
		own   []string   // the current section's own lines
		cur   *Section   // nil before the first section
		start int        // the line (0-based) own starts at
	)
	flush := func() {
		if cur != nil {
			cur.Text, cur.Tables = ownText(own, start)
		}
		own = nil // before the first section: the title's, no section's
	}
	for i := 0; i < len(lines); i++ {
		level, name := headingLine(lines[i])
		if level == 0 {
			own = append(own, lines[i])
			continue
		}
		if level == 1 {
			if c.Title == "" {
				c.Title = name
			}
			continue
		}
		if tableFollows(lines, i+1) {
			own = append(own, "Table: "+name)
			continue
		}
		flush()
		for len(stack) > 0 && stack[len(stack)-1].Level >= level {
			stack = stack[:len(stack)-1]
		}
		s := &Section{Level: level, Name: name, Line: i + 1, Path: []string{c.Title}}
		for _, up := range stack {
			s.Path = append(s.Path, up.Name)
		}
		if len(stack) == 0 {
			c.Sections = append(c.Sections, s)
		} else {
			parent := stack[len(stack)-1]
			parent.Sections = append(parent.Sections, s)
		}
		stack = append(stack, s)
		cur, start = s, i+1
	}
	flush()
	return c
}

// headingLine returns the level and name of a markdown heading line, or 0.
func headingLine(line string) (int, string) {
	n := len(line) - len(strings.TrimLeft(line, "#"))
	if n == 0 || n > 6 || len(line) == n || (line[n] != ' ' && line[n] != '\t') {
		return 0, ""
	}
	name := headingName(line[n:])
	if name == "" {
		return 0, ""
	}
	return n, name
}

// headingName is a heading's words without emphasis, closing
// punctuation or a stray quote ("## The Next Dawn\"").
func headingName(s string) string {
	s = strings.TrimSpace(s)
	s = strings.Trim(s, "*_\" \t")
	s = strings.TrimRight(s, ".:")
	return strings.TrimSpace(strings.Trim(s, "*_"))
}

// tableFollows reports whether the first line from i that is not blank
// starts a table.
func tableFollows(lines []string, i int) bool {
	for ; i < len(lines); i++ {
		if t := strings.TrimSpace(lines[i]); t != "" {
			return strings.HasPrefix(t, "|")
		}
	}
	return false
}

// ownText joins a section's own lines, trimmed of blank lines at either
// end, and reads its tables; start is the file line (0-based) of lines[0].
func ownText(lines []string, start int) (string, []Table) {
	var tables []Table
	for i := 0; i < len(lines); i++ {
		if !strings.HasPrefix(strings.TrimSpace(lines[i]), "|") {
			continue
		}
		t := Table{Line: start + i + 1, Caption: captionBefore(lines, i)}
		j := i
		for ; j < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[j]), "|"); j++ {
			cells := tableCells(lines[j])
			switch {
			case j == i:
				t.Header = cells
			case isDelimiterRow(cells):
			default:
				t.Rows = append(t.Rows, cells)
			}
		}
		tables = append(tables, t)
		i = j
	}
	return strings.TrimSpace(strings.Join(lines, "\n")), tables
}

// captionBefore is the "Table: caption" line before lines[i], blank lines
// between allowed, or "".
func captionBefore(lines []string, i int) string {
	for j := i - 1; j >= 0; j-- {
		t := strings.TrimSpace(lines[j])
		if t == "" {
			continue
		}
		if c, ok := strings.CutPrefix(t, "Table:"); ok {
			return strings.TrimSpace(strings.Trim(strings.TrimSpace(c), "*"))
		}
		return ""
	}
	return ""
}

// tableCells splits a table row into its trimmed cells.
func tableCells(row string) []string {
	row = strings.TrimSpace(row)
	row = strings.TrimPrefix(row, "|")
	row = strings.TrimSuffix(row, "|")
	cells := strings.Split(row, "|")
	for i, c := range cells {
		cells[i] = strings.TrimSpace(c)
	}
	return cells
}

// isDelimiterRow reports whether cells are a table's "|---|:--:|" row.
func isDelimiterRow(cells []string) bool {
	for _, c := range cells {
		if strings.Trim(c, "-: ") != "" || !strings.Contains(c, "-") {
			return false
		}
	}
	return true
}

// Markdown is the section's whole text: its own text, then each
// subsection under a heading of level top for its direct subsections,
// top+1 for theirs, and so on (at most 6).
func (s *Section) Markdown(top int) string {
	var b strings.Builder
	b.WriteString(s.Text)
	for _, sub := range s.Sections {
		writeSection(&b, sub, top)
	}
	return strings.TrimSpace(b.String())
}

func writeSection(b *strings.Builder, s *Section, level int) {
	if b.Len() > 0 {
		b.WriteString("\n\n")
	}
	b.WriteString(strings.Repeat("#", min(level, 6)) + " " + s.Name)
	if s.Text != "" {
		b.WriteString("\n\n" + s.Text)
	}
	for _, sub := range s.Sections {
		writeSection(b, sub, level+1)
	}
}

// Walk calls f for every section of the chapter, depth first, in order.
func (c *Chapter) Walk(f func(*Section)) {
	var walk func([]*Section)
	walk = func(ss []*Section) {
		for _, s := range ss {
			f(s)
			walk(s.Sections)
		}
	}
	walk(c.Sections)
}
