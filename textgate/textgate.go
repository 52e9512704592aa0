// Package textgate is the one gate for text that came from the network on
// its way to a record, a log line, a metric, a page or a report: Scrub
// redacts every secret in every form, makes control characters visible and
// bounds the text, never cutting it before the secrets are gone; Secrets,
// URLSecrets and ProxySecrets say what the secrets of a request are. It
// imports nothing of streamprobe, so every layer may use it.
package textgate

import (
	"cmp"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"unicode/utf8"
)

// Redacted replaces a secret in every text Scrub returns.
const Redacted = "[redacted]"

// minPartial is the shortest start of a secret that Scrub still redacts
// when a text ends in it (the text was cut by its producer).
const minPartial = 4

// minSecret is the shortest header or query value taken for a secret;
// minPassword the shortest password of a URL's user info.
const (
	minSecret   = 8
	minPassword = 6
)

// Scrub is the one gate for text that came from the network (a header
// value or line, a reason phrase, a content type, a body, a provider's
// message, an event id, a library's error quoting any of them) on its way
// to a record, a log, a page or a report:
//
//  1. every secret in secrets is replaced by [redacted], on the whole text
//     before it is bounded, whether it stands as it is, percent-encoded
//     (%2D), escaped as in JSON or JavaScript (\u002d, \x2d, \/), or
//     base64-encoded (as in a Basic Authorization header); a text that
//     ends in the start of a secret (its producer cut it) loses that start
//     too;
//  2. runs of white space (CR and LF included) become one space, and every
//     other control character (ESC, BEL, NUL, DEL, C1), bidi and
//     zero-width format characters and invalid UTF-8 are written as \x1b,
//     \u202e: visible, never acted on by a terminal;
//  3. the text is bounded to limit bytes, "..." marking the cut; limit <= 0
//     means no bound.
//
// Scrub of a text Scrub returned gives it back unchanged.
func Scrub(s string, secrets []string, limit int) string {
	if limit > 0 && len(s) > 8*limit+4096 {
		// Only the start can be shown: a secret cut here is a cut-off one.
		s = s[:8*limit+4096]
	}
	s = redact(s, patterns(secrets))
	s = visible(s)
	return bound(s, limit)
}

// bound cuts s to limit bytes on a rune boundary, with "..." at the cut.
func bound(s string, limit int) string {
	if limit <= 0 || len(s) <= limit {
		return s
	}
	cut := limit - len("...")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	s = s[:max(cut, 0)] + "..."
	if len(s) > limit {
		s = s[:limit]
	}
	return s
}

// pattern is one text Scrub looks for: a secret as it is, or a part of
// its base64 encoding (b64), whose whole base64 token is redacted.
type pattern struct {
	text string
	b64  bool
}

// patterns lists what Scrub looks for: each secret, and its base64
// encodings (standard and URL alphabets, at the three alignments a
// secret can have inside a longer encoded text), longest first, so that
// "Bearer KEY" is not half-replaced by "KEY".
func patterns(secrets []string) []pattern {
	var out []pattern
	for _, sec := range secrets {
		if sec == "" {
			continue
		}
		out = append(out, pattern{text: sec})
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
			for k := 0; k < 3; k++ {
				if b := stableBase64(enc, sec, k); len(b) >= minSecret {
					out = append(out, pattern{text: b, b64: true})
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b pattern) int { return cmp.Compare(len(b.text), len(a.text)) })
	return slices.Compact(out)
}

// base64Byte reports a byte of a base64 token, in either alphabet, its
// padding included.
func base64Byte(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '/' || c == '-' || c == '_' || c == '='
}

// token widens [i, j) of s to the whole base64 token around it: the edge
// groups of an encoded secret also encode some of its bytes.
func token(s string, i, j int) (int, int) {
	for i > 0 && base64Byte(s[i-1]) && s[i-1] != '=' {
		i--
	}
	for j < len(s) && base64Byte(s[j]) {
		j++
	}
	return i, j
}

// stableBase64 is the part of the base64 encoding of sec, preceded by k
// other bytes, that does not depend on those bytes or on what follows.
func stableBase64(enc *base64.Encoding, sec string, k int) string {
	pad := strings.Repeat("\x00", k)
	e := enc.EncodeToString([]byte(pad + sec))
	start := 0
	if k > 0 {
		start = 4 // the group holding the padding bytes
	}
	end := (k + len(sec)) / 3 * 4 // whole groups of sec's bytes only
	if end <= start {
		return ""
	}
	return e[start:end]
}

// redact replaces every pattern in s, and a trailing start of one, as it
// stands and as it reads once its escapes are decoded.
func redact(s string, pats []pattern) string {
	if len(pats) == 0 {
		return s
	}
	views := decodeViews(s)
	var spans [][2]int
	for _, p := range pats {
		for i := 0; ; {
			j := strings.Index(s[i:], p.text)
			if j < 0 {
				break
			}
			a, b := i+j, i+j+len(p.text)
			if p.b64 {
				a, b = token(s, a, b)
			}
			spans = append(spans, [2]int{a, b})
			i = b
		}
		for _, v := range views {
			for i := 0; ; {
				j := strings.Index(v.dec[i:], p.text)
				if j < 0 {
					break
				}
				a, b := i+j, i+j+len(p.text)
				if p.b64 {
					a, b = token(v.dec, a, b)
				}
				spans = append(spans, v.span(a, b))
				i = b
			}
		}
	}
	// A start of a secret at the end counts as one when only spaces
	// follow it: visible drops them, and the start would then end the
	// text (Scrub must give what it gives a second time).
	end := strings.TrimRightFunc(s, space)
partial:
	for _, p := range pats {
		if at, ok := trailingStart(end, p.text); ok {
			if p.b64 {
				at, _ = token(s, at, at)
			}
			spans = append(spans, [2]int{at, len(s)})
			break
		}
		for _, v := range views {
			if at, ok := trailingStart(strings.TrimRightFunc(v.dec, space), p.text); ok {
				if p.b64 {
					at, _ = token(v.dec, at, at)
				}
				spans = append(spans, [2]int{v.from[at], len(s)})
				break partial
			}
		}
	}
	if len(spans) == 0 {
		return s
	}
	slices.SortFunc(spans, func(a, b [2]int) int { return cmp.Compare(a[0], b[0]) })
	var b strings.Builder
	last := 0
	for _, sp := range spans {
		if sp[1] <= last {
			continue
		}
		if sp[0] >= last {
			b.WriteString(s[last:sp[0]])
			b.WriteString(Redacted)
		}
		last = sp[1]
	}
	b.WriteString(s[last:])
	return b.String()
}

// trailingStart reports where s ends in a start of p of at least
// minPartial bytes (shorter than p: a whole p is matched elsewhere).
func trailingStart(s, p string) (int, bool) {
	for n := min(len(p)-1, len(s)); n >= minPartial; n-- {
		if strings.HasSuffix(s, p[:n]) {
			return len(s) - n, true
		}
	}
	return 0, false
}

// view is a text with its escapes decoded, and where each decoded byte
// came from.
type view struct {
	dec     string
	from    []int // from[i]: offset in the text of the escape dec[i] is part of
	to      []int // to[i]: the end of that escape
	escaped bool  // some escape was decoded (else dec is the text)
	cut     int   // len(text) when it ends in an escape cut short; -1 none
}

// span maps decoded bytes [i, j) back to the text; a span that reaches
// the end of the decoded text runs to the end of the text when that ends
// in an escape cut short.
func (v *view) span(i, j int) [2]int {
	end := v.to[j-1]
	if j == len(v.dec) && v.cut >= 0 {
		end = v.cut
	}
	return [2]int{v.from[i], end}
}

// maxEscapeDepth is how many times over a text is decoded: an error that
// quotes (%q) a JSON text escapes its escapes once more.
const maxEscapeDepth = 3

// decodeViews returns the text decoded once, twice..., each view mapped
// back to the text, while decoding changes it.
func decodeViews(s string) []view {
	var out []view
	v := decodeView(s)
	for len(out) < maxEscapeDepth && v.escaped {
		out = append(out, v)
		w := decodeView(v.dec)
		if !w.escaped {
			break
		}
		c := view{dec: w.dec, escaped: true, cut: -1, from: make([]int, len(w.from)), to: make([]int, len(w.to))}
		for i := range w.from {
			c.from[i], c.to[i] = v.from[w.from[i]], v.to[w.to[i]-1]
		}
		if w.cut >= 0 || v.cut >= 0 {
			c.cut = len(s)
		}
		v = c
	}
	return out
}

// decodeView decodes the escapes a server may put a secret in: %XX,
// \uXXXX (a surrogate pair too), \xXX and JSON's one-letter escapes.
func decodeView(s string) view {
	v := view{cut: -1}
	if !strings.ContainsAny(s, `%\`) {
		v.dec = s
		return v
	}
	var b strings.Builder
	add := func(p string, from, to int) {
		for i := 0; i < len(p); i++ {
			v.from, v.to = append(v.from, from), append(v.to, to)
		}
		b.WriteString(p)
	}
	for i := 0; i < len(s); {
		n, p := escape(s[i:])
		if n < 0 {
			// An escape cut off by the end of the text.
			v.cut, v.escaped = len(s), true
			break
		}
		if n > 0 {
			v.escaped = true
			add(p, i, i+n)
			i += n
			continue
		}
		add(s[i:i+1], i, i+1)
		i++
	}
	v.dec = b.String()
	return v
}

// escape decodes the escape s starts with: its length and what it stands
// for; 0 when s starts with none, -1 when s is the start of one cut off.
func escape(s string) (int, string) {
	switch s[0] {
	case '%':
		return percentEscape(s)
	case '\\':
		return backslashEscape(s)
	}
	return 0, ""
}

// percentEscape decodes %XX.
func percentEscape(s string) (int, string) {
	if len(s) < 3 {
		if len(s) == 1 || isHex(s[1]) {
			return -1, ""
		}
		return 0, ""
	}
	if isHex(s[1]) && isHex(s[2]) {
		return 3, string([]byte{unhex(s[1])<<4 | unhex(s[2])})
	}
	return 0, ""
}

// backslashEscape decodes JSON's and JavaScript's escapes: the one-letter
// ones, \xXX and \uXXXX.
func backslashEscape(s string) (int, string) {
	if len(s) < 2 {
		return -1, ""
	}
	switch s[1] {
	case '"', '\\', '/', '\'':
		return 2, s[1:2]
	case 'b', 'f', 'n', 'r', 't':
		return 2, map[byte]string{'b': "\b", 'f': "\f", 'n': "\n", 'r': "\r", 't': "\t"}[s[1]]
	case 'x':
		if hexRun(s[2:], 2) {
			return 4, string([]byte{unhex(s[2])<<4 | unhex(s[3])})
		}
		if len(s) < 4 && hexRun(s[2:], len(s)-2) {
			return -1, ""
		}
	case 'u':
		return unicodeEscape(s)
	}
	return 0, ""
}

// unicodeEscape decodes \uXXXX, and a surrogate pair written as two.
func unicodeEscape(s string) (int, string) {
	if !hexRun(s[2:], 4) {
		if len(s) < 6 && hexRun(s[2:], len(s)-2) {
			return -1, ""
		}
		return 0, ""
	}
	r := rune(hex4(s[2:6]))
	if r >= 0xd800 && r < 0xdc00 && len(s) >= 12 && s[6] == '\\' && s[7] == 'u' && hexRun(s[8:], 4) {
		if lo := rune(hex4(s[8:12])); lo >= 0xdc00 && lo < 0xe000 {
			return 12, string((r-0xd800)<<10 | (lo - 0xdc00) + 0x10000)
		}
	}
	return 6, string(r)
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

func hexRun(s string, n int) bool {
	if len(s) < n {
		return false
	}
	for i := 0; i < n; i++ {
		if !isHex(s[i]) {
			return false
		}
	}
	return true
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

func hex4(s string) int {
	return int(unhex(s[0]))<<12 | int(unhex(s[1]))<<8 | int(unhex(s[2]))<<4 | int(unhex(s[3]))
}

// visible folds runs of white space into one space (none at the ends) and
// writes every other character a terminal would act on, or that hides
// what follows it, as an escape.
func visible(s string) string {
	clean := true
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || space(r) || hidden(r) {
			clean = false
			break
		}
		i += n
	}
	if clean {
		return s
	}
	var b strings.Builder
	gap := false
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if space(r) {
			gap = true
			i += n
			continue
		}
		if gap && b.Len() > 0 {
			b.WriteByte(' ')
		}
		gap = false
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r < 0x80 && hidden(r), r >= 0x80 && r <= 0x9f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case hidden(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// space reports the white space Scrub folds into one space.
func space(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\v', '\f', '\r', 0x85, 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000:
		return true
	}
	return r >= 0x2000 && r <= 0x200a
}

// hidden reports a character Scrub writes as an escape: the other control
// characters (C0, DEL, C1), the bidi controls that reorder what a
// terminal shows, and zero-width characters that hide.
func hidden(r rune) bool {
	switch {
	case r < ' ', r >= 0x7f && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r >= 0x200b && r <= 0x200f, r == 0x061c, r == 0xfeff:
		return true
	}
	return false
}

// URLSecrets lists what a URL may carry as a secret: its query values (an
// API key in ?key=...), the password of its user info and that user info
// whole (as Basic authorization sends it), for Scrub.
func URLSecrets(raw string) []string {
	u, err := url.Parse(raw)
	if err != nil {
		return nil
	}
	var out []string
	// The pairs are read in place (url.Query builds a map for each URL a
	// run opens); a pair that url.ParseQuery would refuse (a semicolon, a
	// bad escape) is still read: it may carry a key all the same.
	for q := u.RawQuery; q != ""; {
		var pair string
		pair, q, _ = strings.Cut(q, "&")
		if strings.Contains(pair, ";") {
			// A server that does not split on ";" takes all of it.
			out = appendQueryValue(out, pair)
		}
		for pair != "" {
			var part string
			part, pair, _ = strings.Cut(pair, ";")
			out = appendQueryValue(out, part)
		}
	}
	return append(out, UserSecrets(u.User)...)
}

// appendQueryValue appends the value of a key=value pair, unescaped,
// when it is long enough to be a secret.
func appendQueryValue(out []string, pair string) []string {
	_, v, _ := strings.Cut(pair, "=")
	if dv, err := url.QueryUnescape(v); err == nil {
		v = dv
	}
	if len(v) >= minSecret {
		out = append(out, v)
	}
	return out
}

// UserSecrets lists what a URL's user info carries as a secret: its
// password and user:password (as Basic authorization sends it), when the
// password is long enough to be one.
func UserSecrets(u *url.Userinfo) []string {
	p, ok := u.Password()
	if !ok || len(p) < minPassword {
		return nil
	}
	return []string{p, u.Username() + ":" + p}
}

// ProxySecrets lists the credentials of the proxies the environment names
// (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY, in either case): a proxy may echo
// them in its answer.
func ProxySecrets() []string {
	var out []string
	for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"} {
		if v := os.Getenv(k); v != "" {
			if !strings.Contains(v, "://") {
				v = "http://" + v
			}
			if u, err := url.Parse(v); err == nil {
				out = append(out, UserSecrets(u.User)...)
			}
		}
	}
	return out
}

// Secrets lists the secret values of a request's headers, and any extra
// ones, for Scrub: every header value of 8 bytes or more, the token after
// its first space ("Bearer KEY" gives KEY too), and what a Basic value
// decodes to (user:password, and the password). Accept, Cache-Control,
// Content-Type, Last-Event-ID and X-Request-Id are not secret.
func Secrets(h http.Header, extra ...string) []string {
	var out []string
	for k, vs := range h {
		switch http.CanonicalHeaderKey(k) {
		case "Accept", "Accept-Encoding", "Cache-Control", "Content-Type", "Last-Event-Id", "X-Request-Id",
			"Mcp-Method", "Mcp-Protocol-Version": // MCP's method and version, never a secret (Mcp-Name may be a task's id)
			continue
		}
		for _, v := range vs {
			if len(v) >= minSecret {
				out = append(out, v)
			}
			scheme, tok, ok := strings.Cut(v, " ")
			if ok && len(tok) >= minSecret {
				out = append(out, tok)
			}
			if ok && strings.EqualFold(scheme, "AWS4-HMAC-SHA256") {
				out = append(out, sigV4Secrets(tok)...)
			}
			if ok && strings.EqualFold(scheme, "Basic") {
				if b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(tok)); err == nil {
					if user, pass, ok := strings.Cut(string(b), ":"); ok {
						out = append(out, UserSecrets(url.UserPassword(user, pass))...)
					}
				}
			}
		}
	}
	for _, v := range extra {
		if len(v) >= minSecret {
			out = append(out, v)
		}
	}
	return out
}

// sigV4Secrets are the parts of an AWS SigV4 Authorization value that a
// server may echo apart: the access key id (the first part of
// Credential=) and the signature.
func sigV4Secrets(v string) []string {
	var out []string
	for _, f := range strings.Split(v, ",") {
		k, val, _ := strings.Cut(strings.TrimSpace(f), "=")
		switch k {
		case "Credential":
			if id, _, _ := strings.Cut(val, "/"); len(id) >= minSecret {
				out = append(out, id)
			}
		case "Signature":
			if len(val) >= minSecret {
				out = append(out, val)
			}
		}
	}
	return out
}

// RedactURL is a URL as an error or a report may show it: scheme, host
// and path, without user info, query or fragment (each may carry a key).
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(an unparsable URL)"
	}
	u.User, u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = nil, "", false, "", ""
	return u.String()
}
