package query

import (
	"strconv"

	"lorekeeper.dev/embedder/badgerstore"
)

// amountReader reads a price or a weight compared: "under 10 gp", "at most
// 5 lb", "5 sp or less". An amount alone ("a 10 gp gem") filters nothing.
// "Cheap" is at most cheapGP: something a party buys, priced.
type amountReader struct{}

func (amountReader) facet() string { return "amount" }

func (amountReader) read(r *reading) {
	for i := 0; i < len(r.words); i++ {
		if cheapWords[r.words[i]] && !r.used[i] {
			r.add(rangeFilter(badgerstore.FieldCost, atMost, cheapGP, r.mark(i, i+1)))
			continue
		}
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

// cheapGP is what "cheap" costs at most: the everyday gear of the books'
// price lists (a torch 1 cp, a grappling hook 2 gp, a climber's kit 25
// gp), not a magic item, whose price the books do not give.
const cheapGP = 50

var cheapWords = map[string]bool{"cheap": true, "inexpensive": true, "affordable": true, "budget": true}
