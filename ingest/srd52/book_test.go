package srd52_test

import (
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"lorekeeper.dev/ingest/srd52"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

var bundled = sync.OnceValues(srd52.Bundle)

// files is the bundled text's files, a copy the test may change.
func files(t *testing.T) map[string][]byte {
	t.Helper()
	fs, err := bundled()
	if err != nil {
		t.Fatal(err)
	}
	return maps.Clone(fs)
}

func book(t *testing.T) *srd52.Book {
	t.Helper()
	b, err := srd52.Parse(files(t))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// rawHeading is a heading line of a file as the tests read it themselves:
// "#" marks, a space, words; not inside a sidebar ("> ### ...").
var rawHeading = regexp.MustCompile(`^(#{1,6})\s+(.+)$`)

// captionHeading reports whether the heading at lines[i] stands over
// nothing but a table: the text's way of naming a table now and then.
func captionHeading(lines []string, i int) bool {
	for j := i + 1; j < len(lines); j++ {
		if t := strings.TrimSpace(lines[j]); t != "" {
			return strings.HasPrefix(t, "|")
		}
	}
	return false
}

// TestParseChapter_headingLevels reads every chapter of the text, classes
// included, and checks each heading of levels 2 to 6 became a section of
// its level and name at its line, nested under the nearest heading above
// of a lower level, and that no line of text was lost.
func TestParseChapter_headingLevels(t *testing.T) {
	levels := map[int]int{}
	for name, raw := range files(t) {
		if !strings.HasSuffix(name, ".md") {
			continue
		}
		t.Run(name, func(t *testing.T) {
			lines := strings.Split(string(raw), "\n")
			c := srd52.ParseChapter(name, string(raw))
			var got []*srd52.Section
			c.Walk(func(s *srd52.Section) { got = append(got, s) })
			var want []int // lines (from 1) of the headings that are sections
			title := ""
			for i, l := range lines {
				m := rawHeading.FindStringSubmatch(l)
				switch {
				case m == nil:
				case len(m[1]) == 1:
					if title == "" {
						title = strings.Trim(m[2], "*_ ")
					}
				case !captionHeading(lines, i):
					want = append(want, i+1)
				}
			}
			if title != "" && c.Title != title {
				t.Errorf("title %q, want %q", c.Title, title)
			}
			if len(got) != len(want) {
				t.Fatalf("%d sections, want %d (one per heading of level 2 to 6)", len(got), len(want))
			}
			for i, s := range got {
				levels[s.Level]++
				if s.Line != want[i] {
					t.Fatalf("section %d (%q) at line %d, want %d", i, s.Name, s.Line, want[i])
				}
				m := rawHeading.FindStringSubmatch(lines[s.Line-1])
				if len(m[1]) != s.Level || !strings.Contains(m[2], s.Name) || s.Name == "" {
					t.Errorf("line %d %q read as level %d %q", s.Line, lines[s.Line-1], s.Level, s.Name)
				}
				if len(s.Path) == 0 || s.Path[0] != c.Title {
					t.Errorf("%q: path %q does not start with the chapter's title %q", s.Name, s.Path, c.Title)
				}
				for _, sub := range s.Sections {
					if sub.Level <= s.Level || !slices.Equal(sub.Path, append(slices.Clone(s.Path), s.Name)) {
						t.Errorf("%q (level %d, path %q) under %q (level %d, path %q)", sub.Name, sub.Level, sub.Path, s.Name, s.Level, s.Path)
					}
				}
			}
			// Nothing lost: every line of text is in its section's text.
			if len(got) == 0 {
				return // a page without sections (the legal notice, the licence)
			}
			var all strings.Builder
			for _, s := range c.Sections {
				all.WriteString(s.Markdown(s.Level+1) + "\n")
			}
			whole := all.String()
			for i, l := range lines {
				l = strings.TrimSpace(l)
				if l == "" || rawHeading.MatchString(l) || i < firstSection(got) {
					continue
				}
				if !strings.Contains(whole, l) {
					t.Fatalf("line %d %q is in no section's text", i+1, l)
				}
			}
		})
	}
	for l := 2; l <= 4; l++ {
		if levels[l] == 0 {
			t.Errorf("no heading of level %d read in the whole text", l)
		}
	}
}

func firstSection(ss []*srd52.Section) int {
	if len(ss) == 0 {
		return 0
	}
	return ss[0].Line
}

// TestParseChapter_tables checks every table of the text was read, with
// its caption: the "Table: caption" line before it, or the heading that
// stands over it alone.
func TestParseChapter_tables(t *testing.T) {
	total, captioned := 0, 0
	for name, raw := range files(t) {
		if !strings.HasSuffix(name, ".md") {
			continue
		}
		lines := strings.Split(string(raw), "\n")
		want := map[int]string{} // first line (from 1) -> caption
		for i, l := range lines {
			if !strings.HasPrefix(strings.TrimSpace(l), "|") || i > 0 && strings.HasPrefix(strings.TrimSpace(lines[i-1]), "|") {
				continue
			}
			caption := ""
			for j := i - 1; j >= 0; j-- {
				p := strings.TrimSpace(lines[j])
				if p == "" {
					continue
				}
				if c, ok := strings.CutPrefix(p, "Table:"); ok {
					caption = strings.Trim(strings.TrimSpace(c), "*")
				} else if m := rawHeading.FindStringSubmatch(p); m != nil {
					caption = strings.Trim(m[2], "*_ ")
				}
				break
			}
			want[i+1] = caption
		}
		got := map[int]srd52.Table{}
		c := srd52.ParseChapter(name, string(raw))
		c.Walk(func(s *srd52.Section) {
			for _, tb := range s.Tables {
				got[tb.Line] = tb
			}
		})
		for line, caption := range want {
			tb, ok := got[line]
			if !ok {
				// A table before the first heading is no section's.
				if line > firstHeading(lines) {
					t.Errorf("%s:%d: table not read", name, line)
				}
				continue
			}
			total++
			if caption != "" {
				captioned++
			}
			if tb.Caption != caption {
				t.Errorf("%s:%d: caption %q, want %q", name, line, tb.Caption, caption)
			}
			if len(tb.Header) == 0 || len(tb.Rows) == 0 {
				t.Errorf("%s:%d: table %q read with %d header cells and %d rows", name, line, tb.Caption, len(tb.Header), len(tb.Rows))
			}
		}
		if len(got) > len(want) {
			t.Errorf("%s: %d tables read, %d in the file", name, len(got), len(want))
		}
	}
	if total == 0 || captioned == 0 {
		t.Fatalf("%d tables, %d with captions", total, captioned)
	}
	t.Logf("%d tables, %d with a caption", total, captioned)
}

func firstHeading(lines []string) int {
	for i, l := range lines {
		if m := rawHeading.FindStringSubmatch(l); m != nil && len(m[1]) > 1 {
			return i + 1
		}
	}
	return len(lines)
}

// TestBook_glossary checks the glossary's entries against the file: one
// per entry heading (a heading over a table alone is that table's caption,
// not an entry), the tag in brackets parted from the name, every tag one
// the glossary's own conventions name, and every entry's whole text.
func TestBook_glossary(t *testing.T) {
	raw := string(files(t)["08_RulesGlossary.md"])
	lines := strings.Split(raw, "\n")
	type heading struct {
		name, tag string
		line      int
	}
	var want []heading
	in := false
	for i, l := range lines {
		if strings.HasPrefix(l, "## ") {
			in = strings.TrimSpace(l) == "## Rules Definitions"
		}
		if !in || !strings.HasPrefix(l, "#### ") || captionHeading(lines, i) {
			continue
		}
		h := heading{name: strings.TrimSpace(l[5:]), line: i + 1}
		if a := strings.Index(h.name, " ["); a > 0 && strings.HasSuffix(h.name, "]") {
			h.name, h.tag = h.name[:a], h.name[a+2:len(h.name)-1]
		}
		want = append(want, h)
	}
	b := book(t)
	if len(b.Glossary) != len(want) {
		t.Fatalf("%d glossary entries, want %d", len(b.Glossary), len(want))
	}
	// The conventions name the tags: "A tag—Action, Area of Effect,
	// Attitude, Condition, or Hazard—indicates ...".
	conv := regexp.MustCompile(`A tag—([^—]+)—indicates`).FindStringSubmatch(raw)
	if conv == nil {
		t.Fatal("the glossary's conventions no longer name its tags")
	}
	var named []string
	for _, t := range strings.Split(strings.ReplaceAll(conv[1], " or ", ","), ",") {
		if t = strings.TrimSpace(t); t != "" {
			named = append(named, t)
		}
	}
	if !slices.Equal(named, lkv1.GlossaryTags()) {
		t.Errorf("the glossary names the tags %q; lkv1.GlossaryTags is %q", named, lkv1.GlossaryTags())
	}
	tags := map[string]int{}
	for i, e := range b.Glossary {
		w := want[i]
		if e.Name != w.name || e.Tag != w.tag || e.Line != w.line {
			t.Errorf("entry %d: %q [%q] at line %d, want %q [%q] at line %d", i, e.Name, e.Tag, e.Line, w.name, w.tag, w.line)
		}
		tags[e.Tag]++
		if e.Tag != "" && !slices.Contains(named, e.Tag) {
			t.Errorf("%s: tag %q is none the conventions name", e.Name, e.Tag)
		}
		if n, tag := lkv1.SplitTag(e.Name + " [" + e.Tag + "]"); e.Tag != "" && (n != e.Name || tag != e.Tag) {
			t.Errorf("SplitTag(%q) = %q, %q", e.Name+" ["+e.Tag+"]", n, tag)
		}
		// Whole text: every line up to the next entry.
		end := len(lines)
		if i+1 < len(want) {
			end = want[i+1].line - 1
		}
		for _, l := range lines[w.line : end-1] {
			if l = strings.TrimSpace(l); l != "" && !rawHeading.MatchString(l) && !strings.Contains(e.Text, l) {
				t.Errorf("%s: text lacks %q", e.Name, l)
			}
		}
	}
	for _, tag := range named {
		if tags[tag] == 0 {
			t.Errorf("no entry tagged %q", tag)
		}
	}
	t.Logf("%d entries; by tag %v", len(b.Glossary), tags)
}

// TestBook_seeAlso checks every quoted name of the glossary's "See also"
// sentences was read: as an entry or chapter named, or as a section of the
// chapter before it.
func TestBook_seeAlso(t *testing.T) {
	b := book(t)
	sentence := regexp.MustCompile(`\*See also\*([^\n]*)`)
	name := regexp.MustCompile(`"([^"]+)"`)
	n := 0
	for _, e := range b.Glossary {
		var read []string
		for _, r := range e.SeeAlso {
			read = append(read, r.Name)
			read = append(read, r.Sections...)
		}
		var want []string
		for _, m := range sentence.FindAllStringSubmatch(e.Text, -1) {
			for _, q := range name.FindAllStringSubmatch(m[1], -1) {
				want = append(want, strings.TrimRight(q[1], ".,"))
			}
		}
		if !slices.Equal(read, want) {
			t.Errorf("%s: See also read as %q, want %q", e.Name, read, want)
		}
		n += len(want)
	}
	if n == 0 {
		t.Fatal("no See also names read")
	}
	g := glossaryEntry(t, b, "Ability Check")
	if len(g.SeeAlso) != 1 || g.SeeAlso[0].Name != "Playing the Game" || !slices.Equal(g.SeeAlso[0].Sections, []string{"D20 Tests", "Proficiency"}) {
		t.Errorf("Ability Check: See also %+v, want Playing the Game (D20 Tests, Proficiency)", g.SeeAlso)
	}
}

func glossaryEntry(t *testing.T, b *srd52.Book, name string) *srd52.Entry {
	t.Helper()
	for _, e := range b.Glossary {
		if e.Name == name {
			return e
		}
	}
	t.Fatalf("no glossary entry %q", name)
	return nil
}

// TestBook_spells checks every spell of the Spells chapter was read, with
// its level line and its stat lines, and Divine Smite's as printed.
func TestBook_spells(t *testing.T) {
	raw := string(files(t)["07_Spells.md"])
	b := book(t)
	if want := strings.Count(raw, "**Casting Time:**"); len(b.Spells) != want {
		t.Errorf("%d spells, want %d (Casting Time lines)", len(b.Spells), want)
	}
	for _, s := range b.Spells {
		if s.School == "" || len(s.Classes) == 0 || s.CastingTime == "" || s.Range == "" || s.Components == "" || s.Duration == "" || s.Text == "" {
			t.Errorf("%s (line %d) read incompletely: %+v", s.Name, s.Line, *s)
		}
		if strings.ContainsAny(s.Name, "*_") || strings.Contains(s.Duration, ". ") {
			t.Errorf("%s: name or duration read with what is not theirs: %q, %q", s.Name, s.Name, s.Duration)
		}
	}
	var ds *srd52.Spell
	for _, s := range b.Spells {
		if s.Name == "Divine Smite" {
			ds = s
		}
	}
	want := srd52.Spell{Name: "Divine Smite", Level: 1, School: "evocation", Classes: []string{"Paladin"},
		CastingTime: "Bonus Action, which you take immediately after hitting a target with a Melee weapon or an Unarmed Strike",
		Range:       "Self", Components: "V", Duration: "Instantaneous"}
	if ds == nil || ds.CastingTime != want.CastingTime || ds.Level != want.Level || ds.School != want.School ||
		!slices.Equal(ds.Classes, want.Classes) || ds.Range != want.Range || ds.Components != want.Components || ds.Duration != want.Duration {
		t.Errorf("Divine Smite read as %+v, want %+v", ds, want)
	}
}

// TestBook_magicItems checks every magic item of the Magic Items chapter
// was read with its line's category and base, and Dwarven Thrower's as
// printed.
func TestBook_magicItems(t *testing.T) {
	raw := string(files(t)["10_MagicItems.md"])
	b := book(t)
	lines := regexp.MustCompile(`(?m)^\*(Armor|Potion|Ring|Rod|Scroll|Staff|Wand|Weapon|Wondrous Item)\b[^*\n]*, [^*\n]*\*`).FindAllString(raw, -1)
	if len(b.MagicItems) != len(lines) || len(lines) < 100 {
		t.Errorf("%d magic items, want %d (item lines)", len(b.MagicItems), len(lines))
	}
	bases := 0
	for _, it := range b.MagicItems {
		if it.Name == "" || strings.ContainsAny(it.Name, "*_") || strings.ContainsAny(it.Base, "*_()") {
			t.Errorf("line %d read as %+v", it.Line, *it)
		}
		if it.Base != "" {
			bases++
		}
	}
	if want := strings.Count(raw, "\n*Weapon (") + strings.Count(raw, "\n*Armor ("); bases != want {
		t.Errorf("%d items with a base, want %d", bases, want)
	}
	want := srd52.MagicItem{Name: "Dwarven Thrower", Category: "Weapon", Base: "Warhammer"}
	if i := slices.IndexFunc(b.MagicItems, func(it *srd52.MagicItem) bool { return it.Name == want.Name }); i < 0 ||
		b.MagicItems[i].Category != want.Category || b.MagicItems[i].Base != want.Base {
		t.Errorf("Dwarven Thrower not read as %+v", want)
	}
}

// TestParse_badText breaks the text in the ways a rebuilt bundle could
// be broken, and checks each is an error naming where.
func TestParse_badText(t *testing.T) {
	for _, tc := range []struct {
		name   string
		break_ func(map[string][]byte)
		want   string
	}{
		{"no glossary", func(f map[string][]byte) { delete(f, "08_RulesGlossary.md") }, "has no 08_RulesGlossary.md"},
		{"glossary without its definitions", func(f map[string][]byte) {
			f["08_RulesGlossary.md"] = []byte(strings.Replace(string(f["08_RulesGlossary.md"]), "## Rules Definitions", "## Definitions", 1))
		}, `08_RulesGlossary.md: no entries under "Rules Definitions"`},
		{"a chapter without its title", func(f map[string][]byte) {
			f["01_PlayingTheGame.md"] = []byte(strings.Replace(string(f["01_PlayingTheGame.md"]), "# Playing the Game\n", "", 1))
		}, "01_PlayingTheGame.md: no chapter title"},
		{"a spell without its level line", func(f map[string][]byte) {
			f["07_Spells.md"] = []byte(strings.Replace(string(f["07_Spells.md"]), "*Level 1 Evocation (Paladin)*", "Level one", 1))
		}, `07_Spells.md:1925: spell "Divine Smite": the line after its heading is not its level and school`},
		{"no magic items", func(f map[string][]byte) {
			f["10_MagicItems.md"] = []byte(strings.ReplaceAll(string(f["10_MagicItems.md"]), "\n*", "\n"))
		}, "10_MagicItems.md: no magic items"},
		{"no attribution", func(f map[string][]byte) {
			f["00_Legal.md"] = []byte(strings.ReplaceAll(string(f["00_Legal.md"]), "> ", ""))
		}, "00_Legal.md: no attribution statement"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := files(t)
			tc.break_(f)
			_, err := srd52.Parse(f)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Parse: %v, want an error with %q", err, tc.want)
			}
		})
	}
}

// TestAttribution_shown checks that the attribution the text's legal page
// asks for is in the project's NOTICE and README, as the page words it,
// and on the text's document (list_documents shows it).
func TestAttribution_shown(t *testing.T) {
	b := book(t)
	if !strings.HasPrefix(b.Attribution, "This work includes material from the System Reference Document 5.2") || !strings.Contains(b.Attribution, "creativecommons.org/licenses/by/4.0") {
		t.Fatalf("attribution read as %q", b.Attribution)
	}
	flat := func(s string) string {
		return strings.Join(strings.Fields(strings.NewReplacer("*", "", ">", "").Replace(s)), " ")
	}
	for _, f := range []string{"../../NOTICE", "../../README.md"} {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(flat(string(raw)), flat(b.Attribution)) {
			t.Errorf("%s lacks the SRD 5.2 text's attribution %q", f, b.Attribution)
		}
	}
	if d := b.Document(nil); d.GetAttribution() != b.Attribution || !slices.Equal(d.GetLicenses(), []string{"CC-BY-4.0"}) {
		t.Errorf("the text's document: licences %v, attribution %q", d.GetLicenses(), d.GetAttribution())
	}
}
