package resumeclient

import (
	"cmp"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"
)

// Redacted replaces a secret in every text Scrub returns.
const Redacted = "[redacted]"

// minPartial is the shortest start of a secret that Scrub still redacts
// when a text ends in it (the text was cut by its producer).
const minPartial = 4

// Scrub makes a text that came from a server safe to show: every secret in
// secrets is replaced by [redacted] first, on the whole text, so no
// truncation can leave part of one (and a secret whose start ends s, s being
// a cut-off prefix of a longer text, is redacted too); then invalid UTF-8
// becomes U+FFFD, control characters (ESC, CR, LF, C1, bidi overrides) and
// runs of white space become one space; then the text is bounded to limit
// bytes on a rune boundary, "..." marking the cut. limit <= 0 means no
// bound.
func Scrub(s string, secrets []string, limit int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = redact(s, secrets)
	s = strings.Join(strings.FieldsFunc(s, unsafeRune), " ")
	if limit > 0 && len(s) > limit {
		cut := limit - len("...")
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:max(cut, 0)] + "..."
		if len(s) > limit {
			s = s[:limit]
		}
	}
	return s
}

// redact replaces every secret in s, the longest first (so "Bearer KEY" is
// not half-replaced by "KEY"), then a trailing start of one.
func redact(s string, secrets []string) string {
	secrets = slices.Clone(secrets)
	slices.SortFunc(secrets, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	for _, sec := range secrets {
		if sec != "" {
			s = strings.ReplaceAll(s, sec, Redacted)
		}
	}
	for _, sec := range secrets {
		for n := len(sec) - 1; n >= minPartial; n-- {
			if strings.HasSuffix(s, sec[:n]) {
				s = s[:len(s)-n] + Redacted
				break
			}
		}
	}
	return s
}

// unsafeRune reports whether r may not be shown as it is: white space,
// control characters (C0, DEL, C1) and the bidi controls that reorder what
// a terminal shows.
func unsafeRune(r rune) bool {
	switch {
	case r <= ' ', r >= 0x7f && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
		return true
	case r == 0x85, r == 0xa0, r == 0x2028, r == 0x2029, r == 0x3000, r >= 0x2000 && r <= 0x200a:
		return true
	}
	return false
}

// URLSecrets lists what a URL may carry as a secret: its query values and
// the password of its user info (an API key in ?key=...), for Scrub.
func URLSecrets(raw string) []string {
	u, err := url.Parse(raw)
	if err != nil {
		return nil
	}
	var out []string
	for _, vs := range u.Query() {
		for _, v := range vs {
			if len(v) >= 8 {
				out = append(out, v)
			}
		}
	}
	if p, ok := u.User.Password(); ok && len(p) >= 8 {
		out = append(out, p)
	}
	return out
}

// Secrets lists the secret values of a request's headers, and any extra
// ones, for Scrub: every header value of 8 bytes or more, and the token
// after its first space ("Bearer KEY" gives KEY too). Accept,
// Cache-Control, Content-Type and X-Request-Id are not secret.
func Secrets(h http.Header, extra ...string) []string {
	var out []string
	for k, vs := range h {
		switch http.CanonicalHeaderKey(k) {
		case "Accept", "Cache-Control", "Content-Type", "X-Request-Id":
			continue
		}
		for _, v := range vs {
			if len(v) >= 8 {
				out = append(out, v)
			}
			if _, tok, ok := strings.Cut(v, " "); ok && len(tok) >= 8 {
				out = append(out, tok)
			}
		}
	}
	for _, v := range extra {
		if len(v) >= 8 {
			out = append(out, v)
		}
	}
	return out
}
