package dialect

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"strconv"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// The dialect decoders read an event's JSON with jscan, a validating
// single-pass reader that keeps only the fields a probe needs. It answers
// exactly as encoding/json.Unmarshal into the dialect's struct would (the
// differential fuzz targets in decode_diff_test.go hold it to that): the
// same syntax errors at the same byte, the first type mismatch in document
// order named by its field path, keys matched exactly and then case-folded,
// null a no-op for strings, integers and structs, the last duplicate key
// winning and merging into what the earlier ones left, and arrays reusing
// the elements an earlier duplicate left past the new length.

// maxDepth is encoding/json's nesting limit.
const maxDepth = 10000

// jscan reads one JSON text. A method that returns false met a syntax
// error, kept in synAt; the first type mismatch is kept and reading goes on.
type jscan struct {
	data  []byte
	i     int
	depth int
	synAt int // 1 + the index of the byte in error (len(data) at the end): encoding/json's Offset; 0 = none

	typed bool   // a value of a known field had the wrong type
	hard  bool   // ... and a type's own UnmarshalJSON said so (see hardWrong)
	field string // its field path, "" for the whole event
	want  string // what the field takes
	got   string // what the event had
}

// strFlags tell how a string's raw bytes differ from its value.
type strFlags uint8

const (
	strEscaped  strFlags = 1 << iota // holds a backslash escape
	strNonASCII                      // holds a byte >= 0x80 (maybe invalid UTF-8)
)

// jstr is a decoded string field: its raw bytes between the quotes.
type jstr struct {
	raw []byte
	fl  strFlags
}

// empty reports whether the string's value is "" (every escape and every
// byte of the raw form yields at least one byte of the value).
func (j jstr) empty() bool { return len(j.raw) == 0 }

// value is the string's value as encoding/json gives it: escapes decoded,
// invalid UTF-8 and lone surrogates as U+FFFD. It only allocates when the
// raw form is not the value.
func (j jstr) value() []byte {
	if j.fl&strEscaped == 0 && (j.fl&strNonASCII == 0 || utf8.Valid(j.raw)) {
		return j.raw
	}
	return unquote(j.raw, make([]byte, 0, len(j.raw)+utf8.UTFMax))
}

// is reports whether the string's value is s.
func (j jstr) is(s string) bool {
	if j.fl == 0 {
		return string(j.raw) == s
	}
	return string(j.value()) == s
}

// strClass: 0 for a byte a string holds as is, 1 for one that ends the fast
// scan (quote, backslash, control), 2 for a byte >= 0x80.
var strClass = func() (t [256]uint8) {
	for c := range 0x20 {
		t[c] = 1
	}
	t['"'], t['\\'] = 1, 1
	for c := 0x80; c < 0x100; c++ {
		t[c] = 2
	}
	return t
}()

// syntaxAt records a syntax error at byte i.
func (s *jscan) syntaxAt(i int) bool {
	if s.synAt == 0 {
		s.synAt = i + 1
	}
	return false
}

// eof records an unexpected end of the text.
func (s *jscan) eof() bool {
	if s.synAt == 0 {
		s.synAt = len(s.data)
	}
	return false
}

func (s *jscan) ws() { s.i = skipWS(s.data, s.i) }

// skipWS returns the index of the first byte at or after i that is not
// JSON white space.
func skipWS(d []byte, i int) int {
	for i < len(d) && d[i] <= ' ' && (d[i] == ' ' || d[i] == '\n' || d[i] == '\r' || d[i] == '\t') {
		i++
	}
	return i
}

// start moves to the top-level value; false at the end of the text.
func (s *jscan) start(data []byte) bool {
	s.data = data
	s.ws()
	if s.i >= len(s.data) {
		return s.eof()
	}
	return true
}

// finish checks that only white space follows the top-level value.
func (s *jscan) finish() {
	s.ws()
	if s.i < len(s.data) {
		s.syntaxAt(s.i)
	}
}

// Kinds of a value begin finds.
const (
	isOpen  = iota // the object or array the field takes, entered
	isNull         // null, read
	isOther        // a value of another type, recorded and skipped
)

// begin starts the value of field parent.name, which takes an object
// (open '{') or an array (open '['), as want says.
func (s *jscan) begin(open byte, parent, name, want string) (int, bool) {
	switch s.data[s.i] {
	case open:
		return isOpen, s.open()
	case 'n':
		return isNull, s.lit("null")
	}
	return isOther, s.wrong(parent, name, want)
}

// path joins a field path.
func path(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
}

// wrong records that the value at the reader does not fit the field
// parent.name (which takes want) and skips it.
func (s *jscan) wrong(parent, name, want string) bool {
	if !s.typed {
		s.typed, s.field, s.want, s.got = true, path(parent, name), want, s.gotName()
	}
	return s.skip()
}

// gotName names the kind of the value at the reader.
func (s *jscan) gotName() string {
	switch s.data[s.i] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "bool"
	case 'n':
		return "null"
	}
	return "number"
}

// hardWrong records that the value at the reader does not fit the field
// parent.name, as a type with its own UnmarshalJSON (which returns its
// error) reports it: encoding/json stops decoding there, so the mismatch
// wins over one recorded before it, and none after it counts. It skips
// the value.
func (s *jscan) hardWrong(parent, name, want string) bool {
	if !s.hard {
		s.typed, s.hard, s.field, s.want, s.got = true, true, path(parent, name), want, s.gotName()
	}
	return s.skip()
}

// err is the decoder's error for the event (what names it), nil if none.
func (s *jscan) err(dialect, what string) error {
	if s.synAt != 0 {
		return fmt.Errorf("%s: %s is not valid JSON (%d bytes, error at byte %d)", dialect, what, len(s.data), s.synAt)
	}
	if s.typed {
		field := s.field
		if field == "" {
			field = what
		}
		return fmt.Errorf("%s: %s: want %s, got %s", dialect, field, s.want, s.got)
	}
	return nil
}

// open enters the object or array whose bracket is at the reader.
func (s *jscan) open() bool {
	s.depth++
	if s.depth > maxDepth {
		return s.syntaxAt(s.i)
	}
	s.i++
	return true
}

// member moves to the next member of the object entered with open: it
// returns the member's key with the reader at the value, or done after the
// closing brace.
func (s *jscan) member(first bool) (key jstr, done, ok bool) {
	d := s.data
	i := skipWS(d, s.i)
	if i >= len(d) {
		return key, false, s.eof()
	}
	switch c := d[i]; {
	case c == '}':
		s.i = i + 1
		s.depth--
		return key, true, true
	case first && c == '"':
	case !first && c == ',':
		i = skipWS(d, i+1)
		if i >= len(d) {
			return key, false, s.eof()
		}
		if d[i] != '"' {
			return key, false, s.syntaxAt(i)
		}
	default:
		return key, false, s.syntaxAt(i)
	}
	s.i = i
	if key, ok = s.str(); !ok {
		return key, false, false
	}
	i = s.i
	if i < len(d) && d[i] == ':' { // the usual case: no white space
		i++
	} else {
		if i = skipWS(d, i); i >= len(d) {
			return key, false, s.eof()
		}
		if d[i] != ':' {
			return key, false, s.syntaxAt(i)
		}
		i++
	}
	if i = skipWS(d, i); i >= len(d) {
		return key, false, s.eof()
	}
	s.i = i
	return key, false, true
}

// elem moves to the next element of the array entered with open: the
// reader is at the element, or done after the closing bracket.
func (s *jscan) elem(first bool) (done, ok bool) {
	d := s.data
	s.ws()
	if s.i >= len(d) {
		return false, s.eof()
	}
	switch d[s.i] {
	case ']':
		s.i++
		s.depth--
		return true, true
	case ',':
		if first {
			return false, s.syntaxAt(s.i)
		}
		s.i++
		s.ws()
		if s.i >= len(d) {
			return false, s.eof()
		}
		return false, true
	}
	if !first {
		return false, s.syntaxAt(s.i)
	}
	return false, true
}

// skip reads and checks any value at the reader.
func (s *jscan) skip() bool {
	d := s.data
	switch c := d[s.i]; {
	case c == '{':
		if !s.open() {
			return false
		}
		for first := true; ; first = false {
			_, done, ok := s.member(first)
			if !ok {
				return false
			}
			if done {
				return true
			}
			if !s.skip() {
				return false
			}
		}
	case c == '[':
		if !s.open() {
			return false
		}
		for first := true; ; first = false {
			done, ok := s.elem(first)
			if !ok {
				return false
			}
			if done {
				return true
			}
			if !s.skip() {
				return false
			}
		}
	case c == '"':
		_, ok := s.str()
		return ok
	case c == 't':
		return s.lit("true")
	case c == 'f':
		return s.lit("false")
	case c == 'n':
		return s.lit("null")
	case c == '-' || c >= '0' && c <= '9':
		_, ok := s.num()
		return ok
	}
	return s.syntaxAt(s.i)
}

// lit reads the literal w, whose first byte is at the reader.
func (s *jscan) lit(w string) bool {
	d := s.data
	for k := 1; k < len(w); k++ {
		if s.i+k >= len(d) {
			return s.eof()
		}
		if d[s.i+k] != w[k] {
			return s.syntaxAt(s.i + k)
		}
	}
	s.i += len(w)
	return true
}

// num reads a number and returns its text: sign, integer part, then a
// fraction and an exponent when the byte after each part starts one (the
// checks for them stay here, so a plain integer makes no further call).
func (s *jscan) num() ([]byte, bool) {
	d, start := s.data, s.i
	i, ok := s.numSign(start)
	if ok {
		i, ok = s.numInt(i)
	}
	if ok && i < len(d) && d[i] == '.' {
		i, ok = s.numDigits(i + 1) // the fraction
	}
	if ok && i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i, ok = s.numExp(i + 1)
	}
	if !ok {
		return nil, false
	}
	s.i = i
	return d[start:i], true
}

// numSign reads a number's optional minus sign at i and returns where its
// integer part starts.
func (s *jscan) numSign(i int) (int, bool) {
	if s.data[i] != '-' {
		return i, true
	}
	if i+1 >= len(s.data) {
		return i + 1, s.eof()
	}
	return i + 1, true
}

// numInt reads a number's integer part at i: a single 0, or digits that do
// not start with 0.
func (s *jscan) numInt(i int) (int, bool) {
	d := s.data
	switch {
	case d[i] == '0':
		return i + 1, true
	case d[i] >= '1' && d[i] <= '9':
		return digitsFrom(d, i+1), true
	}
	return i, s.syntaxAt(i)
}

// numExp reads the rest of a number's exponent, i just after its e or E:
// an optional sign and one digit or more.
func (s *jscan) numExp(i int) (int, bool) {
	if i < len(s.data) && (s.data[i] == '+' || s.data[i] == '-') {
		i++
	}
	return s.numDigits(i)
}

// numDigits reads the one digit or more that a fraction (after its dot)
// or an exponent (after its sign) needs at i.
func (s *jscan) numDigits(i int) (int, bool) {
	d := s.data
	if i >= len(d) {
		return i, s.eof()
	}
	if d[i] < '0' || d[i] > '9' {
		return i, s.syntaxAt(i)
	}
	return digitsFrom(d, i+1), true
}

// digitsFrom returns the index of the first byte at or after i that is
// not a digit.
func digitsFrom(d []byte, i int) int {
	for i < len(d) && d[i] >= '0' && d[i] <= '9' {
		i++
	}
	return i
}

// str reads a string, whose quote is at the reader, and returns its raw
// bytes.
func (s *jscan) str() (jstr, bool) {
	d := s.data
	i := s.i + 1
	start := i
	var fl strFlags
	for {
		// Move to the next byte that may need a look: 8 bytes at a time,
		// then byte-wise near the end.
		for {
			if i+8 <= len(d) {
				if m := special8(binary.LittleEndian.Uint64(d[i:])); m != 0 {
					i += bits.TrailingZeros64(m) >> 3
					break
				}
				i += 8
				continue
			}
			for i < len(d) && strClass[d[i]] == 0 {
				i++
			}
			break
		}
		if i >= len(d) {
			return jstr{}, s.eof()
		}
		switch c := d[i]; {
		case c == '"':
			s.i = i + 1
			return jstr{d[start:i], fl}, true
		case c == '\\':
			fl |= strEscaped
			i++
			if i >= len(d) {
				return jstr{}, s.eof()
			}
			switch d[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i++
			case 'u':
				for k := 1; k <= 4; k++ {
					if i+k >= len(d) {
						return jstr{}, s.eof()
					}
					if !isHex(d[i+k]) {
						return jstr{}, s.syntaxAt(i + k)
					}
				}
				i += 5
			default:
				return jstr{}, s.syntaxAt(i)
			}
		case c < 0x20:
			return jstr{}, s.syntaxAt(i)
		default:
			fl |= strNonASCII
			i++
		}
	}
}

// special8 returns a mask whose lowest set bit is the high bit of the first
// of the 8 bytes in x (little-endian) that a string may not hold as is: a
// quote, a backslash, a control byte or a byte >= 0x80; 0 if none. (Bits
// above it may be false positives: a borrow only starts at such a byte.)
func special8(x uint64) uint64 {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	return ((x - lo*0x20) | ((x ^ (lo * '"')) - lo) | ((x ^ (lo * '\\')) - lo) | x) & hi
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// scan reads data as one JSON value with read, then checks that nothing
// but white space follows it; the error names the dialect and what was
// read ("event").
func (s *jscan) scan(data []byte, read func() bool, dialect, what string) error {
	if s.start(data) && read() {
		s.finish()
	}
	return s.err(dialect, what)
}

// strField reads a string field into dst: null leaves it as it was.
func (s *jscan) strField(dst *jstr, parent, name string) bool {
	switch s.data[s.i] {
	case '"':
		v, ok := s.str()
		if ok {
			*dst = v
		}
		return ok
	case 'n':
		return s.lit("null")
	}
	return s.wrong(parent, name, "a string")
}

// nonEmptyField reads a string field of which only emptiness matters.
func (s *jscan) nonEmptyField(dst *bool, parent, name string) bool {
	switch s.data[s.i] {
	case '"':
		v, ok := s.str()
		if ok {
			*dst = !v.empty()
		}
		return ok
	case 'n':
		return s.lit("null")
	}
	return s.wrong(parent, name, "a string")
}

// looseStr reads a value of which only a string matters: a string into
// dst, any other value skipped (dst then as it was), as a type's own
// UnmarshalJSON that ignores what it does not take.
func (s *jscan) looseStr(dst *jstr) bool {
	if s.data[s.i] != '"' {
		return s.skip()
	}
	v, ok := s.str()
	if ok {
		*dst = v
	}
	return ok
}

// filled reads any value into dst: true for a string or an array that is
// not empty, false for any other.
func (s *jscan) filled(dst *bool) bool {
	switch s.data[s.i] {
	case '"':
		v, ok := s.str()
		*dst = ok && !v.empty()
		return ok
	case '[':
		if !s.open() {
			return false
		}
		done, ok := s.elem(true)
		*dst = ok && !done
		for ok && !done {
			if !s.skip() {
				return false
			}
			done, ok = s.elem(false)
		}
		return ok
	}
	*dst = false
	return s.skip()
}

// intField reads an integer field into dst; isNull reports a null, which
// leaves dst as it was.
func (s *jscan) intField(dst *int64, parent, name string) (isNull, ok bool) {
	switch c := s.data[s.i]; {
	case c == 'n':
		return true, s.lit("null")
	case c == '-' || c >= '0' && c <= '9':
		raw, ok := s.num()
		if !ok {
			return false, false
		}
		n, fits := parseInt(raw)
		if !fits {
			if !s.typed {
				s.typed, s.field, s.want, s.got = true, path(parent, name), "an integer", "number"
			}
			return false, true
		}
		*dst = n
		return false, true
	}
	return false, s.wrong(parent, name, "an integer")
}

// parseInt parses a JSON number as strconv.ParseInt(raw, 10, 64) does:
// false for a fraction, an exponent or an overflow.
func parseInt(raw []byte) (int64, bool) {
	neg := raw[0] == '-'
	if neg {
		raw = raw[1:]
	}
	var u uint64
	for _, c := range raw {
		if c < '0' || c > '9' {
			return 0, false
		}
		if u > (1<<63)/10 {
			return 0, false
		}
		u = u*10 + uint64(c-'0')
		if u > 1<<63 {
			return 0, false
		}
	}
	if neg {
		return -int64(u), true // -(1<<63) wraps to itself, which fits
	}
	if u > 1<<63-1 {
		return 0, false
	}
	return int64(u), true
}

// match returns the index of the field name (lower case ASCII) that key
// selects, the way encoding/json selects a struct field: the exact name,
// else a case-folded one; -1 for none.
func match(key jstr, names []string) int {
	k := key.raw
	if key.fl == 0 {
		for i, n := range names {
			if len(n) == len(k) && (string(k) == n || asciiFold(k, n)) {
				return i
			}
		}
		return -1
	}
	v := k
	if key.fl&strEscaped != 0 {
		var buf [64]byte
		v = unquote(k, buf[:0])
	}
	for i, n := range names {
		if string(v) == n {
			return i
		}
	}
	for i, n := range names {
		if foldEq(v, n) {
			return i
		}
	}
	return -1
}

// asciiFold reports whether the ASCII key k equals name but for case.
func asciiFold(k []byte, name string) bool {
	for i, c := range k {
		if upper(c) != upper(name[i]) {
			return false
		}
	}
	return true
}

func upper(c byte) byte {
	if 'a' <= c && c <= 'z' {
		return c - ('a' - 'A')
	}
	return c
}

// foldEq reports whether the key k (decoded) folds to the ASCII name as
// encoding/json folds names: ASCII letters upper-cased, any other rune
// replaced by the smallest rune of its case-fold set (so U+017F matches s,
// U+212A matches k).
func foldEq(k []byte, name string) bool {
	j := 0
	for i := 0; i < len(k); {
		var f rune
		if c := k[i]; c < utf8.RuneSelf {
			f = rune(upper(c))
			i++
		} else {
			r, n := utf8.DecodeRune(k[i:])
			f = foldRune(r)
			i += n
		}
		if f >= utf8.RuneSelf || j >= len(name) || byte(f) != upper(name[j]) {
			return false
		}
		j++
	}
	return j == len(name)
}

// foldRune is the smallest rune of r's case-fold set.
func foldRune(r rune) rune {
	for {
		r2 := unicode.SimpleFold(r)
		if r2 <= r {
			return r2
		}
		r = r2
	}
}

// unquote appends the value of the raw string s (already checked) to b,
// as encoding/json decodes it.
func unquote(s, b []byte) []byte {
	for r := 0; r < len(s); {
		c := s[r]
		switch {
		case c == '\\':
			switch e := s[r+1]; e {
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				rr := getu4(s[r:])
				r += 6
				if utf16.IsSurrogate(rr) {
					if dec := utf16.DecodeRune(rr, getu4(s[r:])); dec != unicode.ReplacementChar {
						b = utf8.AppendRune(b, dec)
						r += 6
						continue
					}
					rr = unicode.ReplacementChar
				}
				b = utf8.AppendRune(b, rr)
				continue
			default: // " \ /
				b = append(b, e)
			}
			r += 2
		case c < utf8.RuneSelf:
			b = append(b, c)
			r++
		default:
			rr, size := utf8.DecodeRune(s[r:])
			if rr == utf8.RuneError && size == 1 {
				b = utf8.AppendRune(b, utf8.RuneError)
			} else {
				b = append(b, s[r:r+size]...)
			}
			r += size
		}
	}
	return b
}

// getu4 decodes \uXXXX at the start of s, or returns -1.
func getu4(s []byte) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range s[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c = c - '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// jslice is the state of a Go slice that encoding/json decodes JSON arrays
// into: the visible length, and the elements up to the high-water mark,
// which a later array of the same key (a duplicate key) decodes into again,
// merging, even past the visible length. The first elements live inline.
type jslice[T any] struct {
	n, hw int
	inl   [2]T
	more  []T
}

// elem returns element i of the array being decoded (i counts up from 0):
// an earlier one when i is below the high-water mark, else a zero one.
func (q *jslice[T]) elem(i int) *T {
	if i >= q.hw {
		q.hw = i + 1
		var zero T
		switch j := i - len(q.inl); {
		case j < 0:
			q.inl[i] = zero
		case j < len(q.more):
			q.more[j] = zero
		default:
			q.more = append(q.more, zero)
		}
	}
	return q.at(i)
}

// end closes an array of n elements: an empty one is a new slice.
func (q *jslice[T]) end(n int) {
	q.n = n
	if n == 0 {
		q.hw = 0
	}
}

// reset is null: a nil slice.
func (q *jslice[T]) reset() { q.n, q.hw = 0, 0 }

func (q *jslice[T]) at(i int) *T {
	if i < len(q.inl) {
		return &q.inl[i]
	}
	return &q.more[i-len(q.inl)]
}

// tokenCounts is a usage object (a pointer field): two integer fields.
type tokenCounts struct {
	set     bool
	in, out int64
}

// tokens reads the usage object field parent.name with the integer fields
// names[0] (in) and names[1] (out).
func (s *jscan) tokens(u *tokenCounts, parent, name string, names []string) bool {
	p := path(parent, name)
	return pointer(s, u, &u.set, parent, name, names, func(k int) bool {
		if k == 0 {
			_, ok := s.intField(&u.in, p, names[0])
			return ok
		}
		_, ok := s.intField(&u.out, p, names[1])
		return ok
	})
}

// errorObject is an error object (a pointer field): its message.
type errorObject struct {
	set     bool
	message jstr
}

var messageFields = []string{"message"}

// errorField reads the error object field parent.name.
func (s *jscan) errorField(e *errorObject, parent, name string) bool {
	return pointer(s, e, &e.set, parent, name, messageFields, func(int) bool {
		return s.strField(&e.message, path(parent, name), "message")
	})
}

// boolField reads a boolean field into dst: null leaves it as it was.
func (s *jscan) boolField(dst *bool, parent, name string) bool {
	switch s.data[s.i] {
	case 't':
		if s.lit("true") {
			*dst = true
			return true
		}
		return false
	case 'f':
		if s.lit("false") {
			*dst = false
			return true
		}
		return false
	case 'n':
		return s.lit("null")
	}
	return s.wrong(parent, name, "a boolean")
}

// presentField reads an object field of which only presence matters (a
// pointer to a struct with no field the probe reads): an object sets dst,
// null clears it.
func (s *jscan) presentField(dst *bool, parent, name string) bool {
	st, ok := s.begin('{', parent, name, "an object")
	switch {
	case st == isNull:
		*dst = false
		return ok
	case st != isOpen || !ok:
		return ok
	}
	*dst = true
	for first := true; ; first = false {
		_, done, ok := s.member(first)
		if !ok || done {
			return ok
		}
		if !s.skip() {
			return false
		}
	}
}

// anyStr reads a field that takes any JSON value (a json.RawMessage):
// isStr reports whether it is a string, and dst holds it then.
func (s *jscan) anyStr(dst *jstr, isStr *bool) bool {
	if s.data[s.i] != '"' {
		*isStr = false
		return s.skip()
	}
	v, ok := s.str()
	*dst, *isStr = v, ok
	return ok
}

// floatField reads a number field into dst (a float64): null leaves it as
// it was, a number out of range is a type mismatch, as encoding/json has
// them.
func (s *jscan) floatField(dst *float64, parent, name string) bool {
	switch c := s.data[s.i]; {
	case c == 'n':
		return s.lit("null")
	case c == '-' || c >= '0' && c <= '9':
		raw, ok := s.num()
		if !ok {
			return false
		}
		f, err := strconv.ParseFloat(string(raw), 64)
		if err != nil {
			if !s.typed {
				s.typed, s.field, s.want, s.got = true, path(parent, name), "a number", "number"
			}
			return true
		}
		*dst = f
		return true
	}
	return s.wrong(parent, name, "a number")
}
