package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/streamprobe/streamprobe/dialect"
	"github.com/streamprobe/streamprobe/internal/refserver"
	"github.com/streamprobe/streamprobe/internal/testenv/tools"
	"github.com/streamprobe/streamprobe/internal/version"
	"github.com/streamprobe/streamprobe/probe"
	"github.com/streamprobe/streamprobe/resumeclient"
)

// TestMain fails the package when a goroutine outlives the tests. once uses
// the default transport, as the binary does: its idle connections are
// closed first, and nothing else may remain.
func TestMain(m *testing.M) {
	code := tools.M{M: m}.Run()
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	if err := goleak.Find(); err != nil && code == 0 {
		fmt.Fprintln(os.Stderr, "goleak:", err)
		code = 1
	}
	os.Exit(code)
}

func runCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestUsageErrors(t *testing.T) {
	t.Setenv("STREAMPROBE_TEST_EMPTY", "")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown command", []string{"frobnicate"}, `unknown command "frobnicate"`},
		{"missing url", []string{"once"}, "-url is required"},
		{"relative url", []string{"once", "-url", "localhost:8080"}, "want an absolute http or https URL"},
		{"bad dialect", []string{"once", "-url", "http://x", "-dialect", "grpc"}, `unknown dialect "grpc" (known: ` + strings.Join(dialect.Names(), ", ") + `)`},
		{"bad sample", []string{"once", "-url", "http://x", "-sample", "huge"}, `unknown sample "huge" (known: short, long, cancel)`},
		{"secret header on the command line", []string{"once", "-url", "http://x", "-header", "Authorization: Bearer abc"}, "secrets may not be given on the command line"},
		{"bad header", []string{"once", "-url", "http://x", "-header", "novalue"}, `-header "novalue": want 'Name: value'`},
		{"unset key env", []string{"once", "-url", "http://x", "-bearer-env", "STREAMPROBE_TEST_EMPTY"}, "environment variable STREAMPROBE_TEST_EMPTY is not set"},
		{"missing body file", []string{"once", "-url", "http://x", "-body", "@/nonexistent/body.json"}, "-body: open /nonexistent/body.json"},
		{"bad timeout", []string{"once", "-url", "http://x", "-timeout", "0s"}, "-timeout 0s: want a positive duration"},
		{"stray argument", []string{"once", "-url", "http://x", "extra"}, `unexpected argument "extra"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runCmd(t, tt.args...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d", code, exitUsage)
			}
			if !strings.Contains(stderr, tt.want) {
				t.Errorf("stderr %q lacks %q", stderr, tt.want)
			}
			if strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
				t.Errorf("error is not one line: %q", stderr)
			}
		})
	}
}

func TestHelp(t *testing.T) {
	code, stdout, _ := runCmd(t, "once", "-h")
	if code != exitOK || !strings.Contains(stdout, "-bearer-env") || !strings.Contains(stdout, "Exit 0 on success") {
		t.Errorf("once -h: exit %d, %q", code, stdout)
	}
	code, stdout, _ = runCmd(t, "help")
	if code != exitOK || !strings.Contains(stdout, "streamprobe once -url URL") {
		t.Errorf("help: exit %d, %q", code, stdout)
	}
}

func decodeRecords(t *testing.T, out string) []probe.Record {
	t.Helper()
	var recs []probe.Record
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var r probe.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("line %q is not a JSON record: %v", sc.Text(), err)
		}
		recs = append(recs, r)
	}
	return recs
}

func TestOnceExitCodesAndSecrets(t *testing.T) {
	const key = "sk-streamprobe-test-0123456789abcdefghij"
	t.Setenv("STREAMPROBE_TEST_KEY", key)
	ok := refserver.NewServer(refserver.Events(refserver.Ms(20, 40, 60), 80*time.Millisecond))
	defer ok.Close()
	failing := refserver.NewUnstarted(nil)
	failing.Status = 401
	failing.Start()
	defer failing.Close()

	code, stdout, stderr := runCmd(t, "once", "-url", ok.URL+"/stream", "-json", "-bearer-env", "STREAMPROBE_TEST_KEY", "-name", "local")
	if code != exitOK {
		t.Fatalf("exit %d: %s %s", code, stdout, stderr)
	}
	recs := decodeRecords(t, stdout)
	if len(recs) != 1 || recs[0].Outcome != probe.Success || recs[0].Chunks != 3 || recs[0].Target != "local" {
		t.Fatalf("records %+v", recs)
	}
	if got := ok.Conns()[0]; got.Method != "GET" || got.Path != "/stream" {
		t.Errorf("request %s %s", got.Method, got.Path)
	}

	code, stdout, stderr = runCmd(t, "once", "-url", failing.URL, "-bearer-env", "STREAMPROBE_TEST_KEY")
	if code != exitFail || !strings.Contains(stdout, "upstream_error") || !strings.Contains(stdout, "401") {
		t.Errorf("401: exit %d, %q", code, stdout)
	}
	for _, s := range []string{stdout, stderr} {
		if strings.Contains(s, key) || strings.Contains(s, "sk-streamprobe") {
			t.Errorf("output leaks the API key: %q", s)
		}
	}
}

func TestOnceCancelSampleExitsZero(t *testing.T) {
	srv := refserver.NewServer(refserver.Events(refserver.Ms(10, 20, 30, 40, 50, 60), 500*time.Millisecond))
	defer srv.Close()
	code, stdout, _ := runCmd(t, "once", "-url", srv.URL, "-sample", "cancel", "-cancel-after", "2")
	if code != exitOK || !strings.Contains(stdout, "client_cancelled") || !strings.Contains(stdout, "after 2 content chunks") {
		t.Errorf("exit %d: %s", code, stdout)
	}
}

func TestDemo(t *testing.T) {
	code, stdout, stderr := runCmd(t, "demo", "-json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	recs := decodeRecords(t, stdout)
	if len(recs) != 3 {
		t.Fatalf("%d records", len(recs))
	}
	want := []probe.Outcome{probe.Success, probe.Success, probe.ClientCancelled}
	for i, r := range recs {
		if r.Sample != dialect.SampleNames[i] || r.Outcome != want[i] {
			t.Errorf("record %d: sample %s outcome %s", i, r.Sample, r.Outcome)
		}
	}
	short := recs[0]
	// The schedule sends the first chunk at 412 ms and the end marker at
	// 1051 ms: no reading is earlier (the client may read later by any
	// scheduling delay, so there is no upper bound). The record's values
	// are of one run of 10 chunks: 9 gaps that add up to the tail, and a
	// close that ends on the end marker. That catches the wiring going
	// wrong (a TFC of 0, a gap of the wrong class).
	if short.TFCMs == nil || short.EndMs == nil || short.TailMs == nil || short.CloseMs == nil || short.Gaps.MaxMs == nil {
		t.Fatalf("short run lacks a milestone: %+v", short)
	}
	if *short.TFCMs < 412 || *short.EndMs < 1051 {
		t.Errorf("short tfc_ms %v, end_ms %v: before the schedule's 412 and 1051 ms", *short.TFCMs, *short.EndMs)
	}
	sum, longest := 0.0, 0.0
	for _, g := range short.Gaps.Values {
		sum, longest = sum+g, max(longest, g)
	}
	if short.Chunks != 10 || short.Gaps.Count != 9 || len(short.Gaps.Values) != 9 || math.Abs(sum-*short.TailMs) > 0.01 || longest != *short.Gaps.MaxMs {
		t.Errorf("short: %d chunks, gaps %+v, tail_ms %v: want 9 gaps adding up to the tail", short.Chunks, short.Gaps, *short.TailMs)
	}
	if end := *short.TFCMs + *short.TailMs + *short.CloseMs; math.Abs(end-*short.EndMs) > 0.01 {
		t.Errorf("short: tfc %v + tail %v + close %v = %v, end_ms %v", *short.TFCMs, *short.TailMs, *short.CloseMs, end, *short.EndMs)
	}
	// One stall is scheduled (259 ms); a late server timer can make it
	// 249 ms, so the count is checked against the record's own gaps.
	wantStalls := 0
	if *short.Gaps.MaxMs > probe.StallThresholdMs {
		wantStalls = 1
	}
	if short.Stalls != wantStalls {
		t.Errorf("short stalls = %d with a longest gap of %v ms", short.Stalls, *short.Gaps.MaxMs)
	}
	// The prompts never appear in what the probe prints.
	if strings.Contains(stdout, "capital of France") || strings.Contains(stdout, "TCP connection") {
		t.Error("a prompt leaked into the records")
	}
}

func TestSignalCancelsRun(t *testing.T) {
	srv := refserver.NewUnstarted(nil)
	srv.Hold = true
	srv.Start()
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	var out, errb bytes.Buffer
	code := cmdOnce(ctx, []string{"-url", srv.URL, "-json"}, &out, &errb)
	if code != exitFail || !strings.Contains(out.String(), `"outcome":"client_cancelled"`) {
		t.Errorf("exit %d: %s", code, out.String())
	}
}

func TestOnceDrillExitCodes(t *testing.T) {
	good := refserver.NewServer(refserver.DrillEvents())
	defer good.Close()
	bad := refserver.NewUnstarted(refserver.DrillEvents())
	bad.Bug = refserver.Inclusive
	bad.Start()
	defer bad.Close()

	code, stdout, _ := runCmd(t, "once", "-url", good.URL, "-drill", "drop")
	if code != exitOK || !strings.Contains(stdout, "resume verdict   PASS") {
		t.Errorf("correct server: exit %d\n%s", code, stdout)
	}
	code, stdout, _ = runCmd(t, "once", "-url", bad.URL, "-drill", "drop")
	if code != exitFail || !strings.Contains(stdout, "resume replayed id 3 again: off-by-one replay (sent Last-Event-ID: 3)") {
		t.Errorf("off-by-one server: exit %d\n%s", code, stdout)
	}
	code, _, stderr := runCmd(t, "once", "-url", good.URL, "-drill", "replay")
	if code != exitUsage || !strings.Contains(stderr, `unknown drill "replay" (known: drop, duplicate, stale)`) {
		t.Errorf("bad drill: exit %d %q", code, stderr)
	}
	code, _, stderr = runCmd(t, "once", "-url", good.URL, "-drill", "drop", "-drop-at", "2m")
	if code != exitUsage || stderr != "streamprobe once: -drop-at (2m0s) must be shorter than -timeout (1m0s)\n" {
		t.Errorf("bad drop-at: exit %d %q", code, stderr)
	}
}

func TestDemoDrills(t *testing.T) {
	code, stdout, stderr := runCmd(t, "demo", "-drills", "-json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	recs := decodeRecords(t, stdout)
	want := []probe.Verdict{probe.VerdictPass, probe.VerdictPass, probe.VerdictStaleOK, probe.VerdictDuplicate,
		probe.VerdictMissed, probe.VerdictRestarted, probe.VerdictMismatch, probe.VerdictUndefinedStale,
		probe.VerdictPass, probe.VerdictStaleOK, probe.VerdictDuplicate, probe.VerdictMissed, probe.VerdictRestarted,
		probe.VerdictCrossStream, probe.VerdictUndefinedStale, probe.VerdictNotSupported, probe.VerdictReordered,
		probe.VerdictCancelledOnDrop, probe.VerdictLeftOpen, probe.VerdictUndefinedStale,
		probe.VerdictNotSupported, probe.VerdictPass, probe.VerdictStaleOK, probe.VerdictTaskCancelled,
		probe.VerdictResultUnreachable, probe.VerdictRestarted, probe.VerdictTaskLost, probe.VerdictUndefinedStale,
		// LangGraph's rejoin: correct (drop, duplicate, stale), without
		// stream_resumable, repeat, skip, restart, stale live tail, never ends.
		probe.VerdictPass, probe.VerdictPass, probe.VerdictStaleOK, probe.VerdictMissed, probe.VerdictDuplicate,
		probe.VerdictMissed, probe.VerdictRestarted, probe.VerdictUndefinedStale, "",
		// The AI SDK's resumable streams: correct (drop, stale), 204 while
		// live, skip, repeat, a new generation, never ends.
		probe.VerdictPass, probe.VerdictStaleOK, probe.VerdictMissed, probe.VerdictMissed, probe.VerdictDuplicate,
		probe.VerdictRestarted, ""}
	if len(recs) != len(want) {
		t.Fatalf("%d records, want %d", len(recs), len(want))
	}
	for i, r := range recs {
		dialect := map[bool]string{true: "mcp", false: "sse"}[i >= 8]
		switch {
		case i >= len(want)-7:
			dialect = "ai-sdk-ui"
		case i >= len(want)-16:
			dialect = "langgraph"
		}
		if r.Dialect != dialect {
			t.Errorf("drill %d: dialect %s, want %s", i, r.Dialect, dialect)
		}
		if r.Verdict != want[i] {
			t.Errorf("drill %d (%s): verdict %s, want %s", i, r.Drill, r.Verdict, want[i])
		}
		if want[i] == "" && r.Outcome != probe.Timeout {
			t.Errorf("drill %d: outcome %s, want timeout (a resume that never ends)", i, r.Outcome)
		}
	}
}

func writeConfig(t *testing.T, text string) string {
	t.Helper()
	p := t.TempDir() + "/probe.toml"
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const checkTargets = `[[target]]
name = "chat"
builtin = true
dialect = "openai-chat"
samples = ["short", "long", "cancel"]
[[target]]
name = "events"
builtin = true
dialect = "sse"
samples = []
drills = ["drop", "stale"]
`

// noStallBudget turns the stall-share budget off for every class: the
// built-in target's short and long streams stall once per run by design.
const noStallBudget = `stall_share = 1.0
`

// The exit codes of check: 3 runs of the built-in target within budgets
// that no busy machine makes it miss decide no p95 (no upper bound under
// 72 runs at 95%): INCONCLUSIVE, exit 3, or 0 or 1 as -inconclusive says;
// a 300 ms TFC budget that its 413 ms TFCs miss is red already (the
// interval's bottom, the second fastest of 3, is over it): exit 1; and 75
// runs of a target that answers at once within every budget pass: exit 0.
func TestCheckExitCodesAndJSON(t *testing.T) {
	within := writeConfig(t, checkTargets+`[budget.short]
tfc = "10s"
gap = "5s"
tail = "20s"
`+noStallBudget+`[budget.long]
tfc = "10s"
gap = "5s"
`+noStallBudget+`[budget.cancel]
`+noStallBudget)
	code, stdout, stderr := runCmd(t, "check", "-config", within, "-runs", "3")
	if code != exitInconclusive || !strings.Contains(stdout, "verdict: INCONCLUSIVE") || !strings.HasPrefix(stdout, "streamprobe check: INCONCLUSIVE (1 of 2 target(s) inconclusive, none failed)") {
		t.Fatalf("within budget: exit %d\n%s\n%s", code, stdout, stderr)
	}
	for flag, want := range map[string]int{"pass": exitOK, "fail": exitFail} {
		if code, _, _ := runCmd(t, "check", "-config", within, "-runs", "3", "-inconclusive", flag, "-target", "chat"); code != want {
			t.Errorf("-inconclusive %s: exit %d, want %d", flag, code, want)
		}
	}
	srv, _ := countingTarget(t)
	quick := writeConfig(t, fmt.Sprintf("[[target]]\nname = \"t\"\nurl = %q\nsamples = [\"short\"]\n[budget.short]\ntfc = \"5s\"\ntail = \"5s\"\n", srv.URL))
	if code, stdout, stderr := runCmd(t, "check", "-config", quick, "-runs", "75", "-concurrency", "8"); code != exitOK || !strings.Contains(stdout, "verdict: PASS") {
		t.Errorf("75 runs within budget: exit %d\n%s\n%s", code, stdout, stderr)
	}
	over := writeConfig(t, checkTargets+`[budget.short]
tfc = "300ms"
`+noStallBudget+"[budget.long]\n"+noStallBudget+"[budget.cancel]\n"+noStallBudget)
	dir := t.TempDir()
	code, stdout, stderr = runCmd(t, "check", "-config", over, "-runs", "3", "-json", "-junit", dir+"/junit.xml", "-html", dir+"/report.html")
	if code != exitFail {
		t.Fatalf("over budget: exit %d\n%s\n%s", code, stdout, stderr)
	}
	var sum struct {
		Pass    bool `json:"pass"`
		Targets []struct {
			Target string `json:"target"`
			Pass   bool   `json:"pass"`
			Cells  []struct {
				Row    string `json:"row"`
				Sample string `json:"sample"`
				Over   bool   `json:"over"`
				Why    string `json:"why"`
			} `json:"cells"`
			Drills []struct {
				Drill, Verdict string
			} `json:"drills"`
			RequestIDs map[string][]string `json:"request_ids"`
		} `json:"targets"`
	}
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
		t.Fatalf("-json output: %v\n%s", err, stdout)
	}
	if sum.Pass || len(sum.Targets) != 2 {
		t.Fatalf("summary %+v", sum)
	}
	var red []string
	for _, c := range sum.Targets[0].Cells {
		if c.Over {
			red = append(red, c.Sample+"/"+c.Row+": "+c.Why)
		}
	}
	if len(red) != 1 || !strings.HasPrefix(red[0], "short/tfc: p95 ") || !strings.Contains(red[0], "over the 300 ms budget (95% interval ") {
		t.Errorf("red cells %q, want only short/tfc", red)
	}
	if len(sum.Targets[0].RequestIDs["short"]) != 3 || !sum.Targets[1].Pass || len(sum.Targets[1].Drills) != 2 {
		t.Errorf("request ids %v, drills %+v", sum.Targets[0].RequestIDs, sum.Targets[1].Drills)
	}
	for _, f := range []string{"junit.xml", "report.html"} {
		if st, err := os.Stat(dir + "/" + f); err != nil || st.Size() < 500 {
			t.Errorf("%s: %v", f, err)
		}
	}
	code, _, stderr = runCmd(t, "check", "-config", over, "-target", "nope")
	if code != exitUsage || !strings.Contains(stderr, `-target "nope": no such target`) {
		t.Errorf("bad target: exit %d %q", code, stderr)
	}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func waitFor(t *testing.T, buf *lockedBuffer, s string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second) // a busy machine starts and reloads slowly
	for !strings.Contains(buf.String(), s) {
		if time.Now().After(deadline) {
			t.Fatalf("%q never logged:\n%s", s, buf.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// SIGHUP with a broken config: logged, and the old config keeps running;
// then a good one is taken; SIGTERM (the context) exits 0.
func TestRunReloadOnSIGHUP(t *testing.T) {
	srv := refserver.NewServer(refserver.Events(refserver.Ms(5, 10), -1))
	defer srv.Close()
	good := fmt.Sprintf("[log]\nformat = \"text\"\n[[target]]\nname = \"t\"\nurl = %q\nend_data = \"\"\nsamples = [\"short\"]\nevery = \"100ms\"\njitter = \"0s\"\n", srv.URL)
	path := writeConfig(t, good)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb lockedBuffer
	done := make(chan int, 1)
	go func() { done <- cmdRun(ctx, []string{"-config", path}, &out, &errb) }()
	waitFor(t, &errb, "msg=scheduled")
	os.WriteFile(path, []byte(good+"bogus = 1\n"), 0o644)
	syscall.Kill(os.Getpid(), syscall.SIGHUP)
	waitFor(t, &errb, "reload failed; the old config keeps running")
	if !strings.Contains(errb.String(), "target[0].bogus: unknown key") {
		t.Errorf("the reload error does not name the key:\n%s", errb.String())
	}
	before := len(srv.Conns())
	for deadline := time.Now().Add(20 * time.Second); len(srv.Conns()) <= before+2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the old config stopped running after a broken reload")
		}
	}
	os.WriteFile(path, []byte(good), 0o644)
	syscall.Kill(os.Getpid(), syscall.SIGHUP)
	waitFor(t, &errb, "config reloaded")
	cancel()
	if code := <-done; code != exitOK {
		t.Errorf("exit %d after shutdown:\n%s", code, errb.String())
	}
}

// One target per dialect, all against the built-in reference target: one
// scorecard each.
func TestCheckEveryDialect(t *testing.T) {
	var cfg strings.Builder
	for _, d := range dialect.Names() {
		samples, drills := `["short"]`, `["drop"]`
		if d == "sse" {
			samples = "[]"
		}
		if !dialect.HasEventIDs(d) {
			drills = "[]" // refused when the config loads
		}
		fmt.Fprintf(&cfg, "[[target]]\nname = %q\nbuiltin = true\ndialect = %q\nsamples = %s\ndrills = %s\n", "t-"+d, d, samples, drills)
	}
	cfg.WriteString("[budget.short]\ntfc = \"10s\"\ngap = \"5s\"\n" + noStallBudget) // met however busy the machine
	// 2 runs decide no p95: -inconclusive pass (the test is about a card
	// per dialect).
	code, stdout, stderr := runCmd(t, "check", "-config", writeConfig(t, cfg.String()), "-runs", "2", "-inconclusive", "pass")
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, d := range dialect.Names() {
		if !strings.Contains(stdout, "target t-"+d+"\n") {
			t.Errorf("no scorecard for %s:\n%s", d, stdout)
		}
	}
	for _, want := range []string{"from starting_after=", "NOT_SUPPORTED", "from Last-Event-ID: "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q", want)
		}
	}
}

func TestOnceBuiltin(t *testing.T) {
	code, stdout, _ := runCmd(t, "once", "-builtin", "-dialect", "openai-responses", "-drill", "drop", "-json")
	recs := decodeRecords(t, stdout)
	if code != exitOK || len(recs) != 1 || recs[0].Verdict != probe.VerdictPass || recs[0].Target != "builtin" {
		t.Errorf("exit %d: %s", code, stdout)
	}
	code, _, stderr := runCmd(t, "once", "-builtin", "-url", "http://127.0.0.1:1")
	if code != exitUsage || stderr != "streamprobe once: set -url or -builtin, not both\n" {
		t.Errorf("exit %d %q", code, stderr)
	}
}

// once with no drill on a stream with ids whose server closes after event
// 5: resumed from the last dispatched id, complete, exit 0, and the record
// says the server dropped it. With -no-resume it is the old upstream_error.
func TestOnceResumesAServerDrop(t *testing.T) {
	srv := refserver.NewUnstarted(refserver.DrillEvents())
	srv.CloseAfter = 5
	srv.Start()
	defer srv.Close()
	code, stdout, stderr := runCmd(t, "once", "-url", srv.URL, "-json")
	if code != exitOK {
		t.Fatalf("exit %d: %s %s", code, stdout, stderr)
	}
	rec := decodeRecords(t, stdout)[0]
	if rec.Outcome != probe.Success || rec.ServerDrops != 1 || !rec.Resumed || rec.LastEventIDSent != "5" || rec.Chunks != 12 || rec.Verdict != probe.VerdictPass {
		t.Errorf("record %+v", rec)
	}
	if c := srv.Conns(); len(c) != 2 || c[1].LastEventID != "5" {
		t.Errorf("server saw %d connections", len(c))
	}
	srv2 := refserver.NewUnstarted(refserver.DrillEvents())
	srv2.CloseAfter = 5 // the first connection only: a new server
	srv2.Start()
	defer srv2.Close()
	code, stdout, _ = runCmd(t, "once", "-url", srv2.URL, "-no-resume")
	if code != exitFail || !strings.Contains(stdout, "before the end marker") {
		t.Errorf("-no-resume: exit %d\n%s", code, stdout)
	}
}

// The stale drill's settings in a config reach check as once's flags reach
// once: the same server gets the same verdict from both.
func TestStaleSettingsAgreeBetweenOnceAndCheck(t *testing.T) {
	srv := refserver.NewUnstarted(refserver.DrillEvents())
	srv.Stale = refserver.StaleReset
	srv.ResetEvent = "history-lost"
	srv.Start()
	defer srv.Close()
	code, stdout, _ := runCmd(t, "once", "-url", srv.URL, "-drill", "stale", "-reset-event", "history-lost", "-json")
	rec := decodeRecords(t, stdout)[0]
	if code != exitOK || rec.Verdict != probe.VerdictStaleOK || rec.StaleAnswer != "reset_event" {
		t.Fatalf("once: exit %d verdict %s (%s)", code, rec.Verdict, rec.ResumeDetail)
	}
	cfg := writeConfig(t, fmt.Sprintf(`
[[target]]
name = "stale"
url = %q
dialect = "sse"
drills = ["stale"]
samples = []
reset_event = "history-lost"
stale_headers = ["X-History: lost"]
`, srv.URL))
	code, stdout, stderr := runCmd(t, "check", "-config", cfg, "-runs", "1", "-json")
	if !strings.Contains(stdout, `"verdict":"stale_ok"`) {
		t.Errorf("check: exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// The finding of issue 11, against a real server: a buffering proxy
// releases 100 chunks in 4 bursts, the first 300 ms after the headers and
// the others 1.4 s apart, in every run. The gap p95 is near zero, yet
// check exits 1 with the stall share and the buffering row red and 4
// bursts named; once names the buffering too.
func TestCheckRedOnFreezesInEveryRun(t *testing.T) {
	t.Parallel()
	srv := refserver.NewServer(refserver.Bursts(100, refserver.Ms(300, 1700, 3100, 4500)...))
	t.Cleanup(srv.Close)
	cfg := writeConfig(t, fmt.Sprintf("[[target]]\nname = \"proxied\"\nurl = %q\nsamples = [\"long\"]\n[budget.long]\ntfc = \"1500ms\"\ngap = \"150ms\"\ntail = \"30s\"\n", srv.URL))
	code, stdout, stderr := runCmd(t, "check", "-config", cfg, "-runs", "3", "-concurrency", "3")
	if code != exitFail {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{
		"gap             0.0 / 0.",
		"stalled >250ms  100% of 3 runs [29.2..100%] (<= 5%) OVER",
		"buffering       3 of 3 runs, 4 bursts FAIL",
		"long buffering: suspected proxy buffering in 3 of 3 runs: 4 burst(s) per run (p50) split by freezes up to 1",
		"long, 2. gap p95 vs p50: p95 0.",
		"not the model: see the buffering row",
		"verdict: FAIL (2 red cell(s), 3 inconclusive, 0 failing drill(s))",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("check output lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "slow model") {
		t.Errorf("triage blames a slow model for near-zero gaps:\n%s", stdout)
	}
	code, stdout, stderr = runCmd(t, "once", "-url", srv.URL, "-sample", "long")
	if code != exitOK || !strings.Contains(stdout, "suspected proxy buffering: 4 burst(s) split by 3 freeze(s) up to 1") {
		t.Errorf("once: exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// --version prints the version the User-Agent carries.
func TestVersion(t *testing.T) {
	for _, arg := range []string{"--version", "version", "-version"} {
		code, stdout, _ := runCmd(t, arg)
		if code != exitOK || stdout != "streamprobe "+version.String()+"\n" {
			t.Errorf("%s: exit %d %q", arg, code, stdout)
		}
	}
	if !strings.HasSuffix(resumeclient.UserAgent, "/"+version.String()) {
		t.Errorf("User-Agent %q does not carry the version %q", resumeclient.UserAgent, version.String())
	}
}

// once stamps its record with this machine's hostname, or -host, and
// -region and -label; with none, no region or labels key appears.
func TestOnceRecordCarriesOrigin(t *testing.T) {
	host, _ := os.Hostname()
	code, stdout, stderr := runCmd(t, "once", "-builtin", "-json")
	recs := decodeRecords(t, stdout)
	if code != exitOK || len(recs) != 1 || recs[0].Host != host || strings.Contains(stdout, `"region"`) || strings.Contains(stdout, `"labels"`) {
		t.Fatalf("exit %d: %s %s", code, stdout, stderr)
	}
	code, stdout, stderr = runCmd(t, "once", "-builtin", "-json", "-host", "laptop", "-region", "eu", "-label", "team=search", "-label", "tier=gold")
	recs = decodeRecords(t, stdout)
	if code != exitOK || len(recs) != 1 || recs[0].Host != "laptop" || recs[0].Region != "eu" || recs[0].Labels["team"] != "search" || recs[0].Labels["tier"] != "gold" {
		t.Fatalf("exit %d: %s %s", code, stdout, stderr)
	}
	for _, bad := range []string{"team", "host=x", "9x=y"} {
		code, _, stderr = runCmd(t, "once", "-builtin", "-label", bad)
		if code != exitUsage || !strings.HasPrefix(stderr, "streamprobe once: -label ") {
			t.Errorf("-label %s: exit %d %q", bad, code, stderr)
		}
	}
}

// HTTP/1.1 unless http2 is asked for: the server offers h2 over TLS, and
// sees it taken only with once's -http2 or the target key http2.
func TestHTTP2OnlyWhenAsked(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var protos []string
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		protos = append(protos, r.Proto)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: a\n\ndata: b\n\ndata: [DONE]\n\n")
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{nil, "1.1"},
		{[]string{"-http2"}, "2.0"},
	} {
		args := append([]string{"once", "-url", srv.URL, "-insecure-skip-verify", "-json"}, tt.args...)
		code, stdout, stderr := runCmd(t, args...)
		if code != exitOK {
			t.Fatalf("%v: exit %d\n%s", args, code, stderr)
		}
		if rec := decodeRecords(t, stdout)[0]; rec.HTTPVersion != tt.want {
			t.Errorf("%v: http_version %q, want %q", args, rec.HTTPVersion, tt.want)
		}
	}
	cfg := writeConfig(t, fmt.Sprintf("[[target]]\nname = \"h2\"\nurl = %q\nsamples = [\"short\"]\ninsecure_skip_verify = true\nhttp2 = true\n", srv.URL))
	if code, stdout, stderr := runCmd(t, "check", "-config", cfg, "-runs", "1", "-inconclusive", "pass"); code != exitOK {
		t.Fatalf("check: exit %d\n%s\n%s", code, stdout, stderr)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := "HTTP/1.1 HTTP/2.0 HTTP/2.0"; strings.Join(protos, " ") != want {
		t.Errorf("the server saw %v, want %s (once, once -http2, check with http2 = true)", protos, want)
	}
}
