package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streamprobe/streamprobe/internal/refserver"
	"github.com/streamprobe/streamprobe/internal/testenv/leak"
	"github.com/streamprobe/streamprobe/probe"
)

// compareDoc is compare's -json, as Argo Rollouts' web metric reads it.
type compareDoc struct {
	Result      string   `json:"result"`
	Pass        bool     `json:"pass"`
	Worse       int      `json:"worse"`
	HardFails   []string `json:"hard_fails"`
	Comparisons int      `json:"comparisons"`
	Metrics     []struct {
		Sample, Metric, Verdict, Method string
		Change                          *float64 `json:"change"`
		Lo                              *float64 `json:"change_lo"`
		Hi                              *float64 `json:"change_hi"`
		Margin                          float64  `json:"margin"`
	} `json:"metrics"`
}

func decodeCompare(t *testing.T, out string) compareDoc {
	t.Helper()
	var d compareDoc
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("compare -json: %v\n%s", err, out)
	}
	return d
}

const compareTargets = `[[target]]
name = "ref"
builtin = true
dialect = "openai-chat"
samples = ["short"]
[[target]]
name = "ref-slow"
builtin = true
dialect = "openai-chat"
samples = ["short"]
slowdown = 1.2
`

// The built-in target against itself is never worse (the shares of 30
// runs a side are inconclusive, so the exit is 3, or 0); against itself
// slowed by 20% (every offset of its streams 1.2 times as far) its TFC is
// worse, the interval around +20% and wholly over the +10% margin.
func TestCompareBuiltinSelfAndSlowed(t *testing.T) {
	cfg := writeConfig(t, compareTargets)
	code, stdout, stderr := runCmd(t, "compare", "-config", cfg, "-baseline", "ref", "-candidate", "ref", "-runs", "30", "-concurrency", "8", "-json", "-q")
	self := decodeCompare(t, stdout)
	if code == exitFail || self.Worse != 0 || self.Result == "FAIL" || self.Comparisons != 9 {
		t.Errorf("self: exit %d, %d worse, %s\n%s", code, self.Worse, self.Result, stderr)
	}
	dir := t.TempDir()
	junit, page := filepath.Join(dir, "c.xml"), filepath.Join(dir, "c.html")
	code, stdout, stderr = runCmd(t, "compare", "-config", cfg, "-baseline", "ref", "-candidate", "ref-slow", "-runs", "30", "-concurrency", "8", "-q", "-junit", junit, "-html", page)
	if code != exitFail {
		t.Fatalf("slowed: exit %d\n%s%s", code, stdout, stderr)
	}
	for _, want := range []string{"streamprobe compare: FAIL (", "  baseline:   ref\n  candidate:  ref-slow\n", "\nworse (the whole interval over the margin)\n  short TFC p50: +", "against the +10% margin"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("text lacks %q:\n%s", want, stdout)
		}
	}
	_, stdout, _ = runCmd(t, "compare", "-config", cfg, "-baseline", "ref", "-candidate", "ref-slow", "-runs", "30", "-concurrency", "8", "-q", "-json")
	slow := decodeCompare(t, stdout)
	for _, m := range slow.Metrics {
		if m.Metric == "tfc_p50" && (m.Verdict != "worse" || *m.Lo <= 0.10 || *m.Change < 0.12 || m.Method != "hodges-lehmann") {
			t.Errorf("slowed TFC p50: %s %+.3f [%+.3f, %+.3f]", m.Verdict, *m.Change, *m.Lo, *m.Hi)
		}
	}
	for _, f := range []string{junit, page} {
		if b, err := os.ReadFile(f); err != nil || !strings.Contains(string(b), "TFC p50") {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// One target at two URLs: a resume bug on the candidate only (it replays
// the id it was sent: a duplicate) is a hard fail, whatever the numbers;
// the URLs are shown without their user info and query.
func TestCompareTwoURLsHardFailsOnAResumeBug(t *testing.T) {
	good := refserver.NewServer(refserver.DrillEvents())
	t.Cleanup(good.Close)
	bad := refserver.NewUnstarted(refserver.DrillEvents())
	bad.Bug = refserver.Inclusive
	bad.Start()
	t.Cleanup(bad.Close)
	cfg := writeConfig(t, `[[target]]
name = "events"
url = "http://127.0.0.1:1/events"
dialect = "sse"
samples = []
drills = ["drop"]
`)
	secret := "user:pa55word-0123456789@"
	candURL := strings.Replace(bad.URL, "http://", "http://"+secret, 1) + "/?token=tok-0123456789abcdef"
	code, stdout, stderr := runCmd(t, "compare", "-config", cfg, "-target", "events", "-baseline-url", good.URL, "-candidate-url", candURL, "-runs", "1", "-q")
	if code != exitFail || !strings.Contains(stdout, "resume verdicts failing on the candidate only (a hard fail)\n  drill drop: duplicate on the candidate") {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	for _, s := range []string{"pa55word-0123456789", "tok-0123456789abcdef"} {
		if p := leak.Prefix(stdout+stderr, s); p != "" {
			t.Errorf("compare shows %q of a URL's secret:\n%s", p, stdout)
		}
	}
	if !strings.Contains(stdout, "candidate:  events at "+strings.TrimSuffix(bad.URL, "/")+"/\n") {
		t.Errorf("the candidate's URL is not named:\n%s", stdout)
	}
}

// Offline: two sets of results logs, read as report reads them (one
// target each, or the one named), runs kept as records: a candidate whose
// TFC is 30% slower is worse; the same logs on both sides are not; logs
// holding two targets need one named.
func TestCompareLogs(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, targets []string, scale float64) string {
		var b strings.Builder
		start := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
		for _, target := range targets {
			for i := range 60 {
				tfc, tail := (400+float64(i%20))*scale, 800+float64(i%7)
				r := probe.Record{RequestID: fmt.Sprintf("%s-%d", target, i), Target: target, Sample: "short", Drill: probe.DrillNone, Outcome: probe.Success,
					Chunks: 4, TFCMs: &tfc, TailMs: &tail, Gaps: probe.Gaps{Count: 3, Values: []float64{40, 42, 44}},
					StartedAt: start.Add(time.Duration(i) * time.Minute).Format(time.RFC3339Nano)}
				j, _ := json.Marshal(r)
				b.Write(append(j, '\n'))
			}
		}
		p := filepath.Join(dir, name+".jsonl")
		os.WriteFile(p, []byte(b.String()), 0o644)
		return p
	}
	base, cand, two := write("base", []string{"api"}, 1), write("cand", []string{"api"}, 1.3), write("two", []string{"api", "canary"}, 1)
	code, stdout, stderr := runCmd(t, "compare", "-baseline-log", base, "-candidate-log", cand, "-json")
	d := decodeCompare(t, stdout)
	if code != exitFail || d.Metrics[0].Metric != "tfc_p50" || d.Metrics[0].Verdict != "worse" || !strings.Contains(stderr, "-candidate-log: 60 line(s), 60 run(s) kept, 60 of target api") {
		t.Errorf("30%% slower: exit %d %+v\n%s", code, d.Metrics[0], stderr)
	}
	code, stdout, _ = runCmd(t, "compare", "-baseline-log", base, "-candidate-log", base, "-json")
	if d := decodeCompare(t, stdout); code == exitFail || d.Worse != 0 {
		t.Errorf("the same logs: exit %d, %d worse", code, d.Worse)
	}
	code, _, stderr = runCmd(t, "compare", "-baseline-log", two, "-candidate-log", cand)
	if code != exitUsage || stderr != "streamprobe compare: -baseline-log: the logs hold 2 targets (api, canary): name one with -baseline\n" {
		t.Errorf("two targets: exit %d %q", code, stderr)
	}
	code, stdout, _ = runCmd(t, "compare", "-baseline-log", two, "-baseline", "canary", "-candidate-log", cand, "-json")
	if d := decodeCompare(t, stdout); code != exitFail || d.Metrics[0].Verdict != "worse" {
		t.Errorf("canary named: exit %d %+v", code, d.Metrics[0])
	}
}

// compare's usage: one way to compare, each in one line, exit 2.
func TestCompareUsageErrors(t *testing.T) {
	cfg := writeConfig(t, compareTargets)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"-config", cfg}, "give -baseline and -candidate (two targets of -config), or -target with -baseline-url and -candidate-url, or -baseline-log and -candidate-log"},
		{[]string{"-config", cfg, "-baseline", "ref", "-candidate", "nope"}, `no target "nope" in ` + cfg},
		{[]string{"-config", cfg, "-target", "ref", "-baseline-url", "http://a"}, "-target, -baseline-url and -candidate-url go together"},
		{[]string{"-config", cfg, "-target", "ref", "-baseline-url", "ftp://a", "-candidate-url", "http://b"}, "-baseline-url: want an absolute http or https URL"},
		{[]string{"-baseline-log", "/nonexistent/a.jsonl"}, "give both -baseline-log and -candidate-log"},
		{[]string{"-baseline-log", "/nonexistent/a.jsonl", "-candidate-log", "/nonexistent/b.jsonl"}, `-baseline-log: "/nonexistent/a.jsonl": no such file`},
		{[]string{"-config", cfg, "-baseline", "ref", "-candidate", "ref", "-since", "1h"}, "-since and -until select runs of logs"},
		{[]string{"-config", cfg, "-baseline", "ref", "-candidate", "ref", "-runs", "0"}, "-runs and -concurrency must be 1 or more"},
		{[]string{"-config", cfg, "-baseline", "ref", "-candidate", "ref", "-confidence", "1"}, "-confidence 1: want a level from 0.5 to 0.9999"},
		{[]string{"-config", cfg, "-baseline", "ref", "-candidate", "ref", "-inconclusive", "maybe"}, `-inconclusive "maybe": want 3, pass or fail`},
		{[]string{"-baseline", "ref", "-candidate", "ref"}, "-config is required to probe"},
	} {
		code, _, stderr := runCmd(t, append([]string{"compare"}, tt.args...)...)
		if code != exitUsage || !strings.Contains(stderr, tt.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q, want %q on one line", tt.args, code, stderr, tt.want)
		}
	}
}

// compare against servers that echo the key, in the stream and in an
// HTTP error body: its text, JSON, JUnit and HTML hold no piece of it.
func TestCompareNeverShowsAnEchoedKey(t *testing.T) {
	const key = "sk-compare-echo-0123456789abcdefghijklm"
	cfg := echoKeyConfig(t, key, "")
	dir := t.TempDir()
	junit, page := filepath.Join(dir, "c.xml"), filepath.Join(dir, "c.html")
	for _, asJSON := range []bool{false, true} {
		args := []string{"compare", "-config", cfg, "-baseline", "echo-stream", "-candidate", "echo-body", "-runs", "3", "-q", "-junit", junit, "-html", page}
		if asJSON {
			args = append(args, "-json")
		}
		// Every run of both fails (the servers answer as the check test's
		// do): the shares are 100% on both sides, inconclusive on 3 runs.
		code, stdout, stderr := runCmd(t, args...)
		if code != exitInconclusive || !strings.Contains(stdout, "failed runs") && !strings.Contains(stdout, `"error_share"`) {
			t.Fatalf("json %v: exit %d, the servers did not answer as planned:\n%s%s", asJSON, code, stdout, stderr)
		}
		outputs := map[string]string{"stdout": stdout, "stderr": stderr}
		for name, path := range map[string]string{"junit": junit, "html": page} {
			b, _ := os.ReadFile(path)
			outputs[name] = string(b)
		}
		for name, out := range outputs {
			if p := leak.Prefix(out, key); p != "" {
				t.Errorf("json %v: compare's %s shows %q of the key", asJSON, name, p)
			}
		}
	}
}
