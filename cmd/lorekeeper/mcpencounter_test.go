package main

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// plan_encounter's candidates over the whole catalogue (issue 25): without
// documents, spread over the alphabet and the books, the SRDs' first; with
// documents, those books alone. What each is checked against is derived
// from the snapshot's creatures.

// encounterCandidate is one candidate line of a plan_encounter prompt.
type encounterCandidate struct {
	name, cr, doc, uri string
}

var (
	candidateLine = regexp.MustCompile(`(?m)^- (.+) \(CR ([^,]+), [\d,]+ XP, ([^)]+)\): up to \d+ within the budget · (\S+)$`)
	candidateCRs  = regexp.MustCompile(`Candidates \(challenge rating (\S+) to (\S+?)[,)]`)
)

// encounterCreature is a snapshot creature as plan_encounter may propose it.
type encounterCreature struct {
	name, doc string
}

// srdDocuments are the SRDs' document keys: the copies a lookup shows
// first when no documents are asked for.
var srdDocuments = []string{"srd-2014", "srd-2024"}

// checkEncounterCandidates runs in TestMCP_editionsPromptsErrors, over its
// session.
func checkEncounterCandidates(t *testing.T, cs *mcp.ClientSession) {
	es, err := snapshotEntities()
	if err != nil {
		t.Fatal(err)
	}
	// The snapshot's creatures with XP by challenge rating (as the prompt
	// writes it).
	byCR := map[string][]encounterCreature{}
	for _, e := range es {
		if c := e.GetCreature(); c != nil && c.GetExperiencePoints() > 0 {
			byCR[c.GetChallengeRatingText()] = append(byCR[c.GetChallengeRatingText()], encounterCreature{e.GetName(), e.GetDocument().GetKey()})
		}
	}
	crOrder := []string{"0", "1/8", "1/4", "1/2"}
	for i := 1; i <= 30; i++ {
		crOrder = append(crOrder, strconv.Itoa(i))
	}
	window := func(t *testing.T, text string) []string {
		t.Helper()
		m := candidateCRs.FindStringSubmatch(text)
		if m == nil {
			t.Fatalf("no challenge rating window in\n%s", text)
		}
		lo, hi := slices.Index(crOrder, m[1]), slices.Index(crOrder, m[2])
		if lo < 0 || hi < lo {
			t.Fatalf("window %q to %q", m[1], m[2])
		}
		return crOrder[lo : hi+1]
	}
	candidates := func(t *testing.T, args map[string]string) (string, []encounterCandidate) {
		t.Helper()
		text, emb := getPrompt(t, cs, "plan_encounter", args)
		var out []encounterCandidate
		for _, m := range candidateLine.FindAllStringSubmatch(text, -1) {
			out = append(out, encounterCandidate{m[1], m[2], m[3], m[4]})
		}
		if len(out) == 0 || len(out) != len(emb) {
			t.Fatalf("plan_encounter(%v): %d candidate lines, %d embedded\n%s", args, len(out), len(emb), text)
		}
		return text, out
	}
	parties := []string{"5,5,5,5", "1,1,1,1", "3,3,3,3", "10,10,10,10", "17,17,17,17,17"}

	t.Run("without documents: the alphabet, the books, the SRDs first", func(t *testing.T) {
		for _, party := range parties {
			text, got := candidates(t, map[string]string{"party_levels": party})
			crs := window(t, text)
			spansAlphabet(t, fmt.Sprintf("plan_encounter(%s)", party), got, crs, byCR, nil)
			books := map[string]bool{}
			for _, c := range got {
				books[c.doc] = true
			}
			// Other books than the SRDs, where the window has creatures of
			// more than one.
			others, windowOthers, fromOthers := map[string]bool{}, map[string]bool{}, 0
			for _, c := range got {
				if !slices.Contains(srdDocuments, c.doc) {
					others[c.doc] = true
					fromOthers++
				}
			}
			for _, cr := range crs {
				for _, c := range byCR[cr] {
					if !slices.Contains(srdDocuments, c.doc) {
						windowOthers[c.doc] = true
					}
				}
			}
			if len(others) < min(2, len(windowOthers)) {
				t.Errorf("plan_encounter(%s): candidates from %v; want two books besides the SRDs (CR %s to %s has creatures of %d)", party, slices.Sorted(maps.Keys(books)), crs[0], crs[len(crs)-1], len(windowOthers))
			}
			// Those of other books each from a book of its own, as far
			// as the window has books.
			if len(others) < min(fromOthers, len(windowOthers)) {
				t.Errorf("plan_encounter(%s): %d candidates from %v besides the SRDs, though CR %s to %s has creatures of %d: %v", party, fromOthers, slices.Sorted(maps.Keys(others)), crs[0], crs[len(crs)-1], len(windowOthers), got)
			}
			// Each rating's first candidate is an SRD creature where the
			// rating has any.
			first := map[string]encounterCandidate{}
			for _, c := range got {
				if !slices.Contains(crs, c.cr) {
					t.Errorf("plan_encounter(%s): %s is CR %s, outside CR %s to %s", party, c.name, c.cr, crs[0], crs[len(crs)-1])
				}
				if _, ok := first[c.cr]; !ok {
					first[c.cr] = c
				}
			}
			for cr, c := range first {
				hasSRD := slices.ContainsFunc(byCR[cr], func(e encounterCreature) bool { return slices.Contains(srdDocuments, e.doc) })
				if hasSRD && !slices.Contains(srdDocuments, c.doc) {
					t.Errorf("plan_encounter(%s): CR %s's first candidate is %s from %s; the SRDs have creatures of CR %s", party, cr, c.name, c.doc, cr)
				}
			}
			if !slices.ContainsFunc(got, func(c encounterCandidate) bool { return slices.Contains(srdDocuments, c.doc) }) {
				t.Errorf("plan_encounter(%s): no SRD creature among %v", party, got)
			}
			names := map[string]bool{}
			for _, c := range got {
				if n := strings.ToLower(c.name); names[n] {
					t.Errorf("plan_encounter(%s): %s twice", party, c.name)
				} else {
					names[n] = true
				}
			}
		}
	})

	t.Run("with documents: those books alone, the SRD's first", func(t *testing.T) {
		// Every book besides the SRDs: their creatures fill more than a
		// page of a lookup.
		var others []string
		for _, cs := range byCR {
			for _, c := range cs {
				if !slices.Contains(srdDocuments, c.doc) && !slices.Contains(others, c.doc) {
					others = append(others, c.doc)
				}
			}
		}
		slices.Sort(others)
		for _, docs := range [][]string{{"srd-2014", "tob"}, {"tob2", "a5e-mm"}, others} {
			for _, party := range parties[:3] {
				text, got := candidates(t, map[string]string{"party_levels": party, "documents": strings.Join(docs, ",")})
				crs := window(t, text)
				if len(got) >= 3 {
					spansAlphabet(t, fmt.Sprintf("plan_encounter(%s, documents=%v)", party, docs), got, crs, byCR, docs)
				}
				first := map[string]encounterCandidate{}
				for _, c := range got {
					if !slices.Contains(docs, c.doc) {
						t.Errorf("plan_encounter(%s, documents=%v) proposes %s from %s", party, docs, c.name, c.doc)
					}
					if _, ok := first[c.cr]; !ok {
						first[c.cr] = c
					}
				}
				for cr, c := range first {
					hasSRD := slices.ContainsFunc(byCR[cr], func(e encounterCreature) bool {
						return slices.Contains(srdDocuments, e.doc) && slices.Contains(docs, e.doc)
					})
					if hasSRD && !slices.Contains(srdDocuments, c.doc) {
						t.Errorf("plan_encounter(%s, documents=%v): CR %s's first candidate is %s from %s", party, docs, cr, c.name, c.doc)
					}
				}
				if len(crs) == 0 {
					t.Fatalf("plan_encounter(%s, documents=%v): no challenge rating\n%s", party, docs, text)
				}
			}
		}
	})
}

// spansAlphabet checks that candidates' names start with letters from each
// third of the initials that the creatures of crs (of docs, all when none)
// have, in alphabetical order.
func spansAlphabet(t *testing.T, call string, got []encounterCandidate, crs []string, byCR map[string][]encounterCreature, docs []string) {
	t.Helper()
	initials := map[rune]bool{}
	for _, cr := range crs {
		for _, c := range byCR[cr] {
			if len(docs) == 0 || slices.Contains(docs, c.doc) {
				initials[firstLetter(c.name)] = true
			}
		}
	}
	letters := slices.Sorted(maps.Keys(initials))
	if len(letters) < 3 {
		t.Fatalf("%s: CR %s to %s has names with the initials %q alone", call, crs[0], crs[len(crs)-1], string(letters))
	}
	thirds := [3][]rune{letters[:len(letters)/3], letters[len(letters)/3 : 2*len(letters)/3], letters[2*len(letters)/3:]}
	for i, third := range thirds {
		if !slices.ContainsFunc(got, func(c encounterCandidate) bool { return slices.Contains(third, firstLetter(c.name)) }) {
			t.Errorf("%s: no candidate's name starts with one of %q (third %d of the %d initials of CR %s to %s): %v", call, string(third), i+1, len(letters), crs[0], crs[len(crs)-1], got)
		}
	}
}

func firstLetter(name string) rune {
	for _, r := range strings.ToLower(name) {
		if unicode.IsLetter(r) {
			return r
		}
	}
	return 0
}
