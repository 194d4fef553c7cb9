package open5e

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"lorekeeper.dev/ingest"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// ErrInvalidRecord is wrapped by every error about a record that cannot be
// normalised (not an object, no name, no key, no document).
var ErrInvalidRecord = errors.New("invalid open5e record")

var (
	errTrailingData = errors.New("trailing data after the record")
	errNotObject    = errors.New("not a JSON object")
)

// RecordError says which record of an endpoint failed and why.
type RecordError struct {
	Endpoint Endpoint
	// Index is the record's position in the endpoint's list.
	Index int
	// Key is the upstream key, when the record had one.
	Key string
	Err error
}

func (e *RecordError) Error() string {
	return fmt.Sprintf("%s record %d %q: %v", e.Endpoint.Path(), e.Index, e.Key, e.Err)
}

func (e *RecordError) Unwrap() error { return e.Err }

// NormalizeRecord normalises one record of ep. It is NormalizeEndpoint for
// a list of one.
func NormalizeRecord(ep Endpoint, raw []byte, cat *Catalog) (*lkv1.Entity, error) {
	es, errs := NormalizeEndpoint(ep, []json.RawMessage{raw}, cat)
	if len(errs) > 0 {
		return nil, errs[0]
	}
	return es[0], nil
}

// NormalizeEndpoint normalises the whole list of an endpoint: each record
// into an entity, then what needs the whole list: slugs made unique within
// (document, kind), subclasses and subraces pointed at their parent's key,
// and the content hashes. A record that cannot be normalised is reported as
// a *RecordError and left out; the others are returned in list order.
// fetched_at is left for the caller to set.
func NormalizeEndpoint(ep Endpoint, records []json.RawMessage, cat *Catalog) ([]*lkv1.Entity, []error) {
	type item struct {
		e      *lkv1.Entity
		parent string // upstream key of the parent class or species
	}
	var (
		items []item
		errs  []error
	)
	// Records normalise independently (cat is only read): on every core.
	type normalized struct {
		es     []*lkv1.Entity
		parent string
		err    error
	}
	done := make([]normalized, len(records))
	eachParallel(len(records), func(i int) {
		es, parent, err := normalize(ep, records[i], cat)
		done[i] = normalized{es, parent, err}
	})
	seenUpstream := map[string]bool{}
	for i, raw := range records {
		es, parent, err := done[i].es, done[i].parent, done[i].err
		done[i] = normalized{}
		if err != nil {
			errs = append(errs, &RecordError{Endpoint: ep, Index: i, Key: upstreamKey(raw, ep), Err: err})
			continue
		}
		for _, e := range es {
			// The API pages by offset, so a record may appear twice when
			// the list shifts under the fetch; keep the first copy (one
			// per edition: see splitEditions).
			seen := e.Document.GetKey() + "\x00" + e.SourceKey
			if seenUpstream[seen] {
				continue
			}
			seenUpstream[seen] = true
			items = append(items, item{e, parent})
		}
	}

	// Unique slugs: when names collide within (document, kind), the record
	// whose upstream key ends in the plain slug keeps it; the others get
	// their upstream key appended. The choice depends only on the records,
	// not on their order.
	groups := map[string][]*lkv1.Entity{}
	for _, it := range items {
		g := it.e.Document.GetKey() + "\x00" + it.e.Kind.String() + "\x00" + it.e.Slug
		groups[g] = append(groups[g], it.e)
	}
	for _, g := range groups {
		if len(g) < 2 {
			continue
		}
		sort.Slice(g, func(i, j int) bool {
			pi, pj := plainOwner(g[i]), plainOwner(g[j])
			if pi != pj {
				return pi
			}
			return g[i].SourceKey < g[j].SourceKey
		})
		for _, e := range g[1:] {
			e.Slug = e.Slug + "-" + collisionSuffix(e.SourceKey)
		}
	}
	byUpstream := map[string]*lkv1.Entity{}
	for _, it := range items {
		it.e.Key = lkv1.EntityKey(ep.Source(), it.e.Document.GetKey(), it.e.Kind, it.e.Slug)
		byUpstream[it.e.SourceKey] = it.e
	}
	for _, it := range items {
		if it.parent != "" {
			co := it.e.GetCharacterOption()
			if p, ok := byUpstream[it.parent]; ok && co != nil {
				co.ParentKey = p.Key
				if co.ParentName == "" {
					co.ParentName = p.Name
				}
			}
		}
	}
	hashErrs := make([]error, len(items))
	eachParallel(len(items), func(i int) {
		items[i].e.ContentHash, hashErrs[i] = ingest.ContentHash(items[i].e)
	})
	out := make([]*lkv1.Entity, 0, len(items))
	for i, it := range items {
		if err := hashErrs[i]; err != nil {
			// Marshal fails only on invalid UTF-8, which normalize rejects.
			errs = append(errs, fmt.Errorf("%w: %v", ErrInvalidRecord, err))
			continue
		}
		out = append(out, it.e)
	}
	return out, errs
}

// eachParallel calls f(0) to f(n-1), on as many goroutines as there are
// cores, and returns when every call has. A first load spends most of its
// time normalising the bundled snapshot's records: on one goroutine, the
// fetch was the slowest part of a load whose vectors are bundled.
func eachParallel(n int, f func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		for i := range n {
			f(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				f(i)
			}
		})
	}
	wg.Wait()
}

// plainOwner reports whether e's upstream key is its own slug after the
// document prefix ("srd_fireball" for "fireball"), which makes it the owner
// of the plain slug.
func plainOwner(e *lkv1.Entity) bool {
	return collisionSuffix(e.SourceKey) == e.Slug
}

func upstreamKey(raw []byte, ep Endpoint) string {
	o, err := decodeObject(raw)
	if err != nil {
		return ""
	}
	if ep.Version == "v1" {
		return o.str("slug")
	}
	return o.str("key")
}

// normalize turns one record into entities without key or hash (one, or
// one per edition: see splitEditions); parent is the upstream key of a
// subclass's class or a subrace's species.
func normalize(ep Endpoint, raw []byte, cat *Catalog) (es []*lkv1.Entity, parent string, err error) {
	if !utf8.Valid(raw) {
		return nil, "", fmt.Errorf("%w: invalid UTF-8", ErrInvalidRecord)
	}
	o, err := decodeObject(raw)
	if err != nil {
		return nil, "", fmt.Errorf("%w: %v", ErrInvalidRecord, err)
	}
	name := o.str("name")
	upstream := o.str("key")
	docKey := ""
	if ep.Version == "v1" {
		upstream = o.str("slug")
		docKey = o.str("document__slug")
	} else if d := o.obj("document"); d != nil {
		docKey = d.str("key")
	} else {
		docKey = o.str("document")
	}
	if name == "" && ep.Kind == lkv1.Kind_KIND_ALIGNMENT {
		// v2 alignments have no name: "chaotic-evil" is Chaotic Evil.
		name = titleFromKey(upstream)
	}
	switch {
	case name == "":
		return nil, "", fmt.Errorf("%w: no name", ErrInvalidRecord)
	case upstream == "":
		return nil, "", fmt.Errorf("%w: no key", ErrInvalidRecord)
	case docKey == "":
		return nil, "", fmt.Errorf("%w: no document", ErrInvalidRecord)
	}
	slug := lkv1.Slugify(name)
	if slug == "" {
		slug = lkv1.Slugify(upstream)
	}
	if slug == "" {
		return nil, "", fmt.Errorf("%w: name %q has no letters or digits", ErrInvalidRecord, name)
	}
	e := &lkv1.Entity{
		Slug:         slug,
		Kind:         ep.Kind,
		Name:         name,
		Document:     document(ep, o, docKey, cat),
		SourceKey:    upstream,
		SourceUrl:    CanonicalOrigin + ep.Path() + url.PathEscape(upstream) + "/",
		Description:  description(o),
		SourceRecord: append([]byte(nil), raw...),
	}
	if ep.Version == "v1" {
		parent = normalizeV1(ep, o, e)
	} else {
		parent = normalizeV2(ep, o, e, cat)
	}
	dropPlaceholders(e)
	if c := e.GetCreature(); c != nil && cat.everywhere(c.Environments) {
		e.Corrections = append(e.Corrections, &lkv1.Correction{Field: "environments",
			SourceValue: fmt.Sprintf("every environment Open5e lists (%d)", len(c.Environments)), CorrectedValue: "none"})
		c.Environments = nil
	}
	for _, b := range e.Blocks {
		b.Text = numberWikiLists(b.Text)
		if spellListRunOn.MatchString(b.Text) {
			b.Text = spellLists(b.Text, cat.spellNames())
		}
	}
	if droppedCommas[docKey] {
		restoreCommas(e)
	}
	if ep.Version == "v2" {
		// A v1 record's, when it is served (FilterV1): most are v2's
		// duplicates, read for what they complete.
		fillTextFacts(e)
	}
	return splitEditions(ep, raw, o, e, cat), parent, nil
}

// droppedCommas are the documents whose texts lost their commas upstream,
// each left as a second space: Level Up's Monstrous Menagerie, in v2
// (a5e-mm) and v1 (menagerie) alike ("On a failure  it must dance"; 484 of
// its 586 creatures, about 2,100 gaps, where other books have a stray
// double space in one record of a hundred).
var droppedCommas = map[string]bool{"a5e-mm": true, "menagerie": true}

// droppedComma is a second space after a word, a number, a closing
// parenthesis or an abbreviation's full stop ("5 ft.  all creatures")
// and before a word or number; after "**1/Day:**" it is only a space.
var droppedComma = regexp.MustCompile(`([\p{L}\p{N}).])  ([\p{L}\p{N}])`)

// contracted are the words whose contraction with "not" lost its
// apostrophe with the commas ("doesnt", 120 times; "isnt", "hasnt"):
// unambiguous, unlike a possessive ("the vampires lair"), which stays as
// it is.
var contracted = map[string]bool{"does": true, "is": true, "do": true, "has": true, "are": true, "was": true,
	"were": true, "did": true, "could": true, "would": true, "should": true, "have": true, "had": true, "ca": true}

// restoreApostrophes gives the contractions of s their apostrophe back
// ("doesnt" -> "doesn't"). A scan for "nt" at a word's end, not a regexp:
// it reads every text of the book.
func restoreApostrophes(s string) string {
	letter := func(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
	var b strings.Builder
	last := 0
	for i := 0; ; {
		j := strings.Index(s[i:], "nt")
		if j < 0 {
			break
		}
		at := i + j
		i = at + 2
		if i < len(s) && (letter(s[i]) || s[i] == '\'') {
			continue
		}
		start := at
		for start > 0 && letter(s[start-1]) {
			start--
		}
		if start > 0 && s[start-1] == '\'' || !contracted[strings.ToLower(s[start:at])] {
			continue
		}
		b.WriteString(s[last:at])
		b.WriteString("n't")
		last = i
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// restoreCommas puts the commas, and the contractions' apostrophes, back
// into every text of e.
func restoreCommas(e *lkv1.Entity) {
	fix := func(s string) string {
		s = droppedComma.ReplaceAllString(s, "$1, $2")
		return restoreApostrophes(s)
	}
	e.Description = fix(e.Description)
	e.HigherLevel = fix(e.HigherLevel)
	for _, b := range e.Blocks {
		b.Text = fix(b.Text)
	}
	if c := e.GetCreature(); c != nil {
		c.Languages = fix(c.Languages) // "understands but cant speak Sylvan"
	}
}

// spellListRunOn is a spellcasting list run into the next ("...
// prestidigitation3/day ea: entangle"): Tome of Beasts 3's 50 innate
// spellcasters, whose lists lost their line breaks and commas.
var spellListRunOn = regexp.MustCompile(`[a-z)]\d+/day\b`)

// spellUse is a spell list's use: "At will:", "3/day ea:", "1/day each:".
var spellUse = regexp.MustCompile(`(?i)\s*(at will|\d+/day(?: ea(?:ch)?\.?)?):\s*`)

// spellLists writes a run-on spellcasting text one list to a line and one
// spell from the next: "At will: mending, minor illusion,
// prestidigitation" and "3/day ea: entangle, mirror image". The spells
// are told apart by names (SRD 5.1's, the longest first); words no name
// covers stay together as one name.
func spellLists(text string, names map[string]bool) string {
	locs := spellUse.FindAllStringSubmatchIndex(text, -1)
	if len(locs) == 0 {
		return text
	}
	var b strings.Builder
	b.WriteString(strings.TrimSpace(text[:locs[0][0]]))
	for i, m := range locs {
		end := len(text)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		b.WriteString("  \n" + text[m[2]:m[3]] + ": " + strings.Join(spellItems(text[m[1]:end], names), ", "))
	}
	return strings.TrimPrefix(b.String(), "  \n")
}

// spellItems splits a run of spell names ("mending minor illusion
// prestidigitation") by the names it holds.
func spellItems(s string, names map[string]bool) []string {
	words := strings.Fields(s)
	var out, unknown []string
	flush := func() {
		if len(unknown) > 0 {
			out = append(out, strings.Join(unknown, " "))
			unknown = nil
		}
	}
	for i := 0; i < len(words); {
		n := 0
		for j := min(len(words), i+5); j > i; j-- {
			if names[strings.ToLower(strings.Join(words[i:j], " "))] {
				n = j - i
				break
			}
		}
		if n == 0 {
			// Not a name: a word of an unknown name, or what a name says
			// of itself ("(as an action)").
			if strings.HasPrefix(words[i], "(") && len(out) > 0 && len(unknown) == 0 {
				j := i
				for j < len(words) && !strings.HasSuffix(words[j], ")") {
					j++
				}
				j = min(j+1, len(words))
				out[len(out)-1] += " " + strings.Join(words[i:j], " ")
				i = j
				continue
			}
			unknown = append(unknown, words[i])
			i++
			continue
		}
		flush()
		out = append(out, strings.Join(words[i:i+n], " "))
		i += n
	}
	flush()
	return out
}

// numberWikiLists turns a run of two or more lines starting "# " into a
// numbered list: wiki markup for "1.", "2.", ... (Creature Codex's Spawn
// of Chernobog lists its disease's stages so). Under a block's name a
// top-level heading is never meant, and markdown would render one.
func numberWikiLists(s string) string {
	if !strings.Contains(s, "# ") {
		return s
	}
	lines := strings.Split(s, "\n")
	for i := 0; i < len(lines); {
		j := i
		for j < len(lines) && strings.HasPrefix(lines[j], "# ") {
			j++
		}
		if j-i >= 2 {
			for n := i; n < j; n++ {
				lines[n] = strconv.Itoa(n-i+1) + ". " + strings.TrimPrefix(lines[n], "# ")
			}
		}
		i = max(j, i+1)
	}
	return strings.Join(lines, "\n")
}

// dropPlaceholders empties the texts that are only the source's stand-in
// for missing text ("[Column data]", "[None provided]") and leaves out the
// blocks that have nothing left: a placeholder is never worth showing.
func dropPlaceholders(e *lkv1.Entity) {
	if isPlaceholder(e.Description) {
		e.Description = ""
	}
	if isPlaceholder(e.HigherLevel) {
		e.HigherLevel = ""
	}
	blocks := e.Blocks[:0]
	for _, b := range e.Blocks {
		if isPlaceholder(b.Text) {
			b.Text = ""
		}
		if b.Text == "" && b.Attack == "" {
			continue
		}
		blocks = append(blocks, b)
	}
	e.Blocks = blocks
}

// document is the catalog's metadata for the record's document, or what
// the record itself says when the catalog does not know it.
func document(ep Endpoint, o obj, k string, cat *Catalog) *lkv1.Document {
	if d := cat.Document(ep.Source(), k); d != nil {
		return d
	}
	d := &lkv1.Document{Key: k, Source: ep.Source()}
	if ep.Version == "v1" {
		d.Name = o.str("document__title")
		d.DisplayName = d.Name
		d.Permalink = o.str("document__url")
		return d
	}
	if n := o.obj("document"); n != nil {
		d.Name = n.str("name")
		d.DisplayName = n.str("display_name")
		d.Permalink = n.str("permalink")
		if p := n.obj("publisher"); p != nil {
			d.Publisher, d.PublisherKey = p.str("name"), p.str("key")
		}
		if g := n.obj("gamesystem"); g != nil {
			d.GameSystem, d.GameSystemName = g.str("key"), g.str("name")
		}
	}
	return d
}

// description is the record's markdown: "desc", or for the reference kinds
// the per-document "descriptions", each under its document.
func description(o obj) string {
	if d := o.str("desc"); d != "" {
		return normalizeNewlines(d)
	}
	var parts []string
	for _, d := range o.objs("descriptions") {
		text := normalizeNewlines(d.str("desc"))
		if text == "" {
			continue
		}
		if doc := d.str("document"); doc != "" {
			text = "*" + doc + ":* " + text
		}
		parts = append(parts, text)
	}
	return strings.Join(parts, "\n\n")
}

var newlines = strings.NewReplacer("\r\n", "\n", `\r\n`, "\n", `\n`, "\n")

// normalizeNewlines makes a source text plain markdown: CRLF and the
// escaped newlines some SRD 5.1 items carry (a backslash and an n, which
// printed "\n\n" and broke their tables) become newlines, and SRD 5.2's
// leftover cross-reference markup becomes the text it stands for.
func normalizeNewlines(s string) string {
	s = newlines.Replace(s)
	s = boldGlued.ReplaceAllString(s, "**$1** $2")
	if strings.Contains(s, "#") {
		s = headingGlued.ReplaceAllString(s, "$1 $2")
	}
	s = htmlMarkdown(s)
	s = htmlBreaks(s)
	if strings.Contains(s, " ft.") {
		s = proseFeet(s)
	}
	s = mendRunOns(s)
	if strings.Contains(s, "| -") || strings.Contains(s, "|-") {
		s = detachTables(s)
	}
	if strings.Contains(s, " ,") { // rare: the regexp reads every text slowly
		s = spacedComma.ReplaceAllString(s, "$1,$2")
	}
	return strings.TrimSpace(unmarkReferences(s))
}

// proseWords are the words after which "ft." is "feet" written as a
// distance's abbreviation inside prose ("land on its ft.", "an additional
// number of ft. equal to the chosen radius": SRD 5.1's Bulette and
// Will-o'-Wisp).
var proseWords = map[string]bool{"its": true, "of": true, "their": true, "his": true, "her": true, "your": true,
	"the": true, "few": true, "many": true, "several": true}

// proseFeet writes "feet" where a text abbreviated it after one of
// proseWords; where a sentence ends there, its full stop stays. A scan,
// not a regexp: it reads every text of a load.
func proseFeet(s string) string {
	var b strings.Builder
	last := 0
	for at := 0; ; {
		k := strings.Index(s[at:], " ft.")
		if k < 0 {
			break
		}
		k += at
		at = k + len(" ft.")
		w := k
		for w > 0 && isLetter(s[w-1]) {
			w--
		}
		if w > 0 && isWordByte(s[w-1]) || !proseWords[s[w:k]] {
			continue
		}
		rest := strings.TrimLeft(s[at:], asciiSpace)
		feet := " feet"
		if rest == "" || len(rest) < len(s[at:]) && 'A' <= rest[0] && rest[0] <= 'Z' {
			feet = " feet." // the sentence ends there
		}
		b.WriteString(s[last:k] + feet)
		last = at
	}
	if last == 0 {
		return s
	}
	return b.String() + s[last:]
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' }

// isWordByte is what a regexp's \b takes for a word's letter.
func isWordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}

// detachTables parts a markdown table from the paragraphs it was run
// into (29 of Vault of Magic's items: "... the damage type of the extra
// damage. | d8 | Damage Type |" on one line, "| 22 | ... | Written by an
// elvish princess..." on another), which markdown would not read as a
// table: a header row starts a line of its own, and the text after a row's
// last cell starts a paragraph.
func detachTables(s string) string {
	lines := strings.Split(s, "\n")
	changed := false
	var out []string
	cells := 0 // the table's columns, while in one
	for i, l := range lines {
		if tableRule.MatchString(l) && i > 0 && len(out) > 0 {
			cells = strings.Count(strings.Trim(strings.TrimSpace(l), "|"), "|") + 1
			prev := out[len(out)-1]
			if p := strings.IndexByte(prev, '|'); p > 0 && strings.TrimSpace(prev[:p]) != "" {
				out[len(out)-1] = strings.TrimSpace(prev[:p])
				out = append(out, "", prev[p:])
				changed = true
			}
			out = append(out, l)
			continue
		}
		if cells > 0 && strings.HasPrefix(strings.TrimSpace(l), "|") {
			// A row of cells columns ends at its (cells+1)th bar.
			t := strings.TrimSpace(l)
			end, seen := -1, 0
			for j := 0; j < len(t); j++ {
				if t[j] == '|' {
					if seen++; seen == cells+1 {
						end = j
						break
					}
				}
			}
			if end >= 0 && strings.TrimSpace(t[end+1:]) != "" {
				out = append(out, t[:end+1], "", strings.TrimSpace(t[end+1:]))
				cells, changed = 0, true
				continue
			}
			out = append(out, l)
			continue
		}
		cells = 0
		out = append(out, l)
	}
	if !changed {
		return s
	}
	return strings.Join(out, "\n")
}

// tableRule is a markdown table's rule under its header: "| --- | :--: |".
var tableRule = regexp.MustCompile(`^\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?\s*$`)

// spacedComma is a space before a comma ("cast _moonbeam_ , with", in
// Level Up's magic items).
var spacedComma = regexp.MustCompile(`(\S) ,(\s)`)

// mendRunOns puts a space after a full stop run into the next sentence
// ("on impact.In either case", most in Tome of Beasts 3): two lower-case
// letters before it and a capitalised word after, so that no initial or
// abbreviation ("e.g.") is split. A scan, not a regexp: it reads every
// text of a load.
func mendRunOns(s string) string {
	lower := func(c byte) bool { return 'a' <= c && c <= 'z' }
	var b strings.Builder
	last := 0
	for i := strings.IndexByte(s, '.'); i >= 0; {
		if i >= 2 && i+2 < len(s) && lower(s[i-2]) && lower(s[i-1]) && 'A' <= s[i+1] && s[i+1] <= 'Z' && lower(s[i+2]) {
			b.WriteString(s[last : i+1])
			b.WriteByte(' ')
			last = i + 1
		}
		j := strings.IndexByte(s[i+1:], '.')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

var (
	htmlTable   = regexp.MustCompile(`(?is)<table[^>]*>(.*?)</table>`)
	htmlRow     = regexp.MustCompile(`(?is)<tr[^>]*>(.*?)</tr>`)
	htmlCell    = regexp.MustCompile(`(?is)<t[hd][^>]*>(.*?)</t[hd]>`)
	htmlHeading = regexp.MustCompile(`(?is)\s*<h[1-6][^>]*>(.*?)</h[1-6]>\s*`)
	htmlItem    = regexp.MustCompile(`(?is)\s*<li[^>]*>(.*?)</li>`)
	htmlList    = regexp.MustCompile(`(?is)\s*</?[uo]l[^>]*>\s*`)
	htmlQuote   = regexp.MustCompile(`(?is)\s*<blockquote[^>]*>(.*?)</blockquote>\s*`)
	htmlTag     = regexp.MustCompile(`(?s)<[^<>]+>`)
	htmlInline  = strings.NewReplacer("<em>", "*", "</em>", "*", "<i>", "*", "</i>", "*",
		"<strong>", "**", "</strong>", "**", "<b>", "**", "</b>", "**")
	blankLines = regexp.MustCompile(`\n{3,}`)
)

// htmlMarkdown makes the HTML a few records write (nine Spells That Don't
// Suck spells: tables, lists, headings, emphasis, quotes) markdown, as
// every other text is. Line breaks are htmlBreaks'.
func htmlMarkdown(s string) string {
	if !strings.Contains(s, "</") {
		return s
	}
	s = htmlInline.Replace(s)
	s = htmlTable.ReplaceAllStringFunc(s, func(t string) string {
		var b strings.Builder
		for i, row := range htmlRow.FindAllStringSubmatch(t, -1) {
			cells := htmlCell.FindAllStringSubmatch(row[1], -1)
			if len(cells) == 0 {
				continue
			}
			b.WriteString("|")
			for _, c := range cells {
				text := strings.Join(strings.Fields(htmlTag.ReplaceAllString(c[1], "")), " ")
				b.WriteString(" " + strings.ReplaceAll(text, "|", "\\|") + " |")
			}
			b.WriteString("\n")
			if i == 0 {
				b.WriteString("|" + strings.Repeat("---|", len(cells)) + "\n")
			}
		}
		return "\n\n" + b.String() + "\n"
	})
	s = htmlHeading.ReplaceAllString(s, "\n\n##### $1\n\n")
	s = htmlItem.ReplaceAllString(s, "\n- $1")
	s = htmlList.ReplaceAllString(s, "\n\n")
	s = htmlQuote.ReplaceAllStringFunc(s, func(q string) string {
		inner := strings.TrimSpace(htmlQuote.FindStringSubmatch(q)[1])
		return "\n\n> " + strings.ReplaceAll(inner, "\n", "\n> ") + "\n\n"
	})
	return blankLines.ReplaceAllString(s, "\n\n")
}

// htmlBreak is an HTML line break, as the Black Flag SRD's creatures
// write one within an action (42 texts).
var htmlBreak = regexp.MustCompile(`(?i)<br\s*/?>`)

// htmlBreaks makes the HTML line breaks of s new lines, except in a
// table's rows, where a break within a cell has no other markdown.
func htmlBreaks(s string) string {
	if !strings.Contains(s, "<") {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if !strings.HasPrefix(strings.TrimSpace(l), "|") {
			lines[i] = htmlBreak.ReplaceAllString(l, "\n")
		}
	}
	return strings.Join(lines, "\n")
}

// boldGlued is a bold label glued to the word after it ("**3/Day
// Each:**Command", 31 of the Monstrous Menagerie's spell lists): markdown
// does not close bold after punctuation followed by a letter, so the
// label and the rest of the line would print with their asterisks.
var boldGlued = regexp.MustCompile(`\*\*([^*\n]+?[:.])\*\*([[:alnum:]])`)

// headingGlued is a heading's marks glued to its words ("###Archery" in
// the SRD classes' fighting styles): markdown reads it as a paragraph.
var headingGlued = regexp.MustCompile(`(?m)^(#{1,6})([[:alpha:]])`)

var (
	// "Sphere [Area of Effect]|XPHB|Sphere": the shape, written twice.
	areaReference = regexp.MustCompile(`\s*\[[^\]|]+\]\|X?[A-Z]{2,6}\|[A-Z][a-z]+`)
	// "Cover|XPHB|Total Cover", "Short Rest|XPHB|Short or Long Rest": a
	// reference to a rule and the words the book prints for it.
	ruleReference = regexp.MustCompile(`[A-Z][a-z]+(?: [A-Z][a-z]+)*\|X?[A-Z]{2,6}\|([A-Z][a-z]+(?: (?:or |of |and )?[A-Z][a-z]+)*)`)
)

// unmarkReferences replaces 5etools-style references that reached the
// source's text ("Cover|XPHB|Total Cover") by the words they print ("Total
// Cover"). Table rows ("|Task Difficulty|DC|") do not match: a reference's
// printed words follow its source's abbreviation directly.
func unmarkReferences(s string) string {
	s = unlinkSRD(s)
	if !strings.Contains(s, "|") {
		return s
	}
	s = areaReference.ReplaceAllString(s, "")
	return ruleReference.ReplaceAllString(s, "$1")
}

// unlinkSRD replaces the links SRD 5.1's rules carry in their text ("the
// srd:web spell", "knock it srd:prone", "described in
// srd:actions-in-combat") by the words of the key they link ("the web
// spell", "knock it prone").
func unlinkSRD(s string) string {
	const link = "srd:"
	lowerOrDigit := func(c byte) bool { return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' }
	alnum := func(c byte) bool { return lowerOrDigit(c) || 'A' <= c && c <= 'Z' }
	var b strings.Builder
	last := 0
	for i := strings.Index(s, link); i >= 0; {
		end := i + len(link) // a key: lower-case letters, digits, hyphens
		for end < len(s) && (s[end] == '-' || lowerOrDigit(s[end])) {
			end++
		}
		wordBefore := i > 0 && alnum(s[i-1])
		if key := strings.Trim(s[i+len(link):end], "-"); key != "" && !wordBefore {
			b.WriteString(s[last:i])
			b.WriteString(strings.ReplaceAll(key, "-", " "))
			last = i + len(link) + len(key)
		}
		j := strings.Index(s[end:], link)
		if j < 0 {
			break
		}
		i = end + j
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// titleFromKey turns "chaotic-evil" into "Chaotic Evil".
func titleFromKey(k string) string {
	words := strings.FieldsFunc(k, func(r rune) bool { return r == '-' || r == '_' })
	for i, w := range words {
		words[i] = strings.ToUpper(w[:1]) + w[1:]
	}
	return strings.Join(words, " ")
}

// collisionSuffix is the upstream key without its document prefix
// ("srd_race_size" -> "race-size"), which tells colliding names apart.
func collisionSuffix(upstream string) string {
	if _, after, ok := strings.Cut(upstream, "_"); ok && lkv1.Slugify(after) != "" {
		return lkv1.Slugify(after)
	}
	return lkv1.Slugify(upstream)
}
