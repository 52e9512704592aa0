package dialect

import "github.com/streamprobe/streamprobe/textgate"

// MaxMessage bounds a provider's error message kept from the stream, in
// bytes.
const MaxMessage = 200

// MaxDetailID bounds an id, or another short string of the server's (a
// protocol version), quoted inside a detail or an error, in bytes.
const MaxDetailID = 64

// Tokens are the token counts a provider reported.
type Tokens struct {
	Prompt     int `json:"prompt"`
	Completion int `json:"completion"`
}

// The stale drill's default cursors: one no server can know.
const (
	// DefaultStaleID is the stale drill's event id (Last-Event-ID).
	DefaultStaleID = "streamprobe-stale-id-0"
	// DefaultStaleCursor is the stale drill's cursor for dialects that
	// resume by a sequence number: far ahead of any stream.
	DefaultStaleCursor = "999999999"
)

// boundMessage makes a provider's error message safe to keep: every secret
// of the target's headers is redacted before the message is cut to
// MaxMessage bytes, and it is one line of printable text.
func boundMessage(t Target, m string) string { return bounded(t, m, MaxMessage) }

// bounded is a string of the server's as a message may quote it: every
// secret of the target (its headers, its URL, the environment's proxies)
// redacted first, then cut to limit bytes of one printable line. No cut
// ever comes before the scrub: a key cut in half is no longer a key the
// gate can find.
func bounded(t Target, s string, limit int) string {
	return textgate.Scrub(s, textgate.Secrets(t.Header, append(textgate.URLSecrets(t.URL), textgate.ProxySecrets()...)...), limit)
}
