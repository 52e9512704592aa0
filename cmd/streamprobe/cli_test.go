package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/streamprobe/streamprobe/internal/builtin"
	"github.com/streamprobe/streamprobe/probe"
	"github.com/streamprobe/streamprobe/resumeclient"
)

// Every subcommand's -h goes to stdout with exit 0, so it can be piped.
func TestHelpGoesToStdout(t *testing.T) {
	for _, cmd := range []string{"once", "demo", "run", "validate", "check"} {
		for _, h := range []string{"-h", "-help", "--help"} {
			code, stdout, stderr := runCmd(t, cmd, h)
			if code != exitOK || stderr != "" || !strings.HasPrefix(stdout, "Usage: streamprobe "+cmd) || !strings.Contains(stdout, "-") {
				t.Errorf("%s %s: exit %d, stdout %.60q, stderr %q", cmd, h, code, stdout, stderr)
			}
		}
	}
	if _, stdout, _ := runCmd(t, "once", "-h"); !strings.Contains(stdout, "-drill") {
		t.Errorf("once -h | grep drill finds nothing")
	}
	if code, stdout, _ := runCmd(t, "help", "check"); code != exitOK || !strings.HasPrefix(stdout, "Usage: streamprobe check") {
		t.Errorf("help check: exit %d %.60q", code, stdout)
	}
}

// help TOPIC: a command's help on stdout with exit 0; a help word as the
// topic (help -h once recursed until memory ran out) is the usage; an
// unknown topic is one line on stderr, exit 2.
func TestHelpTopics(t *testing.T) {
	for _, args := range [][]string{{"help", "-h"}, {"help", "--help"}, {"help", "help"}, {"-h", "-h"}} {
		code, stdout, stderr := runCmd(t, args...)
		if code != exitOK || stderr != "" || stdout != usage {
			t.Errorf("%q: exit %d, stdout %.60q, stderr %q", args, code, stdout, stderr)
		}
	}
	code, stdout, stderr := runCmd(t, "help", "once")
	if code != exitOK || stderr != "" || !strings.HasPrefix(stdout, "Usage: streamprobe once") || !strings.Contains(stdout, "-url") {
		t.Errorf("help once: exit %d, stdout %.60q, stderr %q", code, stdout, stderr)
	}
	code, stdout, stderr = runCmd(t, "help", "nosuch")
	if code != exitUsage || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, `unknown command "nosuch"`) {
		t.Errorf("help nosuch: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// A bad flag is one line with a hint, exit 2.
func TestBadFlagIsOneLine(t *testing.T) {
	for _, cmd := range []string{"once", "demo", "run", "validate", "check"} {
		code, stdout, stderr := runCmd(t, cmd, "-bogus")
		want := fmt.Sprintf("streamprobe %s: flag provided but not defined: -bogus (see 'streamprobe %s -h')\n", cmd, cmd)
		if code != exitUsage || stderr != want || stdout != "" {
			t.Errorf("%s -bogus: exit %d, stderr %q, want %q", cmd, code, stderr, want)
		}
	}
	code, _, stderr := runCmd(t, "check", "-runs", "many")
	if code != exitUsage || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, `invalid value "many" for flag -runs`) {
		t.Errorf("check -runs many: exit %d %q", code, stderr)
	}
}

// countingTarget is a real SSE server that counts its requests.
func countingTarget(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "id: 1\ndata: hi\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// -junit and -html paths are checked before any run: exit 2 and the target
// never hears of it.
func TestCheckOutputPathsCheckedFirst(t *testing.T) {
	srv, n := countingTarget(t)
	cfg := writeConfig(t, fmt.Sprintf("[[target]]\nname = \"t\"\nurl = %q\nsamples = [\"short\"]\n", srv.URL))
	dir := t.TempDir()
	for _, tc := range []struct{ flag, path, want string }{
		{"-junit", "/nonexistent/x.xml", "streamprobe check: -junit: directory /nonexistent does not exist\n"},
		{"-html", dir, "streamprobe check: -html: " + dir + " is a directory\n"},
	} {
		code, _, stderr := runCmd(t, "check", "-config", cfg, "-runs", "2", tc.flag, tc.path)
		if code != exitUsage || stderr != tc.want {
			t.Errorf("%s %s: exit %d %q, want %q", tc.flag, tc.path, code, stderr, tc.want)
		}
	}
	if n.Load() != 0 {
		t.Errorf("the target got %d requests before check refused its output paths", n.Load())
	}
	// 2 runs: the stall share's interval (0..84%) straddles its 5%:
	// inconclusive, exit 3.
	code, _, stderr := runCmd(t, "check", "-config", cfg, "-runs", "2", "-junit", dir+"/j.xml")
	if code != exitInconclusive || n.Load() != 2 {
		t.Errorf("with a good path: exit %d, %d requests: %s", code, n.Load(), stderr)
	}
}

// hangingTarget is a target that sends its headers and then nothing until
// the request ends; arrived gets a value as each request's headers go.
func hangingTarget(t *testing.T) (*httptest.Server, chan struct{}) {
	arrived := make(chan struct{}, 8)
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.(http.Flusher).Flush()
		arrived <- struct{}{}
		<-r.Context().Done()
	}))
	t.Cleanup(hang.Close)
	return hang, arrived
}

// An interrupt during check: the runs that finished are reported (text,
// JUnit), the report says it was interrupted, the exit code is 1.
func TestCheckInterruptedWritesWhatWasMeasured(t *testing.T) {
	fast, _ := countingTarget(t)
	hang, arrived := hangingTarget(t)
	cfg := writeConfig(t, fmt.Sprintf("[[target]]\nname = \"fast\"\nurl = %q\nsamples = [\"short\"]\n[[target]]\nname = \"hang\"\nurl = %q\nsamples = [\"short\"]\n", fast.URL, hang.URL))
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-arrived; cancel() }() // concurrency 1, runs interleaved: fast's first run is done
	junit := t.TempDir() + "/j.xml"
	var out, errb strings.Builder
	code := cmdCheck(ctx, []string{"-config", cfg, "-runs", "3", "-concurrency", "1", "-junit", junit}, &out, &errb)
	if code != exitFail || !strings.Contains(errb.String(), "interrupted after 1 of 6 runs") {
		t.Errorf("exit %d, stderr %q", code, errb.String())
	}
	if !strings.HasPrefix(out.String(), "INTERRUPTED") || !strings.Contains(out.String(), "fast") {
		t.Errorf("stdout:\n%s", out.String())
	}
	if b, err := os.ReadFile(junit); err != nil || !strings.Contains(string(b), "fast") {
		t.Errorf("JUnit after the interrupt: %v %s", err, b)
	}
}

// An interrupt before any run finished: no target passes (a card with no
// runs is never PASS, a drill-only target's included), and every output
// says INTERRUPTED with the runs done of those planned; exit 1.
func TestCheckInterruptedBeforeAnyRunPassesNothing(t *testing.T) {
	hang, arrived := hangingTarget(t)
	cfg := writeConfig(t, fmt.Sprintf("[[target]]\nname = \"chat\"\nurl = %q\nsamples = [\"short\"]\n[[target]]\nname = \"resume\"\nurl = %q\nsamples = []\ndrills = [\"drop\"]\n", hang.URL, hang.URL))
	dir := t.TempDir()
	for _, asJSON := range []bool{false, true} {
		ctx, cancel := context.WithCancel(context.Background())
		go func() { <-arrived; <-arrived; cancel() }() // both first requests in flight, none finished
		args := []string{"-config", cfg, "-runs", "2", "-concurrency", "2", "-q", "-junit", dir + "/j.xml", "-html", dir + "/r.html"}
		if asJSON {
			args = append(args, "-json")
		}
		var out, errb strings.Builder
		code := cmdCheck(ctx, args, &out, &errb)
		cancel()
		const head = "INTERRUPTED after 0 of 3 runs"
		if code != exitFail {
			t.Errorf("json %v: exit %d, stderr %q", asJSON, code, errb.String())
		}
		if asJSON {
			var doc struct {
				Result, Verdict string
				RunsDone        int `json:"runs_done"`
				RunsPlanned     int `json:"runs_planned"`
				Targets         []struct{ Target, Verdict string }
			}
			if err := json.Unmarshal([]byte(out.String()), &doc); err != nil {
				t.Fatal(err)
			}
			if doc.Result != "FAIL" || !strings.HasPrefix(doc.Verdict, head) || doc.RunsDone != 0 || doc.RunsPlanned != 3 || len(doc.Targets) != 2 {
				t.Errorf("JSON: %s", out.String())
			}
			for _, c := range doc.Targets {
				if c.Verdict == "PASS" {
					t.Errorf("JSON: target %s passes with no run", c.Target)
				}
			}
			continue
		}
		if !strings.Contains(out.String(), "streamprobe check: "+head) || strings.Contains(out.String(), "verdict: PASS") {
			t.Errorf("text:\n%s", out.String())
		}
		for _, f := range []string{"j.xml", "r.html"} {
			if b, err := os.ReadFile(dir + "/" + f); err != nil || !strings.Contains(string(b), head) || strings.Contains(string(b), `"card_verdict" value="PASS"`) {
				t.Errorf("%s: %v\n%s", f, err, b)
			}
		}
	}
}

// demo -drills exits 1 when a verdict differs from the one expected.
func TestDemoDrillsFailOnAnUnexpectedVerdict(t *testing.T) {
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	client := &resumeclient.Client{HTTP: &http.Client{Transport: tr}}
	dd := builtin.Drills()[0] // a correct server: pass
	var out, errb strings.Builder
	if code := demoDrills(context.Background(), client, []builtin.DrillCase{dd}, false, &out, &errb); code != exitOK {
		t.Fatalf("as expected: exit %d %s", code, errb.String())
	}
	dd.Want = probe.VerdictDuplicate
	out.Reset()
	errb.Reset()
	code := demoDrills(context.Background(), client, []builtin.DrillCase{dd}, false, &out, &errb)
	if code != exitFail || !strings.Contains(errb.String(), `server "correct": verdict pass, expected duplicate`) || !strings.Contains(out.String(), "expected verdict: DUPLICATE") {
		t.Errorf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
}

// The record's error names what failed, not the transport package.
func TestOnceErrorNamesNoPackage(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	code, stdout, _ := runCmd(t, "once", "-url", url+"/x")
	if code != exitFail || !strings.Contains(stdout, "error            request failed: GET ") || strings.Contains(stdout, "resumeclient") {
		t.Errorf("exit %d:\n%s", code, stdout)
	}
}

// check against a target that answers 404 to every run says why the runs
// failed (outcome, HTTP status, error) in the text, the JSON, the JUnit
// message and the HTML; the timing cells read "no successful run", not
// red; no triage follows.
func TestCheckSaysWhyRunsFailed(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	cfg := writeConfig(t, fmt.Sprintf("[[target]]\nname = \"gone\"\nurl = %q\nsamples = [\"short\"]\n[budget.short]\ntfc = \"600ms\"\n", srv.URL+"/v1/stream"))
	dir := t.TempDir()
	code, stdout, stderr := runCmd(t, "check", "-config", cfg, "-runs", "3", "-junit", dir+"/j.xml", "-html", dir+"/r.html")
	why := "3 of 3 runs did not end as the short sample should; 3 like this one: upstream_error, HTTP 404: "
	if code != exitFail || !strings.Contains(stdout, "short outcomes: "+why) {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	// The card's marks, after the page's head (its FAIL verdict).
	_, card, _ := strings.Cut(stdout, "\ntarget gone\n")
	if !strings.Contains(stdout, "TFC             no successful run") || strings.Contains(stdout, "absent") || strings.Contains(stdout, "triage") || strings.Count(card, "OVER")+strings.Count(card, "FAIL") != 2 {
		t.Errorf("cells or triage:\n%s", stdout)
	}
	for _, f := range []string{"j.xml", "r.html"} {
		b, _ := os.ReadFile(dir + "/" + f)
		if !strings.Contains(string(b), "upstream_error, HTTP 404: ") {
			t.Errorf("%s lacks the failing run's outcome and status:\n%s", f, b)
		}
	}
	_, stdout, _ = runCmd(t, "check", "-config", cfg, "-runs", "2", "-json")
	if !strings.Contains(stdout, `"failed_run":{"outcome":"upstream_error","http_status":404,"error":"`) {
		t.Errorf("JSON lacks failed_run:\n%s", stdout)
	}
}

// report sends no request, so it looks up no secret: a config whose
// bearer_file and environment variables this machine does not have (the
// key lives on the probe hosts) still gives its budgets to a report.
func TestReportLooksUpNoSecret(t *testing.T) {
	cfg := writeConfig(t, `[push]
url = "http://127.0.0.1:1/api/v1/import/prometheus"
authorization_file = "/nonexistent/streamprobe/push-auth"
[[target]]
name = "api"
url = "https://api.example/v1"
bearer_file = "/nonexistent/streamprobe/key"
samples = ["short"]
[target.header_env]
X-Tenant = "STREAMPROBE_REPORT_TEST_UNSET"
[budget.short]
tfc = "1s"
stall_share = 1
`)
	rec := `{"request_id":"r1","target":"api","sample":"short","drill":"none","outcome":"success","chunks":3,"tfc_ms":100,"gaps":{"count":0},"started_at":"2026-12-03T10:00:00Z"}`
	log := filepath.Join(t.TempDir(), "results.jsonl")
	if err := os.WriteFile(log, []byte(rec+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// One run decides no p95: -inconclusive pass counts that as a pass.
	code, stdout, stderr := runCmd(t, "report", "-config", cfg, "-log", log, "-inconclusive", "pass")
	if code != exitOK || strings.Contains(stderr, "nonexistent") || !strings.Contains(stdout, "api") {
		t.Errorf("exit %d\n%s\n%s", code, stdout, stderr)
	}
}
