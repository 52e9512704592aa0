package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/streamprobe/streamprobe/internal/jobs"
)

// check -runs auto: looks of 20, 40, then every 40 more runs, until each
// class has every cell decided. A target within its budgets is decided at
// the first look whose alpha lets a p95 pass (120 runs of 160, alpha
// 0.00625 each side: 0.95^120 is under it); a target whose every run
// fails is decided at the first look (its outcomes row is red on any
// run), with its 20 runs; -max-time stops at the end of a look, and the
// plan says so.
func TestCheckRunsAuto(t *testing.T) {
	quick, _ := countingTarget(t)
	gone := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(gone.Close)
	cfg := writeConfig(t, fmt.Sprintf(`[[target]]
name = "quick"
url = %q
samples = ["short"]
[[target]]
name = "gone"
url = %q
samples = ["short"]
[budget.short]
tfc = "5s"
tail = "5s"
stall_share = 1
`, quick.URL, gone.URL))
	code, stdout, stderr := runCmd(t, "check", "-config", cfg, "-max-runs", "160", "-concurrency", "8", "-json")
	var doc struct {
		Result string `json:"result"`
		Plan   struct {
			Looks     []int                               `json:"looks"`
			LooksMade int                                 `json:"looks_made"`
			Classes   map[string]struct{ Look, Runs int } `json:"classes"`
			Alpha     []float64                           `json:"alpha"`
		} `json:"plan"`
		Targets []struct {
			Target     string              `json:"target"`
			Verdict    string              `json:"verdict"`
			RequestIDs map[string][]string `json:"request_ids"`
		} `json:"targets"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if code != exitFail || doc.Result != "FAIL" || fmt.Sprint(doc.Plan.Looks) != "[20 40 80 120 160]" || doc.Plan.LooksMade != 4 {
		t.Fatalf("exit %d, %s, plan %+v\n%s", code, doc.Result, doc.Plan, stderr)
	}
	if q, g := doc.Plan.Classes["quick/short"], doc.Plan.Classes["gone/short"]; q.Look != 4 || q.Runs != 120 || g.Look != 1 || g.Runs != 20 {
		t.Errorf("classes ended %+v", doc.Plan.Classes)
	}
	if doc.Targets[0].Verdict != "PASS" || len(doc.Targets[0].RequestIDs["short"]) != 120 || doc.Targets[1].Verdict != "FAIL" || len(doc.Targets[1].RequestIDs["short"]) != 20 {
		t.Errorf("targets: %s %d runs, %s %d runs", doc.Targets[0].Verdict, len(doc.Targets[0].RequestIDs["short"]), doc.Targets[1].Verdict, len(doc.Targets[1].RequestIDs["short"]))
	}
	for _, want := range []string{"streamprobe check: look 1 of 5: 2 class(es) undecided, to 20 runs each\n",
		"streamprobe check: gone/short: 20 run(s), 20 failed (40/40 runs done); every cell decided at look 1\n",
		"streamprobe check: look 4 of 5: 1 class(es) undecided, to 120 runs each\n",
		"streamprobe check: quick/short: 120 run(s), 0 failed (140/140 runs done); every cell decided at look 4\n"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	// Past -max-time no run starts; the ones in flight (at most 8, or
	// none on a machine slow enough) finish, and decide nothing: exit 3
	// (a class with no run at all is inconclusive too, never a pass).
	code, stdout, _ = runCmd(t, "check", "-config", cfg, "-target", "quick", "-max-time", "1ms", "-concurrency", "8")
	n := 0
	fmt.Sscanf(stdout[strings.Index(stdout, "runs: short ")+len("runs: short "):], "%d", &n)
	if code != exitInconclusive || !strings.Contains(stdout, "; 1 look(s) made; stopped by -max-time 1ms at look 1\n") || n > 8 {
		t.Errorf("-max-time: exit %d, %d runs\n%s", code, n, stdout)
	}
}

// The runs of a look go round the jobs, one run of each in turn, so that
// a slow minute hits every sample and target alike.
func TestInterleave(t *testing.T) {
	js := []jobs.Job{{Name: "a/short"}, {Name: "a/long"}, {Name: "b/short"}}
	need := map[string]int{"a/short": 2, "a/long": 3, "b/short": 1}
	var got []string
	for _, j := range interleave(js, func(j jobs.Job) int { return need[j.Name] }) {
		got = append(got, j.Name)
	}
	if want := "a/short a/long b/short a/short a/long a/long"; strings.Join(got, " ") != want {
		t.Errorf("order %q, want %q", strings.Join(got, " "), want)
	}
}
