package query

import (
	"regexp"
	"strings"
	"testing"
)

// reference is the pattern semantics spelled as a regular expression:
// "*" and "%" are any run of characters, everything else literal.
func reference(pat string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("^")
	for _, r := range strings.ToLower(pat) {
		if r == '*' || r == '%' {
			b.WriteString("(?s:.*)")
			continue
		}
		b.WriteString(regexp.QuoteMeta(string(r)))
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}

func TestPattern(t *testing.T) {
	tests := []struct {
		pattern, name string
		want          bool
	}{
		{"fire*", "fireball", true},
		{"fire*", "wall of fire", false},
		{"%fire", "wall of fire", true},
		{"%fire", "fireball", false},
		{"*fire*", "delayed blast fireball", true},
		{"f*ball", "fireball", true},
		{"f*ball", "fireballs", false},
		{"a*b*c", "abc", true},
		{"a*b*c", "acb", false},
		{"*", "anything", true},
		{"fire_ball*", "fireball", false}, // "_" is literal
		{"fire_ball*", "fire_ball x", true},
		{"%; drop table creatures; --", "goblin", false},
		{"ab*ab", "ab", false}, // the anchors may not overlap
		{"ab*ab", "abab", true},
	}
	for _, tt := range tests {
		if got := compilePattern(tt.pattern).match(tt.name); got != tt.want {
			t.Errorf("%q matches %q = %v, want %v", tt.pattern, tt.name, got, tt.want)
		}
	}
}

func FuzzPattern(f *testing.F) {
	for _, s := range [][2]string{{"fire*", "fireball"}, {"%fire", "wall of fire"}, {"a*b*c", "aXbYc"}, {"ab*ab", "ab"}, {"*%*", ""}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pat, name string) {
		if !isPattern(pat) {
			return
		}
		name = strings.ToLower(name)
		want := reference(pat).MatchString(name)
		if got := compilePattern(pat).match(name); got != want {
			t.Errorf("%q matches %q = %v, reference says %v", pat, name, got, want)
		}
	})
}
