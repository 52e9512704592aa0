package daemon

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The daemon covers the application resumes as any drill: on the built-in
// target, a resumable AI SDK route's drop drill passes (a replay from the
// start) and a LangGraph run made without stream_resumable fails its drop
// drill (missed); the status page (as /api/status) shows each job with its
// verdict, and /metrics counts the resume checks by dialect.
func TestStatusAndMetricsCoverTheAppResumes(t *testing.T) {
	addr := freeAddr(t)
	d, _ := testDaemon(t, fmt.Sprintf(`region = "eu"
host = "h1"
listen = %q
[[target]]
name = "chat"
builtin = true
dialect = "ai-sdk-ui"
resumable = true
samples = []
drills = ["drop"]
every = "3s"
jitter = "0s"
[[target]]
name = "graph"
builtin = true
dialect = "langgraph"
stream_resumable = false
samples = []
drills = ["drop"]
every = "3s"
jitter = "0s"
`, addr), nil)
	stop := runDaemon(t, d, nil)
	defer stop()
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	get := func(path string) string {
		resp, err := hc.Get("http://" + addr + path)
		if err != nil {
			return ""
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	var st apiStatus
	waitFor(t, "a run of both drills on the status page", 120*time.Second, func() bool {
		if json.Unmarshal([]byte(get("/api/status")), &st) != nil || len(st.Jobs) != 2 {
			return false
		}
		for _, j := range st.Jobs {
			if len(j.Runs) == 0 {
				return false
			}
		}
		return true
	})
	for _, j := range st.Jobs {
		want, verdict := "PASS", "pass"
		if j.Target == "graph" {
			want, verdict = "FAIL", "missed"
		}
		if j.Drill != "drop" || j.Verdict != want || j.Runs[0].Verdict != verdict {
			t.Errorf("%s (%s): job verdict %s, run verdict %s; want %s, %s", j.Target, j.Dialect, j.Verdict, j.Runs[0].Verdict, want, verdict)
		}
	}
	metrics := get("/metrics")
	for _, want := range []string{
		`dialect="ai-sdk-ui",drill="drop",verdict="pass",failed="false"`,
		`dialect="langgraph",drill="drop",verdict="missed",failed="true"`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks a resume check with %s", want)
		}
	}
}
