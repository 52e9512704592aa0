package textgate

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/streamprobe/streamprobe/internal/testenv/leak"
)

const testKey = "sk-scrub-test-0123456789abcdefghijklmnop"

// A key at every offset around the cut, alone or after "Bearer ", never
// shows, not even its first bytes: it is replaced before the text is
// bounded.
func TestScrubBeforeTheCut(t *testing.T) {
	secrets := Secrets(http.Header{"Authorization": {"Bearer " + testKey}})
	for _, limit := range []int{64, 128, 200} {
		for off := limit - len(testKey) - 16; off <= limit+4; off++ {
			for _, echo := range []string{testKey, "Bearer " + testKey} {
				in := strings.Repeat("x", max(off, 0)) + echo + " tail"
				got := Scrub(in, secrets, limit)
				if p := leak.Prefix(got, testKey); p != "" {
					t.Fatalf("limit %d offset %d: %q shows %q", limit, off, got, p)
				}
				if len(got) > limit {
					t.Fatalf("limit %d offset %d: %d bytes", limit, off, len(got))
				}
			}
		}
	}
}

// A text that its producer already cut (an error body read up to n bytes)
// and that ends inside a key loses that start of the key too.
func TestScrubCutOffKey(t *testing.T) {
	secrets := Secrets(http.Header{"X-Api-Key": {testKey}})
	body := "invalid x-api-key: " + testKey + "\n"
	for n := 1; n <= len(body); n++ {
		got := Scrub(body[:n], secrets, 0)
		if p := leak.Prefix(got, testKey); p != "" {
			t.Fatalf("body cut at %d: %q shows %q", n, got, p)
		}
	}
}

func TestScrubText(t *testing.T) {
	tests := []struct {
		name, in string
		limit    int
		want     string
	}{
		{"terminal escapes", "bad \x1b[31mred\x1b[0m\r\nline\x07", 0, `bad \x1b[31mred\x1b[0m line\x07`},
		{"OSC title", "id\x1b]0;pwned\x07\x1b[2J", 0, `id\x1b]0;pwned\x07\x1b[2J`},
		{"C1, bidi and zero-width", "a\u009bb\u202ec\u2066d\u200be", 0, `a\x9bb\u202ec\u2066d\u200be`},
		{"NUL and DEL", "a\x00b\x7f", 0, `a\x00b\x7f`},
		{"invalid UTF-8", "a\xffb", 0, `a\xffb`},
		{"white space runs", "  a \t\n b  ", 0, "a b"},
		{"rune boundary", "ab€€€", 8, "ab€..."},
		{"no room", "abcdef", 2, ".."},
		{"short enough", "abc", 3, "abc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Scrub(tt.in, nil, tt.limit)
			if got != tt.want {
				t.Errorf("Scrub(%q, %d) = %q, want %q", tt.in, tt.limit, got, tt.want)
			}
			if !utf8.ValidString(got) {
				t.Errorf("%q is not valid UTF-8", got)
			}
		})
	}
}

func TestSecrets(t *testing.T) {
	h := http.Header{}
	h.Set("Authorization", "Bearer "+testKey)
	h.Set("X-Api-Key", "short")
	h.Set("Content-Type", "application/json")
	h.Set("X-Request-Id", "0123456789abcdef")
	h.Set("Api-Key", "a-longer-key")
	got := Secrets(h, "extra-secret", "tiny")
	slices.Sort(got)
	want := []string{"Bearer " + testKey, "a-longer-key", "extra-secret", testKey}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("Secrets = %q, want %q", got, want)
	}
}

// A key in every encoding, at every offset around the cut, with and
// without "Bearer ", and cut off by the text's end at every byte, never
// shows.
func TestScrubEveryEncoding(t *testing.T) {
	secrets := Secrets(http.Header{"Authorization": {"Bearer " + testKey}})
	for name, enc := range leak.Encodings {
		t.Run(name, func(t *testing.T) {
			for _, echo := range []string{enc(testKey), enc("Bearer " + testKey)} {
				for _, limit := range []int{64, 128} {
					for off := limit - len(echo) - 16; off <= limit+4; off++ {
						in := strings.Repeat("x", max(off, 0)) + echo + " tail"
						got := Scrub(in, secrets, limit)
						if p := leak.Any(got, testKey); p != "" {
							t.Fatalf("limit %d offset %d: %q shows %q", limit, off, got, p)
						}
						if len(got) > limit {
							t.Fatalf("limit %d offset %d: %d bytes", limit, off, len(got))
						}
					}
				}
				if name == "base64 offset 1" || name == "base64url offset 2" {
					continue // a cut-off base64 text has no start of the key to find
				}
				body := "error: " + echo
				for n := len("error: ") + 1; n <= len(body); n++ {
					got := Scrub(body[:n], secrets, 0)
					if p := leak.Prefix(got, testKey); p != "" && len(p) >= 8 {
						t.Fatalf("cut at %d: %q shows %q", n, got, p)
					}
					if p := leak.Prefix(decodeView(got).dec, testKey); p != "" {
						t.Fatalf("cut at %d: %q shows %q once decoded", n, got, p)
					}
				}
			}
			got := Scrub("before "+enc(testKey)+" after", secrets, 0)
			if !strings.Contains(got, Redacted) || !strings.HasPrefix(got, "before ") || !strings.HasSuffix(got, " after") {
				t.Errorf("%q: want the key alone replaced", got)
			}
		})
	}
}

// Basic credentials (a proxy's, a URL's user info) are secret as
// user:password, as the password, and base64-encoded.
func TestScrubBasicCredentials(t *testing.T) {
	const user, pass = "probe", "s3cret-proxy-pass"
	for _, secrets := range [][]string{
		URLSecrets("http://" + user + ":" + pass + "@proxy.example:3128"),
		Secrets(http.Header{"Proxy-Authorization": {"Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))}}),
	} {
		for _, echo := range []string{pass, user + ":" + pass, base64.StdEncoding.EncodeToString([]byte(user + ":" + pass)), url.QueryEscape(user + ":" + pass)} {
			got := Scrub("407 denied for "+echo, secrets, 0)
			if strings.Contains(got, pass) || strings.Contains(got, echo) {
				t.Errorf("secrets %q: %q shows the credentials", secrets, got)
			}
		}
	}
}

func TestProxySecrets(t *testing.T) {
	t.Setenv("HTTPS_PROXY", "http://u:proxy-password-1@proxy.example:3128")
	t.Setenv("http_proxy", "proxy.example:3128") // no credentials, no scheme
	got := ProxySecrets()
	if !slices.Contains(got, "proxy-password-1") || !slices.Contains(got, "u:proxy-password-1") {
		t.Errorf("ProxySecrets = %q", got)
	}
}

// Scrub of its own output changes nothing: the renderers and the record
// gate may both pass a text through it.
func TestScrubIsIdempotent(t *testing.T) {
	secrets := Secrets(http.Header{"Authorization": {"Bearer " + testKey}})
	for _, in := range []string{
		"plain", "bad \x1b[31mred\r\n\u202e" + testKey, "a\xffb\u200b" + url.QueryEscape(testKey),
		strings.Repeat("é", 100) + testKey, `\x1b \u202e %2D \u002d`,
	} {
		for _, limit := range []int{0, 16, 64} {
			once := Scrub(in, secrets, limit)
			if twice := Scrub(once, secrets, limit); twice != once {
				t.Errorf("Scrub(%q, %d): %q, then %q", in, limit, once, twice)
			}
		}
	}
}

// A huge text costs no more than its shown start.
func TestScrubHugeText(t *testing.T) {
	in := strings.Repeat("a", 50<<20) + testKey
	got := Scrub(in, []string{testKey}, 256)
	if len(got) > 256 {
		t.Fatalf("%d bytes", len(got))
	}
}

func FuzzScrub(f *testing.F) {
	f.Add("error: "+testKey, 64)
	f.Add("%2D\\u002d\\x2d\x1b[2J\u202e", 8)
	f.Add(base64.StdEncoding.EncodeToString([]byte("x"+testKey)), 0)
	secrets := Secrets(http.Header{"Authorization": {"Bearer " + testKey}})
	f.Fuzz(func(t *testing.T, s string, limit int) {
		limit %= 512
		got := Scrub(s, secrets, limit)
		if limit > 0 && len(got) > limit {
			t.Fatalf("%d bytes over the limit %d", len(got), limit)
		}
		if !utf8.ValidString(got) {
			t.Fatalf("%q is not valid UTF-8", got)
		}
		for _, r := range got {
			if r < ' ' || r == 0x7f || (r >= 0x80 && r <= 0x9f) || r == 0x202e {
				t.Fatalf("%q keeps the control %U", got, r)
			}
		}
		if strings.Contains(got, testKey) {
			t.Fatalf("%q shows the key", got)
		}
		if again := Scrub(got, secrets, limit); again != got {
			t.Fatalf("not idempotent: %q then %q", got, again)
		}
	})
}

// URLSecrets reads every query value long enough to be a key, unescaped,
// including pairs url.ParseQuery refuses, and the user info's password.
func TestURLSecrets(t *testing.T) {
	got := URLSecrets("https://bob:hunter2-long-pass@api.example/v1?key=sk-AAAA%2BBBBCCCCDDDD&short=ab;token=tok-0123456789abcdef&x&bad=%zz-0123456789abcdef&k=")
	want := []string{"sk-AAAA+BBBCCCCDDDD", "ab;token=tok-0123456789abcdef", "tok-0123456789abcdef", "%zz-0123456789abcdef", "hunter2-long-pass", "bob:hunter2-long-pass"}
	if !slices.Equal(got, want) {
		t.Fatalf("URLSecrets = %q, want %q", got, want)
	}
	if got := URLSecrets("http://api.example/v1"); got != nil {
		t.Errorf("no query, no user: %q", got)
	}
	if got := URLSecrets("http://%zz/"); got != nil {
		t.Errorf("a URL that does not parse: %q", got)
	}
}

// A base64 text that encodes a secret, at each of the three alignments
// and in both alphabets, with any bytes before and after it, is redacted
// as a whole token: its edge groups also encode bytes of the secret
// ("Basic [redacted]OTk=" showed a password's last two bytes,
// "dTpz[redacted]" a key's first byte).
func TestScrubBase64WholeToken(t *testing.T) {
	const key = "sk-b64-0123456789abcdef-99"
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding} {
		for _, before := range []string{"", "u:", "ab", "user:", "x"} {
			for _, after := range []string{"", "9", "!!", ":tail"} {
				token := enc.EncodeToString([]byte(before + key + after))
				for _, text := range []string{"Basic " + token, "auth=" + token + "; next", token} {
					got := Scrub(text, []string{key}, 0)
					if strings.Count(got, Redacted) != 1 {
						t.Errorf("%q -> %q: want one redaction", text, got)
						continue
					}
					// Nothing of the token is left: every base64 byte
					// around the redaction is gone.
					i := strings.Index(got, Redacted)
					left, right := got[:i], got[i+len(Redacted):]
					if l := strings.TrimRight(left, b64Alphabet); l != left && !strings.HasSuffix(text[:len(left)], " ") {
						t.Errorf("%q -> %q: base64 bytes %q left before the redaction", text, got, left[len(l):])
					}
					if r := strings.TrimLeft(right, b64Alphabet+"="); r != right {
						t.Errorf("%q -> %q: base64 bytes %q left after the redaction", text, got, right[:len(right)-len(r)])
					}
				}
			}
		}
	}
	// A base64 text that encodes no secret is left alone.
	if got := Scrub("Basic "+base64.StdEncoding.EncodeToString([]byte("user:other")), []string{key}, 0); strings.Contains(got, Redacted) {
		t.Errorf("an unrelated token was redacted: %q", got)
	}
}

const b64Alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_"

// A SigV4 Authorization value's access key id and signature are secrets
// on their own: a server that echoes one of them gets it redacted.
func TestSecretsSigV4Parts(t *testing.T) {
	const id, sig = "AKIAEXAMPLEKEYID0001", "5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7"
	h := http.Header{}
	h.Set("Authorization", "AWS4-HMAC-SHA256 Credential="+id+"/20260101/us-east-1/bedrock/aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature="+sig)
	got := Scrub("key "+id+" signed "+sig, Secrets(h), 200)
	if strings.Contains(got, id) || strings.Contains(got, sig) || got != "key [redacted] signed [redacted]" {
		t.Errorf("%q", got)
	}
}
