package mcpserver

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// Encounter building follows the published rules of the System Reference
// Document 5.2 (CC-BY-4.0), which carries them; SRD 5.1 does not carry the
// 2014 encounter thresholds (they are in the 2014 Dungeon Master's Guide,
// not open content), so they are not used.
const encounterRules = "XP Budget per Character table of the System Reference Document 5.2 (2024 rules, CC-BY-4.0): add up each character's budget for the difficulty; creatures' XP from their stat blocks (Experience Points by Challenge Rating)"

// encounterDifficulties are SRD 5.2's difficulties, in table order.
var encounterDifficulties = []string{"low", "moderate", "high"}

// xpBudgetPerCharacter is SRD 5.2's XP Budget per Character, by character
// level (index 0 is level 1): low, moderate, high.
var xpBudgetPerCharacter = [20][3]int{
	{50, 75, 100},
	{100, 150, 200},
	{150, 225, 400},
	{250, 375, 500},
	{500, 750, 1100},
	{600, 1000, 1400},
	{750, 1300, 1700},
	{1000, 1700, 2100},
	{1300, 2000, 2600},
	{1600, 2300, 3100},
	{1900, 2900, 4100},
	{2200, 3700, 4700},
	{2600, 4200, 5400},
	{2900, 4900, 6200},
	{3300, 5400, 7800},
	{3800, 6100, 9800},
	{4500, 7200, 11700},
	{5000, 8700, 14200},
	{5500, 10700, 17200},
	{6400, 13200, 22000},
}

// xpByCR is the SRD's Experience Points by Challenge Rating (the same in
// 5.1 and 5.2), used to choose the challenge ratings to look up.
var xpByCR = lkv1.ChallengeXPs()

// maxFoes is the largest group of one creature the prompt proposes.
const maxFoes = 8

// olderDifficulties are the 2014 Dungeon Master's Guide's words, which a
// DM used to those books says, and the SRD 5.2 difficulty each is read
// as: the 2014 thresholds are not open content, SRD 5.2's budgets are,
// and its hardest (high) is the one a hard or deadly fight asks for.
var olderDifficulties = map[string]string{"easy": "low", "medium": "moderate", "hard": "high", "deadly": "high"}

// encounterBudget is the party's XP budget for a difficulty.
func encounterBudget(levels []int, difficulty string) (int, error) {
	col := slices.Index(encounterDifficulties, difficulty)
	if col < 0 {
		return 0, promptError("difficulty", fmt.Sprintf("unknown difficulty %q; use low, moderate or high (SRD 5.2's; easy, medium, hard and deadly are read as the nearest of them)", difficulty))
	}
	total := 0
	for _, l := range levels {
		if l < 1 || l > 20 {
			return 0, promptError("party_levels", fmt.Sprintf("level %d is not in 1-20", l))
		}
		total += xpBudgetPerCharacter[l-1][col]
	}
	return total, nil
}

// crWindow is the challenge ratings worth proposing for a budget: up to
// the highest whose XP fits the budget alone, down to the lowest of which
// maxFoes still make a meaningful share of it (an eighth each).
func crWindow(budget int) (lo, hi float64) {
	for _, r := range xpByCR {
		if int(r.XP) <= budget {
			hi = r.CR
		}
	}
	lo = hi
	for i := len(xpByCR) - 1; i >= 0; i-- {
		if xpByCR[i].CR <= hi && int(xpByCR[i].XP)*maxFoes >= budget {
			lo = xpByCR[i].CR
		}
	}
	return lo, hi
}

func parseLevels(s string) ([]int, error) {
	var levels []int
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == ';' }) {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, promptError("party_levels", fmt.Sprintf("%q is not a level; give levels 1-20 separated by commas, e.g. \"3,3,4,5\"", f))
		}
		levels = append(levels, n)
	}
	if len(levels) == 0 {
		return nil, promptError("party_levels", "required: each character's level, e.g. \"3,3,4,5\"")
	}
	if len(levels) > 12 {
		return nil, promptError("party_levels", fmt.Sprintf("%d characters; at most 12", len(levels)))
	}
	return levels, nil
}

func (s *Server) planEncounter(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	args := req.Params.Arguments
	levels, err := parseLevels(args["party_levels"])
	if err != nil {
		return nil, err
	}
	difficulty := strings.ToLower(strings.TrimSpace(args["difficulty"]))
	if difficulty == "" {
		difficulty = "moderate"
	}
	said := ""
	if d, ok := olderDifficulties[difficulty]; ok {
		said, difficulty = difficulty, d
	}
	budget, err := encounterBudget(levels, difficulty)
	if err != nil {
		return nil, err
	}
	lo, hi := crWindow(budget)
	types, err := closedSet("creature_type", args["creature_type"], creatureTypes, nil)
	if err != nil {
		return nil, s.promptFail(PromptPlanEncounter, err)
	}
	docs := splitList(args["documents"])
	ctx, cancel := s.callContext(ctx)
	defer cancel()
	envs, err := s.environments(ctx, args["environment"])
	if err != nil {
		return nil, err
	}
	// Documents whose creatures carry no environment (SRD 5.2 has none):
	// the environment cannot choose among them. Those asked for are drawn
	// from without it, and said so; the others are only named.
	var envDocs, bareDocs []string
	if len(envs) > 0 {
		if envDocs, bareDocs, err = s.environmentCoverage(ctx, docs, envs); err != nil {
			return nil, s.promptFail(PromptPlanEncounter, err)
		}
	}
	// The sources of the lookups: with environments and documents asked
	// for, the documents without environment data are drawn from without
	// them.
	sources := []crSource{{docs, envs}}
	if len(envs) > 0 && len(docs) > 0 {
		sources = nil
		if len(envDocs) > 0 {
			sources = append(sources, crSource{envDocs, envs})
		}
		if len(bareDocs) > 0 {
			sources = append(sources, crSource{bareDocs, nil})
		}
	}
	// Each challenge rating in the window, the strongest first, so that
	// the candidates mix ratings rather than fill up with one.
	var pools []crPool
	for i := len(xpByCR) - 1; i >= 0; i-- {
		r := xpByCR[i]
		if r.CR < lo || r.CR > hi || int(r.XP) > budget {
			continue
		}
		pool, err := s.crCandidates(ctx, r.CR, types, sources)
		if err != nil {
			return nil, s.promptFail(PromptPlanEncounter, err)
		}
		if len(pool.srd)+len(pool.other) > 0 {
			pools = append(pools, pool)
		}
	}
	picked := pickCandidates(pools, maxCandidates)
	var b strings.Builder
	fmt.Fprintf(&b, "Help me build a %s combat encounter for a party of %d (levels %s).\n\n", difficulty, len(levels), joinInts(levels))
	if said != "" {
		fmt.Fprintf(&b, "Difficulty: %q read as SRD 5.2's %s (the 2014 Dungeon Master's Guide's thresholds are not open content).\n", said, difficulty)
	}
	fmt.Fprintf(&b, "XP budget: %s XP for the party (%s).\n", thousands(int32(budget)), encounterRules)
	b.WriteString("Per character: ")
	for i, l := range levels {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "level %d = %s", l, thousands(int32(xpBudgetPerCharacter[l-1][slices.Index(encounterDifficulties, difficulty)])))
	}
	fmt.Fprintf(&b, ".\nSpend the budget on creatures whose XP adds up to at most the budget. Candidates (challenge rating %s to %s", lkv1.ChallengeRatingText(lo), lkv1.ChallengeRatingText(hi))
	if len(types) > 0 {
		fmt.Fprintf(&b, ", type %s", strings.Join(types, "/"))
	}
	if len(envs) > 0 {
		fmt.Fprintf(&b, ", found in %s", strings.Join(envs, "/"))
	}
	if len(docs) > 0 {
		fmt.Fprintf(&b, ", from %s", strings.Join(docs, ", "))
	}
	b.WriteString("), a mix of challenge ratings, with their stat blocks embedded below:\n")
	if len(bareDocs) > 0 {
		named := strings.Join(bareDocs, ", ")
		if len(bareDocs) > maxNamedDocs {
			named = fmt.Sprintf("%s and %d more", strings.Join(bareDocs[:maxNamedDocs], ", "), len(bareDocs)-maxNamedDocs)
		}
		if len(docs) > 0 {
			fmt.Fprintf(&b, "- note: %s %s no environment data, so %s creatures are candidates whatever their environment; judge from their descriptions whether they fit %s.\n", named, hasHave(len(bareDocs)), theirIts(len(bareDocs)), strings.Join(envs, "/"))
		} else {
			fmt.Fprintf(&b, "- note: %s %s no environment data, so none of %s creatures is among these; ask with documents=%q to draw from it regardless of environment.\n", named, hasHave(len(bareDocs)), theirIts(len(bareDocs)), bareDocs[0])
		}
	}
	if len(picked) == 0 {
		switch {
		case len(envs) > 0 && len(envDocs) == 0 && len(docs) > 0:
			fmt.Fprintf(&b, "- none: %s %s no environment data and no creature of these ratings and types.\n", strings.Join(docs, ", "), hasHave(len(docs)))
		default:
			b.WriteString("- none in the catalogue with these filters: widen them (another environment or type, more documents).\n")
		}
	}
	for _, e := range picked {
		xp := int(e.Creature.ExperiencePoints)
		fmt.Fprintf(&b, "- %s (CR %s, %s XP, %s): up to %d within the budget · %s\n", e.Name, e.Creature.ChallengeRatingText, thousands(int32(xp)), e.DocumentKey, min(budget/xp, maxFoes), e.URI)
	}
	b.WriteString("\nPropose one or two encounters from these creatures (mixing them is fine), show the XP arithmetic, and describe the tactics from their stat blocks. Cite creatures by their URIs.")
	out := &mcp.GetPromptResult{Description: fmt.Sprintf("%s encounter, %s XP budget", difficulty, thousands(int32(budget))), Messages: []*mcp.PromptMessage{textMessage(b.String())}}
	for i := range picked {
		out.Messages = append(out.Messages, entityMessage(&picked[i]))
	}
	return out, nil
}

// maxCandidates is how many creatures plan_encounter embeds (the prompt's
// size); maxNamedDocs how many documents without environment data it
// names. crPages bounds the lookups per challenge rating and source (one
// set for the SRDs, one for every book): pages of maxLimit creatures in
// name order, room for 400 names where the most crowded rating of the
// bundled catalogue (CR 2) holds 230 over its books; a rating with more
// is drawn from its first crPages*maxLimit names. The prompt embeds
// maxCandidates whatever was looked at.
const (
	maxCandidates = 8
	maxNamedDocs  = 5
	crPages       = 4
)

// crSource is one set of lookups' documents and environments.
type crSource struct {
	docs []string
	envs []string
}

// crPool is one challenge rating's creatures (XP known), one per name: the
// SRDs' copies and the other books'.
type crPool struct {
	srd, other []Entity
}

// srdBooks are the SRDs' documents, in the order in which a lookup that
// names no documents shows a name's copies (the query service's
// documentRank: SRD 5.1, then SRD 5.2, then the other books): the copies
// of a name a DM most likely owns. They are editions' SRD books.
func srdBooks() []string {
	var out []string
	for _, ed := range editions {
		if !ed.wholeSystem {
			out = append(out, ed.document)
		}
	}
	return out
}

// crCandidates are the creatures of challenge rating cr from sources, each
// name once: the SRDs' (those asked for, or both when no documents are)
// from one set of lookups, then the other books' from another, a name
// already had from the SRDs not taken again. Both page through the rating's whole name range with the lookups'
// cursor (at most crPages pages each), so that the candidates can come
// from anywhere in the alphabet, not its first page.
func (s *Server) crCandidates(ctx context.Context, cr float64, types []string, sources []crSource) (crPool, error) {
	srd := srdBooks()
	seen := map[string]bool{}
	var pool crPool
	add := func(e Entity) {
		if n := strings.ToLower(e.Name); !seen[n] && e.Creature != nil && e.Creature.ExperiencePoints > 0 {
			seen[n] = true
			if slices.Contains(srd, e.DocumentKey) {
				pool.srd = append(pool.srd, e)
			} else {
				pool.other = append(pool.other, e)
			}
		}
	}
	for _, src := range sources {
		srdDocs := srd
		if len(src.docs) > 0 {
			srdDocs = slices.DeleteFunc(slices.Clone(srd), func(d string) bool { return !slices.Contains(src.docs, d) })
		}
		// The SRDs first (unless none is asked for): a name both carry
		// is SRD 5.1's, the lookups' name order putting its copy first.
		// Then the documents asked for, all when none (nil).
		lookups := [][]string{src.docs}
		if len(srdDocs) > 0 {
			lookups = [][]string{srdDocs, src.docs}
		}
		for _, docs := range lookups {
			cursor := ""
			for range crPages {
				c := &lkv1.Common{Limit: maxLimit, Cursor: cursor}
				if len(docs) > 0 {
					c.Documents = &lkv1.DocumentFilter{Documents: docs}
				}
				resp, err := s.client.LookupCreatures(ctx, &lkv1.LookupCreaturesRequest{Common: c, CrRange: &lkv1.DoubleRange{Min: &cr, Max: &cr}, Types: types, Environments: src.envs})
				if err != nil {
					return crPool{}, err
				}
				for _, res := range resp.GetResults() {
					add(entityFromResult(res))
				}
				if cursor = resp.GetNextCursor(); cursor == "" {
					break
				}
			}
		}
	}
	return pool, nil
}

// pickCandidates chooses up to n creatures from pools (one per challenge
// rating, the strongest first). Half as many ratings as candidates, spread
// over the window (its strongest and weakest kept), give one creature each
// in turn, a rating's first an SRD creature where it has one, then another
// book's, then the SRDs' and the other books' in turn: with a window of as
// many ratings as candidates, one of each would be the SRDs' alone. The
// other ratings are drawn from only when those run out. Each pick favours
// the book picked least so far, then the name whose initial is farthest
// from the initials already picked: the candidates mix the books and
// spread over the alphabet. Names are unique across ratings.
func pickCandidates(pools []crPool, n int) []Entity {
	groups := [][]crPool{pools}
	if k := max((n+1)/2, 2); len(pools) > k {
		chosen := map[int]bool{}
		for j := range k {
			chosen[j*(len(pools)-1)/(k-1)] = true
		}
		var spread, rest []crPool
		for i, p := range pools {
			if chosen[i] {
				spread = append(spread, p)
			} else {
				rest = append(rest, p)
			}
		}
		groups = [][]crPool{spread, rest}
	}
	var picked []Entity
	books := map[string]int{}
	var initials []rune
	taken := map[string]bool{}
	best := func(list []Entity) int {
		at, atBook, atGap := -1, 0, 0
		for i, e := range list {
			if taken[strings.ToLower(e.Name)] {
				continue
			}
			gap := initialGap(e.Name, initials)
			if at < 0 || books[e.DocumentKey] < atBook || books[e.DocumentKey] == atBook && gap > atGap {
				at, atBook, atGap = i, books[e.DocumentKey], gap
			}
		}
		return at
	}
	for _, group := range groups {
		for round := 0; len(picked) < n; round++ {
			added := false
			for _, p := range group {
				if len(picked) == n {
					break
				}
				lists := [][]Entity{p.srd, p.other}
				if round%2 == 1 {
					lists[0], lists[1] = lists[1], lists[0]
				}
				for _, list := range lists {
					if i := best(list); i >= 0 {
						e := list[i]
						taken[strings.ToLower(e.Name)] = true
						books[e.DocumentKey]++
						initials = append(initials, initial(e.Name))
						picked = append(picked, e)
						added = true
						break
					}
				}
			}
			if !added {
				break
			}
		}
	}
	return picked
}

// initial is a name's first letter, lower-case.
func initial(name string) rune {
	for _, r := range strings.ToLower(name) {
		if unicode.IsLetter(r) {
			return r
		}
	}
	return 0
}

// initialGap is how far a name's initial is from the nearest of initials
// (in letters); the most for the first.
func initialGap(name string, initials []rune) int {
	r := initial(name)
	gap := unicode.MaxRune
	for _, o := range initials {
		gap = min(gap, max(r-o, o-r))
	}
	return int(gap)
}

func hasHave(n int) string {
	if n == 1 {
		return "has"
	}
	return "have"
}

func theirIts(n int) string {
	if n == 1 {
		return "its"
	}
	return "their"
}

// environments resolves the environment argument against the environments
// the creatures carry, as a user may type them: the stored slug of the
// source's display name ("forest-or-jungle"), the display name ("Forest or
// Jungle"), the source's key ("forest", "srd_feywild"), or one of the
// name's words ("jungle", "abyss").
func (s *Server) environments(ctx context.Context, arg string) ([]string, error) {
	asked := splitList(arg)
	if len(asked) == 0 {
		return nil, nil
	}
	known, err := s.environmentValues(ctx)
	if err != nil {
		return nil, s.promptFail(PromptPlanEncounter, err)
	}
	var out []string
	for _, a := range asked {
		matched := matchEnvironment(a, known)
		if len(matched) == 0 {
			return nil, promptError("environment", fmt.Sprintf("no creature is found in %q; the environments are %s (or a word of one, e.g. \"jungle\")", a, strings.Join(known, ", ")))
		}
		for _, m := range matched {
			if !slices.Contains(out, m) {
				out = append(out, m)
			}
		}
	}
	return out, nil
}

// environmentValues are every environment a stored creature carries.
func (s *Server) environmentValues(ctx context.Context) ([]string, error) {
	resp, err := s.client.CompleteValues(ctx, &lkv1.CompleteValuesRequest{Field: lkv1.CompletionField_COMPLETION_FIELD_ENVIRONMENT, Limit: 100})
	if err != nil {
		return nil, err
	}
	out := slices.Clone(resp.GetValues())
	slices.Sort(out)
	return out, nil
}

// envStopWords are the words of environment names that name none.
var envStopWords = map[string]bool{"or": true, "of": true, "the": true, "and": true, "plane": true}

// matchEnvironment is the known environments a typed value names.
func matchEnvironment(typed string, known []string) []string {
	slug := lkv1.Slugify(typed)
	forms := []string{slug}
	if _, after, ok := strings.Cut(strings.ReplaceAll(typed, "-", "_"), "_"); ok && strings.Contains(typed, "_") {
		forms = append(forms, lkv1.Slugify(after)) // a source key: "srd_feywild"
	}
	for _, f := range forms {
		if slices.Contains(known, f) {
			return []string{f}
		}
	}
	var out []string
	for _, k := range known {
		for _, w := range strings.Split(k, "-") {
			if !envStopWords[w] && slices.Contains(forms, w) {
				out = append(out, k)
				break
			}
		}
	}
	return out
}

// environmentCoverage splits the documents asked for (all that hold
// creatures when none are) into those whose creatures carry environments
// and those whose creatures carry none.
func (s *Server) environmentCoverage(ctx context.Context, docs, envs []string) (withEnv, without []string, err error) {
	if len(docs) == 0 {
		resp, err := s.client.ListDocuments(ctx, &lkv1.ListDocumentsRequest{})
		if err != nil {
			return nil, nil, err
		}
		for _, d := range resp.GetDocuments() {
			if d.GetCounts()[lkv1.Kind_KIND_CREATURE.Slug()] > 0 {
				docs = append(docs, d.GetDocument().GetKey())
			}
		}
	}
	all, err := s.environmentValues(ctx)
	if err != nil {
		return nil, nil, err
	}
	for _, d := range docs {
		resp, err := s.client.LookupCreatures(ctx, &lkv1.LookupCreaturesRequest{Common: &lkv1.Common{Limit: 1, Documents: &lkv1.DocumentFilter{Documents: []string{d}}}, Environments: all})
		if err != nil {
			return nil, nil, err
		}
		if resp.GetTotal() > 0 {
			withEnv = append(withEnv, d)
		} else {
			without = append(without, d)
		}
	}
	return withEnv, without, nil
}

func joinInts(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.Itoa(x)
	}
	return strings.Join(parts, ", ")
}
