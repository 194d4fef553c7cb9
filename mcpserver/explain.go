package mcpserver

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// maxRuleCards is how many rules explain_rule embeds per edition.
const maxRuleCards = 4

// explainRule embeds the rules on a topic, each edition's own: the rules
// named so (as lookup_rule reads a name: exactly, with a glossary tag, in
// another form of its words, or as a part of a rule) with the rules their
// See also names, else the rules whose words hold the topic's, ranked by
// meaning. Nothing is embedded that only resembles the topic in meaning
// (a search for "flanking" returns Adventuring Gear): a topic no edition
// has is said to be missing from the open content, with the nearest names.
// An edition asked for that has nothing on the topic is said to, and the
// other SRD's rules, if any, are embedded as a fallback, said to be one.
func (s *Server) explainRule(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	topic := strings.TrimSpace(req.Params.Arguments["topic"])
	if topic == "" {
		return nil, promptError("topic", "required, e.g. \"grappling\"")
	}
	eds, err := parseEditions("edition", req.Params.Arguments["edition"])
	if err != nil {
		return nil, err
	}
	asked := len(eds) > 0
	if !asked {
		eds = editions[:2] // the two SRDs; A5E only when asked for
	}
	ctx, cancel := s.callContext(ctx)
	defer cancel()
	var (
		picked  []*Entity
		found   []edition // the editions that had rules on the topic
		missing []edition
		nearest []string
	)
	for _, ed := range eds {
		es, near, err := s.rulesOn(ctx, topic, ed)
		if err != nil {
			return nil, s.promptFail(PromptExplainRule, err)
		}
		if len(es) == 0 {
			missing = append(missing, ed)
			nearest = appendNew(nearest, near...)
			continue
		}
		found = append(found, ed)
		picked = append(picked, es...)
	}
	var fellBack []edition
	if asked && len(found) == 0 {
		// The edition asked for has nothing: the other SRD's, said to be
		// a fallback.
		for _, ed := range editions[:2] {
			if slices.Contains(eds, ed) {
				continue
			}
			es, _, err := s.rulesOn(ctx, topic, ed)
			if err != nil {
				return nil, s.promptFail(PromptExplainRule, err)
			}
			if len(es) > 0 {
				fellBack = append(fellBack, ed)
				picked = append(picked, es...)
			}
		}
	}
	var b strings.Builder
	if len(picked) == 0 {
		fmt.Fprintf(&b, "There is no rule named %q in the open content LoreKeeper holds (%s).", topic, editionLabels(eds))
		if len(nearest) > 0 {
			fmt.Fprintf(&b, " The nearest names are: %s.", strings.Join(nearest, ", "))
		}
		b.WriteString("\nTell me so plainly: say that these rules texts do not cover it, offer the nearest names if one may be what I mean, and do not explain it from memory as if it were in them.\n")
		return &mcp.GetPromptResult{Description: "No rule on " + topic, Messages: []*mcp.PromptMessage{textMessage(b.String())}}, nil
	}
	shown := found
	if len(fellBack) > 0 {
		shown = fellBack
	}
	fmt.Fprintf(&b, "Explain %q to me using only the rules text embedded below (%d entries from %s).\n", topic, len(picked), editionLabels(shown))
	for _, ed := range missing {
		if len(fellBack) > 0 {
			fmt.Fprintf(&b, "%s has no rule on %q; the entries below are from %s instead: say so, and that the rules may differ.\n", ed.label, topic, editionLabels(fellBack))
		} else {
			fmt.Fprintf(&b, "%s has no rule on %q: say so rather than filling it in from memory.\n", ed.label, topic)
		}
	}
	if len(shown) > 1 {
		b.WriteString("The editions differ: say which edition each point comes from, and where they disagree give both.\n")
	}
	b.WriteString("Answer only from these texts. Cite every rule you use by its URI; if they do not cover the question, say so rather than filling the gap from memory.\n\nEmbedded:\n")
	for _, e := range picked {
		fmt.Fprintf(&b, "- %s (%s, %s): %s\n", e.Name, e.Kind, e.DocumentName, e.URI)
	}
	out := &mcp.GetPromptResult{Description: "Rules on " + topic, Messages: []*mcp.PromptMessage{textMessage(b.String())}}
	for _, e := range picked {
		out.Messages = append(out.Messages, entityMessage(e))
	}
	return out, nil
}

// rulesOn returns edition ed's rules on topic, at most maxRuleCards: those
// named topic and the rules their See also names, else those whose words
// hold the topic's (a keyword search, ranked by meaning). near are the
// nearest names when there are none.
func (s *Server) rulesOn(ctx context.Context, topic string, ed edition) (_ []*Entity, near []string, _ error) {
	c := &lkv1.Common{Name: topic, GameSystems: []string{ed.system}, Documents: &lkv1.DocumentFilter{Documents: []string{ed.document}}, Limit: maxRuleCards}
	if ed.wholeSystem {
		c.Documents = nil
	}
	resp, err := s.lookupKinds(ctx, c, lkv1.RuleKinds()...)
	if err != nil {
		return nil, nil, err
	}
	var out []*Entity
	for _, r := range resp.GetResults() {
		e := entityFromResult(r)
		out = append(out, &e)
	}
	if len(out) > 0 {
		return s.withSeeAlso(ctx, out)
	}
	for _, sg := range resp.GetSuggestions() {
		near = appendNew(near, sg.GetName())
	}
	sem := true
	hybrid, err := s.client.Search(ctx, &lkv1.SearchRequest{Query: topic, Kinds: lkv1.RuleKinds(), GameSystems: []string{ed.system}, Documents: c.Documents, Semantic: &sem, Limit: 3 * maxRuleCards})
	if err != nil {
		return nil, near, err
	}
	kw := false
	words, err := s.client.Search(ctx, &lkv1.SearchRequest{Query: topic, Kinds: lkv1.RuleKinds(), GameSystems: []string{ed.system}, Documents: c.Documents, Semantic: &kw, Limit: 3 * maxRuleCards})
	if err != nil {
		return nil, near, err
	}
	held := map[string]bool{}
	for _, g := range words.GetGroups() {
		for _, r := range g.GetResults() {
			held[r.GetUri()] = true
		}
	}
	// The hybrid ranking's order, best first across kinds, of the results
	// the keyword search found too.
	for i := 0; len(out) < maxRuleCards; i++ {
		added := false
		for _, g := range hybrid.GetGroups() {
			if i < len(g.GetResults()) {
				added = true
				if r := g.GetResults()[i]; held[r.GetUri()] && len(out) < maxRuleCards {
					if e := entityFromResult(r); mentions(&e, topic) {
						out = append(out, &e)
					}
				}
			}
		}
		if !added {
			break
		}
	}
	return out, near, nil
}

// questionWords are words of a topic that say nothing of what it is about.
var questionWords = map[string]bool{"a": true, "an": true, "the": true, "of": true, "in": true, "on": true, "to": true,
	"and": true, "or": true, "how": true, "what": true, "when": true, "do": true, "does": true, "i": true, "you": true,
	"can": true, "is": true, "are": true, "rule": true, "rules": true, "work": true, "works": true, "my": true}

// mentions reports whether e's text holds every word of topic that says
// what it is about, each as the start of one of its words, but for its
// ending ("flanking" as "flank", "saves" as "sav"): the keyword search
// also matches a word by its parts and near spellings ("flanking" found
// Adventuring Gear), which is no evidence that a rule is on the topic.
func mentions(e *Entity, topic string) bool {
	var text strings.Builder
	text.WriteString(" " + strings.ToLower(e.Name+" "+e.Description))
	for _, b := range e.Blocks {
		text.WriteString(" " + strings.ToLower(b.Name+" "+b.Text))
	}
	words := strings.FieldsFunc(text.String(), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	for _, w := range strings.FieldsFunc(strings.ToLower(topic), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if questionWords[w] {
			continue
		}
		stem := w
		if len(w) > 3 {
			stem = w[:max(3, len(w)-3)]
		}
		if !slices.ContainsFunc(words, func(x string) bool { return strings.HasPrefix(x, stem) }) {
			return false
		}
	}
	return true
}

// withSeeAlso is es and, up to maxRuleCards, the rules their See also
// names that es does not hold.
func (s *Server) withSeeAlso(ctx context.Context, es []*Entity) ([]*Entity, []string, error) {
	have := map[string]bool{}
	for _, e := range es {
		have[e.URI] = true
	}
	for i := 0; i < len(es) && len(es) < maxRuleCards; i++ {
		if es[i].Rule == nil {
			continue
		}
		for _, l := range es[i].Rule.SeeAlso {
			if l.URI == "" || have[l.URI] || len(es) >= maxRuleCards {
				continue
			}
			have[l.URI] = true
			r, err := s.client.GetEntity(ctx, &lkv1.GetEntityRequest{Key: l.URI})
			if err != nil {
				// A link to something gone is no reason to fail the prompt.
				s.log.Debug("explain_rule: see also", "uri", l.URI, "err", err)
				continue
			}
			e := entityFromProto(r.GetEntity(), r.GetUri())
			es = append(es, &e)
		}
	}
	return es, nil, nil
}

func editionLabels(eds []edition) string {
	labels := make([]string, len(eds))
	for i, ed := range eds {
		labels[i] = ed.label
	}
	return strings.Join(labels, " and ")
}

// appendNew appends each of vs not in list already.
func appendNew(list []string, vs ...string) []string {
	for _, v := range vs {
		if v != "" && !slices.Contains(list, v) {
			list = append(list, v)
		}
	}
	return list
}

// otherEditions answers a lookup_rule by name that the edition or books
// it asked for do not have with the rules of that name elsewhere, saying
// so: "No rule named 'Exhaustion' in game system 5e-2024; these are from
// 5e-2014." A name no book has keeps the lookup's own answer (no rule of
// that name in the open content, and the nearest names).
func (s *Server) otherEditions(ctx context.Context, in RuleInput, out *LookupOutput) {
	if out.Count > 0 || in.Cursor != "" || strings.TrimSpace(in.Name) == "" || in.GameSystem == "" && len(in.Documents) == 0 {
		return
	}
	wide := in
	wide.GameSystem, wide.Documents = "", nil
	req, err := wide.request()
	if err != nil {
		return
	}
	resp, err := s.client.LookupRules(ctx, req)
	if err != nil || len(resp.GetResults()) == 0 {
		return
	}
	var where []string
	for _, r := range resp.GetResults() {
		e := entityFromResult(r)
		out.Results = append(out.Results, e)
		where = appendNew(where, cmp.Or(e.GameSystem, e.DocumentKey))
	}
	asked := in.GameSystem
	if asked == "" {
		asked = strings.Join(in.Documents, ", ")
	}
	out.Count, out.Total, out.NextCursor, out.NameMatch = len(out.Results), uint64(len(out.Results)), "", resp.GetNameMatch()
	out.Suggestions = nil
	out.Warnings = append(out.Warnings, fmt.Sprintf("No rule named '%s' in %s; these are from %s instead.", strings.TrimSpace(in.Name), asked, strings.Join(where, ", ")))
}
