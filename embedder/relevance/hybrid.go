package relevance

// Hybrid ranking: how keyword, name and semantic scores mix.
const (
	// CosineWeight is the default weight of cosine similarity in the hybrid
	// score; BM25 gets the rest (equal weights measured best).
	CosineWeight = 0.5
	// NameFloor: in search, a near-name (typo-tolerant) match scores in
	// (NameFloor, 1) and everything else below NameFloor, so "firbal" puts
	// Fireball first; an exact name scores 1.
	NameFloor = 0.9
	// SemanticHitAt: a candidate whose rescaled cosine reaches it counts
	// as a match by meaning.
	SemanticHitAt = 0.6
	// RelativeFloor: a search result scores at least this share of the
	// best result's score.
	RelativeFloor = 0.6
	// AuthorityPrior is what an SRD entity adds to its hybrid score when
	// no book is named: what most tables mean by a word.
	AuthorityPrior = 0.15
)

// AliasScore is what a name known by the alias table scores in search
// ("bigbys hand" -> Arcane Hand): above every near name, below an exact
// name.
const AliasScore = 1 - (1-NameFloor)*0.005

// Rescale maps x from [lo, hi] to [0, 1]; with no spread, a positive score
// is 1 and nothing 0.
func Rescale(x, lo, hi float64) float64 {
	if hi <= lo {
		if x > 0 {
			return 1
		}
		return 0
	}
	return (x - lo) / (hi - lo)
}

// NearNameScore places a near name of similarity sim (in [MinFuzzySim, 1))
// in (NameFloor, 1): closer names higher, below an exact name.
func NearNameScore(sim float64) float64 {
	return NameFloor + (1-NameFloor)*(sim-MinFuzzySim)/(1-MinFuzzySim)*0.99
}
