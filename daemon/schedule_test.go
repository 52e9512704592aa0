package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/streamprobe/streamprobe/config"
	"github.com/streamprobe/streamprobe/internal/refserver"
)

// seriesSum adds up the values of every series of /metrics whose line
// starts with prefix and contains all of subs.
func seriesSum(d *Daemon, prefix string, subs ...string) int {
	var out bytes.Buffer
	d.Metrics.Set.WritePrometheus(&out)
	return seriesSumOf(out.String(), prefix, subs...)
}

// seriesSumOf is seriesSum over an exposition's text.
func seriesSumOf(exposition, prefix string, subs ...string) int {
	n := 0
next:
	for _, l := range strings.Split(exposition, "\n") {
		if !strings.HasPrefix(l, prefix) {
			continue
		}
		for _, s := range subs {
			if !strings.Contains(l, s) {
				continue next
			}
		}
		v, _ := strconv.ParseFloat(l[strings.LastIndex(l, " ")+1:], 64)
		n += int(v)
	}
	return n
}

// runsOf is how many runs of target's jobs finished, whatever their outcome.
func runsOf(d *Daemon, target string) int {
	return seriesSum(d, "streamprobe_runs_total{", fmt.Sprintf("target=%q", target))
}

// dueRuns is how many times a task came due and was not a duplicate.
func dueRuns(d *Daemon) int { return seriesSum(d, "streamprobe_runs_due_total{") }

// nextRun is the running scheduler's next run of job.
func nextRun(t *testing.T, d *Daemon, job string) time.Time {
	t.Helper()
	d.cur.mu.Lock()
	s := d.cur.sched
	d.cur.mu.Unlock()
	for _, j := range s.Jobs() {
		if j.Name() == job {
			n, err := j.NextRun()
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("no job %s in the running scheduler", job)
	return time.Time{}
}

// clockDaemon is a daemon whose schedules run on a fake clock, and which
// says on the returned channel each time a reload applied.
type clockDaemon struct {
	*Daemon
	fc       *clockwork.FakeClock
	reload   chan *config.Config
	reloaded chan struct{}
}

func startClockDaemon(t *testing.T, conf string) *clockDaemon {
	t.Helper()
	d, _ := testDaemon(t, conf, nil)
	c := &clockDaemon{Daemon: d, fc: clockwork.NewFakeClockAt(time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)),
		reload: make(chan *config.Config), reloaded: make(chan struct{}, 1)}
	d.Clock = c.fc
	d.Reloaded = func(*config.Config) { c.reloaded <- struct{}{} }
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx, c.reload) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return c
}

// apply reloads conf and waits until it applied.
func (c *clockDaemon) apply(t *testing.T, conf string) {
	t.Helper()
	c.reload <- reloadConf(t, conf)
	select {
	case <-c.reloaded:
	case <-time.After(30 * time.Second):
		t.Fatal("the reload did not apply")
	}
}

func scheduleConf(url string, targets ...string) string {
	s := ""
	for i := 0; i+1 < len(targets); i += 2 {
		s += fmt.Sprintf("[[target]]\nname = %q\nurl = %q\nend_data = \"\"\nsamples = [\"short\"]\nevery = %q\njitter = \"0s\"\n", targets[i], url, targets[i+1])
	}
	return s
}

// Ten reloads of an hourly job start no run of it: it keeps its next run
// an hour after the first, and runs then. A job the last reload adds runs
// at once, as a job does at daemon start.
func TestReloadsStartNoRun(t *testing.T) {
	srv := refserver.NewServer(refserver.Events(refserver.Ms(5, 10), -1))
	defer srv.Close()
	hourly := scheduleConf(srv.URL, "a", "1h")
	c := startClockDaemon(t, hourly)
	t0 := c.fc.Now()
	waitFor(t, "the first run at start", 30*time.Second, func() bool { return runsOf(c.Daemon, "a") == 1 })
	for range 10 {
		c.apply(t, hourly)
	}
	// Runs the reloads would have started were handed to the scheduler
	// before this reload's new job ran.
	c.apply(t, scheduleConf(srv.URL, "a", "1h", "b", "1h"))
	waitFor(t, "the new job's run", 30*time.Second, func() bool { return runsOf(c.Daemon, "b") == 1 })
	if n, due := runsOf(c.Daemon, "a"), dueRuns(c.Daemon); n != 1 || due != 2 {
		t.Fatalf("after 11 reloads: %d runs of the hourly job (want 1), %d runs due in all (want 2: its first and the new job's)", n, due)
	}
	if next := nextRun(t, c.Daemon, "a/short"); !next.Equal(t0.Add(time.Hour)) {
		t.Errorf("the hourly job's next run is %s, want %s (an hour after its first)", next, t0.Add(time.Hour))
	}
	c.fc.Advance(time.Hour)
	waitFor(t, "the hourly job's second run, an hour on", 30*time.Second, func() bool { return runsOf(c.Daemon, "a") == 2 })
}

// A job whose interval a reload shortens from 1h to 1m runs a minute after
// its last run, not at the reload, and every minute from then on.
func TestReloadShortenedIntervalCountsFromLastRun(t *testing.T) {
	srv := refserver.NewServer(refserver.Events(refserver.Ms(5, 10), -1))
	defer srv.Close()
	c := startClockDaemon(t, scheduleConf(srv.URL, "a", "1h"))
	t0 := c.fc.Now()
	waitFor(t, "the first run at start", 30*time.Second, func() bool { return runsOf(c.Daemon, "a") == 1 })
	c.fc.Advance(20 * time.Second)
	c.apply(t, scheduleConf(srv.URL, "a", "1m"))
	c.apply(t, scheduleConf(srv.URL, "a", "1m", "b", "1h"))
	waitFor(t, "the new job's run", 30*time.Second, func() bool { return runsOf(c.Daemon, "b") == 1 })
	if n := runsOf(c.Daemon, "a"); n != 1 {
		t.Fatalf("%d runs after the reload to 1m, want 1: the reload started a run", n)
	}
	if next := nextRun(t, c.Daemon, "a/short"); !next.Equal(t0.Add(time.Minute)) {
		t.Errorf("next run %s, want %s (the last run plus 1m)", next, t0.Add(time.Minute))
	}
	c.fc.Advance(40 * time.Second)
	waitFor(t, "the run a minute after the last", 30*time.Second, func() bool { return runsOf(c.Daemon, "a") == 2 })
	waitFor(t, "the next run planned", 30*time.Second, func() bool { return nextRun(t, c.Daemon, "a/short").Equal(t0.Add(2 * time.Minute)) })
	c.fc.Advance(time.Minute)
	waitFor(t, "the run after that, a minute on", 30*time.Second, func() bool { return runsOf(c.Daemon, "a") == 3 })
}

// planFirst, case by case: a reload never plans a run at the reload
// itself unless the job is new (or its first run, fresh, is still to come).
func TestPlanFirst(t *testing.T) {
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	hour, minute := config.Schedule{Every: time.Hour}, config.Schedule{Every: time.Minute}
	cronSched := config.Schedule{Cron: "*/5 * * * *"}
	rnd := func(n time.Duration) time.Duration { return n / 2 }
	ran := func(ago time.Duration, gen uint64) fired { return fired{at: now.Add(-ago), gen: gen} }
	for _, tc := range []struct {
		name   string
		prev   *jobPlan
		last   fired
		ok     bool
		next   time.Time
		every  config.Schedule
		jitter time.Duration
		want   firstRun
	}{
		{name: "new job", every: hour, want: firstRun{fresh: true}},
		{name: "new cron job", every: cronSched, want: firstRun{}},
		{name: "same schedule keeps the scheduler's next run", prev: &jobPlan{every: hour, gen: 1, fresh: true}, last: ran(10*time.Minute, 1), ok: true,
			next: now.Add(50 * time.Minute), every: hour, want: firstRun{at: now.Add(50 * time.Minute)}},
		{name: "same schedule, next unknown: last run plus the interval", prev: &jobPlan{every: hour, gen: 1, fresh: true}, last: ran(10*time.Minute, 1), ok: true,
			every: hour, want: firstRun{at: now.Add(50 * time.Minute)}},
		{name: "1h to 1m: last run plus 1m", prev: &jobPlan{every: hour, gen: 1, fresh: true}, last: ran(20*time.Second, 1), ok: true,
			next: now.Add(time.Hour), every: minute, want: firstRun{at: now.Add(40 * time.Second)}},
		{name: "1h to 1m, last run long ago: the new schedule's next slot", prev: &jobPlan{every: hour, gen: 1, fresh: true}, last: ran(30*time.Minute+30*time.Second, 1), ok: true,
			every: minute, want: firstRun{at: now.Add(30 * time.Second)}},
		{name: "jitter changed: last run plus interval plus a random part", prev: &jobPlan{every: hour, gen: 1}, last: ran(10*time.Minute, 1), ok: true,
			every: hour, jitter: 10 * time.Minute, want: firstRun{at: now.Add(55 * time.Minute)}},
		{name: "a fresh start still to fire stays fresh", prev: &jobPlan{every: hour, gen: 2, fresh: true, start: now}, last: ran(time.Hour, 1), ok: true,
			every: hour, want: firstRun{fresh: true}},
		{name: "a planned first run still to come is kept", prev: &jobPlan{every: hour, gen: 2, start: now.Add(5 * time.Minute)}, last: ran(55*time.Minute, 1), ok: true,
			every: hour, want: firstRun{at: now.Add(5 * time.Minute)}},
		{name: "removed then added back: its slot from its last run", last: ran(90*time.Minute, 1), ok: true,
			every: hour, want: firstRun{at: now.Add(30 * time.Minute)}},
		{name: "a cron job that never ran, now on an interval: an interval from now", prev: &jobPlan{every: cronSched, gen: 1},
			every: hour, want: firstRun{at: now.Add(time.Hour)}},
		{name: "an interval job now on a cron: the cron's next slot", prev: &jobPlan{every: hour, gen: 1, fresh: true}, last: ran(time.Minute, 1), ok: true,
			every: cronSched, want: firstRun{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := planFirst(tc.prev, tc.last, tc.ok, tc.next, tc.every, tc.jitter, now, rnd)
			if got.fresh != tc.want.fresh || !got.at.Equal(tc.want.at) {
				t.Errorf("got fresh=%v at=%s, want fresh=%v at=%s", got.fresh, got.at, tc.want.fresh, tc.want.at)
			}
		})
	}
}

// The old scheduler and the new one of a reload firing for one slot make
// one run, whichever fires first; the same scheduler firing an interval on
// does make a run.
func TestFireOncePerSlotAcrossSchedulers(t *testing.T) {
	fc := clockwork.NewFakeClock()
	d := &Daemon{Log: slog.New(slog.DiscardHandler), Clock: fc}
	hour := config.Schedule{Every: time.Hour}
	if !d.fire("a", 1, hour) {
		t.Fatal("the first firing made no run")
	}
	fc.Advance(time.Millisecond)
	if d.fire("a", 2, hour) {
		t.Error("the new scheduler ran the slot the old one had just run")
	}
	fc.Advance(time.Hour)
	if !d.fire("a", 2, hour) {
		t.Error("the new scheduler's next slot made no run")
	}
	if d.fire("a", 1, hour) {
		t.Error("the old scheduler ran the slot the new one had just run")
	}
	fc.Advance(time.Hour)
	if !d.fire("a", 2, hour) || !d.fire("b", 1, hour) {
		t.Error("a slot of its own made no run")
	}
}

// apiJobs is GET /api/status's jobs, from the daemon listening on addr;
// nil while it does not listen yet.
func apiJobs(t *testing.T, addr string) []apiJobRef {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/api/status")
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	var out struct {
		Jobs []apiJobRef `json:"jobs"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("/api/status: %v", err)
	}
	return out.Jobs
}

// A new job runs at once after a random 0..jitter: while it waits, the
// status page's next run is the end of that wait, not the interval's next
// slot (which said "next run in 1h" with the run a few seconds away), and
// the run starts then.
func TestNextRunDuringTheJitterWait(t *testing.T) {
	srv := refserver.NewServer(refserver.Events(refserver.Ms(5, 10), -1))
	defer srv.Close()
	const wait = 8 * time.Second
	addr := freeAddr(t)
	d, _ := testDaemon(t, fmt.Sprintf("listen = %q\n[[target]]\nname = \"a\"\nurl = %q\nend_data = \"\"\nsamples = [\"short\"]\nevery = \"1h\"\njitter = \"30m\"\n", addr, srv.URL), nil)
	d.jitterN = func(time.Duration) time.Duration { return wait }
	start := time.Now()
	defer runDaemon(t, d, nil)()
	var next time.Time
	waitFor(t, "the job's next run on /api/status", 30*time.Second, func() bool {
		// Until its task fires, the job's next run is gocron's (now): the
		// page is read once the task is in its jitter wait.
		if _, ok := d.waits.until("a/short"); !ok {
			return false
		}
		js := apiJobs(t, addr)
		if len(js) != 1 || js[0].NextRun == "" {
			return false
		}
		if len(js[0].Runs) > 0 {
			t.Fatalf("the run came before the page was read (%s after the start): no jitter wait to see", time.Since(start))
		}
		var err error
		if next, err = time.Parse(time.RFC3339, js[0].NextRun); err != nil {
			t.Fatal(err)
		}
		return true
	})
	// RFC3339 to the second: the stated time is within a second of the
	// wait's end, which is wait after the task fired (after start).
	if lo, hi := start.Add(wait-time.Second), time.Now().Add(wait+time.Second); next.Before(lo) || next.After(hi) {
		t.Fatalf("during the %s jitter wait the next run is %s, want between %s and %s (the wait's end)",
			wait, next.Format(time.RFC3339), lo.Format(time.RFC3339), hi.Format(time.RFC3339))
	}
	waitFor(t, "the run after the jitter wait", 60*time.Second, func() bool { return runsOf(d, "a") == 1 })
	started, err := time.Parse(time.RFC3339Nano, apiJobs(t, addr)[0].Runs[0].Started)
	if err != nil {
		// runRow.Started is shortTime's format
		started, err = time.Parse("2006-01-02 15:04:05Z", apiJobs(t, addr)[0].Runs[0].Started)
	}
	if err != nil {
		t.Fatal(err)
	}
	if started.Before(next.Add(-time.Second)) {
		t.Errorf("the run started %s, before the next run the page said (%s)", started.Format(time.RFC3339), next.Format(time.RFC3339))
	}
}
