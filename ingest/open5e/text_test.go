package open5e_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"lorekeeper.dev/ingest"
	"lorekeeper.dev/ingest/ingesttest"
	"lorekeeper.dev/ingest/open5e"
	"lorekeeper.dev/ingest/srd52"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

func srdText(t *testing.T) *srd52.Book {
	t.Helper()
	b, err := srd52.Open()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// srd52Rules are the bundled catalogue's entities of SRD 5.2 of the rule
// kinds, by lower-case name.
func srd52Rules(t *testing.T) map[string][]*lkv1.Entity {
	t.Helper()
	out := map[string][]*lkv1.Entity{}
	for _, e := range snapshot(t) {
		if e.GetDocument().GetKey() == srd52.DocumentKey && slices.Contains(lkv1.RuleKinds(), e.GetKind()) {
			out[strings.ToLower(e.GetName())] = append(out[strings.ToLower(e.GetName())], e)
		}
	}
	return out
}

// One entity per name per book: SRD 5.2's text adds no rule, rule section
// or condition of a name Open5e gives the book already, and none twice.
// The names Open5e itself gives two of its SRD 5.2 rules (Ability Checks,
// in D20 Tests and in Social Interaction) are its own, told apart by their
// sections.
func TestSnapshotEntities_srd52OneNamePerBook(t *testing.T) {
	text, open5eDup := 0, 0
	for name, es := range srd52Rules(t) {
		bySource := map[lkv1.Source]int{}
		for _, e := range es {
			bySource[e.GetDocument().GetSource()]++
		}
		text += bySource[lkv1.Source_SOURCE_SRD_TEXT]
		switch {
		case len(es) == 1:
		case bySource[lkv1.Source_SOURCE_SRD_TEXT] > 0:
			var keys []string
			for _, e := range es {
				keys = append(keys, e.GetKey())
			}
			t.Errorf("%q is %d entities of SRD 5.2: %s", name, len(es), strings.Join(keys, ", "))
		default:
			open5eDup++
		}
	}
	if text == 0 {
		t.Fatal("the catalogue holds no entity of SRD 5.2's text")
	}
	t.Logf("%d entities from the text; %d names Open5e gives two of its own rules", text, open5eDup)
}

// Every entry of the Rules Glossary is in the catalogue, whole: as an
// entity of its own or as the Open5e entity of its name, which holds what
// the glossary says.
func TestSnapshotEntities_srd52Glossary(t *testing.T) {
	rules := srd52Rules(t)
	b := srdText(t)
	fromOpen5e := 0
	for _, g := range b.Glossary {
		es := rules[strings.ToLower(g.Name)]
		if len(es) == 0 {
			t.Errorf("glossary entry %q: no entity", g.Name)
			continue
		}
		e := es[0]
		if e.GetDocument().GetSource() != lkv1.Source_SOURCE_SRD_TEXT {
			fromOpen5e++
		}
		var all strings.Builder
		all.WriteString(ingest.Words(e.GetName() + " " + e.GetDescription()))
		for _, bl := range e.GetBlocks() {
			all.WriteString(ingest.Words(bl.GetText()))
		}
		for _, p := range strings.Split(g.Text, "\n\n") {
			// A paragraph's opening: Open5e's copies word the odd
			// sentence differently ("can’t" for "can't" is the same to
			// Words, "HalfCover" is not).
			w := strings.Fields(ingest.Words(p))
			if len(w) == 0 {
				continue
			}
			if opening := " " + strings.Join(w[:min(len(w), 8)], " ") + " "; !strings.Contains(all.String(), opening) {
				t.Errorf("%s (%s): lacks the glossary's %q", g.Name, e.GetKey(), p)
			}
		}
		if g.Tag != "" && e.GetRule().GetCategory() != g.Tag {
			t.Errorf("%s (%s): category %q, want the glossary's tag %q", g.Name, e.GetKey(), e.GetRule().GetCategory(), g.Tag)
		}
	}
	if fromOpen5e == 0 || fromOpen5e == len(b.Glossary) {
		t.Errorf("%d of %d glossary entries are Open5e's entities: want some (its conditions), not all", fromOpen5e, len(b.Glossary))
	}
}

// Every SRD 5.2 spell's casting time is the text's: the time, and what a
// bonus action or reaction is taken in response to (Divine Smite's "which
// you take immediately after hitting a target with a Melee weapon or an
// Unarmed Strike"); a field the text corrected or filled says so.
func TestSnapshotEntities_srd52CastingTimes(t *testing.T) {
	spells := map[string]*lkv1.Entity{}
	for _, e := range snapshot(t) {
		if e.GetDocument().GetKey() == srd52.DocumentKey && e.GetKind() == lkv1.Kind_KIND_SPELL {
			spells[strings.ToLower(e.GetName())] = e
		}
	}
	plain := func(s string) string {
		return strings.Join(strings.Fields(strings.NewReplacer("*", "", "_", "").Replace(s)), " ")
	}
	conditions, corrected := 0, 0
	b := srdText(t)
	for _, sp := range b.Spells {
		e := spells[strings.ToLower(sp.Name)]
		if e == nil {
			t.Errorf("%s (07_Spells.md:%d): no SRD 5.2 spell of that name", sp.Name, sp.Line)
			continue
		}
		time, cond, _ := strings.Cut(plain(sp.CastingTime), ", which")
		s := e.GetSpell()
		if lkv1.CastingTimeKey(s.GetCastingTime()) != lkv1.CastingTimeKey(time) || s.GetCastingTimeKey() != lkv1.CastingTimeKey(time) {
			t.Errorf("%s: casting time %q (%s), the text's %q", sp.Name, s.GetCastingTime(), s.GetCastingTimeKey(), time)
		}
		if cond != "" {
			conditions++
			if got := plain(s.GetReactionCondition()); !strings.EqualFold(got, "which"+cond) {
				t.Errorf("%s: casting time condition %q, the text's %q", sp.Name, got, "which"+cond)
			}
		}
		for _, c := range e.GetCorrections() {
			if c.GetSource() == srd52.SourceName && (c.GetField() == "casting_time" || c.GetField() == "reaction_condition") {
				corrected++
			}
		}
	}
	if len(spells) != len(b.Spells) || conditions == 0 || corrected == 0 {
		t.Errorf("%d SRD 5.2 spells, %d in the text; %d with a condition, %d fields corrected", len(spells), len(b.Spells), conditions, corrected)
	}
	t.Logf("%d spells compared, %d casting time conditions, %d casting time fields from the text", len(b.Spells), conditions, corrected)
}

// The text as the resync's last endpoint: its entities are published once
// under their own source, with their state; a run that changes nothing
// publishes nothing; and once Open5e's rules are synced, the text's
// entities of names Open5e has are tombstoned, Open5e's completed instead.
func TestFetcher_Sync_text(t *testing.T) {
	js := ingesttest.JetStream(t, nil)
	up := newSRDUpstream(t)
	reg := prometheus.NewRegistry()
	text := srd52.NewSource(srd52.NewMetrics(reg))
	book := srdText(t)
	all, err := book.Entities(book.Document(nil), nil)
	if err != nil {
		t.Fatal(err)
	}

	alone := fetcher(t, js, up.srv.URL, &open5e.Options{Endpoints: []open5e.Endpoint{open5e.TextEndpoint}, Text: text})
	if tot := mustSync(t, alone).Totals(); tot.New != len(all) || tot.Errors != 0 {
		t.Fatalf("the text alone: %s; want %d new", tot, len(all))
	}
	evs := events(t, js, 1)
	for _, ev := range evs {
		if e := ev.GetUpsert(); e.GetDocument().GetSource() != lkv1.Source_SOURCE_SRD_TEXT || !strings.HasPrefix(e.GetKey(), "srd_text:srd-2024:") {
			t.Fatalf("published %s of source %s", e.GetKey(), e.GetDocument().GetSource().Slug())
		}
	}
	if st := state(t, js, open5e.StateKey(open5e.TextEndpoint)); len(st.GetEntities()) != len(all) || st.GetLastSuccess() == nil {
		t.Errorf("state %s: %d entities, last success %v", open5e.StateKey(open5e.TextEndpoint), len(st.GetEntities()), st.GetLastSuccess())
	}
	if got := gauge(t, reg, "lorekeeper_ingest_text_entries", "part", "glossary"); int(got) != len(book.Glossary) {
		t.Errorf("lorekeeper_ingest_text_entries{part=glossary} = %v, want %d", got, len(book.Glossary))
	}
	base := streamMsgs(t, js)
	if tot := mustSync(t, alone).Totals(); tot.Unchanged != len(all) || streamMsgs(t, js) != base {
		t.Fatalf("a second run: %s, stream %d messages (was %d)", tot, streamMsgs(t, js), base)
	}

	withRules := fetcher(t, js, up.srv.URL, &open5e.Options{Endpoints: append(endpoints("v2/rulesets", "v2/rules", "v2/conditions"), open5e.TextEndpoint), Text: text})
	sum := mustSync(t, withRules)
	var removed []string
	covered := map[string]bool{}
	for _, ev := range events(t, js, base+1) {
		if tb := ev.GetTombstone(); tb != nil {
			removed = append(removed, tb.GetKey())
		} else if e := ev.GetUpsert(); e.GetDocument().GetSource() == lkv1.Source_SOURCE_OPEN5E_V2 && e.GetDocument().GetKey() == srd52.DocumentKey {
			covered[e.GetSlug()] = true
		}
	}
	var want []string
	for _, e := range all {
		if covered[e.GetSlug()] {
			want = append(want, e.GetKey())
		}
	}
	slices.Sort(removed)
	slices.Sort(want)
	if len(want) == 0 || !slices.Equal(removed, want) {
		t.Errorf("tombstoned %q, want the text's entities Open5e now has %q", removed, want)
	}
	if tot := sum.Totals(); tot.Removed != len(want) {
		t.Errorf("summary: %s; want %d removed", tot, len(want))
	}
	if tot := mustSync(t, withRules).Totals(); tot.New+tot.Changed+tot.Removed != 0 {
		t.Errorf("a run after: %s; want nothing new", tot)
	}
}

// gauge is the value of the gauge name{label=value} in reg.
func gauge(t *testing.T, reg *prometheus.Registry, name, label, value string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if mf.GetName() == name && l.GetName() == label && l.GetValue() == value {
					return m.GetGauge().GetValue()
				}
			}
		}
	}
	t.Fatalf("no %s{%s=%q}", name, label, value)
	return 0
}
