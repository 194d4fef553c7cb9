package ingest

import (
	"strings"
	"unicode"
)

// Words is s lower-cased with every run of other characters than letters
// and digits one space, between spaces: " a b c ". Two sources' copies of
// one text compare as Words whatever their markup, quotes or dashes: a
// source that completes another finds what the other holds already with
// strings.Contains.
func Words(s string) string {
	var b strings.Builder
	b.WriteByte(' ')
	space := true
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
			space = false
		} else if !space {
			b.WriteByte(' ')
			space = true
		}
	}
	if !space {
		b.WriteByte(' ')
	}
	return b.String()
}
