package open5e

import (
	"bytes"
	"encoding/json"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// obj is a decoded JSON object with lenient getters: the API's records are
// read field by field, and a field of an unexpected type reads as absent
// rather than failing the record (the MANIFEST lists fields that are null,
// missing, int or float depending on the record and the API's age).
type obj map[string]any

func decodeObject(raw []byte) (obj, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, errTrailingData
	}
	if m == nil {
		return nil, errNotObject
	}
	return obj(m), nil
}

func (o obj) str(k string) string {
	switch v := o[k].(type) {
	case string:
		return emDashes(plainHyphens(codeEchoes(strings.TrimSpace(v))))
	case json.Number:
		return v.String()
	}
	return ""
}

// codeEchoes drops the code point a letter's escape left after it when
// the escape was half read: Tome of Beasts 2023's "væ00e6ttir" (v\u00e6ttir)
// is "vættir". Only a non-ASCII letter followed by its own code, four hex
// digits, is mended.
func codeEchoes(s string) string {
	i := strings.IndexFunc(s, func(r rune) bool { return r >= utf8.RuneSelf })
	if i < 0 {
		return s // most texts: nothing to look at
	}
	var b strings.Builder
	last := 0
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		next := i + size
		if r >= utf8.RuneSelf && next+4 <= len(s) && hexCode(s[next:next+4]) == r {
			b.WriteString(s[last:next])
			last = next + 4
			next = last
		}
		i = next
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// hexCode is the rune four hex digits give, or -1.
func hexCode(s string) rune {
	var r rune
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return -1
		}
	}
	return r
}

// typeset are the typesetting hyphens the SRD's PDF text carries: a soft
// hyphen (U+00AD), a hyphen (U+2010) and a non-breaking hyphen (U+2011),
// as runs after a plain one ("30-\u00ad\u2010\u2011foot radius", 82 texts)
// or alone ("5-foot\u2011square", "9th\u2010level"). Each would print as
// it is, or as two or three dashes.
var typeset = regexp.MustCompile("-?[\u00ad\u2010\u2011]+")

// plainHyphens makes each run of typesetting hyphens one plain hyphen, and
// a soft hyphen alone (a line-break opportunity, never a letter) nothing.
func plainHyphens(s string) string {
	if !strings.Contains(s, "\u00ad") && !strings.Contains(s, "\u2010") && !strings.Contains(s, "\u2011") {
		return s // three substring searches cost less than ContainsAny's rune by rune
	}
	return typeset.ReplaceAllStringFunc(s, func(run string) string {
		if strings.Trim(run, "\u00ad") == "" {
			return ""
		}
		return "-"
	})
}

// emDashes makes "---" between two words an em dash, as the SRD's v1
// sections write it ("They need rest---time to sleep"): read as it is, it
// prints as three hyphens. A table's "|---|" and a rule's "---" stay.
func emDashes(s string) string {
	if !strings.Contains(s, "---") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "---")
		if i < 0 {
			break
		}
		before, _ := utf8.DecodeLastRuneInString(s[:i])
		after, _ := utf8.DecodeRuneInString(s[i+3:])
		if unicode.IsLetter(before) && unicode.IsLetter(after) {
			b.WriteString(s[:i] + "—")
		} else {
			b.WriteString(s[:i+3])
		}
		s = s[i+3:]
	}
	b.WriteString(s)
	return b.String()
}

func (o obj) num(k string) (float64, bool) {
	switch v := o[k].(type) {
	case json.Number:
		f, err := v.Float64()
		return f, err == nil && !math.IsInf(f, 0) && !math.IsNaN(f)
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		return f, err == nil && !math.IsInf(f, 0) && !math.IsNaN(f)
	}
	return 0, false
}

// int32 reads a whole number, clamped to the int32 range.
func (o obj) int32(k string) int32 {
	f, ok := o.num(k)
	if !ok {
		return 0
	}
	return clampInt32(f)
}

func clampInt32(f float64) int32 {
	switch {
	case f > math.MaxInt32:
		return math.MaxInt32
	case f < math.MinInt32:
		return math.MinInt32
	}
	return int32(f)
}

func (o obj) boolean(k string) bool {
	switch v := o[k].(type) {
	case bool:
		return v
	case string:
		s := strings.ToLower(strings.TrimSpace(v))
		return s == "yes" || s == "true"
	}
	return false
}

func (o obj) obj(k string) obj {
	if m, ok := o[k].(map[string]any); ok {
		return obj(m)
	}
	return nil
}

func (o obj) list(k string) []any {
	a, _ := o[k].([]any)
	return a
}

func (o obj) objs(k string) []obj {
	a, _ := o[k].([]any)
	out := make([]obj, 0, len(a))
	for _, v := range a {
		if m, ok := v.(map[string]any); ok {
			out = append(out, obj(m))
		}
	}
	return out
}

func (o obj) strs(k string) []string {
	a, _ := o[k].([]any)
	var out []string
	for _, v := range a {
		if s, ok := v.(string); ok && strings.TrimSpace(s) != "" {
			out = append(out, plainHyphens(strings.TrimSpace(s)))
		}
	}
	return out
}

// keyOrName is the key of a nested {name, key} object, or its name
// lower-cased, or the field itself when it is a plain string.
func (o obj) keyOrName(k string) string {
	if n := o.obj(k); n != nil {
		if s := n.str("key"); s != "" {
			return strings.ToLower(s)
		}
		return strings.ToLower(n.str("name"))
	}
	return strings.ToLower(o.str(k))
}

var leadingNumber = regexp.MustCompile(`[-+]?\d[\d,]*(\.\d+)?`)

// parseAmount reads the first number in s: "25 gp" -> 25, "1,500 gp" -> 1500.
func parseAmount(s string) (float64, bool) {
	m := leadingNumber.FindString(s)
	if m == "" {
		return 0, false
	}
	f, err := strconv.ParseFloat(strings.ReplaceAll(m, ",", ""), 64)
	return f, err == nil
}

// costGP converts a v1 cost text ("25 gp", "5 sp", "2 cp") to gold pieces.
func costGP(s string) (float64, bool) {
	f, ok := parseAmount(s)
	if !ok {
		return 0, false
	}
	l := strings.ToLower(s)
	switch {
	case strings.Contains(l, "pp"):
		f *= 10
	case strings.Contains(l, "ep"):
		f /= 2
	case strings.Contains(l, "sp"):
		f /= 10
	case strings.Contains(l, "cp"):
		f /= 100
	}
	return f, true
}

// weightLB converts a weight and its unit to pounds.
func weightLB(f float64, unit string) (float64, bool) {
	switch strings.ToLower(strings.TrimSpace(strings.TrimSuffix(unit, "."))) {
	case "", "lb", "lbs", "pound", "pounds":
		return f, true
	case "oz", "ounce", "ounces":
		return f / 16, true
	case "kg":
		return f * 2.20462, true
	}
	return 0, false
}
