package daemon

import (
	"fmt"
	"maps"
	"net"
	"os"
	"sync"
	"time"

	"github.com/go-co-op/gocron/v2"

	"github.com/streamprobe/streamprobe/config"
	"github.com/streamprobe/streamprobe/internal/builtin"
	"github.com/streamprobe/streamprobe/internal/jobs"
	"github.com/streamprobe/streamprobe/internal/refserver"
)

// current is the config in force and its scheduler: apply swaps them
// together, so no reader sees the config of one reload with the
// scheduler of another.
type current struct {
	mu    sync.Mutex // guards every field
	cfg   *config.Config
	sched gocron.Scheduler    // nil before the first apply
	plans map[string]*jobPlan // job name -> how sched has it (schedule.go)
	gen   uint64              // sched's generation, 1 for the first
	jobs  []jobs.Job          // cfg's jobs, for an on-demand run
	// runToken is the on-demand run's token ("": off), read from cfg's
	// run_token_file when it was applied.
	runToken string
	// fired is, by job name, when its task last fired and in which
	// generation: written by the tasks of every scheduler, the retired
	// ones included (schedule.go).
	fired map[string]fired
}

// config is the config in force.
func (d *Daemon) config() *config.Config {
	d.cur.mu.Lock()
	defer d.cur.mu.Unlock()
	return d.cur.cfg
}

// reloadState is why the last reload was refused, for /healthz.
type reloadState struct {
	mu      sync.Mutex // guards refused
	refused string     // "" after a reload applied
}

func (r *reloadState) set(why string) {
	r.mu.Lock()
	r.refused = why
	r.mu.Unlock()
}

func (r *reloadState) get() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.refused
}

// reloadTo applies nc, or records why it could not.
func (d *Daemon) reloadTo(nc *config.Config) {
	if err := d.apply(nc); err != nil {
		d.ReloadFailed(err)
		return
	}
	d.Metrics.Reloaded(true, time.Now())
	d.reload.set("")
	d.Log.Info("config reloaded", "file", nc.File(), "targets", len(nc.Targets))
	if d.Reloaded != nil {
		d.Reloaded(nc)
	}
}

// ReloadFailed records a reload that was refused, whether the file did
// not load or apply could not use it: the old config keeps running.
func (d *Daemon) ReloadFailed(err error) {
	d.Metrics.Reloaded(false, time.Now())
	d.reload.set(err.Error())
	d.status.reloadRefused(time.Now())
	d.Log.Error("reload failed; the old config keeps running", "err", err)
}

// apply makes cfg the running config, whole or not at all: stage does
// everything that can fail, and on a failure lets go of what it made;
// only then does commit swap cfg in, and nothing there fails.
func (d *Daemon) apply(cfg *config.Config) error {
	st, err := d.stage(cfg)
	if err != nil {
		return err
	}
	d.commit(st)
	return nil
}

// staged is a config made ready to run: every part of it that can fail
// has succeeded. commit makes it the running one; discard lets it go.
type staged struct {
	cfg      *config.Config
	jobs     []jobs.Job
	results  *os.File          // the results log, opened; nil: none
	relisten bool              // the listen address changed
	ln       net.Listener      // bound to it when relisten; nil: none
	builtin  *refserver.Server // the built-in reference target, started for cfg; nil: none new
	sched    gocron.Scheduler  // cfg's jobs scheduled, not started
	plans    map[string]*jobPlan
	gen      uint64
	runToken string
	otlpAuth string // the OTLP export's authorization
}

// discard closes what st opened and started.
func (st *staged) discard() {
	if st.sched != nil {
		st.sched.Shutdown()
	}
	if st.builtin != nil {
		st.builtin.Close()
	}
	if st.ln != nil {
		st.ln.Close()
	}
	if st.results != nil {
		st.results.Close()
	}
}

// stage makes cfg ready to run, in an order that starts nothing before
// it must: the results log (opened again on every reload, so a rotated
// log is let go), the listen address when it changed (the new one bound,
// not yet served, while the old one serves on), the built-in reference
// target when cfg needs it and none runs yet, the jobs (secrets: they
// need the built-in target's URL, known only once it is started), and a
// scheduler with every job on it, not started. The built-in target is the
// one thing started here, because its URL is part of the jobs; a failure
// after it closes it, as a failure closes everything made before it.
func (d *Daemon) stage(cfg *config.Config) (*staged, error) {
	st := &staged{cfg: cfg}
	if err := d.prepare(st); err != nil {
		st.discard()
		return nil, err
	}
	return st, nil
}

// prepare takes stage's steps in their order, each filling a field of st;
// on an error, what it filled is for stage to discard.
func (d *Daemon) prepare(st *staged) (err error) {
	cfg := st.cfg
	if st.runToken, err = readRunToken(cfg); err != nil {
		return err
	}
	if st.otlpAuth, err = d.otlpAuth(cfg); err != nil {
		return err
	}
	if cfg.ResultsLog != "" {
		if err := config.MakeLogDir(cfg.ResultsLog); err != nil {
			return fmt.Errorf("results_log: %w", err)
		}
		if st.results, err = config.OpenLog(cfg.ResultsLog); err != nil {
			return fmt.Errorf("results_log: %w", err)
		}
	}
	st.relisten = cfg.Listen != d.web.addr
	if st.relisten && cfg.Listen != "" {
		if st.ln, d.Listener = d.Listener, nil; st.ln == nil {
			if st.ln, err = Listen(cfg.Listen); err != nil {
				return err
			}
		}
	}
	builtinURL := ""
	switch {
	case d.builtin != nil:
		builtinURL = d.builtin.URL
	case builtin.Needed(cfg):
		st.builtin = builtin.New()
		st.builtin.Start()
		builtinURL = st.builtin.URL
	}
	if st.jobs, err = jobs.Build(cfg, builtinURL, d.getenv); err != nil {
		return err
	}
	return d.scheduleAll(st)
}

// scheduleAll puts st's jobs on a new scheduler of the next generation,
// each keeping its times from the running one (schedule.go).
func (d *Daemon) scheduleAll(st *staged) error {
	opts := []gocron.SchedulerOption{gocron.WithLogger(d.Log), gocron.WithStopTimeout(st.cfg.ShutdownTimeout.Duration)}
	if d.Clock != nil {
		opts = append(opts, gocron.WithClock(d.Clock))
	}
	s, err := gocron.NewScheduler(opts...)
	if err != nil {
		return fmt.Errorf("scheduler: %w", err)
	}
	st.sched = s
	d.cur.mu.Lock()
	gen, prev, last := d.cur.gen+1, d.cur.plans, maps.Clone(d.cur.fired)
	d.cur.mu.Unlock()
	st.gen = gen
	now := d.clock().Now()
	st.plans = map[string]*jobPlan{}
	for _, j := range st.jobs {
		f, ok := last[j.Name]
		p, err := d.schedule(s, j, st.gen, prev[j.Name], f, ok, now)
		if err != nil {
			return fmt.Errorf("job %s: %w", j.Name, err)
		}
		st.plans[j.Name] = p
	}
	return nil
}

// commit makes st the running config. The new scheduler starts and the
// old one stops (its runs in flight finish, holding their slots and their
// jobs' busy flags; no run starts because of the reload: every job the
// daemon already ran keeps its next run, see schedule.go); the listener
// moves when the address changed; the concurrency limit is resized; the
// results log takes the new file; the metrics take the new labels and
// budgets and drop the series of removed jobs; the push loop takes the
// push settings.
func (d *Daemon) commit(st *staged) {
	cfg := st.cfg
	d.cur.mu.Lock()
	old := d.cur.sched
	d.cur.cfg, d.cur.sched, d.cur.plans, d.cur.gen = cfg, st.sched, st.plans, st.gen
	d.cur.jobs, d.cur.runToken = st.jobs, st.runToken
	d.cur.mu.Unlock()
	if st.builtin != nil {
		d.builtin = st.builtin
		d.Log.Info("built-in reference target started", "url", d.builtin.URL)
	}
	if st.relisten {
		d.relisten(cfg.Listen, st.ln)
	}
	d.slots.resize(cfg.MaxConcurrent)
	d.results.swap(st.results)
	d.Metrics.Reconfigure(cfg, st.jobs)
	if err := d.otlpReconfigure(cfg, st.jobs, st.otlpAuth); err != nil {
		d.Log.Error("the OTLP export cannot start; the metrics go to the push and /metrics only", "err", err)
	}
	d.status.configured(cfg, st.jobs, time.Now())
	select {
	case d.pushed.reset <- struct{}{}:
	default:
	}
	for _, t := range cfg.Targets {
		if t.InsecureSkipVerify {
			d.Log.Warn("TLS CERTIFICATE VERIFICATION IS OFF for this target (insecure_skip_verify = true): its results prove nothing about its certificate", "target", t.Name)
		}
	}
	st.sched.Start()
	if old != nil {
		d.life.retired.Add(1)
		go func() {
			defer d.life.retired.Done()
			old.Shutdown()
		}()
	}
	d.Log.Info("scheduled", "jobs", len(st.jobs), "max_concurrent", cfg.MaxConcurrent)
}
