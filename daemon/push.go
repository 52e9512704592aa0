package daemon

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/streamprobe/streamprobe/config"
	"github.com/streamprobe/streamprobe/textgate"
)

// What a failed push keeps of the endpoint's answer, so that no endpoint
// can fill the daemon's memory, its log, /healthz or the status page.
const (
	// pushBodyRead is how much of a failed push's answer is read.
	pushBodyRead = 1 << 10
	// pushBodyShown is how much of that, scrubbed, the error quotes.
	pushBodyShown = 256
	// pushBodyWait bounds the time spent reading that much.
	pushBodyWait = time.Second
	// pushErrMax bounds the whole error text of a failed push.
	pushErrMax = 512
	// pushSecretMin is the shortest push header value treated as a
	// secret: a shorter one would redact digits of status codes and
	// ports, and is no secret anyway.
	pushSecretMin = 4
)

// errPushCancelled is a push cut short because the daemon is stopping:
// neither a success nor a failure.
var errPushCancelled = errors.New("daemon: push cancelled")

// pushState is the push's own: its transport, and the outcome of the
// last push for /healthz and the status page.
type pushState struct {
	// reset, made by New and never changed, says a reload changed the
	// push settings.
	reset chan struct{}

	mu      sync.Mutex      // guards the fields below
	tr      *http.Transport // made on first use; Run closes its idle connections
	lastAt  time.Time       // when the last push ended
	lastErr string          // why it failed (scrubbed, bounded); "" when it succeeded
	lastOK  time.Time       // when the last push that succeeded ended
}

// last is the outcome of the last push: when, why it failed ("" when it
// did not), and when a push last succeeded.
func (p *pushState) last() (at time.Time, err string, ok time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lastAt, p.lastErr, p.lastOK
}

// pushTransport is the push's own transport, made on first use (Run
// closes its idle connections when it returns).
func (d *Daemon) pushTransport() *http.Transport {
	d.pushed.mu.Lock()
	defer d.pushed.mu.Unlock()
	if d.pushed.tr == nil {
		d.pushed.tr = http.DefaultTransport.(*http.Transport).Clone()
	}
	return d.pushed.tr
}

func (d *Daemon) pushConfig() config.Push { return d.config().Push }

// pushLoop pushes the set every interval. A push runs apart from the
// probes: a slow or dead endpoint never delays a run. A reload's new
// interval takes effect at once; its URL, headers and labels at the next
// push, together (Metrics.forPush).
func (d *Daemon) pushLoop(ctx context.Context) {
	every := d.pushConfig().Interval.Duration
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-d.pushed.reset:
			if p := d.pushConfig().Interval.Duration; p != every {
				every = p
				t.Reset(every)
			}
		case <-t.C:
			d.push(ctx)
		}
	}
}

// push sends the set once (sendPush). Counters and buckets are
// cumulative, so a failed push loses nothing: the next one carries it.
func (d *Daemon) push(ctx context.Context) {
	var raw bytes.Buffer
	p := d.Metrics.forPush(&raw)
	if p.URL.URL == nil {
		return
	}
	auth, err := config.Secret(p.AuthorizationEnv, p.AuthorizationFile, d.getenv)
	if err != nil {
		d.Log.Error("push: authorization", "err", err)
		auth = ""
	}
	err = d.sendPush(ctx, p, auth, raw.Bytes())
	if errors.Is(err, errPushCancelled) {
		return
	}
	d.pushed.mu.Lock()
	d.pushed.lastAt = time.Now()
	if err != nil {
		d.pushed.lastErr = err.Error()
	} else {
		d.pushed.lastErr = ""
		d.pushed.lastOK = d.pushed.lastAt
	}
	d.pushed.mu.Unlock()
	if err != nil {
		d.Metrics.PushFailed()
		d.Log.Warn("push failed; the next push carries everything", "err", err)
	}
}

// pushError is a failed push. Its text is all that a log line, /healthz
// or the status page shows of it: scrubbed of the push's secrets and
// bounded (pushErrMax). It wraps its cause, the HTTP client's error (nil
// for an answer with a failing status), for errors.Is and errors.As; the
// cause's own text is never shown, as a *url.Error's names its URL with
// the user name.
type pushError struct {
	text  string
	cause error
}

func (e *pushError) Error() string { return e.text }
func (e *pushError) Unwrap() error { return e.cause }

// pushFailure is the error of a push to where that failed for cause (nil:
// the answer's status), told by format and args.
func pushFailure(where string, secrets []string, cause error, format string, args ...any) error {
	text := textgate.Scrub("push to "+where+": "+fmt.Sprintf(format, args...), secrets, pushErrMax)
	return &pushError{text: text, cause: cause}
}

// clientFailure is the error of a push to where that the HTTP client
// could not make. A *url.Error is told from its parts: the URL it names
// (after a redirect, the one redirected to) without its user info, and
// the error it wraps; its Op, the method, says nothing of why it failed.
func clientFailure(where string, secrets []string, err error) error {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return pushFailure(where, secrets, err, "%v", err)
	}
	if u, perr := url.Parse(ue.URL); perr == nil && u.Host != "" {
		where = shownURL(u)
	}
	return pushFailure(where, secrets, err, "%v", ue.Err)
}

// sendPush gzips set (the metrics in the Prometheus text format) and
// POSTs it to p.URL with p's headers and auth as its Authorization. It
// follows no redirect to another host or scheme. A failure is a
// *pushError: its text is bounded (pushErrMax) and scrubbed of auth, its
// token, every header value and the URL's credentials, and names the URL
// without its user info.
func (d *Daemon) sendPush(ctx context.Context, p config.Push, auth string, set []byte) error {
	var body bytes.Buffer
	zw := gzip.NewWriter(&body)
	zw.Write(set) // a bytes.Buffer does not fail
	zw.Close()

	where := shownURL(p.URL.URL)
	secrets := pushSecrets(p, auth)
	pctx, cancel := context.WithTimeout(ctx, p.Timeout.Duration)
	defer cancel()
	req, err := http.NewRequestWithContext(pctx, http.MethodPost, p.URL.String(), &body)
	if err != nil {
		return clientFailure(where, secrets, err)
	}
	req.Header.Set("Content-Type", "text/plain")
	for k, v := range p.Headers {
		req.Header.Set(k, v)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	req.Header.Set("Content-Encoding", "gzip")
	client := &http.Client{Transport: d.pushTransport(), Timeout: p.Timeout.Duration, CheckRedirect: sameOrigin}
	resp, err := client.Do(req)
	if err != nil {
		var ne net.Error
		switch {
		case ctx.Err() != nil:
			return errPushCancelled
		case pctx.Err() != nil || errors.As(err, &ne) && ne.Timeout():
			return pushFailure(where, secrets, err, "timed out after %s", p.Timeout.Duration)
		}
		return clientFailure(where, secrets, err)
	}
	defer resp.Body.Close()
	// Read at most a prefix, for at most pushBodyWait: a huge or slow
	// answer does not hold the push.
	stop := time.AfterFunc(pushBodyWait, cancel)
	defer stop.Stop()
	if resp.StatusCode/100 == 2 {
		io.Copy(io.Discard, io.LimitReader(resp.Body, pushBodyRead))
		return nil
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, pushBodyRead))
	why := ""
	if resp.StatusCode/100 == 3 {
		why = " (a redirect is followed only to the same host)"
	}
	return pushFailure(where, secrets, nil, "status %d%s; response %q", resp.StatusCode, why, textgate.Scrub(string(b), secrets, pushBodyShown))
}

// sameOrigin lets the push follow a redirect only to the same scheme and
// host, as a browser keeps credentials to one origin.
func sameOrigin(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 || req.URL.Scheme != via[0].URL.Scheme || req.URL.Host != via[0].URL.Host {
		return http.ErrUseLastResponse
	}
	return nil
}

// shownURL is u as an error may name it: no user info.
func shownURL(u *url.URL) string {
	c := *u
	c.User = nil
	return c.String()
}

// pushSecrets are the values a push error must never show: the
// Authorization value and its token, the push headers' values, the URL's
// password, its user info as written in a URL, and the Basic credentials
// made of them.
func pushSecrets(p config.Push, auth string) []string {
	var s []string
	if auth != "" {
		s = append(s, auth)
		if _, tok, ok := strings.Cut(auth, " "); ok && strings.TrimSpace(tok) != "" {
			s = append(s, strings.TrimSpace(tok))
		}
	}
	for _, v := range p.Headers {
		if len(v) >= pushSecretMin {
			s = append(s, v)
		}
	}
	if u := p.URL.URL; u != nil && u.User != nil {
		pw, _ := u.User.Password()
		if pw != "" {
			s = append(s, pw)
		}
		s = append(s, u.User.String()+"@")
		if auth == "" {
			// The client sends them as Basic credentials.
			basic := base64.StdEncoding.EncodeToString([]byte(u.User.Username() + ":" + pw))
			s = append(s, "Basic "+basic, basic)
		}
	}
	return s
}
