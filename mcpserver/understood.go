package mcpserver

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// understoodOf is what the query service read in a question's words, as
// the structured result gives it: each soft filter by its field ("not_"
// before a negated one), a number or boolean as such, one value as a
// string, several as a list; the documents; the order. Nil when nothing
// was understood.
func understoodOf(u *lkv1.Understood) map[string]any {
	if len(u.GetFilters()) == 0 && len(u.GetDocuments()) == 0 && u.GetOrderBy() == "" {
		return nil
	}
	out := map[string]any{}
	for _, f := range u.GetFilters() {
		key := f.GetField()
		if f.GetNegated() {
			key = "not_" + key
		}
		vals := f.GetValues()
		var val any = vals
		if len(vals) == 1 {
			val = vals[0]
			if x, ok := lkv1.ParseChallengeRating(vals[0]); ok {
				val = x
			} else if b, err := strconv.ParseBool(vals[0]); err == nil {
				val = b
			}
		}
		if prev, ok := out[key]; ok {
			// Two readings of one field ("heavy" and "two-handed"
			// properties): every value.
			val = append(asList(prev), asList(val)...)
		}
		out[key] = val
	}
	if len(u.GetDocuments()) > 0 {
		out["documents"] = u.GetDocuments()
	}
	if u.GetOrderBy() != "" {
		out["order_by"] = u.GetOrderBy()
		out["descending"] = u.GetDescending()
	}
	return out
}

func asList(v any) []string {
	switch x := v.(type) {
	case []string:
		return x
	case string:
		return []string{x}
	}
	return []string{fmt.Sprint(v)}
}

// renderUnderstood says what was read in the question's words, so that
// the assistant can see it and correct it with explicit filters.
func renderUnderstood(b *strings.Builder, u *lkv1.Understood) {
	var parts []string
	for _, f := range u.GetFilters() {
		vals := strings.Join(f.GetValues(), " or ")
		field := f.GetField()
		if field == "entity_type" && sameKinds(f.GetValues(), lkv1.RuleKinds()) {
			vals = "the rules (what lookup_rule serves)"
		}
		// A bound (cr_max, level_min) reads as one: "challenge rating
		// at most 10".
		if base, ok := strings.CutSuffix(field, "_max"); ok {
			field, vals = base, "at most "+vals
		} else if base, ok := strings.CutSuffix(field, "_min"); ok {
			field, vals = base, "at least "+vals
		}
		if field == "cr" {
			field = "challenge_rating"
		}
		field = strings.ReplaceAll(field, "_", " ")
		switch {
		case f.GetNegated():
			parts = append(parts, fmt.Sprintf("%s not %s (%q)", field, vals, f.GetWords()))
		default:
			parts = append(parts, fmt.Sprintf("%s %s (%q)", field, vals, f.GetWords()))
		}
	}
	if len(u.GetDocuments()) > 0 {
		parts = append(parts, "documents "+strings.Join(u.GetDocuments(), ", "))
	}
	if u.GetOrderBy() != "" {
		dir := "lowest"
		if u.GetDescending() {
			dir = "highest"
		}
		parts = append(parts, fmt.Sprintf("best matches ordered by %s, %s first", strings.ReplaceAll(u.GetOrderBy(), "_", " "), dir))
	}
	if len(parts) == 0 {
		return
	}
	fmt.Fprintf(b, "\n> Understood from the question: %s. These rank matches first and drop nothing; pass explicit filters to change them.\n", strings.Join(parts, "; "))
}

// sameKinds reports whether slugs are exactly kinds'.
func sameKinds(slugs []string, kinds []lkv1.Kind) bool {
	if len(slugs) != len(kinds) {
		return false
	}
	for _, k := range kinds {
		if !slices.Contains(slugs, k.Slug()) {
			return false
		}
	}
	return true
}
