package daemon

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/streamprobe/streamprobe/config"
	"github.com/streamprobe/streamprobe/internal/jobs"
)

// The on-demand run: POST /run?target=T&sample=S (or &drill=D) on the
// listen address runs that job now, within max_concurrent, and answers
// its record as JSON. It is off unless the config names run_token_file;
// then a request must carry "Authorization: Bearer <the file's token>".
// The run is a run like a scheduled one: its record goes to the metrics,
// the results log, the daemon's log and the status page.

// runToken is the on-demand run's token of the config in force ("": off),
// read by stage.
func (d *Daemon) runToken() string {
	d.cur.mu.Lock()
	defer d.cur.mu.Unlock()
	return d.cur.runToken
}

// readRunToken reads cfg's run_token_file ("" when it names none).
func readRunToken(cfg *config.Config) (string, error) {
	if cfg.RunTokenFile == "" {
		return "", nil
	}
	tok, err := config.Secret("", cfg.RunTokenFile, nil)
	if err != nil {
		return "", fmt.Errorf("run_token_file: %v", err)
	}
	return tok, nil
}

// findJob is the job of the config in force that target, sample and
// drill name: target and sample, or target and drill (sample, if given,
// the drill's).
func (d *Daemon) findJob(target, sample, drill string) (jobs.Job, bool) {
	d.cur.mu.Lock()
	defer d.cur.mu.Unlock()
	for _, j := range d.cur.jobs {
		if j.Target.Name != target {
			continue
		}
		if drill != "" && j.Drill.Name == drill && (sample == "" || sample == j.Sample.Name) {
			return j, true
		}
		if drill == "" && j.Drill.Name == "" && j.Sample.Name == sample {
			return j, true
		}
	}
	return jobs.Job{}, false
}

// apiError answers status with {"error": msg}.
func apiError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(map[string]string{"error": msg})
}

// serveRun is POST /run.
func (d *Daemon) serveRun(w http.ResponseWriter, r *http.Request) {
	tok := d.runToken()
	if tok == "" {
		apiError(w, http.StatusNotFound, "on-demand runs are off: set run_token_file in the config")
		return
	}
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(tok)) != 1 {
		d.Log.Warn("on-demand run refused: no or a wrong token", "remote", r.RemoteAddr)
		w.Header().Set("WWW-Authenticate", `Bearer realm="streamprobe"`)
		apiError(w, http.StatusUnauthorized, "want Authorization: Bearer <the token of run_token_file>")
		return
	}
	q := r.URL.Query()
	target, sample, drill := q.Get("target"), q.Get("sample"), q.Get("drill")
	if target == "" || (sample == "" && drill == "") {
		apiError(w, http.StatusBadRequest, "want target and sample, or target and drill (POST /run?target=api&sample=short)")
		return
	}
	j, ok := d.findJob(target, sample, drill)
	if !ok {
		apiError(w, http.StatusNotFound, fmt.Sprintf("no job %s/%s in the config in force", shown(target), shown(sample+drill)))
		return
	}
	if !d.life.begin() {
		apiError(w, http.StatusServiceUnavailable, "the daemon is stopping")
		return
	}
	defer d.life.end()
	if !d.takeSlotFor(r, j.Name) {
		apiError(w, http.StatusServiceUnavailable, "no concurrency slot came free before the request or the daemon ended")
		return
	}
	defer d.slots.release()
	d.Log.Info("on-demand run", "job", j.Name, "remote", r.RemoteAddr)
	ctx := d.life.runCtx
	res := j.Run(ctx, d.Client)
	d.record(res.Record, ctx.Err() != nil)
	if ctx.Err() == nil {
		d.status.observe(res)
	}
	writeJSON(w, res.Record)
}

// takeSlotFor takes a concurrency slot for an on-demand run of job,
// waiting while every slot is held (max_concurrent holds for it as for
// the schedule) until the request or the daemon ends.
func (d *Daemon) takeSlotFor(r *http.Request, job string) bool {
	due, delayed := time.Now(), false
	if !d.slots.tryAcquire() {
		delayed = true
		waitCtx, cancel := context.WithCancel(r.Context())
		defer cancel()
		stop := context.AfterFunc(d.life.stopCtx, cancel)
		defer stop()
		if !d.slots.acquire(waitCtx) {
			return false
		}
	}
	d.Metrics.Started(time.Since(due), delayed)
	return true
}

// apiStatus is GET /api/status: the status page's content as JSON.
type apiStatus struct {
	Host          string  `json:"host"`
	Region        string  `json:"region"`
	Config        string  `json:"config"`
	ConfigLoaded  string  `json:"config_loaded"`
	ReloadRefused string  `json:"reload_refused,omitempty"`
	Version       string  `json:"version"`
	Uptime        string  `json:"uptime,omitempty"`
	Summary       string  `json:"summary"`
	AllPass       bool    `json:"all_pass"`
	Health        health  `json:"health"`
	Push          apiPush `json:"push"`
	// Overview is the page's grid: target x class (and drill) cells.
	Overview overviewView `json:"overview"`
	Jobs     []apiJobRef  `json:"jobs"`
}

type apiPush struct {
	Enabled bool   `json:"enabled"`
	Every   string `json:"every,omitempty"`
	Last    string `json:"last,omitempty"`
	Error   string `json:"error,omitempty"`
}

// apiJobRef is one job: its verdict as check's over the runs held, why,
// its next run and its last runs, newest first.
type apiJobRef struct {
	Target  string     `json:"target"`
	Sample  string     `json:"sample"`
	Drill   string     `json:"drill"`
	Dialect string     `json:"dialect"`
	Verdict string     `json:"verdict,omitempty"` // PASS, FAIL, INCONCLUSIVE; absent: no run yet
	Why     []string   `json:"why,omitempty"`
	Budgets string     `json:"budgets,omitempty"`
	Cells   []cellView `json:"cells,omitempty"`
	Latest  string     `json:"latest_outcome,omitempty"`
	NextRun string     `json:"next_run,omitempty"`
	LastErr string     `json:"last_error,omitempty"`
	LastAt  string     `json:"last_error_at,omitempty"`
	Runs    []runRow   `json:"runs"`
	// Key is the job's key figure and History its runs oldest first,
	// as the overview shows them.
	Key     string       `json:"key,omitempty"`
	History []historyRun `json:"history"`
}

// serveAPIStatus is GET /api/status.
func (d *Daemon) serveAPIStatus(w http.ResponseWriter, _ *http.Request) {
	f := d.pageFacts()
	v := d.status.view(f)
	out := apiStatus{Host: v.Host, Region: v.Region, Config: v.File, ConfigLoaded: v.Loaded, ReloadRefused: v.Refused,
		Version: v.Version, Uptime: v.Uptime, Summary: v.Summary, AllPass: v.AllPass, Health: f.health,
		Push: apiPush{Enabled: !v.PushDisabled, Every: v.PushEvery, Last: v.PushAt, Error: v.PushErr}, Overview: v.Overview, Jobs: []apiJobRef{}}
	for _, j := range v.Jobs {
		ref := apiJobRef{Target: j.Target, Sample: j.Sample, Drill: j.Drill, Dialect: j.Dialect, Verdict: j.Verdict, Why: j.Why,
			Budgets: j.Budgets, Cells: j.Cells, Latest: j.Latest, LastErr: j.LastErr, LastAt: j.LastErrAt, Runs: j.Rows,
			Key: j.Key, History: j.History}
		if !j.NextAt.IsZero() {
			ref.NextRun = j.NextAt.UTC().Format(time.RFC3339)
		}
		if ref.Runs == nil {
			ref.Runs = []runRow{}
		}
		out.Jobs = append(out.Jobs, ref)
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, out)
}

// writeJSON answers v as JSON, "<" and ">" as they are.
func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}
