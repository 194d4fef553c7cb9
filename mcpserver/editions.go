package mcpserver

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// An edition is one version of the rules: SRD 5.1 (2014), SRD 5.2 (2024)
// or Level Up Advanced 5th Edition (A5E). Since ingestion splits Open5e's
// combined "core" records, each SRD has its own conditions and reference
// entries, so the prompts take an edition and read that book alone (the
// other 2014-rules books are not the SRD's version of an entry). A5E is
// every Level Up book (its rules and spells are the Adventurer's Guide's,
// its creatures the Monstrous Menagerie's), and never a default: a 5e
// question gets the two SRDs.
type edition struct {
	document    string // the book's document key
	system      string // its game system
	label       string
	wholeSystem bool // every document of the game system, not document alone
}

var editions = []edition{
	{"srd-2014", "5e-2014", "SRD 5.1 (2014 rules)", false},
	{"srd-2024", "5e-2024", "SRD 5.2 (2024 rules)", false},
	{"a5e-ag", "a5e", "Level Up Advanced 5th Edition (A5E)", true},
}

// editionBooks are the document keys of each of eds' books, in order: an
// SRD edition's one book, or every stored document of A5E's game system,
// as the catalogue has them (asked for only when an edition needs it).
func (s *Server) editionBooks(ctx context.Context, eds []edition) ([][]string, error) {
	out := make([][]string, len(eds))
	var docs []*lkv1.DocumentSummary
	for i, ed := range eds {
		out[i] = []string{ed.document}
		if !ed.wholeSystem {
			continue
		}
		if docs == nil {
			resp, err := s.client.ListDocuments(ctx, &lkv1.ListDocumentsRequest{})
			if err != nil {
				return nil, err
			}
			docs = resp.GetDocuments()
		}
		for _, d := range docs {
			if k := d.GetDocument().GetKey(); d.GetDocument().GetGameSystem() == ed.system && !slices.Contains(out[i], k) {
				out[i] = append(out[i], k)
			}
		}
	}
	return out, nil
}

// editionHelp says what an edition argument accepts.
const editionHelp = `2014 (SRD 5.1), 2024 (SRD 5.2) or a5e (Level Up Advanced 5th Edition); also 5e-2014, srd-2024, 5.1, ...`

// parseEditions reads a comma-separated edition argument: game systems as
// the tools' game_system takes them, or the books' document keys.
func parseEditions(arg, v string) ([]edition, error) {
	var out []edition
	for _, x := range splitList(v) {
		sys := x
		for _, e := range editions {
			if x == e.document {
				sys = e.system
			}
		}
		if x == "a5e-ag" || x == "level-up" || x == "levelup" {
			sys = "a5e"
		}
		systems, err := gameSystems(sys)
		if err != nil || len(systems) != 1 {
			return nil, promptError(arg, fmt.Sprintf("unknown edition %q; use %s", x, editionHelp))
		}
		i := slices.IndexFunc(editions, func(e edition) bool { return e.system == systems[0] })
		if !slices.Contains(out, editions[i]) {
			out = append(out, editions[i])
		}
	}
	return out, nil
}

// kindFamilies are the lookups, in the order compare_editions tries them
// for a name of unknown kind.
func kindFamilies() [][]lkv1.Kind {
	return [][]lkv1.Kind{{lkv1.Kind_KIND_SPELL}, {lkv1.Kind_KIND_CREATURE}, lkv1.EquipmentKinds(), lkv1.CharacterOptionKinds(), lkv1.RuleKinds()}
}

func (s *Server) compareEditions(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	args := req.Params.Arguments
	name := strings.TrimSpace(args["name"])
	if name == "" {
		return nil, promptError("name", "required, e.g. \"Fireball\"")
	}
	families := kindFamilies()
	if k := strings.TrimSpace(args["kind"]); k != "" {
		kind, ok := lkv1.KindFromSlug(lkv1.Slugify(singular(k)))
		if !ok {
			kind, ok = lkv1.KindFromSlug(lkv1.Slugify(k))
		}
		if !ok {
			return nil, promptError("kind", fmt.Sprintf("unknown kind %q; use spell, creature, magic-item, weapon, armor, class, feat, condition, rule, ...", k))
		}
		families = [][]lkv1.Kind{{kind}}
	}
	eds, err := parseEditions("edition", args["edition"])
	if err != nil {
		return nil, err
	}
	switch {
	case len(eds) == 0, len(eds) == 1 && eds[0] == editions[0]:
		eds = editions[:2]
	case len(eds) == 1:
		eds = []edition{editions[0], eds[0]}
	case len(eds) > 2:
		return nil, promptError("edition", "give one edition to compare with SRD 5.1, or two, e.g. \"2024,a5e\"")
	}
	ctx, cancel := s.callContext(ctx)
	defer cancel()
	books, err := s.editionBooks(ctx, eds)
	if err != nil {
		return nil, s.promptFail(PromptCompareEditions, err)
	}
	// The first kind with the name in an edition; then each edition's entity
	// of that kind by the lookups' name matching, aliases included, so that
	// a name renamed between the books (Feeblemind, Befuddlement) finds both.
	var pair [2]*Entity
	var notOpen string
	var suggestions []string
	for _, fam := range families {
		for i := range eds {
			kinds := fam
			if j := 1 - i; pair[j] != nil {
				k, _ := lkv1.KindFromSlug(pair[j].Kind)
				kinds = []lkv1.Kind{k}
			}
			resp, err := s.lookupKinds(ctx, &lkv1.Common{Name: name, Limit: 1, Documents: &lkv1.DocumentFilter{Documents: books[i]}}, kinds...)
			if err != nil {
				return nil, s.promptFail(PromptCompareEditions, err)
			}
			if rs := resp.GetResults(); len(rs) > 0 {
				e := entityFromResult(rs[0])
				pair[i] = &e
			}
			if notOpen == "" {
				notOpen = resp.GetNotOpenContent()
			}
			for _, sg := range resp.GetSuggestions() {
				if len(suggestions) < 3 && !slices.Contains(suggestions, sg.GetName()) {
					suggestions = append(suggestions, sg.GetName())
				}
			}
		}
		if pair[0] != nil || pair[1] != nil {
			break
		}
	}
	if pair[0] == nil && pair[1] == nil {
		msg := fmt.Sprintf("no entry named %q in %s or %s", name, eds[0].label, eds[1].label)
		switch {
		case notOpen != "":
			msg += fmt.Sprintf(": %s is not open content (no open-licensed book carries it), so it has no SRD versions to compare", notOpen)
		case len(suggestions) > 0:
			msg += "; did you mean " + strings.Join(suggestions, ", ") + "?"
		default:
			msg += "; check the spelling or use search_dnd_content"
		}
		return nil, promptError("name", msg)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Compare the %s and %s versions of %s for me.\n\n", eds[0].label, eds[1].label, name)
	switch {
	case pair[0] == nil:
		fmt.Fprintf(&b, "Only %s has an entry for %q (%s); %s has none under that name or any name LoreKeeper knows it by. The one entry is embedded below.\n", eds[1].label, name, pair[1].Name, eds[0].label)
	case pair[1] == nil:
		fmt.Fprintf(&b, "Only %s has an entry for %q (%s); %s has none under that name or any name LoreKeeper knows it by. The one entry is embedded below.\n", eds[0].label, name, pair[0].Name, eds[1].label)
	default:
		a, c := pair[0], pair[1]
		if !strings.EqualFold(a.Name, c.Name) {
			fmt.Fprintf(&b, "Renamed: %s calls it %s, %s calls it %s. These are the same entry under two names, matched through LoreKeeper's table of names renamed between the books; say so when you compare them.\n\n", eds[0].label, a.Name, eds[1].label, c.Name)
		}
		fmt.Fprintf(&b, "Both are embedded below: first %s (%s), then %s (%s).\n\n", eds[0].label, a.URI, eds[1].label, c.URI)
		diffs := differences(a, c)
		if len(diffs) == 0 {
			b.WriteString("Every field their cards show is the same; compare the descriptions for changes in wording.\n")
		} else {
			fmt.Fprintf(&b, "Differences in the fields their cards show (%s → %s):\n", eds[0].label, eds[1].label)
			for _, d := range diffs {
				fmt.Fprintf(&b, "- %s: %s → %s\n", d.field, d.old, d.new)
			}
		}
	}
	b.WriteString("\nExplain what changed and what it means at the table, quoting the embedded text; cite each version by its URI.")
	out := &mcp.GetPromptResult{Description: fmt.Sprintf("%s and %s versions of %s", eds[0].label, eds[1].label, name), Messages: []*mcp.PromptMessage{textMessage(b.String())}}
	for _, e := range pair {
		if e != nil {
			out.Messages = append(out.Messages, entityMessage(e))
		}
	}
	return out, nil
}

// sameValue reports whether two renderings of a field say the same thing:
// case, runs of white space and the spaces around operators and separators
// ("7d10+21" and "7d10 + 21", "1D6" and "1d6") make no difference.
func sameValue(a, b string) bool { return normalValue(a) == normalValue(b) }

func normalValue(s string) string {
	s = strings.ToLower(strings.Join(strings.Fields(s), " "))
	s = strings.NewReplacer("−", "-", "–", "-").Replace(s)
	for _, op := range []string{"+", "-", "×", "/", ",", ";", "(", ")"} {
		s = strings.ReplaceAll(s, " "+op, op)
		s = strings.ReplaceAll(s, op+" ", op)
	}
	return s
}
