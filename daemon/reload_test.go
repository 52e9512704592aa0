package daemon

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/streamprobe/streamprobe/config"
	"github.com/streamprobe/streamprobe/internal/jobs"
	"github.com/streamprobe/streamprobe/internal/refserver"
	"github.com/streamprobe/streamprobe/probe"
)

// readRecords parses every line of a results log; a line that is not a
// whole JSON record fails the test.
func readRecords(t *testing.T, path string) []probe.Record {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var recs []probe.Record
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		var r probe.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%s:%d is not a JSON record (%v): %q", path, n, err, sc.Text())
		}
		recs = append(recs, r)
	}
	return recs
}

// interval is one run as its record tells it: from started_at for
// duration_ms.
type interval struct {
	job        string
	start, end time.Time
}

func runIntervals(t *testing.T, recs []probe.Record) []interval {
	t.Helper()
	var out []interval
	for _, r := range recs {
		start, err := time.Parse(time.RFC3339Nano, r.StartedAt)
		if err != nil {
			t.Fatalf("started_at %q: %v", r.StartedAt, err)
		}
		job := r.Target + "/" + r.Sample
		if r.Drill != probe.DrillNone && r.Drill != "" {
			job = r.Target + "/" + r.Drill
		}
		out = append(out, interval{job, start, start.Add(time.Duration(r.DurationMs * float64(time.Millisecond)))})
	}
	return out
}

// maxOverlap returns the largest number of intervals open at once, and
// the largest number of one job's intervals open at once.
func maxOverlap(iv []interval) (all int, perJob map[string]int) {
	type edge struct {
		at    time.Time
		delta int
		job   string
	}
	var edges []edge
	for _, i := range iv {
		edges = append(edges, edge{i.start, 1, i.job}, edge{i.end, -1, i.job})
	}
	// Ends sort before starts at the same instant: touching is not
	// overlapping.
	sort.Slice(edges, func(a, b int) bool {
		if !edges[a].at.Equal(edges[b].at) {
			return edges[a].at.Before(edges[b].at)
		}
		return edges[a].delta < edges[b].delta
	})
	perJob = map[string]int{}
	open, openJob := 0, map[string]int{}
	for _, e := range edges {
		open += e.delta
		openJob[e.job] += e.delta
		all = max(all, open)
		perJob[e.job] = max(perJob[e.job], openJob[e.job])
	}
	return all, perJob
}

// grepLineWith returns the first line of s that starts with prefix and
// contains sub.
func grepLineWith(s, prefix, sub string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) && strings.Contains(l, sub) {
			return l
		}
	}
	return ""
}

// linesWith is the lines of s that contain any of subs, for a failure
// to show.
func linesWith(s string, subs ...string) string {
	var b strings.Builder
	for _, l := range strings.Split(s, "\n") {
		for _, sub := range subs {
			if strings.Contains(l, sub) {
				b.WriteString(l + "\n")
				break
			}
		}
	}
	return b.String()
}

// runDaemon runs d in the background, its reloads from reload; the
// returned func stops it and fails the test if Run returned an error.
func runDaemon(t *testing.T, d *Daemon, reload <-chan *config.Config) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx, reload) }()
	return func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

// waitFor polls cond until it holds or the generous timeout passes.
func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// 50 reloads in quick succession, through the channel the SIGHUP handler
// uses, while slow streams keep every slot busy: the results log shows
// that no more than max_concurrent runs were ever in flight and that no
// job ever overlapped itself.
func TestReloadStormKeepsOneConcurrencyLimit(t *testing.T) {
	// Each run streams for about 400 ms; three jobs due every 100 ms on
	// two slots keep the host saturated.
	srv := refserver.NewServer(refserver.Events(refserver.Ms(0, 50, 100, 150, 200, 250, 300, 350, 400), -1))
	defer srv.Close()
	results := filepath.Join(t.TempDir(), "results.jsonl")
	conf := func(every string, targets ...string) string {
		s := fmt.Sprintf("results_log = %q\nmax_concurrent = 2\n", results)
		for _, n := range targets {
			s += fmt.Sprintf("[[target]]\nname = %q\nurl = %q\nend_data = \"\"\nsamples = [\"short\"]\nevery = %q\njitter = \"0s\"\n", n, srv.URL, every)
		}
		return s
	}
	d, logs := testDaemon(t, conf("100ms", "a", "b", "c"), nil)
	reload := make(chan *config.Config)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx, reload) }()
	variants := []string{conf("100ms", "a", "b", "c"), conf("120ms", "a", "b", "d"), conf("100ms", "a", "c", "d")}
	for i := range 50 {
		nc, err := config.Parse("test.toml", []byte(variants[i%len(variants)]), jobs.Env(os.Getenv))
		if err != nil {
			t.Fatal(err)
		}
		reload <- nc
		time.Sleep(10 * time.Millisecond)
	}
	// Enough runs after the storm for overlaps to have shown.
	waitFor(t, "24 records in the results log", 60*time.Second, func() bool {
		b, _ := os.ReadFile(results)
		return strings.Count(string(b), "\n") >= 24
	})
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(logs.String(), `"msg":"config reloaded"`); n != 50 {
		t.Errorf("%d reloads logged, want 50", n)
	}
	recs := readRecords(t, results)
	all, perJob := maxOverlap(runIntervals(t, recs))
	t.Logf("%d records; at most %d runs at once; per job %v", len(recs), all, perJob)
	if all > 2 {
		t.Errorf("%d runs were in flight at once with max_concurrent = 2", all)
	}
	for job, n := range perJob {
		if n > 1 {
			t.Errorf("job %s ran %d times at once", job, n)
		}
	}
	// The host was saturated (two runs at once, never more): runs waited
	// for a slot and due runs were skipped, all of it counted.
	if all != 2 {
		t.Errorf("%d runs at most were in flight at once, want exactly 2 (saturated, never more)", all)
	}
	var out strings.Builder
	d.Metrics.Set.WritePrometheus(&out)
	for _, name := range []string{"streamprobe_runs_delayed_total", "streamprobe_schedule_lag_seconds_count"} {
		if l := grepLine(out.String(), name); l == "" || strings.HasSuffix(l, " 0") {
			t.Errorf("backlog not shown: %q", l)
		}
	}
	if !strings.Contains(out.String(), `reason="no_slot"} `) {
		t.Errorf("no no_slot skip counter:\n%s", out.String())
	}
}

// pushSink is a push endpoint on loopback that keeps every body.
type pushSink struct {
	*httptest.Server
	mu     sync.Mutex
	bodies []string
}

func newPushSink(t *testing.T) *pushSink {
	p := &pushSink{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body io.Reader = r.Body
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body = zr
		}
		b, _ := io.ReadAll(body)
		p.mu.Lock()
		p.bodies = append(p.bodies, string(b))
		p.mu.Unlock()
	}))
	t.Cleanup(p.Close)
	return p
}

func (p *pushSink) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.bodies)
}

// all is every body received so far, in order.
func (p *pushSink) all() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.bodies...)
}

func scrape(addr string) (string, error) {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

func reloadConf(t *testing.T, text string) *config.Config {
	t.Helper()
	c, err := config.Parse("reload.toml", []byte(text), jobs.Env(os.Getenv))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A reload applies every part of the new config: the push URL and
// interval, the results log (opened again: a log rotated away is let go),
// the listen address, region and labels, budgets; the series of a
// removed target are gone; the reload gauges say it worked.
func TestReloadAppliesTheWholeConfig(t *testing.T) {
	srv := refserver.NewServer(refserver.Events(refserver.Ms(5, 10), -1))
	defer srv.Close()
	pushA, pushB := newPushSink(t), newPushSink(t)
	dir := t.TempDir()
	results := filepath.Join(dir, "results.jsonl")
	addrA, addrB := freeAddr(t), freeAddr(t)
	target := func(name string) string {
		return fmt.Sprintf("[[target]]\nname = %q\nurl = %q\nend_data = \"\"\nsamples = [\"short\"]\nevery = \"200ms\"\njitter = \"0s\"\n", name, srv.URL)
	}
	confA := fmt.Sprintf("region = \"r1\"\nlisten = %q\nresults_log = %q\n[labels]\nenv = \"a\"\n[push]\nurl = %q\ninterval = \"1h\"\n[budget.short]\ntfc = \"600ms\"\n",
		addrA, results, pushA.URL) + target("keep") + target("gone")
	confB := fmt.Sprintf("region = \"r2\"\nlisten = %q\nresults_log = %q\n[labels]\nenv = \"b\"\n[push]\nurl = %q\ninterval = \"1s\"\ntimeout = \"1s\"\n[budget.long]\ntfc = \"1500ms\"\n",
		addrB, results, pushB.URL) + target("keep")
	d, logs := testDaemon(t, confA, nil)
	reloaded := make(chan struct{}, 1)
	d.Reloaded = func(*config.Config) { reloaded <- struct{}{} }
	reload := make(chan *config.Config)
	defer runDaemon(t, d, reload)()
	waitFor(t, `runs of "gone" on /metrics`, 20*time.Second, func() bool {
		m, _ := scrape(addrA)
		l := grepLineWith(m, "streamprobe_runs_total{", `target="gone",sample="short",dialect="sse",drill="none",outcome="success"}`)
		return l != "" && !strings.HasSuffix(l, " 0")
	})
	reloadedBefore := time.Now()
	// logrotate: the log is moved away, then the daemon is told.
	if err := os.Rename(results, results+".1"); err != nil {
		t.Fatal(err)
	}
	reload <- reloadConf(t, confB)
	select {
	case <-reloaded: // the reload is applied whole, its gauges set
	case <-time.After(20 * time.Second):
		t.Fatal("the reload did not complete in 20s")
	}

	// The push goes to the new URL, at the new interval (the old one
	// was an hour), with the new labels and without the removed target:
	// every push to it, a run of "gone" in flight across the reload
	// notwithstanding. A push that arrived after the reload completed
	// may have been made before (one is in flight at a time): the one
	// after it was made after, and carries the reload's time.
	n := pushB.count()
	waitFor(t, "a push to the new URL made after the reload completed", 20*time.Second, func() bool { return pushB.count() >= n+2 })
	bodies := pushB.all()
	for i, body := range bodies {
		for _, want := range []string{`region="r2"`, `env="b"`, `target="keep"`, `streamprobe_budget_seconds{region="r2",host=`,
			`sample="long",metric="tfc"} 1.5`, `streamprobe_config_last_reload_successful{region="r2",`} {
			if !strings.Contains(body, want) {
				t.Errorf("push %d after the reload lacks %s", i, want)
			}
		}
		for _, gone := range []string{`region="r1"`, `env="a"`, `target="gone"`, `sample="short",metric="tfc"`} {
			if strings.Contains(body, gone) {
				t.Errorf("push %d after the reload still has %s:\n%s", i, gone, linesWith(body, gone))
			}
		}
	}
	body := bodies[n+1]
	if n := pushA.count(); n != 0 {
		t.Errorf("%d pushes went to the old URL", n)
	}
	if l := grepLine(body, "streamprobe_config_last_reload_success_timestamp_seconds"); l == "" {
		t.Error("no reload timestamp gauge")
	} else {
		var v float64
		fmt.Sscan(l[strings.LastIndex(l, " ")+1:], &v)
		if v < float64(reloadedBefore.Unix()) {
			t.Errorf("reload timestamp %v is before the reload (%v)", v, reloadedBefore.Unix())
		}
	}
	// The listen address moved.
	waitFor(t, "/metrics on the new address, and the old one closed", 20*time.Second, func() bool {
		_, errA := scrape(addrA)
		m, errB := scrape(addrB)
		return errA != nil && errB == nil && strings.Contains(m, `region="r2"`)
	})
	// The results log was opened again: new records go to a new file.
	waitFor(t, "a record in the reopened results log", 20*time.Second, func() bool {
		b, _ := os.ReadFile(results)
		return strings.Contains(string(b), `"target":"keep"`)
	})
	readRecords(t, results)
	readRecords(t, results+".1")
	if strings.Contains(logs.String(), "reload failed") {
		t.Errorf("a reload failed:\n%s", logs)
	}
}

// A reload that cannot be applied whole changes nothing: here the new
// results log is in a directory that does not exist, then the new listen
// address is taken. The old push URL, labels, listener and jobs go on, and
// streamprobe_config_last_reload_successful says 0.
func TestReloadAllOrNothing(t *testing.T) {
	srv := refserver.NewServer(refserver.Events(refserver.Ms(5, 10), -1))
	defer srv.Close()
	pushA, pushB := newPushSink(t), newPushSink(t)
	results := filepath.Join(t.TempDir(), "results.jsonl")
	addrA := freeAddr(t)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	conf := func(region, listen, results, push, name string) string {
		return fmt.Sprintf("region = %q\nlisten = %q\nresults_log = %q\n[push]\nurl = %q\ninterval = \"1s\"\ntimeout = \"1s\"\n[[target]]\nname = %q\nurl = %q\nend_data = \"\"\nsamples = [\"short\"]\nevery = \"200ms\"\njitter = \"0s\"\n",
			region, listen, results, push, name, srv.URL)
	}
	d, logs := testDaemon(t, conf("r1", addrA, results, pushA.URL, "old"), nil)
	reload := make(chan *config.Config)
	defer runDaemon(t, d, reload)()
	waitFor(t, "the first push", 20*time.Second, func() bool { return pushA.count() > 0 })
	// The results log's directory exists when the file is loaded (so the
	// load's own check passes) and is a file when the reload applies it
	// (a missing one the reload would create).
	gone := filepath.Join(t.TempDir(), "gone")
	if err := os.Mkdir(gone, 0o755); err != nil {
		t.Fatal(err)
	}
	for i, bad := range []string{
		conf("r2", addrA, filepath.Join(gone, "results.jsonl"), pushB.URL, "new"),
		conf("r2", taken.Addr().String(), results, pushB.URL, "new"),
	} {
		nc := reloadConf(t, bad)
		notADir(t, gone)
		reload <- nc
		waitFor(t, "the refused reload in the log", 20*time.Second, func() bool {
			return strings.Count(logs.String(), "reload failed; the old config keeps running") == i+1
		})
		// Pushes are sequential: once the old URL has had two more, the
		// new one would have had its turn.
		n := pushA.count()
		waitFor(t, "two more pushes to the old URL", 20*time.Second, func() bool { return pushA.count() >= n+2 })
		m, err := scrape(addrA)
		if err != nil {
			t.Fatalf("the old listener is gone after a refused reload: %v", err)
		}
		for _, want := range []string{`streamprobe_config_last_reload_successful{region="r1",`, `target="old"`} {
			if !strings.Contains(m, want) {
				t.Errorf("after refused reload %d, /metrics lacks %s", i, want)
			}
		}
		if l := grepLine(m, "streamprobe_config_last_reload_successful"); !strings.HasSuffix(l, " 0") {
			t.Errorf("after refused reload %d: %s", i, l)
		}
		if strings.Contains(m, `region="r2"`) || strings.Contains(m, `target="new"`) {
			t.Errorf("refused reload %d was applied in part:\n%s", i, m)
		}
	}
	if pushB.count() != 0 {
		t.Errorf("%d pushes went to the URL of a refused config", pushB.count())
	}
	if b, _ := os.ReadFile(results); strings.Contains(string(b), `"target":"new"`) {
		t.Error("a job of a refused config ran")
	}
}

// notADir puts a file where the directory dir was: a results log in it
// can be neither opened nor its directory made.
func notADir(t *testing.T, dir string) {
	t.Helper()
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
}

// listeningSockets counts this process's listening TCP sockets: its
// socket descriptors that /proc/net/tcp and tcp6 list in state LISTEN.
func listeningSockets(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	mine := map[string]bool{}
	for _, fd := range fds {
		link, _ := os.Readlink("/proc/self/fd/" + fd.Name())
		if inode, ok := strings.CutPrefix(link, "socket:["); ok {
			mine[strings.TrimSuffix(inode, "]")] = true
		}
	}
	n := 0
	for _, table := range []string{"/proc/self/net/tcp", "/proc/self/net/tcp6"} {
		b, _ := os.ReadFile(table)
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			if len(f) > 9 && f[3] == "0A" && mine[f[9]] { // 0A: LISTEN
				n++
			}
		}
	}
	return n
}

// A refused reload of a config with a built-in target leaves no server
// up: not when the reload fails on a taken listen address or a results log
// directory that became a file (before the target would start), nor when it
// fails after the target started (a bearer_file gone when the jobs read
// it). A reload that applies does start it: the count sees it.
func TestRefusedReloadLeavesNoBuiltinTarget(t *testing.T) {
	srv := refserver.NewServer(refserver.Events(refserver.Ms(5, 10), -1))
	defer srv.Close()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	dir := t.TempDir()
	results, keyFile := filepath.Join(dir, "results.jsonl"), filepath.Join(dir, "key")
	addr := freeAddr(t)
	old := fmt.Sprintf("listen = %q\nresults_log = %q\n", addr, results) + scheduleConf(srv.URL, "old", "1h")
	withBuiltin := func(listen, results string) string {
		return fmt.Sprintf("listen = %q\nresults_log = %q\n", listen, results) + scheduleConf(srv.URL, "old", "1h") +
			fmt.Sprintf("[[target]]\nname = \"ref\"\nbuiltin = true\ndialect = \"sse\"\nsamples = [\"short\"]\nevery = \"1h\"\njitter = \"0s\"\n"+
				"[[target]]\nname = \"keyed\"\nurl = %q\nend_data = \"\"\nbearer_file = %q\nsamples = [\"short\"]\nevery = \"1h\"\njitter = \"0s\"\n", srv.URL, keyFile)
	}
	d, logs := testDaemon(t, old, nil)
	reload := make(chan *config.Config)
	defer runDaemon(t, d, reload)()
	waitFor(t, "the old config's run", 30*time.Second, func() bool { return runsOf(d, "old") == 1 })
	gone := filepath.Join(dir, "gone")
	for i, tc := range []struct {
		name, conf string
		undo       func() // after the load, before the apply
	}{
		{"listen address taken", withBuiltin(taken.Addr().String(), results), func() {}},
		{"results log directory gone, a file in its place", withBuiltin(addr, filepath.Join(gone, "results.jsonl")), func() { notADir(t, gone) }},
		{"bearer_file gone", withBuiltin(addr, results), func() { os.Remove(keyFile) }},
	} {
		os.RemoveAll(gone)
		if err := os.MkdirAll(gone, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(keyFile, []byte("sk-key\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		nc := reloadConf(t, tc.conf)
		tc.undo()
		before := listeningSockets(t)
		reload <- nc
		waitFor(t, tc.name+": the refused reload in the log", 20*time.Second, func() bool {
			return strings.Count(logs.String(), "reload failed; the old config keeps running") == i+1
		})
		if after := listeningSockets(t); after != before {
			t.Errorf("%s: %d listening sockets before the refused reload, %d after", tc.name, before, after)
		}
	}
	if err := os.WriteFile(keyFile, []byte("sk-key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	before := listeningSockets(t)
	reload <- reloadConf(t, withBuiltin(addr, results))
	waitFor(t, "the built-in target of an applied reload", 20*time.Second, func() bool { return runsOf(d, "ref") > 0 })
	if after := listeningSockets(t); after != before+1 {
		t.Errorf("%d listening sockets before the reload that starts the built-in target, %d after, want one more", before, after)
	}
}

// The command binds listen before it starts anything and hands the
// listener over (Daemon.Listener): Run serves on it, and does not bind the
// address again. Listen says a taken address once, with a hint.
func TestRunServesOnTheListenerHandedOver(t *testing.T) {
	srv := refserver.NewServer(refserver.Events(refserver.Ms(5, 10), -1))
	defer srv.Close()
	ln, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if _, err := Listen(addr); err == nil || err.Error() != "listen "+addr+": address already in use (is another streamprobe running? or give listen another port)" {
		t.Errorf("a taken address: %v", err)
	}
	d, _ := testDaemon(t, fmt.Sprintf("listen = %q\n", addr)+scheduleConf(srv.URL, "a", "1h"), nil)
	d.Listener = ln
	defer runDaemon(t, d, nil)()
	waitFor(t, "/metrics on the listener handed over", 20*time.Second, func() bool {
		m, err := scrape(addr)
		return err == nil && strings.Contains(m, "streamprobe_build_info")
	})
}

// A reload that changes the labels makes every series again; a job it
// removed stays gone: the late record of a run that began before the
// reload, and a skip its retiring scheduler counts after it, add no series
// with the new labels (a push after the reload would show them).
func TestReloadWithNewLabelsKeepsRemovedJobsGone(t *testing.T) {
	conf := func(region string, targets ...string) (*config.Config, []jobs.Job) {
		text := fmt.Sprintf("region = %q\n", region)
		for _, name := range targets {
			text += fmt.Sprintf("[[target]]\nname = %q\nurl = \"http://127.0.0.1:9/\"\nsamples = [\"short\"]\n", name)
		}
		c := reloadConf(t, text)
		js, err := jobs.Build(c, "", os.Getenv)
		if err != nil {
			t.Fatal(err)
		}
		return c, js
	}
	cA, jobsA := conf("r1", "keep", "gone")
	m := NewMetrics(cA)
	m.Reconfigure(cA, jobsA)
	late := probe.Record{Target: "gone", Sample: "short", Dialect: "sse", Drill: probe.DrillNone, Outcome: probe.Success}
	m.Observe(late)
	cB, jobsB := conf("r2", "keep")
	m.Reconfigure(cB, jobsB)
	m.Observe(late)
	for _, j := range jobsA {
		if j.Target.Name == "gone" {
			m.SkippedFor(j, "overlap").Inc()
		}
	}
	m.Observe(probe.Record{Target: "keep", Sample: "short", Dialect: "sse", Drill: probe.DrillNone, Outcome: probe.Success})
	var out bytes.Buffer
	m.Set.WritePrometheus(&out)
	if strings.Contains(out.String(), `target="gone"`) || strings.Contains(out.String(), `region="r1"`) {
		t.Errorf("after the reload:\n%s", linesWith(out.String(), `target="gone"`, `region="r1"`))
	}
	if !strings.Contains(out.String(), `streamprobe_runs_total{region="r2",host=`) {
		t.Errorf("no runs of the kept job with the new labels:\n%s", out.String())
	}
}
