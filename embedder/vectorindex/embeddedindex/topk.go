package embeddedindex

import (
	"slices"
	"strings"

	"lorekeeper.dev/embedder/vectorindex/driver"
)

type scored struct {
	j     int
	score float32
}

// topK keeps the k best (score desc, then ID asc) in a min-heap whose root is
// the worst kept; a hand-rolled heap avoids container/heap's interface calls
// in the hot loop.
type topK struct {
	k int
	h []scored
}

// worse reports whether a ranks below b.
func worse(a, b scored, ids []string) bool {
	if a.score != b.score {
		return a.score < b.score
	}
	return ids[a.j] > ids[b.j]
}

func (t *topK) offer(j int, score float32, ids []string) {
	s := scored{j, score}
	if len(t.h) < t.k {
		t.h = append(t.h, s)
		t.up(len(t.h)-1, ids)
		return
	}
	if !worse(t.h[0], s, ids) {
		return
	}
	t.h[0] = s
	t.down(0, ids)
}

func (t *topK) up(i int, ids []string) {
	for i > 0 {
		p := (i - 1) / 2
		if !worse(t.h[i], t.h[p], ids) {
			return
		}
		t.h[i], t.h[p] = t.h[p], t.h[i]
		i = p
	}
}

func (t *topK) down(i int, ids []string) {
	n := len(t.h)
	for {
		m := i
		if l := 2*i + 1; l < n && worse(t.h[l], t.h[m], ids) {
			m = l
		}
		if r := 2*i + 2; r < n && worse(t.h[r], t.h[m], ids) {
			m = r
		}
		if m == i {
			return
		}
		t.h[i], t.h[m] = t.h[m], t.h[i]
		i = m
	}
}

func (t *topK) sorted(ids []string) []driver.Hit {
	if len(t.h) == 0 {
		return nil
	}
	slices.SortFunc(t.h, func(a, b scored) int {
		if a.score != b.score {
			if a.score > b.score {
				return -1
			}
			return 1
		}
		return strings.Compare(ids[a.j], ids[b.j])
	})
	hits := make([]driver.Hit, len(t.h))
	for i, s := range t.h {
		hits[i] = driver.Hit{ID: ids[s.j], Score: s.score}
	}
	return hits
}
