package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/streamprobe/streamprobe/dialect"
	"github.com/streamprobe/streamprobe/internal/refserver"
	"github.com/streamprobe/streamprobe/probe"
)

// once checks its flags with the validation a config file gets: each
// problem is one line that names the flag the user gave, never a config
// key, and the exit code is 2.
func TestOnceErrorsNameTheFlag(t *testing.T) {
	t.Setenv("STREAMPROBE_TEST_UNSET", "")
	t.Setenv("STREAMPROBE_TEST_CR", "a\rb")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"-max-reconnects", "0"}, "-max-reconnects 0: want 1 to 100"},
		{[]string{"-max-reconnects", "101"}, "-max-reconnects 101: want 1 to 100"},
		{[]string{"-max-chunks", "0"}, "-max-chunks 0: want 1 to 10000000"},
		{[]string{"-max-event-size", "0"}, "-max-event-size 0: want 1 to 1073741824 bytes"},
		{[]string{"-cancel-after", "0"}, "-cancel-after 0: want 1 or more"},
		{[]string{"-drill", "drop", "-drop-after", "0"}, "-drop-after 0: want 1 or more"},
		{[]string{"-drill", "duplicate", "-rewind", "0"}, "-rewind 0: want 1 or more"},
		{[]string{"-ids", "uuid"}, `-ids "uuid": want int or opaque`},
		{[]string{"-timeout", "0s"}, "-timeout 0s: want a positive duration"},
		{[]string{"-timeout", "-1s"}, "-timeout -1s: want a positive duration"},
		{[]string{"-drill", "drop", "-drop-at", "-1s"}, "-drop-at -1s: want a positive duration"},
		{[]string{"-dialect", "grpc"}, `-dialect: unknown dialect "grpc" (known: ` + strings.Join(dialect.Names(), ", ") + `)`},
		{[]string{"-sample", "huge"}, `-sample: unknown sample "huge" (known: short, long, cancel)`},
		{[]string{"-drill", "drop", "-sample", "huge"}, `-sample: unknown sample "huge" (known: short, long, cancel)`},
		{[]string{"-drill", "replay"}, `-drill: unknown drill "replay" (known: drop, duplicate, stale)`},
		{[]string{"-header", "Proxy-Authorization: Basic eA=="}, "-header Proxy-Authorization: secrets may not be given on the command line: use -bearer-env or -header-env"},
		{[]string{"-header", "X-Tenant: a\x00b"}, "-header X-Tenant: the value holds the byte 0x00 at offset 1, which no HTTP header may carry"},
		{[]string{"-header-env", "X-Tenant: STREAMPROBE_TEST_UNSET"}, "-header-env X-Tenant: environment variable STREAMPROBE_TEST_UNSET is not set"},
		{[]string{"-bearer-env", "STREAMPROBE_TEST_CR"}, "-bearer-env: the value of STREAMPROBE_TEST_CR holds the byte 0x0d at offset 1, which no HTTP header may carry"},
		{[]string{"-stale-header", "Bad Name"}, `-stale-header: "Bad Name": want 'Name' or 'Name: value'`},
		{[]string{"-stale-id", "a\nb"}, `-stale-id: "a\nb" holds the byte 0x0a at offset 1, which no HTTP header may carry: it is sent as Last-Event-ID`},
		{[]string{"-label", "host=x"}, `-label host: "host" is not a usable label name`},
		{[]string{"-url", "ftp://user:pw@x/?token=sk-secret"}, "-url: want an absolute http or https URL"},
	} {
		args := append([]string{"once", "-url", "http://127.0.0.1:1/v1"}, tt.args...)
		if tt.args[0] == "-url" {
			args = append([]string{"once"}, tt.args...)
		}
		code, stdout, stderr := runCmd(t, args...)
		if code != exitUsage || stdout != "" || !strings.HasPrefix(stderr, "streamprobe once: "+tt.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%q: exit %d, stderr %q, want %q", tt.args, code, stderr, tt.want)
		}
		for _, key := range []string{"target[", "max_", "_after", "header_env", "bearer_env", "stale_", "samples", "sk-secret", "pw@"} {
			if strings.Contains(stderr, key) {
				t.Errorf("%q: the error names %q: %q", tt.args, key, stderr)
			}
		}
	}
}

// Several bad flags: every problem, one line each, as validate prints a
// file's.
func TestOnceReportsEveryBadFlag(t *testing.T) {
	code, _, stderr := runCmd(t, "once", "-url", "http://127.0.0.1:1", "-max-chunks", "0", "-max-reconnects", "0", "-ids", "x")
	want := "streamprobe once: -max-chunks 0: want 1 to 10000000\n" +
		"streamprobe once: -max-reconnects 0: want 1 to 100\n" +
		"streamprobe once: -ids \"x\": want int or opaque\n"
	if code != exitUsage || stderr != want {
		t.Errorf("exit %d, stderr\n%s\nwant\n%s", code, stderr, want)
	}
}

// seenRequest is what a server was sent.
type seenRequest struct {
	method, path string
	header       http.Header
	body         string
}

// recordingTarget answers every request with a short SSE stream and keeps
// what it was sent.
func recordingTarget(t *testing.T) (*httptest.Server, func() []seenRequest) {
	var mu sync.Mutex
	var seen []seenRequest
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen = append(seen, seenRequest{r.Method, r.URL.Path, r.Header.Clone(), string(b)})
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "id: 1\ndata: a\n\nid: 2\ndata: b\n\nid: 3\ndata: c\n\nid: 4\ndata: d\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv, func() []seenRequest {
		mu.Lock()
		defer mu.Unlock()
		return append([]seenRequest(nil), seen...)
	}
}

// once's flags reach the request as they did before once went through
// the config and jobs.Build: the body (text or @file), the method, the
// plain headers (a repeated one joined), the secrets from the
// environment, and the record's name (the URL's host by default).
func TestOnceFlagsReachTheRequest(t *testing.T) {
	srv, seen := recordingTarget(t)
	t.Setenv("STREAMPROBE_TEST_KEY", "sk-once-flags-0123456789")
	t.Setenv("STREAMPROBE_TEST_TENANT", "tenant-7")
	body := filepath.Join(t.TempDir(), "body.json")
	if err := os.WriteFile(body, []byte(`{"from":"file"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCmd(t, "once", "-url", srv.URL+"/stream", "-json", "-method", "PUT", "-body", "@"+body,
		"-header", "X-A: 1", "-header", "x-a: 2", "-header-env", "X-Tenant: STREAMPROBE_TEST_TENANT", "-bearer-env", "STREAMPROBE_TEST_KEY")
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	host := strings.TrimPrefix(srv.URL, "http://")
	if rec := decodeRecords(t, stdout)[0]; rec.Target != host || rec.Sample != "short" || rec.Chunks != 4 {
		t.Errorf("record target %q sample %q chunks %d, want %q short 4", rec.Target, rec.Sample, rec.Chunks, host)
	}
	code, _, stderr = runCmd(t, "once", "-url", srv.URL+"/stream", "-body", `{"from":"flag"}`, "-name", "api")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	reqs := seen()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	r := reqs[0]
	if r.method != "PUT" || r.path != "/stream" || r.body != `{"from":"file"}` {
		t.Errorf("request %s %s %q", r.method, r.path, r.body)
	}
	if got := r.header.Values("X-A"); fmt.Sprint(got) != "[1, 2]" {
		t.Errorf("X-A %q", got)
	}
	if r.header.Get("X-Tenant") != "tenant-7" || r.header.Get("Authorization") != "Bearer sk-once-flags-0123456789" {
		t.Errorf("headers %v", r.header)
	}
	if reqs[1].body != `{"from":"flag"}` || reqs[1].method != "POST" {
		t.Errorf("second request %s %q", reqs[1].method, reqs[1].body)
	}
}

// A drill streams the sample -sample names (short by default), and the
// anthropic-messages dialect takes the key as x-api-key, as a config
// target's does.
func TestOnceDrillSampleAndAnthropicKey(t *testing.T) {
	drills := refserver.NewServer(refserver.DrillEvents())
	defer drills.Close()
	for sample, want := range map[string]string{"": "short", "long": "long"} {
		args := []string{"once", "-url", drills.URL, "-drill", "drop", "-json"}
		if sample != "" {
			args = append(args, "-sample", sample)
		}
		code, stdout, stderr := runCmd(t, args...)
		if code != exitOK {
			t.Fatalf("%v: exit %d\n%s\n%s", args, code, stdout, stderr)
		}
		if rec := decodeRecords(t, stdout)[0]; rec.Sample != want || rec.Drill != "drop" || rec.Verdict != probe.VerdictPass {
			t.Errorf("%v: record sample %q drill %q verdict %s", args, rec.Sample, rec.Drill, rec.Verdict)
		}
	}
	srv, seen := recordingTarget(t)
	t.Setenv("STREAMPROBE_TEST_KEY", "sk-ant-once-0123456789")
	n := len(seen())
	runCmd(t, "once", "-url", srv.URL, "-dialect", "anthropic-messages", "-bearer-env", "STREAMPROBE_TEST_KEY")
	reqs := seen()
	if len(reqs) != n+1 {
		t.Fatalf("%d requests", len(reqs)-n)
	}
	if h := reqs[n].header; h.Get("X-Api-Key") != "sk-ant-once-0123456789" || h.Get("Authorization") != "" {
		t.Errorf("anthropic headers %v", h)
	}
}

// The README's stale example: against the correct built-in server, id 1 is
// inside its retention window, so it is not stale: the drill says so and
// exits 0; the default stale id gets the server's defined answer.
func TestOnceStaleIDTheServerHas(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := runCmd(t, "once", "-builtin", "-drill", "stale", "-stale-id", "1")
	if code != exitOK || !strings.Contains(stdout, "resume verdict   NOT_STALE\n") ||
		!strings.Contains(stdout, "Last-Event-ID: 1 is not stale on this server: it resumed from it as from any id, with id 2 next") {
		t.Errorf("-stale-id 1: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = runCmd(t, "once", "-builtin", "-drill", "stale")
	if code != exitOK || !strings.Contains(stdout, "resume verdict   STALE_OK\n") ||
		!strings.Contains(stdout, "stale Last-Event-ID: streamprobe-stale-id-0 answered by error_event") {
		t.Errorf("default stale id: exit %d\n%s%s", code, stdout, stderr)
	}
}

// once -h says where -bearer-env's key goes for every dialect that takes
// it in a header of its own (its KeyHeaderer), and lists under -drill
// exactly the dialects that resume (a Resumer): both from the registry,
// so a new dialect changes the help. docs/configuration.md's rows say the
// same (drills.md the -drill row).
func TestOnceHelpFromTheDialects(t *testing.T) {
	_, help, _ := runCmd(t, "once", "-h")
	flagHelp := func(name string) string {
		_, after, ok := strings.Cut(help, "\n  -"+name+" ")
		if !ok {
			t.Fatalf("once -h has no -%s", name)
		}
		text, _, _ := strings.Cut(after, "\n  -")
		return strings.Join(strings.Fields(text), " ")
	}
	bearer, drill := flagHelp("bearer-env"), flagHelp("drill")
	row := func(doc, prefix string) string {
		b, err := os.ReadFile(repoRoot + "/docs/" + doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, prefix) {
				return l
			}
		}
		t.Fatalf("docs/%s has no row %q", doc, prefix)
		return ""
	}
	bearerRow, drillRow := row("configuration.md", "| `-bearer-env ENV`"), row("drills.md", "| `-drill NAME`")
	for name, d := range dialect.Dialects {
		if kh, ok := d.(dialect.KeyHeaderer); ok {
			want := kh.KeyHeader() + " (" + name + ")"
			if !strings.Contains(bearer, want) {
				t.Errorf("-bearer-env's help lacks %q: %s", want, bearer)
			}
			if !strings.Contains(strings.ToLower(bearerRow), "`"+strings.ToLower(kh.KeyHeader())+"` (`"+name+"`)") {
				t.Errorf("docs' -bearer-env row lacks %s's header %s: %s", name, kh.KeyHeader(), bearerRow)
			}
		}
		resumes := d.Resumer() != nil
		if strings.Contains(drill, name+",") || strings.Contains(drill, name+";") || strings.Contains(drill, name+")") {
			if !resumes {
				t.Errorf("-drill's help lists %s, which does not resume: %s", name, drill)
			}
		} else if resumes {
			t.Errorf("-drill's help leaves out %s, which resumes: %s", name, drill)
		}
		if resumes != strings.Contains(drillRow, "`"+name+"`") {
			t.Errorf("docs' -drill row and %s (resumes: %v): %s", name, resumes, drillRow)
		}
	}
}
