package query

import (
	"strconv"
)

// amountReader reads a price or a weight compared: "under 10 gp", "at most
// 5 lb", "5 sp or less". An amount alone ("a 10 gp gem") filters nothing.
type amountReader struct{}

func (amountReader) facet() string { return "amount" }

func (amountReader) read(r *reading) {
	for i := 0; i < len(r.words); i++ {
		unit := units[r.word(i+1)]
		if unit.field == "" {
			continue
		}
		x, err := strconv.ParseFloat(r.words[i], 64)
		if b, from, to := compares(r.words, r.used, i, i+2); err == nil && x >= 0 && b != exactly {
			if x, ok := inclusive(unit.field, b, x*unit.scale); ok {
				r.add(rangeFilter(unit.field, b, x, r.mark(from, to)))
			}
			i++
		}
	}
}
