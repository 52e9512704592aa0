package probe

import "github.com/streamprobe/streamprobe/textgate"

// MaxMessage bounds a provider's error message kept from the stream, in
// bytes.
const MaxMessage = 200

// boundMessage makes a provider's error message safe to keep: every secret
// of the target's headers is redacted before the message is cut to
// MaxMessage bytes, and it is one line of printable text.
func boundMessage(t Target, m string) string {
	return textgate.Scrub(m, textgate.Secrets(t.Header, textgate.URLSecrets(t.URL)...), MaxMessage)
}
