package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/streamprobe/streamprobe/internal/testenv/leak"
	"github.com/streamprobe/streamprobe/probe"
)

func call(t *testing.T, method, url, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// POST /run runs a job now and answers its record; only with the token of
// run_token_file, and within max_concurrent: with one slot held by a
// scheduled run that streams for a while, the on-demand run starts on the
// target only after that run ended (the server's own clock says so).
// (The quick job's own schedule is a yearly cron: no run of its own
// during the test.) Its record goes to the results log and the status
// page like any run;
// GET /api/status gives the page as JSON. The token shows nowhere.
func TestOnDemandRun(t *testing.T) {
	const token = "run-token-0123456789abcdefghij"
	tokFile := filepath.Join(t.TempDir(), "run-token")
	os.WriteFile(tokFile, []byte(token+"\n"), 0o600)
	var mu sync.Mutex
	type span struct{ start, end time.Time }
	spans := map[string][]span{}
	var slowStarted atomic.Bool
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		if strings.Contains(r.URL.Path, "slow") {
			slowStarted.Store(true)
		}
		w.Header().Set("Content-Type", "text/event-stream")
		f := w.(http.Flusher)
		n := 2
		if strings.Contains(r.URL.Path, "slow") {
			n = 8
		}
		for i := range n {
			fmt.Fprintf(w, "data: %d\n\n", i)
			f.Flush()
			time.Sleep(50 * time.Millisecond)
		}
		io.WriteString(w, "data: [DONE]\n\n")
		mu.Lock()
		spans[r.URL.Path] = append(spans[r.URL.Path], span{start, time.Now()})
		mu.Unlock()
	}))
	defer target.Close()
	addr := freeAddr(t)
	results := filepath.Join(t.TempDir(), "results.jsonl")
	d, logs := testDaemon(t, fmt.Sprintf(`listen = %q
results_log = %q
run_token_file = %q
max_concurrent = 1
[[target]]
name = "slow"
url = "%s/slow"
samples = ["long"]
every = "1h"
jitter = "0s"
[[target]]
name = "quick"
url = "%s/quick"
samples = ["short"]
every = "0 0 1 1 *"
jitter = "0s"
`, addr, results, tokFile, target.URL, target.URL), nil)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx, nil) }()
	base := "http://" + addr
	waitFor(t, "the slow run to start", 30*time.Second, func() bool {
		resp, err := http.Get(base + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK && slowStarted.Load()
	})
	var outputs []string
	for _, c := range []struct {
		method, query, token string
		code                 int
		has                  string
	}{
		{http.MethodPost, "?target=quick&sample=short", "", http.StatusUnauthorized, "want Authorization: Bearer"},
		{http.MethodPost, "?target=quick&sample=short", "wrong-token-0123456789", http.StatusUnauthorized, "want Authorization"},
		{http.MethodGet, "?target=quick&sample=short", token, http.StatusMethodNotAllowed, ""},
		{http.MethodPost, "?target=quick&sample=huge", token, http.StatusNotFound, "no job quick/huge"},
		{http.MethodPost, "?target=quick", token, http.StatusBadRequest, "want target and sample"},
	} {
		code, body := call(t, c.method, base+"/run"+c.query, c.token)
		if code != c.code || !strings.Contains(body, c.has) {
			t.Errorf("%s /run%s: %d %s, want %d %q", c.method, c.query, code, body, c.code, c.has)
		}
		outputs = append(outputs, body)
	}
	code, body := call(t, http.MethodPost, base+"/run?target=quick&sample=short", token)
	var rec probe.Record
	if err := json.Unmarshal([]byte(body), &rec); code != http.StatusOK || err != nil || rec.Target != "quick" || rec.Sample != "short" || rec.Outcome != probe.Success {
		t.Fatalf("POST /run: %d %s", code, body)
	}
	mu.Lock()
	slow, quick := spans["/slow"], spans["/quick"]
	mu.Unlock()
	if len(slow) != 1 || len(quick) != 1 || quick[0].start.Before(slow[0].end) {
		t.Errorf("max_concurrent 1: the on-demand run started at %v, the scheduled run held the slot until %v", quick, slow)
	}
	waitFor(t, "the record in the results log", 10*time.Second, func() bool {
		b, _ := os.ReadFile(results)
		return strings.Contains(string(b), rec.RequestID)
	})
	// One run decides no share: the class is INCONCLUSIVE, as check
	// would say of it.
	code, body = call(t, http.MethodGet, base+"/api/status", "")
	var st apiStatus
	if err := json.Unmarshal([]byte(body), &st); code != http.StatusOK || err != nil {
		t.Fatalf("/api/status: %d %v %s", code, err, body)
	}
	if len(st.Jobs) != 2 || st.Jobs[1].Target != "quick" || len(st.Jobs[1].Runs) != 1 || st.Jobs[1].Runs[0].RequestID != rec.RequestID ||
		st.Jobs[1].Verdict != "INCONCLUSIVE" || st.Jobs[1].NextRun == "" || st.Health.Status != "ok" || !strings.Contains(st.Summary, "classes PASS") {
		t.Errorf("/api/status: %s", body)
	}
	outputs = append(outputs, body)
	for _, p := range []string{"/healthz", "/", "/metrics"} {
		_, b := call(t, http.MethodGet, base+p, "")
		outputs = append(outputs, b)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(results)
	outputs = append(outputs, logs.String(), string(b))
	for _, o := range outputs {
		if p := leak.Any(o, token); p != "" {
			t.Errorf("an output shows %q of the run token", p)
		}
	}
}

// Without run_token_file, POST /run is off: 404, whatever the request
// carries; run_token_file without listen is refused when the config loads.
func TestOnDemandRunOffByDefault(t *testing.T) {
	addr := freeAddr(t)
	d, _ := testDaemon(t, fmt.Sprintf("listen = %q\n[[target]]\nname = \"a\"\nbuiltin = true\nsamples = [\"short\"]\nevery = \"1h\"\njitter = \"30m\"\n", addr), nil)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx, nil) }()
	waitFor(t, "the listener", 30*time.Second, func() bool {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil
	})
	code, body := call(t, http.MethodPost, "http://"+addr+"/run?target=a&sample=short", "anything")
	if code != http.StatusNotFound || !strings.Contains(body, "on-demand runs are off") {
		t.Errorf("%d %s", code, body)
	}
	stop()
	<-done
}
