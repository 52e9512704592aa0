package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/streamprobe/streamprobe/internal/hostile"
)

// walkKey is the key every hostile run carries, as a bearer token.
const walkKey = "sk-walk-0123456789abcdefghijklmnopqrstuv"

// shownKey returns a piece of the key (12 bytes or more of any of its
// encodings) that out shows, read as it is and with JSON's escapes of
// backslashes undone; "" when none.
func shownKey(out string) string {
	texts := []string{out, strings.ReplaceAll(out, `\\`, `\`)}
	for name, enc := range hostile.Encodings {
		e := enc(walkKey)
		if name == "base64" {
			e = e[:len(e)-4] // the last group depends on what follows
		}
		for _, text := range texts {
			for n := len(e); n >= 12; n-- {
				for i := 0; i+n <= len(e); i += max(1, n/2) {
					if strings.Contains(text, e[i:i+n]) {
						return name + ": " + e[i:i+n]
					}
				}
			}
		}
	}
	return ""
}

// cuts are the caps a hostile echo is placed around: an id in a detail,
// a body snippet and a header value in an error, a provider's message,
// an id, an error, a detail.
var cuts = []int{64, 128, 200, 256, 512, 1024}

// pads are the paddings that put the key across each cut, wherever the
// output's own prefix puts the echo.
func pads() []int {
	var out []int
	for _, c := range cuts {
		for p := c - len(walkKey) - 48; p <= c+8; p += 7 {
			out = append(out, max(p, 0))
		}
	}
	return out
}

// walkArgs are the once flags that take a run to each place's echo: a
// resume from the echoed id (by the server's drop, a drill's), a stale
// drill answered by the echoed header; each twice, for text and JSON.
func walkArgs(place string) [][]string {
	var sets [][]string
	switch place {
	case hostile.EventID, hostile.Everywhere:
		sets = [][]string{{"-dialect", "sse", "-ids", "opaque"}, {"-dialect", "sse", "-ids", "opaque", "-drill", "duplicate", "-drop-after", "2"}}
	case hostile.StaleHeader:
		sets = [][]string{{"-dialect", "sse", "-drill", "stale", "-drop-after", "2"}}
	default:
		sets = [][]string{{"-dialect", "openai-chat"}}
	}
	var out [][]string
	for _, s := range sets {
		out = append(out, s, s)
	}
	return out
}

// once, text and JSON, against the key echoed in every place and every
// encoding, at every offset around each cut: neither stdout nor stderr
// shows a piece of it, and every line is free of control characters.
func TestOnceHostileWalk(t *testing.T) {
	srv, err := hostile.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	t.Setenv("WALK_KEY", walkKey)
	for _, place := range hostile.Places {
		if place == hostile.PushAnswer {
			continue
		}
		for enc := range hostile.Encodings {
			t.Run(place+"/"+enc, func(t *testing.T) {
				for _, pad := range pads() {
					for i, extra := range walkArgs(place) {
						asJSON := i%2 == 1
						args := append([]string{"once", "-url", fmt.Sprintf("%s/%s/%s/%d/v1/chat/completions", srv.URL, place, enc, pad),
							"-bearer-env", "WALK_KEY", "-timeout", "5s"}, extra...)
						if asJSON {
							args = append(args, "-json")
						}
						_, stdout, stderr := runCmd(t, args...)
						if p := shownKey(stdout + stderr); p != "" {
							t.Fatalf("pad %d json %v: the output shows %q:\n%s%s", pad, asJSON, p, stdout, stderr)
						}
						if strings.ContainsAny(stdout+stderr, "\x1b\x07\r") {
							t.Fatalf("pad %d: control characters in the output", pad)
						}
						if asJSON {
							var rec map[string]any
							if err := json.Unmarshal([]byte(stdout), &rec); err != nil {
								t.Fatalf("pad %d: %v: %q", pad, err, stdout)
							}
							if len(stdout) > 256<<10 {
								t.Fatalf("pad %d: a %d-byte record", pad, len(stdout))
							}
						}
					}
				}
			})
		}
	}
}
