package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc/codes"

	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// The prompts. Each fetches the content it talks about from the query
// service when it is asked for, and embeds it as resources with their
// lorekeeper:// URIs, so that the assistant answers from the text and can
// cite and re-read it.

// Prompt names.
const (
	PromptCompareEditions  = "compare_editions"
	PromptPlanEncounter    = "plan_encounter"
	PromptExplainRule      = "explain_rule"
	PromptHomebrewOverview = "homebrew_overview"
)

// addPrompt adds a prompt and records its arguments for completion.
func (s *Server) addPrompt(p *mcp.Prompt, h mcp.PromptHandler) {
	for _, a := range p.Arguments {
		s.promptArgs[p.Name] = append(s.promptArgs[p.Name], a.Name)
	}
	known := s.promptArgs[p.Name]
	s.mcp.AddPrompt(p, func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		// An argument the prompt does not take is refused, not ignored:
		// plan_encounter(theme="undead crypt") gave dragons and an
		// assassin, the theme dropped without a word.
		var unknown []string
		if req.Params == nil {
			return h(ctx, req)
		}
		for name := range req.Params.Arguments {
			if !slices.Contains(known, name) {
				unknown = append(unknown, name)
			}
		}
		if len(unknown) > 0 {
			slices.Sort(unknown)
			return nil, promptError(unknown[0], fmt.Sprintf("%s takes no such argument; its arguments: %s", p.Name, strings.Join(known, ", ")))
		}
		return h(ctx, req)
	})
}

func (s *Server) addPrompts() {
	s.addPrompt(&mcp.Prompt{
		Name:  PromptCompareEditions,
		Title: "Compare the 2014 and 2024 rules for one entry",
		Description: `The SRD 5.1 (2014 rules) and SRD 5.2 (2024 rules) versions of one spell, creature, item, class option, condition or rule, embedded side by side, with the differences in every field their cards show (level, damage, components, CR, AC, HP, initiative, weapon properties and mastery, the actions, ...) listed. Entries renamed between the books are found under either name (Feeblemind and Befuddlement). edition="a5e" compares SRD 5.1 with Level Up Advanced 5th Edition instead (every Level Up book: the Adventurer's Guide, the Monstrous Menagerie, ...).
Use it for "how did Fireball change in 2024?" or "compare the 2014 and 2024 Goblin".`,
		Arguments: []*mcp.PromptArgument{
			{Name: "name", Title: "Name", Description: `The entry's name in either edition, e.g. "Fireball", "Goblin", "Grappled", "Feeblemind".`, Required: true},
			{Name: "kind", Title: "Kind", Description: "Optional kind when the name is ambiguous: spell, creature, magic-item, weapon, armor, class, feat, condition, rule, ..."},
			{Name: "edition", Title: "Edition", Description: `Optional: the edition to compare SRD 5.1 with, 2024 (default) or a5e; or two comma-separated, e.g. "2024,a5e". Editions: ` + editionHelp + "."},
		},
	}, s.compareEditions)
	s.addPrompt(&mcp.Prompt{
		Name:  PromptPlanEncounter,
		Title: "Plan a combat encounter",
		Description: `Candidate creatures from the catalogue that fit a party, by the SRD 5.2 XP budget per character (low, moderate or high difficulty), with their stat blocks embedded and the numbers to build the fight: the budget, each creature's XP and how many of it fit.
Use it for "a moderate forest encounter for four 3rd-level characters" (party_levels="3,3,3,3", environment="forest").`,
		Arguments: []*mcp.PromptArgument{
			{Name: "party_levels", Title: "Party levels", Description: `Each character's level, 1 to 20, comma-separated: "3,3,4,5".`, Required: true},
			{Name: "difficulty", Title: "Difficulty", Description: "low, moderate (default) or high: the SRD 5.2 encounter difficulties (easy, medium, hard, deadly are read as the nearest)."},
			{Name: "creature_type", Title: "Creature type", Description: `Only this creature type, e.g. "undead", "beast". Comma-separate for several.`},
			{Name: "environment", Title: "Environment", Description: `Only creatures found here. Open5e's environments, by key, name or a word of the name: "forest", "Forest or Jungle", "forest-or-jungle", "jungle", "underworld", "feywild", ...; completion lists them all. Comma-separate for several. Documents without environment data (SRD 5.2 has none) are said to be so.`},
			{Name: "documents", Title: "Documents", Description: `Only creatures from these documents (keys), comma-separated, e.g. "srd-2014" or "srd-2024,tob". Without it, every book's, an SRD creature first at each challenge rating, the others from different books, names across the alphabet.`},
		},
	}, s.planEncounter)
	s.addPrompt(&mcp.Prompt{
		Name:  PromptExplainRule,
		Title: "Explain a rule from the rules text",
		Description: `The rules, rule sections and conditions that match a topic, embedded (by default from both SRD 5.1 and SRD 5.2, each edition's own text), with the instruction to answer only from them and cite their URIs.
Use it for "how does grappling work?" (topic="grappling"), "what does the Prone condition do in the 2024 rules?" (topic="prone", edition="2024").`,
		Arguments: []*mcp.PromptArgument{
			{Name: "topic", Title: "Topic", Description: `What to explain, e.g. "grappling", "opportunity attacks", "prone", "falling".`, Required: true},
			{Name: "edition", Title: "Edition", Description: "Optional: only this edition's rules: " + editionHelp + ". Default: SRD 5.1 and SRD 5.2."},
		},
	}, s.explainRule)
	s.addPrompt(&mcp.Prompt{
		Name:        PromptHomebrewOverview,
		Title:       "Overview of an imported document",
		Description: `What a document contains, by kind, embedded: every entity with its key facts and URI, and the first entries in full. Meant for imported OrcBrew homebrew (list_documents source="orcbrew" lists them); works for any document.`,
		Arguments: []*mcp.PromptArgument{
			{Name: "document", Title: "Document", Description: `The document's key, e.g. "my-homebrew-book" (see list_documents).`, Required: true},
		},
	}, s.homebrewOverview)
}

// invalidParams is the JSON-RPC error for a request the server cannot use
// as sent (-32602): a prompt argument, a completion target, with msg saying
// what to send instead.
func invalidParams(msg string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: msg}
}

// promptError is an invalid prompt argument: the client gets it as a
// JSON-RPC invalid params error with this message.
func promptError(arg, problem string) error {
	return invalidParams(fmt.Sprintf("invalid argument %q: %s", arg, problem))
}

// promptFail turns an error into the JSON-RPC error a client sees: invalid
// params for an argument the tools' checks or the query service reject,
// else the tools' message for the failure (the detail goes to the log).
func (s *Server) promptFail(prompt string, err error) error {
	var ae *ArgumentError
	if errors.As(err, &ae) {
		return invalidParams(ae.Error())
	}
	if c := classOf(err); c.code == codes.InvalidArgument {
		return invalidParams(s.report("prompts/get "+prompt, err))
	}
	return errors.New(s.report("prompts/get "+prompt, err))
}

func textMessage(text string) *mcp.PromptMessage {
	return &mcp.PromptMessage{Role: "user", Content: &mcp.TextContent{Text: text}}
}

// entityMessage embeds e as a resource: its markdown card under its URI.
func entityMessage(e *Entity) *mcp.PromptMessage {
	return &mcp.PromptMessage{Role: "user", Content: &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{
		URI: e.URI, MIMEType: "text/markdown", Text: renderFullEntity(e),
	}}}
}

type difference struct{ field, old, new string }

// differences compares two versions of one entity on every field their
// cards show: each labelled line ("**Mastery:** Sap", "**Initiative**
// +17 (27)", "**Damage Immunities** fire"), the ability scores, the blocks
// of each section by name, and the name. The cards decide what counts, so
// a field a card gains is compared too.
func differences(a, b *Entity) []difference {
	fa, fb := cardFields(a), cardFields(b)
	var out []difference
	seen := map[string]bool{}
	for _, f := range append(fa.order, fb.order...) {
		if seen[f] {
			continue
		}
		seen[f] = true
		if x, y := fa.values[f], fb.values[f]; !sameValue(x, y) {
			out = append(out, difference{f, orNone(x), orNone(y)})
		}
	}
	return out
}

// shownFields are the fields of a card, by label, in the card's order.
type shownFields struct {
	order  []string
	values map[string]string
}

var (
	// cardLine is a labelled line of a card: "**Casting Time:** 1 action".
	cardLine = regexp.MustCompile(`^\*\*([^*]+?):?\*\* (.+?)\s*$`)
	// cardHeading is a section of a card: "### Actions".
	cardHeading = regexp.MustCompile(`^### (.+)$`)
	// cardBlock is a block's name: "***Bite.***".
	cardBlock = regexp.MustCompile(`^\*\*\*(.+?)\.\*\*\*`)
)

// cardFields reads the fields e's card shows.
func cardFields(e *Entity) shownFields {
	f := shownFields{values: map[string]string{}}
	set := func(k, v string) {
		if _, ok := f.values[k]; !ok {
			f.order = append(f.order, k)
		}
		f.values[k] = v
	}
	set("name", e.Name)
	section := "traits"
	lines := strings.Split(renderEntity(e), "\n")
	for i, l := range lines {
		switch {
		case cardLine.MatchString(l):
			m := cardLine.FindStringSubmatch(l)
			set(strings.ToLower(m[1]), m[2])
		case strings.HasPrefix(l, "| STR |") && i+2 < len(lines):
			set("ability scores", strings.Trim(lines[i+2], "| "))
		case cardHeading.MatchString(l):
			section = strings.ToLower(cardHeading.FindStringSubmatch(l)[1])
		case cardBlock.MatchString(l) && e.Creature != nil:
			name := cardBlock.FindStringSubmatch(l)[1]
			if v := f.values[section]; v != "" {
				name = v + ", " + name
			}
			set(section, name)
		}
	}
	return f
}

func orNone(s string) string {
	if strings.TrimSpace(s) == "" {
		return "(none)"
	}
	return s
}

// lookupKinds looks up entities of kinds (all of one lookup's: a spell, a
// creature, equipment, character option or rule kind) through the lookup
// that serves them.
func (s *Server) lookupKinds(ctx context.Context, c *lkv1.Common, kinds ...lkv1.Kind) (*lkv1.LookupResponse, error) {
	if len(kinds) == 0 {
		return &lkv1.LookupResponse{}, nil
	}
	switch kind := kinds[0]; {
	case kind == lkv1.Kind_KIND_SPELL:
		return s.client.LookupSpells(ctx, &lkv1.LookupSpellsRequest{Common: c})
	case kind == lkv1.Kind_KIND_CREATURE:
		return s.client.LookupCreatures(ctx, &lkv1.LookupCreaturesRequest{Common: c})
	case slices.Contains(lkv1.EquipmentKinds(), kind):
		return s.client.LookupEquipment(ctx, &lkv1.LookupEquipmentRequest{Common: c, Kinds: kinds})
	case slices.Contains(lkv1.CharacterOptionKinds(), kind):
		return s.client.LookupCharacterOptions(ctx, &lkv1.LookupCharacterOptionsRequest{Common: c, Kinds: kinds})
	case slices.Contains(lkv1.RuleKinds(), kind):
		return s.client.LookupRules(ctx, &lkv1.LookupRulesRequest{Common: c, Kinds: kinds})
	}
	return &lkv1.LookupResponse{}, nil
}

// findDocuments returns the stored documents with key (case-insensitive),
// one per source that has it (a v1 supplement beside its v2 book), or, when
// no key matches, those with that name.
func (s *Server) findDocuments(ctx context.Context, key string) ([]*lkv1.DocumentSummary, error) {
	resp, err := s.client.ListDocuments(ctx, &lkv1.ListDocumentsRequest{})
	if err != nil {
		return nil, err
	}
	var byKey, byName []*lkv1.DocumentSummary
	for _, d := range resp.GetDocuments() {
		switch {
		case strings.EqualFold(d.GetDocument().GetKey(), key):
			byKey = append(byKey, d)
		case strings.EqualFold(d.GetDocument().GetName(), key):
			byName = append(byName, d)
		}
	}
	if len(byKey) > 0 {
		return byKey, nil
	}
	return byName, nil
}

// overviewCards is how many entities homebrew_overview embeds in full, and
// overviewPerKind how many of each kind a document overview lists (the
// others are a lookup with documents and cursor away): a summary an
// assistant can hold, not the whole book.
const (
	overviewCards   = 3
	overviewPerKind = 8
)

// documentOverview renders what a document contains, by kind: a markdown
// overview (one line per entity), the same as JSON, and the first entities
// in full. A kind with more than 100 entities lists its first 100.
func (s *Server) documentOverview(ctx context.Context, d *lkv1.DocumentSummary) (md string, cards []*Entity, err error) {
	doc := d.GetDocument()
	kinds := sortedKeys(d.GetCounts())
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", doc.GetName())
	fmt.Fprintf(&b, "Document `%s` (%s), %d entities; its resource %s lists them all.\n", doc.GetKey(), doc.GetSource().Slug(), d.GetEntityCount(), documentURI(doc))
	if doc.GetPublisher() != "" {
		fmt.Fprintf(&b, "Publisher: %s.\n", doc.GetPublisher())
	}
	for _, k := range kinds {
		kind, ok := lkv1.KindFromSlug(k)
		if !ok {
			continue
		}
		resp, err := s.lookupKinds(ctx, &lkv1.Common{Limit: overviewPerKind, Documents: &lkv1.DocumentFilter{Documents: []string{doc.GetKey()}}, Sources: []lkv1.Source{doc.GetSource()}}, kind)
		if err != nil {
			return "", nil, err
		}
		count := d.GetCounts()[k]
		fmt.Fprintf(&b, "\n## %s (%d)\n\n", title(strings.ReplaceAll(plural(k, 2), "-", " ")), count)
		for _, r := range resp.GetResults() {
			e := entityFromResult(r)
			if len(cards) < overviewCards {
				c := e
				cards = append(cards, &c)
			}
			fmt.Fprintf(&b, "- **%s** — %s · %s\n", e.Name, keyFacts(&e), e.URI)
		}
		if n := uint64(len(resp.GetResults())); n < count {
			if n == 0 {
				b.WriteString("- (listed by search_dnd_content only)\n")
			} else {
				fmt.Fprintf(&b, "- … and %d more (the document's resource %s lists them all)\n", count-n, documentURI(doc))
			}
		}
	}
	return b.String(), cards, nil
}

func (s *Server) homebrewOverview(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	key := strings.TrimSpace(req.Params.Arguments["document"])
	if key == "" {
		return nil, promptError("document", "required: a document key from list_documents")
	}
	ctx, cancel := s.callContext(ctx)
	defer cancel()
	ds, err := s.findDocuments(ctx, key)
	if err != nil {
		return nil, s.promptFail(PromptHomebrewOverview, err)
	}
	if len(ds) == 0 {
		msg := fmt.Sprintf("no document %q is loaded; list_documents shows the keys", key)
		if ps := s.importProblems(ctx); len(ps) > 0 {
			msg += "." + strings.ReplaceAll(renderImportProblems(ps), "\n", " ")
		}
		return nil, promptError("document", strings.TrimSpace(msg))
	}
	// One overview per source that has the document; the first entries of
	// each in full, overviewCards in all.
	var overviews []*mcp.PromptMessage
	var cards []*Entity
	var sources []string
	for _, d := range ds {
		md, first, err := s.documentOverview(ctx, d)
		if err != nil {
			return nil, s.promptFail(PromptHomebrewOverview, err)
		}
		// The overview is no resource of its own: the document's resource
		// lists every entry, which the overview points to.
		overviews = append(overviews, textMessage(md))
		cards = append(cards, first[:min(len(first), overviewCards-len(cards))]...)
		sources = append(sources, d.GetDocument().GetSource().Slug())
	}
	doc := ds[0].GetDocument()
	var b strings.Builder
	fmt.Fprintf(&b, "Give me an overview of %q (%s): what it adds, by kind, what stands out, and how it compares with the SRD where that is useful.\n", doc.GetName(), doc.GetKey())
	if len(ds) > 1 {
		fmt.Fprintf(&b, "Its contents come from %d sources (%s), each listed below: together they are the document.\n", len(ds), strings.Join(sources, ", "))
	}
	b.WriteString("The document's contents follow: its entries by kind (its resource lists every one), then the first entries in full. Work from them, and cite entries by their URIs.\n")
	if slices.Contains(sources, lkv1.Source_SOURCE_ORCBREW.Slug()) {
		b.WriteString("It is homebrew imported from an OrcBrew file, not official content: say so when you present it.\n")
		b.WriteString(renderImportProblems(s.importProblems(ctx)))
	}
	out := &mcp.GetPromptResult{Description: "Contents of " + doc.GetName(), Messages: append([]*mcp.PromptMessage{textMessage(b.String())}, overviews...)}
	for _, e := range cards {
		out.Messages = append(out.Messages, entityMessage(e))
	}
	return out, nil
}
