// Package leak finds a secret, or a piece of one, in a text that an output
// shows: the check of every test that keeps keys out of records, logs,
// metrics, pages and errors.
package leak

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// MinPiece is the shortest start of a key that Prefix reports, and the
// shortest piece of an encoded key that Any reports.
const MinPiece = 8

// Prefix returns the longest start of key, MinPiece bytes or more, that s
// shows, or "".
func Prefix(s, key string) string {
	for n := len(key); n >= MinPiece; n-- {
		if strings.Contains(s, key[:n]) {
			return key[:n]
		}
	}
	return ""
}

// Encodings are the forms a server may echo a secret in.
var Encodings = map[string]func(string) string{
	"raw":     func(s string) string { return s },
	"percent": func(s string) string { return strings.NewReplacer("-", "%2D").Replace(s) },
	"percent every byte": func(s string) string {
		var b strings.Builder
		for i := 0; i < len(s); i++ {
			fmt.Fprintf(&b, "%%%02x", s[i])
		}
		return b.String()
	},
	"query": url.QueryEscape,
	"json":  func(s string) string { return strings.NewReplacer("-", `\u002d`).Replace(s) },
	"json full": func(s string) string {
		b, _ := json.Marshal(s)
		return strings.Trim(strings.ReplaceAll(string(b), "-", `\u002D`), `"`)
	},
	"js hex": func(s string) string { return strings.NewReplacer("-", `\x2d`).Replace(s) },
	"quoted json": func(s string) string {
		// An error that quotes (%q) a JSON text escapes its escapes again.
		return strings.Trim(strconv.Quote(strings.NewReplacer("-", `\u002d`).Replace(s)), `"`)
	},
	"base64": func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) },
	"base64 offset 1": func(s string) string {
		return base64.StdEncoding.EncodeToString([]byte("a" + s + "z"))
	},
	"base64url offset 2": func(s string) string {
		return base64.URLEncoding.EncodeToString([]byte("ab" + s + "yz"))
	},
}

// Any returns a piece of key that s shows in any of Encodings ("" when
// none): MinPiece bytes or more of the key's start as it is, or 12 bytes
// or more of an encoded form's start (of base64, the part that encodes the
// key alone).
func Any(s, key string) string {
	if p := Prefix(s, key); p != "" {
		return p
	}
	for name, enc := range Encodings {
		e := enc(key)
		if name == "raw" {
			continue
		}
		if strings.HasPrefix(name, "base64") {
			e = base64.StdEncoding.EncodeToString([]byte(key))
			e = e[:len(e)-4]
		}
		for n := len(e); n >= 12; n-- {
			if strings.Contains(s, e[:n]) {
				return name + ": " + e[:n]
			}
		}
	}
	return ""
}
