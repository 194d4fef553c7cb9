package relevance_test

import (
	"cmp"
	"slices"
	"strings"
	"testing"

	"lorekeeper.dev/embedder/relevance"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

func TestStem(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"heal", "heal"}, {"heals", "heal"}, {"healing", "heal"}, {"healed", "heal"},
		{"regenerates", "regenerat"}, {"regeneration", "regenerat"},
		{"heaviest", "heavy"}, {"heavy", "heavy"},
		{"abilities", "ability"}, {"passes", "pass"}, {"class", "class"}, {"radius", "radius"},
		{"axis", "axis"}, {"cat", "cat"}, {"ale-dritch", "ale-dritch"}, {"élan", "élan"},
		{"swimming", "swim"}, {"swims", "swim"}, {"stunned", "stun"}, {"falling", "fall"}, {"hissing", "hiss"},
		{"grappled", "grappl"}, {"grapple", "grappl"}, {"flying", "fly"}, {"flies", "fly"},
	} {
		if got := relevance.Stem(tc.in); got != tc.want {
			t.Errorf("Stem(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestTokenize(t *testing.T) {
	got := relevance.Tokenize("What does the Owlbear's beak do? Heals 2d6!")
	want := []string{"owlbear", "beak", "heal", "2d6"}
	if !slices.Equal(got, want) {
		t.Errorf("Tokenize = %q, want %q", got, want)
	}
	if got := relevance.QueryTerms("owl bear"); !slices.Equal(got, []string{"owl", "bear", "owlbear"}) {
		t.Errorf("QueryTerms(owl bear) = %q, want the pair joined as well", got)
	}
	// A possessive's "s" is no word, and parts no pair.
	if got := relevance.QueryTerms("the wizard's spellbook"); !slices.Equal(got, []string{"wizard", "spellbook", "wizardspellbook"}) {
		t.Errorf("QueryTerms(the wizard's spellbook) = %q, want no s", got)
	}
}

// index is a small BM25 index built the way badgerstore builds its own.
type index struct {
	terms  map[string][]relevance.Posting
	lens   []int
	total  int
	vocab  []string
	rvocab []string
	tgrams map[string][]uint32
	names  []string
}

func newIndex(docs ...string) *index {
	ix := &index{terms: map[string][]relevance.Posting{}, tgrams: map[string][]uint32{}}
	for slot, d := range docs {
		toks := relevance.Tokenize(d)
		tf := map[string]int{}
		for _, t := range toks {
			tf[t]++
		}
		for t, n := range tf {
			ix.terms[t] = append(ix.terms[t], relevance.Posting{Slot: uint32(slot), TF: uint16(n)})
		}
		ix.lens = append(ix.lens, len(toks))
		ix.total += len(toks)
		name := strings.ToLower(strings.SplitN(d, ":", 2)[0])
		for _, g := range relevance.Trigrams(name) {
			ix.tgrams[g] = append(ix.tgrams[g], uint32(len(ix.names)))
		}
		ix.names = append(ix.names, name)
	}
	for t := range ix.terms {
		ix.vocab = append(ix.vocab, t)
	}
	slices.Sort(ix.vocab)
	for _, t := range ix.vocab {
		ix.rvocab = append(ix.rvocab, relevance.Reverse(t))
	}
	slices.Sort(ix.rvocab)
	return ix
}

func (ix *index) DocCount() int                             { return len(ix.lens) }
func (ix *index) TotalLen() int                             { return ix.total }
func (ix *index) TermPostings(t string) []relevance.Posting { return ix.terms[t] }
func (ix *index) DocLen(slot uint32) int                    { return ix.lens[slot] }
func (ix *index) Vocabulary() []string                      { return ix.vocab }
func (ix *index) ReversedVocabulary() []string              { return ix.rvocab }
func (ix *index) NamesWithTrigram(g string) []uint32        { return ix.tgrams[g] }
func (ix *index) NameIDs() int                              { return len(ix.names) }
func (ix *index) NameOfID(id uint32) string                 { return ix.names[id] }
func (ix *index) scores(q string, cand relevance.Candidates) []float64 {
	s := make([]float64, len(ix.lens))
	relevance.BM25(ix, relevance.QueryTerms(q), cand, s)
	return s
}

type all struct{}

func (all) Has(uint32) bool { return true }

type only map[uint32]bool

func (o only) Has(s uint32) bool { return o[s] }

func TestBM25(t *testing.T) {
	ix := newIndex(
		"Cure Wounds: a creature you touch regains hit points",
		"Fireball: a bright streak flashes to a point and blossoms into fire",
		"Fire Bolt: you hurl a mote of fire",
		"Labyrinth: a labyrinthine maze",
		"Mass Cure Wounds: a wave of healing energy, each creature regains hit points, cure",
	)
	s := ix.scores("cure wounds", all{})
	if s[0] <= 0 || s[4] <= 0 || s[1] != 0 || s[2] != 0 {
		t.Errorf("cure wounds scores %v, want only the cure spells above 0", s)
	}
	// A rarer term is worth more: "bolt" (one document) over "fire" (two).
	if s := ix.scores("fire bolt", all{}); s[2] <= s[1] {
		t.Errorf("fire bolt: Fire Bolt %v, Fireball %v, want Fire Bolt higher", s[2], s[1])
	}
	// Candidates limit the scored documents, not the statistics.
	if s := ix.scores("cure", only{4: true}); s[0] != 0 || s[4] <= 0 {
		t.Errorf("cure over {4}: %v, want only slot 4 scored", s)
	}
	// A long term meets the longer terms it prefixes, at a lower weight.
	s = ix.scores("labyrinth", all{})
	if s[3] <= 0 {
		t.Errorf("labyrinth: %v, want the Labyrinth scored", s)
	}
	// A term meets the compounds it ends, at a lower weight.
	ix2 := newIndex("Quarterstaff: simple melee weapon", "Staff of Power: a staff", "Club: simple")
	if s := ix2.scores("wooden staff", all{}); s[0] <= 0 || s[1] <= s[0] {
		t.Errorf("staff: quarterstaff %v, Staff of Power %v; want both, the exact word higher", s[0], s[1])
	}
	if s := ix.scores("nothing matches", all{}); slices.ContainsFunc(s, func(x float64) bool { return x != 0 }) {
		t.Errorf("unmatched query scored %v", s)
	}
}

func TestNamesSharingTrigrams(t *testing.T) {
	ix := newIndex("Fireball: x", "Fire Bolt: x", "Cure Wounds: x", "Mass Cure Wounds: x")
	if got := relevance.NamesSharingTrigrams(ix, "firbal", 0.35); !slices.Contains(got, "fireball") || slices.Contains(got, "cure wounds") {
		t.Errorf("NamesSharingTrigrams(firbal) = %v, want fireball and not cure wounds", got)
	}
	if got := relevance.NamesSharingTrigrams(ix, "cury wounds", 0.35); !slices.Contains(got, "cure wounds") {
		t.Errorf("NamesSharingTrigrams(cury wounds) = %v, want cure wounds", got)
	}
}

func TestNormalizeName(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Hunter's Mark", "hunters mark"},
		{"  hunters   MARK ", "hunters mark"},
		{"Melf’s Acid-Arrow", "melfs acid arrow"},
		{"Potion of Healing (Greater)", "potion of healing greater"},
		{"'", ""},
	} {
		if got := relevance.NormalizeName(tc.in); got != tc.want {
			t.Errorf("NormalizeName(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestReadingOrder(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Crossbow, light", "light crossbow"},
		{"Lantern, Hooded", "hooded lantern"},
		{"Minotaur, Ravening", "ravening minotaur"},
		{"Gnome, Deep (Svirfneblin)", "deep gnome"},
		{"Case, Map or Scroll", "map or scroll case"},
		{"Light Crossbow", "light crossbow"},
		{"Giant Rat (Diseased)", "giant rat (diseased)"},
		{"Climbing, Swimming and Crawling", "climbing, swimming and crawling"},
		{"Food, Drink, and Lodging", "food, drink, and lodging"},
		{"Wait, ", "wait,"},
		{"Longsword (+1)", "+1 longsword"},
		{"Longsword, +2", "+2 longsword"},
		{"Crossbow, light (+3)", "+3 light crossbow"},
		{"+1 Longsword", "+1 longsword"},
		{"Spell Scroll (1st level)", "spell scroll (1st level)"},
	} {
		if got := relevance.ReadingOrder(tc.in); got != tc.want {
			t.Errorf("ReadingOrder(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"fireball", "fireball", 0}, {"firebal", "fireball", 1}, {"firbeall", "fireball", 1},
		{"magic missle", "magic missile", 1}, {"", "abc", 3}, {"abc", "", 3}, {"ca", "abc", 3},
	} {
		if got := relevance.EditDistance([]rune(tc.a), []rune(tc.b)); got != tc.want {
			t.Errorf("EditDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
	if s := relevance.NameSimilarity("firebal", "fireball"); s < 0.85 || s >= 1 {
		t.Errorf("NameSimilarity(firebal, fireball) = %v", s)
	}
}

// The name matcher's parts: any input, no panic, and the metric laws.
func FuzzNameMatching(f *testing.F) {
	for _, s := range []string{"firebal", "Tasha's Hideous Laughter", "’’", "a  b", "\xff\xfe", "bigby hand", ""} {
		f.Add(s, "fireball")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		na, nb := relevance.NormalizeName(a), relevance.NormalizeName(b)
		if relevance.NormalizeName(na) != na {
			t.Fatalf("NormalizeName not idempotent on %q: %q then %q", a, na, relevance.NormalizeName(na))
		}
		if strings.Contains(na, "  ") || strings.TrimSpace(na) != na || strings.ContainsAny(na, "'’") {
			t.Fatalf("NormalizeName(%q) = %q: spacing or apostrophes left", a, na)
		}
		ra, rb := []rune(na), []rune(nb)
		d := relevance.EditDistance(ra, rb)
		if d != relevance.EditDistance(rb, ra) || d > max(len(ra), len(rb)) || d < max(len(ra)-len(rb), len(rb)-len(ra)) {
			t.Fatalf("EditDistance(%q, %q) = %d breaks symmetry or bounds", na, nb, d)
		}
		if (d == 0) != (na == nb) {
			t.Fatalf("EditDistance(%q, %q) = %d", na, nb, d)
		}
		if s := relevance.NameSimilarity(na, nb); s < 0 || s > 1 {
			t.Fatalf("NameSimilarity(%q, %q) = %v", na, nb, s)
		}
		_ = relevance.Trigrams(a)
		_ = relevance.Tokenize(a)
	})
}

func BenchmarkTokenize(b *testing.B) {
	text := strings.Repeat("A bright streak flashes from your pointing finger to a point you choose within range and then blossoms with a low roar into an explosion of flame. ", 8)
	b.ReportAllocs()
	for b.Loop() {
		relevance.Tokenize(text)
	}
}

func BenchmarkBM25(b *testing.B) {
	docs := make([]string, 0, 2000)
	words := strings.Fields("fire cold acid heal wounds creature spell attack dragon undead poison radiant necrotic thunder lightning force psychic sleep charm fear")
	for i := range 2000 {
		var sb strings.Builder
		for j := range 60 {
			sb.WriteString(words[(i*7+j*13)%len(words)] + " ")
		}
		docs = append(docs, sb.String())
	}
	ix := newIndex(docs...)
	scores := make([]float64, len(docs))
	terms := relevance.QueryTerms("heal many creatures at once in an area")
	b.ReportAllocs()
	for b.Loop() {
		clear(scores)
		relevance.BM25(ix, terms, all{}, scores)
	}
}

func BenchmarkEditDistance(b *testing.B) {
	x, y := []rune("tashas hideous laughter"), []rune("hideous laughter")
	b.ReportAllocs()
	for b.Loop() {
		relevance.EditDistance(x, y)
	}
}

func TestAliases(t *testing.T) {
	tab := relevance.Aliases()
	for _, tc := range []struct{ in, want string }{
		{"Tasha's Hideous Laughter", "Hideous Laughter"},
		{"tashas hideous laughter", "Hideous Laughter"},
		{"Melfs acid arrow", "Acid Arrow"},
		{"melf acid arrow", "Acid Arrow"},
		{"Bigby’s Hand", "Arcane Hand"},
		{"bigby hand", "Arcane Hand"},
		{"feeblemind", "Befuddlement"},
		{"befuddlement", "Feeblemind"},
	} {
		rows := tab.Lookup(tc.in)
		if !slices.ContainsFunc(rows, func(a relevance.Alias) bool { return a.Name == tc.want }) {
			t.Errorf("Lookup(%q) = %v, want %q among them", tc.in, rows, tc.want)
		}
	}
	if rows := tab.Lookup("hideous laughter"); len(rows) != 0 {
		t.Errorf("Lookup(hideous laughter) = %v, want nothing: the open name is no alias", rows)
	}
	if got := tab.KnownAs(lkv1.Kind_KIND_SPELL, "Arcane Hand"); !slices.Contains(got, "Bigby's Hand") {
		t.Errorf("KnownAs(spell, Arcane Hand) = %v, want Bigby's Hand", got)
	}
	if got := tab.KnownAs(lkv1.Kind_KIND_CREATURE, "Arcane Hand"); len(got) != 0 {
		t.Errorf("KnownAs(creature, Arcane Hand) = %v, want none: aliases are per kind", got)
	}
	near := tab.Near("bigbys hnd", 0.7)
	found := false
	for a := range near {
		found = found || a.Name == "Arcane Hand"
	}
	if !found {
		t.Errorf("Near(bigbys hnd) = %v, want Arcane Hand", near)
	}
	n := 0
	for _, a := range tab.Rows() {
		if a.Type == relevance.AliasWizard && a.Kind == lkv1.Kind_KIND_SPELL {
			n++
		}
	}
	if n < 17 {
		t.Errorf("%d wizard-named spells, want every one in the SRD (17)", n)
	}
}

func TestParseAliases_Errors(t *testing.T) {
	for _, in := range []string{
		"wizard\tspell\tOnly three",
		"wizard\tnot-a-kind\tA\tB",
		"sometype\tspell\tA\tB",
		"wizard\tspell\t\tB",
	} {
		if _, err := relevance.ParseAliases(in); err == nil {
			t.Errorf("ParseAliases(%q): no error", in)
		}
	}
}

func TestCorrectTerms(t *testing.T) {
	ix := newIndex("Tarrasque: the tarrasque is a huge monstrosity", "Suffocating: a creature can hold its breath", "Fireball: fire")
	got := relevance.QueryTermsFor(ix, "tarasque breth monstr fire zzzz")
	want := relevance.QueryTerms("tarrasque breath monstrosity fire zzzz")
	// "monstr" is no spelling of "monstrosity" (too far): it stays.
	want[2] = "monstr"
	want = want[:5]
	if !slices.Equal(got[:5], want) {
		t.Errorf("QueryTermsFor = %q, want %q first", got, want)
	}
	// Known terms are never changed.
	if got := relevance.CorrectTerms(ix, []string{"fire", "huge"}); !slices.Equal(got, []string{"fire", "huge"}) {
		t.Errorf("CorrectTerms(known) = %q", got)
	}
}

func TestNamesByTrigrams(t *testing.T) {
	ix := newIndex("Ancient Red Dragon: x", "Adult Red Dragon: x", "Red Dragon Wyrmling: x", "Ancient Brass Dragon: x", "Goblin: x")
	got := relevance.NamesByTrigrams(ix, "ancient red dragn", 0.25, 2)
	if len(got) != 2 || got[0] != "ancient red dragon" {
		t.Errorf("NamesByTrigrams(ancient red dragn, 2) = %q, want ancient red dragon first and two names", got)
	}
	if got := relevance.NamesByTrigrams(ix, "ancient red dragn", 0.25, 10); slices.Contains(got, "goblin") {
		t.Errorf("NamesByTrigrams = %q, want no goblin", got)
	}
}

// A word the books write for the query's word (synonyms.tsv) finds the
// text that says it, below a text that says the query's own word; a word
// the table does not name finds nothing of the kind.
func TestBM25_synonyms(t *testing.T) {
	ix := newIndex(
		"You create a sphere of fog. The area is heavily obscured.",
		"Briefly surrounded by silvery mist, you teleport.",
		"A stream of ice-cold ale blasts from your hands.",
		"A wall of stone rises from the ground.",
	)
	for _, tc := range []struct {
		q    string
		want []int // slots with a score, best first
	}{
		{"a bank of mist", []int{1, 0}},
		{"a pint of beer", []int{2}},
		{"fog", []int{0, 1}},
		{"a wall of granite", []int{3}},
	} {
		s := make([]float64, 4)
		relevance.BM25(ix, relevance.QueryTerms(tc.q), all{}, s)
		var got []int
		for slot := range s {
			if s[slot] > 0 {
				got = append(got, slot)
			}
		}
		slices.SortFunc(got, func(a, b int) int { return cmp.Compare(s[b], s[a]) })
		if !slices.Equal(got, tc.want) {
			t.Errorf("%q: slots %v (scores %.2f), want %v", tc.q, got, s, tc.want)
		}
	}
}

func TestParseSynonyms(t *testing.T) {
	tab, err := relevance.ParseSynonyms("# comment\nbare hands, fists\tunarmed\nmist\tfog, cloud\n")
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string][]string{"barehand": {"unarm"}, "fist": {"unarm"}, "mist": {"fog", "cloud"}} {
		if !slices.Equal(tab[key], want) {
			t.Errorf("%q -> %q, want %q", key, tab[key], want)
		}
	}
	for _, bad := range []string{"mist fog\n", "mist\t\n", "one two three\tx\n", "\tfog\n"} {
		if _, err := relevance.ParseSynonyms(bad); err == nil {
			t.Errorf("ParseSynonyms(%q): no error", bad)
		}
	}
}
