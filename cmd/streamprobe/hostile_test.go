package main

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/streamprobe/streamprobe/internal/testenv/hostile"
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
	case hostile.MCPVersion:
		sets = [][]string{{"-dialect", "mcp"}}
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

// walkConfig is a config with one target per place and encoding of the
// hostile server (resume drills where the place needs one), the key from
// WALK_KEY, and extra (the daemon's settings).
func walkConfig(srv *hostile.Server, pad int, extra string) string {
	var b strings.Builder
	b.WriteString(extra)
	for _, place := range hostile.Places {
		if place == hostile.PushAnswer {
			continue
		}
		for _, enc := range []string{"raw", "percent", "json", "base64"} {
			dialect, drills := "openai-chat", ""
			switch place {
			case hostile.EventID, hostile.Everywhere:
				dialect, drills = "sse", `drills = ["duplicate"]`+"\nids = \"opaque\"\ndrop_after = 2\n"
			case hostile.StaleHeader:
				dialect, drills = "sse", `drills = ["stale"]`+"\ndrop_after = 2\n"
			case hostile.MCPVersion:
				dialect = "mcp"
			}
			fmt.Fprintf(&b, "[[target]]\nname = %q\nurl = \"%s/%s/%s/%d/v1/chat/completions\"\ndialect = %q\nbearer_env = \"WALK_KEY\"\nsamples = [\"short\"]\n%severy = \"1h\"\njitter = \"0s\"\ntimeout = \"5s\"\n",
				place+"-"+enc, srv.URL, place, enc, pad, dialect, drills)
		}
	}
	return b.String()
}

// pushEcho is a push endpoint that keeps what it was sent and answers
// 500 with a body that echoes the push's Authorization token, in each
// encoding in turn.
type pushEcho struct {
	mu     sync.Mutex
	bodies []string
	n      int
}

func (p *pushEcho) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		if zr, err := gzip.NewReader(r.Body); err == nil {
			body = zr
		}
	}
	b, _ := io.ReadAll(body)
	p.mu.Lock()
	p.bodies = append(p.bodies, string(b))
	encs := []string{"raw", "percent", "json", "base64"}
	enc := hostile.Encodings[encs[p.n%len(encs)]]
	p.n++
	p.mu.Unlock()
	w.WriteHeader(http.StatusInternalServerError)
	fmt.Fprintf(w, `{"error":"bad token %s"}`, enc(hostile.Secret(r)))
}

// Every output of the daemon (its log, the results log, /, /healthz,
// /metrics, what it pushes), then of check and report over what it
// measured, in every format they write, shows no piece of the key echoed
// in every place and encoding (the push token too), and no control
// character.
func TestHostileWalkEveryOutput(t *testing.T) {
	srv, err := hostile.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	push := &pushEcho{}
	pushSrv := httptest.NewServer(push)
	defer pushSrv.Close()
	t.Setenv("WALK_KEY", walkKey)
	t.Setenv("WALK_PUSH", "Bearer "+walkKey)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	listen := ln.Addr().String()
	ln.Close()
	for _, pad := range []int{0, 100, 480} {
		dir := t.TempDir()
		log := dir + "/results.jsonl"
		daemonCfg := fmt.Sprintf("listen = %q\nresults_log = %q\n[log]\nformat = \"json\"\nlevel = \"debug\"\n[push]\nurl = \"%s/api/v1/import/prometheus\"\ninterval = \"1s\"\ntimeout = \"1s\"\nauthorization_env = \"WALK_PUSH\"\n",
			listen, log, pushSrv.URL)
		cfg := writeConfig(t, walkConfig(srv, pad, daemonCfg))
		outputs := map[string]string{}
		jobs := strings.Count(walkConfig(srv, pad, ""), "[[target]]") + strings.Count(walkConfig(srv, pad, ""), "drills =")
		ctx, cancel := context.WithCancel(context.Background())
		var out, errb lockedBuffer
		done := make(chan int, 1)
		go func() { done <- cmdRun(ctx, []string{"-config", cfg}, &out, &errb) }()
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			b, _ := os.ReadFile(log)
			push.mu.Lock()
			pushes := len(push.bodies)
			push.mu.Unlock()
			if strings.Count(string(b), "\n") >= jobs && pushes >= 2 {
				break
			}
			if time.Now().After(deadline) {
				cancel()
				<-done
				t.Fatalf("pad %d: %d of %d jobs ran, %d pushes:\n%s", pad, strings.Count(string(b), "\n"), jobs, pushes, errb.String())
			}
		}
		for _, path := range []string{"/", "/healthz", "/metrics"} {
			resp, err := http.Get("http://" + listen + path)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			outputs["GET "+path] = string(b)
		}
		cancel()
		if code := <-done; code != exitOK {
			t.Fatalf("pad %d: run exited %d:\n%s", pad, code, errb.String())
		}
		outputs["daemon log"], outputs["daemon stdout"] = errb.String(), out.String()
		b, _ := os.ReadFile(log)
		outputs["results log"] = string(b)
		push.mu.Lock()
		outputs["push bodies"] = strings.Join(push.bodies, "\n")
		push.bodies = nil
		push.mu.Unlock()
		if !strings.Contains(outputs["results log"], `"target":"body-raw"`) || (pad == 0 && !strings.Contains(outputs["results log"], "[redacted]")) || !strings.Contains(outputs["GET /healthz"], "push") {
			t.Fatalf("pad %d: the daemon did not meet the hostile server:\n%.2000s\n%s", pad, outputs["results log"], outputs["GET /healthz"])
		}

		_, outputs["check text"], outputs["check stderr"] = runCmd(t, "check", "-config", cfg, "-runs", "1", "-junit", dir+"/check.xml", "-html", dir+"/check.html")
		_, outputs["check json"], _ = runCmd(t, "check", "-config", cfg, "-runs", "1", "-json")
		if !strings.Contains(outputs["check text"], "target body-raw") || (pad == 0 && !strings.Contains(outputs["check text"], "[redacted]")) {
			t.Fatalf("pad %d: check did not probe the hostile targets:\n%s\n%s", pad, outputs["check text"], outputs["check stderr"])
		}
		_, outputs["report text"], outputs["report stderr"] = runCmd(t, "report", "-config", cfg, "-log", log, "-junit", dir+"/report.xml", "-html", dir+"/report.html")
		_, outputs["report json"], _ = runCmd(t, "report", "-config", cfg, "-log", log, "-json")
		for _, f := range []string{"check.xml", "check.html", "report.xml", "report.html"} {
			b, err := os.ReadFile(dir + "/" + f)
			if err != nil {
				t.Fatal(err)
			}
			outputs[f] = string(b)
		}
		for name, out := range outputs {
			if p := shownKey(out); p != "" {
				i := strings.Index(out, strings.TrimPrefix(p[strings.Index(p, ": ")+2:], ""))
				t.Errorf("pad %d: %s shows %q: ...%s...", pad, name, p, out[max(0, i-200):min(len(out), i+100)])
			}
			if strings.ContainsAny(out, "\x07\u202e") || (!strings.HasSuffix(name, "text") && strings.Contains(out, "\x1b")) {
				t.Errorf("pad %d: %s holds a control character", pad, name)
			}
		}
	}
}

// The new dialects' walk: once, text and JSON, against the key echoed in
// every place whatever the dialect (the status line, the headers, an
// error body, a redirect, a trailer) and in the dialect's own error (a
// Cohere message-end, a Bedrock exception frame, a Gemini error object
// on Vertex AI, an Anthropic error event on Vertex AI, a plain-text
// error body), in every encoding, around the caps a provider's message
// and an error body are cut at: no piece of the key shows. Bedrock's key
// here is an API key (a bearer token); the SigV4 parts are walked in
// dialect's and internal/jobs' tests.
func TestOnceHostileWalkNewDialects(t *testing.T) {
	srv, err := hostile.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	t.Setenv("WALK_KEY", walkKey)
	suffix := map[string]string{"vertex-gemini": "/v1/projects/p/locations/l", "vertex-anthropic": "/v1/projects/p/locations/l"}
	for d, own := range hostile.DialectPlaces {
		for _, place := range []string{hostile.HeaderLine, hostile.ReasonPhrase, hostile.ErrorBody, hostile.Redirect, hostile.Trailer, own} {
			t.Run(d+"/"+place, func(t *testing.T) {
				for enc := range hostile.Encodings {
					for _, c := range []int{128, 200, 512} {
						for pad := c - len(walkKey) - 48; pad <= c+8; pad += 13 {
							for _, asJSON := range []bool{false, true} {
								args := []string{"once", "-dialect", d, "-model", "m", "-url", fmt.Sprintf("%s/%s/%s/%d%s", srv.URL, place, enc, max(pad, 0), suffix[d]),
									"-bearer-env", "WALK_KEY", "-timeout", "5s"}
								if asJSON {
									args = append(args, "-json")
								}
								_, stdout, stderr := runCmd(t, args...)
								if p := shownKey(stdout + stderr); p != "" {
									t.Fatalf("%s pad %d json %v: the output shows %q:\n%s%s", enc, pad, asJSON, p, stdout, stderr)
								}
								if strings.ContainsAny(stdout+stderr, "\x1b\x07\r") {
									t.Fatalf("%s pad %d: control characters in the output", enc, pad)
								}
								if place == own && enc == "raw" && pad == 128-len(walkKey)-48 && !strings.Contains(stdout, "[redacted]") {
									t.Fatalf("the echo never reached the output (the walk proves nothing):\n%s%s", stdout, stderr)
								}
							}
						}
					}
				}
			})
		}
	}
}
