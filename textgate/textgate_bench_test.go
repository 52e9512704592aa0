package textgate

import (
	"strings"
	"testing"
)

// BenchmarkScrubEscaped is the gate on an error body that quotes the
// request's key in every escape Scrub decodes: percent, JSON \u and \x,
// one-letter escapes, and a surrogate pair.
func BenchmarkScrubEscaped(b *testing.B) {
	const key = "sk-bench-0123456789abcdef"
	body := strings.Repeat(`{"error":{"message":"bad key sk%2Dbench%2D0123456789abcdef \u0073k-bench-0123456789abcdef \x73k-bench \"quoted\"\n\/path \ud83d\ude00"}} `, 8)
	secrets := []string{key}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for range b.N {
		if s := Scrub(body, secrets, 0); strings.Contains(s, "0123456789abcdef") {
			b.Fatalf("key not redacted: %s", s)
		}
	}
}
