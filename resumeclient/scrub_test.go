package resumeclient

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

const testKey = "sk-scrub-test-0123456789abcdefghijklmnop"

// leaks reports the first piece of key (8 bytes or more from its start) that
// s shows.
func leaks(s, key string) string {
	for n := len(key); n >= 8; n-- {
		if strings.Contains(s, key[:n]) {
			return key[:n]
		}
	}
	return ""
}

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
				if p := leaks(got, testKey); p != "" {
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
		if p := leaks(got, testKey); p != "" {
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
		{"terminal escapes", "bad \x1b[31mred\x1b[0m\r\nline\x07", 0, "bad [31mred [0m line"},
		{"C1 and bidi controls", "a\u009bb\u202ec\u2066d", 0, "a b c d"},
		{"invalid UTF-8", "a\xffb", 0, "a\uFFFDb"},
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
