package query

import (
	"slices"
	"strings"

	"lorekeeper.dev/embedder/badgerstore"
	lkv1 "lorekeeper.dev/proto/lorekeeper/v1"
)

// kindReader reads the one kind a search's question names (readKind):
// "monsters with legendary actions", "feats for a spellcaster".
type kindReader struct{}

func (kindReader) facet() string { return "kind" }

func (kindReader) read(r *reading) {
	if len(r.kinds) < 2 || r.howItWorks {
		return
	}
	f, at, ok := readKind(r.words, r.used, r.kinds)
	if !ok || slices.ContainsFunc(at, func(i int) bool { return r.splits(i, i+1) }) {
		return
	}
	f.by = r.by
	r.u.filters = append(r.u.filters, f)
	for _, i := range at {
		r.used[i] = true
	}
}

// readKind reads the one kind a question over several kinds names, in
// the plural or as "monster" ("monsters with legendary actions", "feats
// for a spellcaster"): another singular is more often said of something
// else ("a spell that lets a creature fly"), and a question naming two
// kinds is about both. at are the words it is read from.
func readKind(words []string, used []bool, kinds []lkv1.Kind) (f softFilter, at []int, ok bool) {
	var named lkv1.Kind
	for i := 0; i < len(words); i++ {
		if used[i] {
			continue
		}
		n := 1
		k, ok := kindNouns[words[i]]
		if i+1 < len(words) && !used[i+1] {
			if k2, ok2 := kindNouns[words[i]+" "+words[i+1]]; ok2 {
				k, ok, n = k2, true, 2
			}
		}
		if !ok || !slices.Contains(kinds, k) {
			continue
		}
		if len(at) > 0 && k != named {
			return softFilter{}, nil, false
		}
		named = k
		for j := i; j < i+n; j++ {
			at = append(at, j)
		}
		i += n - 1
	}
	if len(at) == 0 {
		return softFilter{}, nil, false
	}
	said := make([]string, len(at))
	for j, i := range at {
		said[j] = words[i]
	}
	return keywordFilter(badgerstore.FieldKind, []string{named.Slug()}, false, strings.Join(said, " ")), at, true
}
