package lorekeeperv1

import (
	"strings"
	"unicode"
)

// Slugify is how every source turns a name into a slug, the part of an
// entity key that names it: lower case, runs of letters and digits joined
// by hyphens, apostrophes dropped ("Tenser's" -> "tensers"), the accented
// letters of D&D names folded to ASCII ("Mordenkainen's Magnificent
// Mansion" -> "mordenkainens-magnificent-mansion", "Élan" -> "elan"); other
// letters are kept, so a name in another script still has a slug. One
// definition, because ingest writes slugs and the query service matches
// user input against them.
func Slugify(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		switch {
		case r == '\'' || r == '\u2019' || r == '\u2018':
			continue
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			r = foldAccent(r)
		default:
			dash = true
			continue
		}
		if dash && b.Len() > 0 {
			b.WriteByte('-')
		}
		dash = false
		b.WriteRune(r)
	}
	return b.String()
}

// foldAccent maps a lower-case accented Latin letter to its ASCII base and
// returns any other rune unchanged.
func foldAccent(r rune) rune {
	switch r {
	case 'à', 'á', 'â', 'ä', 'ã', 'å':
		return 'a'
	case 'è', 'é', 'ê', 'ë':
		return 'e'
	case 'ì', 'í', 'î', 'ï':
		return 'i'
	case 'ò', 'ó', 'ô', 'ö', 'õ', 'ø':
		return 'o'
	case 'ù', 'ú', 'û', 'ü':
		return 'u'
	case 'ñ':
		return 'n'
	case 'ç':
		return 'c'
	case 'ý', 'ÿ':
		return 'y'
	}
	return r
}
