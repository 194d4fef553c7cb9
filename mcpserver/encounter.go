package mcpserver

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

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
var xpByCR = []struct {
	cr float64
	xp int
}{
	{0, 10}, {0.125, 25}, {0.25, 50}, {0.5, 100}, {1, 200}, {2, 450}, {3, 700}, {4, 1100}, {5, 1800},
	{6, 2300}, {7, 2900}, {8, 3900}, {9, 5000}, {10, 5900}, {11, 7200}, {12, 8400}, {13, 10000},
	{14, 11500}, {15, 13000}, {16, 15000}, {17, 18000}, {18, 20000}, {19, 22000}, {20, 25000},
	{21, 33000}, {22, 41000}, {23, 50000}, {24, 62000}, {25, 75000}, {26, 90000}, {27, 105000},
	{28, 120000}, {29, 135000}, {30, 155000},
}

// maxFoes is the largest group of one creature the prompt proposes.
const maxFoes = 8

// encounterBudget is the party's XP budget for a difficulty.
func encounterBudget(levels []int, difficulty string) (int, error) {
	col := slices.Index(encounterDifficulties, difficulty)
	if col < 0 {
		return 0, promptError("difficulty", fmt.Sprintf("unknown difficulty %q; use low, moderate or high", difficulty))
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
		if r.xp <= budget {
			hi = r.cr
		}
	}
	lo = hi
	for i := len(xpByCR) - 1; i >= 0; i-- {
		if xpByCR[i].cr <= hi && xpByCR[i].xp*maxFoes >= budget {
			lo = xpByCR[i].cr
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
	// One lookup per challenge rating in the window, so that the
	// candidates mix ratings rather than fill up with the first names of
	// one.
	type source struct {
		docs []string
		envs []string
	}
	sources := []source{{docs, envs}}
	if len(envs) > 0 && len(docs) > 0 {
		sources = nil
		if len(envDocs) > 0 {
			sources = append(sources, source{envDocs, envs})
		}
		if len(bareDocs) > 0 {
			sources = append(sources, source{bareDocs, nil})
		}
	}
	var byCR [][]Entity
	for i := len(xpByCR) - 1; i >= 0; i-- {
		r := xpByCR[i]
		if r.cr < lo || r.cr > hi || r.xp > budget {
			continue
		}
		var list []Entity
		for _, src := range sources {
			c := &lkv1.Common{Limit: perCR}
			if len(src.docs) > 0 {
				c.Documents = &lkv1.DocumentFilter{Documents: src.docs}
			}
			cr := r.cr
			resp, err := s.client.LookupCreatures(ctx, &lkv1.LookupCreaturesRequest{Common: c, CrRange: &lkv1.DoubleRange{Min: &cr, Max: &cr}, Types: types, Environments: src.envs})
			if err != nil {
				return nil, s.promptFail(PromptPlanEncounter, err)
			}
			for _, res := range resp.GetResults() {
				if e := entityFromResult(res); e.Creature != nil && e.Creature.ExperiencePoints > 0 {
					list = append(list, e)
				}
			}
		}
		if len(list) > 0 {
			byCR = append(byCR, list)
		}
	}
	// The strongest rating first, then one of each rating in turn: fewer,
	// tougher foes and their weaker companions. One per name. Within a
	// rating the lookups come in name order: take names spread over the
	// alphabet, not its first letters.
	var picked []Entity
	seen := map[string]bool{}
	rounds := 0
	if len(byCR) > 0 {
		rounds = (maxCandidates + len(byCR) - 1) / len(byCR)
	}
	for round := 0; len(picked) < maxCandidates; round++ {
		added := false
		for _, list := range byCR {
			if round < len(list) && len(picked) < maxCandidates {
				added = true
				i := round
				if len(list) > rounds {
					i = (round % rounds) * len(list) / rounds
					if round >= rounds {
						i = round // past the spread: the rest in order
					}
				}
				if e := list[i]; !seen[strings.ToLower(e.Name)] {
					seen[strings.ToLower(e.Name)] = true
					picked = append(picked, e)
				}
			}
		}
		if !added {
			break
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Help me build a %s combat encounter for a party of %d (levels %s).\n\n", difficulty, len(levels), joinInts(levels))
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

// maxCandidates is how many creatures plan_encounter embeds; perCR how many
// of each challenge rating it looks at.
// maxNamedDocs how many documents without environment data it names.
const (
	maxCandidates = 8
	perCR         = 60
	maxNamedDocs  = 5
)

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
