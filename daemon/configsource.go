package daemon

import (
	"fmt"
	"sync"
	"time"
)

// configSource is the state of a config read from a URL (-config
// https://...): when it was last fetched, whether that worked, and why
// not. /healthz, the status page and the metrics name it; a failed fetch
// never stops a probe: the config in force keeps running.
type configSource struct {
	mu     sync.Mutex // guards every field
	url    string     // "" for a config file
	every  time.Duration
	lastAt time.Time // the last fetch
	lastOK time.Time // the last fetch that worked (a 304 included)
	err    string    // why the last fetch failed; "" when it worked
}

// ConfigFromURL says the config comes from url (shown without its query
// or user info), fetched every poll: /healthz, the status page and the
// metrics then name the fetches. Call it before Run.
func (d *Daemon) ConfigFromURL(url string, poll time.Duration) {
	d.source.mu.Lock()
	d.source.url, d.source.every = url, poll
	d.source.mu.Unlock()
	d.Metrics.ConfigFromURL()
}

// ConfigFetched records a fetch of the config's URL at at: err nil when
// it worked (the config came, or had not changed). A config that came and
// does not load is ReloadFailed's, not a failed fetch.
func (d *Daemon) ConfigFetched(err error, at time.Time) {
	d.source.mu.Lock()
	d.source.lastAt = at
	if err != nil {
		d.source.err = err.Error()
	} else {
		d.source.err, d.source.lastOK = "", at
	}
	d.source.mu.Unlock()
	d.Metrics.ConfigFetched(err == nil, at)
}

// sourceHealth fills h's config fields and adds a reason when the fetches
// have failed for over PushFailWindow polls (counted from the start when
// none worked).
func (d *Daemon) sourceHealth(h *health, now time.Time) {
	s := &d.source
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.url == "" {
		return
	}
	h.ConfigURL = s.url
	if !s.lastAt.IsZero() {
		h.ConfigLastFetch = s.lastAt.UTC().Format(time.RFC3339)
		h.ConfigLastFetchError = s.err
	}
	if !s.lastOK.IsZero() {
		h.ConfigLastFetchSuccess = s.lastOK.UTC().Format(time.RFC3339)
	}
	since := s.lastOK
	if since.IsZero() {
		since = d.life.since()
	}
	if s.err != "" && !since.IsZero() {
		if window := PushFailWindow * s.every; now.Sub(since) > window {
			h.Reasons = append(h.Reasons, fmt.Sprintf("the config could not be fetched for %s (over %d polls, %s), the last good config keeps running: %s",
				now.Sub(since).Round(time.Second), PushFailWindow, window, s.err))
		}
	}
}
