// Package srd52 reads SRD 5.2 as its own text gives it: the markdown
// chapters bundled with LoreKeeper (srd52.tar.zst, from the data pack's
// srd-5.2-markdown; CC-BY-4.0, see Notice). It parses the chapters into
// sections with their headings as a path, the Rules Glossary into its
// entries (tags, "See also" names), the Spells chapter into its spells and
// the Magic Items chapter into its items' first lines, and turns them into
// entities of the book's document, srd-2024: the
// glossary's rules and the rules chapters' sections that Open5e's records
// of SRD 5.2 lack (Entities), and what those records lack where they have
// the entity (Complete).
package srd52

import (
	_ "embed"
	"fmt"
	"strings"

	"lorekeeper.dev/ingest"
)

// bundle is a tar of the pack's srd-5.2-markdown folder, compressed with
// zstd (`make srd52`): 1.1 MB of markdown in 220 KB.
//
//go:embed srd52.tar.zst
var bundle []byte

// DocumentKey is the book's document key, Open5e's for SRD 5.2.
const DocumentKey = "srd-2024"

// SourceName names the text where an answer footnotes what it took from it.
const SourceName = "SRD 5.2 text"

// The chapters read as rules: their "##" headings are rule sections, their
// "###" headings rules. The Rules Glossary is read apart (Glossary).
var ruleChapters = []string{"01_PlayingTheGame.md", "02_CharacterCreation.md", "09_GameplayToolbox.md"}

const (
	glossaryFile = "08_RulesGlossary.md"
	spellsFile   = "07_Spells.md"
	legalFile    = "00_Legal.md"
)

// Book is SRD 5.2 as read from its text.
type Book struct {
	// Rules are the rules chapters (ruleChapters), in order.
	Rules []*Chapter
	// Glossary is the Rules Glossary's entries, in its order.
	Glossary []*Entry
	// Spells are the Spells chapter's spells, in its order.
	Spells []*Spell
	// MagicItems are the Magic Items chapter's items, in its order.
	MagicItems []*MagicItem
	// Attribution is the statement the licence asks every use to carry,
	// as the text's legal page gives it.
	Attribution string

	metrics *Metrics // of the Source that opened it, if any
}

// Open reads the bundled text.
func Open() (*Book, error) {
	files, err := Bundle()
	if err != nil {
		return nil, err
	}
	return Parse(files)
}

// Parse reads the text from its files, by their names in the
// srd-5.2-markdown folder ("08_RulesGlossary.md"). A file the book needs
// that is missing, or that does not read as it should (no glossary
// entries, a spell without a level line), is an error naming it.
func Parse(files map[string][]byte) (*Book, error) {
	b := &Book{}
	for _, name := range ruleChapters {
		c, err := chapterOf(files, name)
		if err != nil {
			return nil, err
		}
		b.Rules = append(b.Rules, c)
	}
	g, err := chapterOf(files, glossaryFile)
	if err != nil {
		return nil, err
	}
	if b.Glossary, err = glossary(g); err != nil {
		return nil, err
	}
	s, err := chapterOf(files, spellsFile)
	if err != nil {
		return nil, err
	}
	if b.Spells, err = spells(s); err != nil {
		return nil, err
	}
	m, err := chapterOf(files, magicItemsFile)
	if err != nil {
		return nil, err
	}
	if b.MagicItems, err = magicItems(m); err != nil {
		return nil, err
	}
	legal, ok := files[legalFile]
	if !ok {
		return nil, fmt.Errorf("the SRD 5.2 text has no %s", legalFile)
	}
	if b.Attribution = attribution(string(legal)); b.Attribution == "" {
		return nil, fmt.Errorf("%s: no attribution statement (a quoted paragraph)", legalFile)
	}
	return b, nil
}

func chapterOf(files map[string][]byte, name string) (*Chapter, error) {
	text, ok := files[name]
	if !ok {
		return nil, fmt.Errorf("the SRD 5.2 text has no %s", name)
	}
	c := ParseChapter(name, string(text))
	if c.Title == "" {
		return nil, fmt.Errorf("%s: no chapter title (a \"# \" heading)", name)
	}
	return c, nil
}

// attribution is the quoted paragraph of the legal page: the statement to
// include.
func attribution(legal string) string {
	var lines []string
	for _, l := range strings.Split(legal, "\n") {
		if q, ok := strings.CutPrefix(strings.TrimSpace(l), ">"); ok {
			lines = append(lines, strings.TrimSpace(q))
		} else if len(lines) > 0 {
			break
		}
	}
	return strings.TrimSpace(strings.Join(lines, " "))
}

// Bundle returns the bundled text's files by their names in the
// srd-5.2-markdown folder, unchanged: what Open parses.
func Bundle() (map[string][]byte, error) {
	files, err := ingest.UnpackBundle(bundle, "srd-5.2-markdown")
	if err != nil {
		return nil, fmt.Errorf("unpack the SRD 5.2 text: %w", err)
	}
	return files, nil
}
