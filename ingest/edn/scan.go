package edn

import (
	"bytes"
	"fmt"
	"unicode"
	"unicode/utf8"
)

// maxWarnings bounds the warnings kept per input: a file of garbage bytes
// must not cost a warning (and a line count) per byte.
const maxWarnings = 50

// frame is one open collection.
type frame struct {
	open  byte   // '(', '[', '{' (maps and namespaced maps) or '#' (sets)
	start int    // offset of the opening bracket
	ns    string // namespace of a #:ns{...} map, else ""
	forms int    // completed forms inside so far
	skip  int    // pending #_ discards: the next forms do not count
}

// scanner walks the input once, copying it to out with the rewrites olympos
// needs. out stays nil until the first rewrite, so clean input is not copied.
type scanner struct {
	in    []byte
	base  int // bytes stripped from the front (a BOM), for offsets
	opts  *Options
	out   []byte
	last  int // in[last:] has not been copied to out yet
	stack []frame
	warns []Warning
	// top counts completed top-level forms, skip the pending top-level #_.
	top, topSkip int
	dropped      int // warnings over maxWarnings, counted only
}

// scan vets data and returns the text olympos should decode: exactly the
// first top-level value, rewritten where needed.
func scan(data []byte, opts *Options) ([]byte, []Warning, error) {
	s := &scanner{in: data, opts: opts}
	if bytes.HasPrefix(data, []byte("\xef\xbb\xbf")) {
		s.in, s.base = data[3:], 3
	} else if bytes.HasPrefix(data, []byte("\xff\xfe")) || bytes.HasPrefix(data, []byte("\xfe\xff")) {
		return nil, nil, s.errAt(0, "input is UTF-16 (byte-order mark %q); OrcBrew files are UTF-8", data[:2])
	}
	end, err := s.run()
	if err != nil {
		return nil, nil, err
	}
	if s.dropped > 0 {
		s.warns = append(s.warns, Warning{Offset: -1, Msg: fmt.Sprintf("%d more warnings not listed", s.dropped)})
	}
	if s.out == nil {
		return s.in[:end], s.warns, nil
	}
	s.out = append(s.out, s.in[s.last:end]...)
	return s.out, s.warns, nil
}

// replace substitutes in[from:to] with repl in the output.
func (s *scanner) replace(from, to int, repl string) {
	if s.out == nil {
		s.out = make([]byte, 0, len(s.in)+64)
	}
	s.out = append(s.out, s.in[s.last:from]...)
	s.out = append(s.out, repl...)
	s.last = to
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',' || c == '\f' || c == '\v'
}

func isDelim(c byte) bool {
	switch c {
	case '(', ')', '[', ']', '{', '}', '"', ';':
		return true
	}
	return isSpace(c)
}

// run scans until the first top-level form is complete and returns the
// offset just past it.
func (s *scanner) run() (int, error) {
	in := s.in
	i := 0
	for i < len(in) {
		c := in[i]
		switch {
		case isSpace(c):
			i++
			continue
		case c == ';':
			j, err := s.skipLine(i)
			if err != nil {
				return 0, err
			}
			i = j
			continue
		case c >= 0x80:
			// Unicode whitespace separates forms for olympos too; any
			// other non-ASCII rune starts a symbol.
			if r, n := utf8.DecodeRune(in[i:]); r != utf8.RuneError && unicode.IsSpace(r) {
				i += n
				continue
			}
		}
		// A form or a bracket starts at i.
		var err error
		switch c {
		case '"':
			i, err = s.str(i)
			if err == nil {
				err = s.formDone(i)
			}
		case '(', '[', '{':
			err = s.push(frame{open: c, start: i})
			i++
		case ')', ']', '}':
			i, err = s.pop(i, c)
			if err == nil {
				err = s.formDone(i)
			}
		case '#':
			i, err = s.dispatch(i)
		case '\\':
			i, err = s.char(i)
			if err == nil {
				err = s.formDone(i)
			}
		default:
			i, err = s.atom(i)
			if err == nil {
				err = s.formDone(i)
			}
		}
		if err != nil {
			return 0, err
		}
		if len(s.stack) == 0 && s.top > 0 {
			s.trailing(i)
			return i, nil
		}
	}
	if len(s.stack) > 0 {
		f := s.stack[len(s.stack)-1]
		return 0, s.errAt(len(in), "unexpected end of input: %s opened at %s is not closed (%d collections open)",
			collName(f), s.where(f.start), len(s.stack))
	}
	if s.top == 0 {
		if s.topSkip > 0 {
			return 0, s.errAt(len(in), "unexpected end of input after #_")
		}
		return 0, s.errAt(len(in), "no EDN value in input")
	}
	return len(in), nil
}

// trailing reports anything but whitespace and comments after the first
// value as ignored.
func (s *scanner) trailing(i int) {
	in := s.in
	for i < len(in) {
		switch c := in[i]; {
		case isSpace(c):
			i++
		case c == ';':
			j := bytes.IndexByte(in[i:], '\n')
			if j < 0 {
				return
			}
			i += j + 1
		default:
			s.warn(i, "ignored %d bytes of trailing data after the first value", len(in)-i)
			return
		}
	}
}

func (s *scanner) skipLine(i int) (int, error) {
	in := s.in
	for i < len(in) && in[i] != '\n' {
		if in[i] >= 0x80 {
			j, err := s.checkRune(i, true)
			if err != nil {
				return 0, err
			}
			i = j
			continue
		}
		i++
	}
	return i, nil
}

// checkRune validates the multi-byte sequence at i and returns the offset
// after it. Invalid bytes are an error, or replaced when RepairUTF8 is set
// and they are inside a string or comment (text). A keyword or symbol with
// U+FFFD in it would not decode, so there they are always an error.
func (s *scanner) checkRune(i int, text bool) (int, error) {
	r, n := utf8.DecodeRune(s.in[i:])
	if r != utf8.RuneError || n > 1 {
		return i + n, nil
	}
	if !text {
		return 0, s.errAt(i, "invalid UTF-8 byte 0x%02X outside a string", s.in[i])
	}
	if !s.opts.RepairUTF8 {
		return 0, s.errAt(i, "invalid UTF-8 byte 0x%02X", s.in[i])
	}
	s.warn(i, "invalid UTF-8 byte 0x%02X replaced with U+FFFD", s.in[i])
	s.replace(i, i+1, "\uFFFD")
	return i + 1, nil
}

// str scans the string literal starting at i and returns the offset after
// its closing quote.
func (s *scanner) str(i int) (int, error) {
	in := s.in
	start := i
	i++
	for i < len(in) {
		if i-start > s.opts.MaxStringLen {
			return 0, s.errAt(start, "string longer than the limit of %d bytes", s.opts.MaxStringLen)
		}
		c := in[i]
		switch {
		case c == '"':
			return i + 1, nil
		case c == '\\':
			// Skip the escaped byte unless it starts a multi-byte rune,
			// which the next round checks.
			i++
			if i < len(in) && in[i] < 0x80 {
				i++
			}
		case c >= 0x80:
			j, err := s.checkRune(i, true)
			if err != nil {
				return 0, err
			}
			i = j
		default:
			i++
		}
	}
	return 0, s.errAt(len(in), "unexpected end of input inside the string that starts at %s", s.where(start))
}

// char scans a character literal such as \a, \newline or \u00e9.
func (s *scanner) char(i int) (int, error) {
	in := s.in
	j := i + 1
	if j >= len(in) {
		return 0, s.errAt(i, "unexpected end of input after \\")
	}
	if in[j] >= 0x80 {
		var err error
		if j, err = s.checkRune(j, false); err != nil {
			return 0, err
		}
	} else {
		j++
	}
	for j < len(in) && !isDelim(in[j]) {
		if in[j] >= 0x80 {
			var err error
			if j, err = s.checkRune(j, false); err != nil {
				return 0, err
			}
			continue
		}
		j++
	}
	return j, nil
}

// atom scans a symbol, keyword or number. It rewrites a bare ":" and, at a
// key position of a namespaced map, adds the map's namespace to keywords.
// Rewrites come before the UTF-8 check of the token, so that every
// replacement lands after the one before it.
func (s *scanner) atom(i int) (int, error) {
	in := s.in
	j := i
	for j < len(in) && !isDelim(in[j]) {
		j++
	}
	tok := in[i:j]
	if tok[0] == ':' {
		if len(tok) == 1 {
			s.replace(i, j, ":"+emptyKeyword)
			return j, nil
		}
		if n := len(s.stack); n > 0 {
			f := &s.stack[n-1]
			if f.ns != "" && f.skip == 0 && f.forms%2 == 0 && tok[1] != ':' {
				switch {
				case bytes.HasPrefix(tok, []byte(":_/")):
					s.replace(i+1, i+3, "")
				case bytes.IndexByte(tok, '/') < 0:
					s.replace(i+1, i+1, f.ns+"/")
				}
			}
		}
	}
	for k := i; k < j; {
		if in[k] < 0x80 {
			k++
			continue
		}
		var err error
		if k, err = s.checkRune(k, false); err != nil {
			return 0, err
		}
	}
	return j, nil
}

// dispatch handles the forms that start with '#'.
func (s *scanner) dispatch(i int) (int, error) {
	in := s.in
	if i+1 >= len(in) {
		return 0, s.errAt(i, "unexpected end of input after #")
	}
	switch c := in[i+1]; {
	case c == '{':
		return i + 2, s.push(frame{open: '#', start: i})
	case c == '_':
		s.discard()
		return i + 2, nil
	case c == ':':
		// #:ns{...}: a Clojure namespaced map, which olympos cannot read.
		j := i + 2
		for j < len(in) && !isDelim(in[j]) {
			j++
		}
		ns := string(in[i+2 : j])
		if ns == "" || ns == ":" || ns[0] == ':' {
			return 0, s.errAt(i, "auto-resolved namespaced map #%s cannot be read outside Clojure", in[i+1:j])
		}
		k := j
		for k < len(in) && isSpace(in[k]) {
			k++
		}
		if k >= len(in) || in[k] != '{' {
			return 0, s.errAt(i, "namespaced map #:%s is not followed by {", ns)
		}
		if !validNS(ns) {
			return 0, s.errAt(i, "invalid namespace %q in namespaced map", ns)
		}
		s.replace(i, k+1, "{")
		return k + 1, s.push(frame{open: '{', start: i, ns: ns})
	default:
		// A tag: #inst, #uuid, #my/tag. It prefixes the next form, which
		// then counts as one form with it, so there is nothing to count.
		j := i + 1
		for j < len(in) && !isDelim(in[j]) {
			if in[j] >= 0x80 {
				var err error
				if j, err = s.checkRune(j, false); err != nil {
					return 0, err
				}
				continue
			}
			j++
		}
		return j, nil
	}
}

func validNS(ns string) bool {
	for i := 0; i < len(ns); i++ {
		c := ns[i]
		if !(c == '.' || c == '-' || c == '_' || c == '*' || c == '+' || c == '!' || c == '?' ||
			c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

func (s *scanner) push(f frame) error {
	if len(s.stack) >= s.opts.MaxDepth {
		return s.errAt(f.start, "nesting deeper than the limit of %d", s.opts.MaxDepth)
	}
	s.stack = append(s.stack, f)
	return nil
}

func (s *scanner) pop(i int, c byte) (int, error) {
	if len(s.stack) == 0 {
		return 0, s.errAt(i, "unexpected %q with no collection open", c)
	}
	f := s.stack[len(s.stack)-1]
	want := map[byte]byte{'(': ')', '[': ']', '{': '}', '#': '}'}[f.open]
	if c != want {
		return 0, s.errAt(i, "unexpected %q: %s opened at %s wants %q", c, collName(f), s.where(f.start), want)
	}
	if f.skip > 0 {
		return 0, s.errAt(i, "#_ with nothing to discard before %q", c)
	}
	if f.open == '{' && f.forms%2 == 1 {
		return 0, s.errAt(i, "map opened at %s has a key with no value", s.where(f.start))
	}
	s.stack = s.stack[:len(s.stack)-1]
	return i + 1, nil
}

// discard notes a #_: the next completed form at this level is dropped.
func (s *scanner) discard() {
	if n := len(s.stack); n > 0 {
		s.stack[n-1].skip++
	} else {
		s.topSkip++
	}
}

// formDone counts a completed form at the current level.
func (s *scanner) formDone(int) error {
	if n := len(s.stack); n > 0 {
		f := &s.stack[n-1]
		if f.skip > 0 {
			f.skip--
		} else {
			f.forms++
		}
		return nil
	}
	if s.topSkip > 0 {
		s.topSkip--
	} else {
		s.top++
	}
	return nil
}

func collName(f frame) string {
	switch f.open {
	case '(':
		return "list"
	case '[':
		return "vector"
	case '#':
		return "set"
	}
	if f.ns != "" {
		return "namespaced map #:" + f.ns
	}
	return "map"
}

// lineCol computes the 1-based line and byte column of offset i in s.in.
func (s *scanner) lineCol(i int) (int, int) {
	if i > len(s.in) {
		i = len(s.in)
	}
	line := 1 + bytes.Count(s.in[:i], []byte("\n"))
	col := i + 1
	if nl := bytes.LastIndexByte(s.in[:i], '\n'); nl >= 0 {
		col = i - nl
	} else {
		col += s.base
	}
	return line, col
}

func (s *scanner) where(i int) string {
	l, c := s.lineCol(i)
	return fmt.Sprintf("line %d, column %d", l, c)
}

func (s *scanner) errAt(i int, format string, args ...any) error {
	l, c := s.lineCol(i)
	return &SyntaxError{Offset: int64(i + s.base), Line: l, Column: c, Msg: fmt.Sprintf(format, args...)}
}

func (s *scanner) warn(i int, format string, args ...any) {
	if len(s.warns) >= maxWarnings {
		s.dropped++
		return
	}
	l, c := s.lineCol(i)
	s.warns = append(s.warns, Warning{Offset: int64(i + s.base), Line: l, Column: c, Msg: fmt.Sprintf(format, args...)})
}
