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
func boundMessage(t Target, m string) string {
	return textgate.Scrub(m, textgate.Secrets(t.Header, textgate.URLSecrets(t.URL)...), MaxMessage)
}
