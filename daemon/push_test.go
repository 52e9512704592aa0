package daemon

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// pushDaemon runs a daemon that pushes to pushURL every second and serves
// /healthz and / on a free address, which it returns. It has no targets
// that run: the push is the whole of it.
func pushDaemon(t *testing.T, pushURL, extra string, env map[string]string) (*Daemon, *syncBuffer, string) {
	t.Helper()
	addr := freeAddr(t)
	d, logs := testDaemon(t, fmt.Sprintf("listen = %q\n[push]\nurl = %q\ninterval = \"1s\"\ntimeout = \"1s\"\n%s\n[[target]]\nname = \"t\"\nurl = \"http://127.0.0.1:1\"\nsamples = [\"short\"]\nevery = \"1h\"\njitter = \"0s\"\n",
		addr, pushURL, extra), env)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx, nil) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return d, logs, addr
}

func lastPushErr(d *Daemon) string {
	_, err, _ := d.pushed.last()
	return err
}

// get returns the body of http://addr/path.
func get(t *testing.T, addr, path string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A push endpoint answering 500 with a 50 MB body: the daemon reads a
// small prefix of it and hangs up (the server's writes fail long before
// the end), keeps at most pushErrMax bytes of error text, and /healthz,
// / and the log stay small.
func TestPushErrorBodyIsBounded(t *testing.T) {
	const size = 50 << 20
	var written atomic.Int64
	ended := make(chan error, 1) // how the first push's answer ended
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusInternalServerError)
		chunk := bytes.Repeat([]byte("E"), 64<<10)
		var err error
		for n := 0; n < size && err == nil; n += len(chunk) {
			if _, err = w.Write(chunk); err == nil {
				written.Add(int64(len(chunk)))
			}
		}
		select {
		case ended <- err:
		default:
		}
	}))
	defer srv.Close()
	d, logs, addr := pushDaemon(t, srv.URL+"/api/v1/import/prometheus", "", nil)
	var err error
	select {
	case err = <-ended:
	case <-time.After(30 * time.Second):
		t.Fatal("no push came")
	}
	if err == nil || written.Load() >= size/2 {
		t.Errorf("the server wrote %d bytes of its %d-byte answer (write error %v): the daemon read the body whole", written.Load(), size, err)
	}
	waitFor(t, "the failed push recorded", 30*time.Second, func() bool { return lastPushErr(d) != "" })
	t.Logf("server wrote %d bytes; kept: %s", written.Load(), lastPushErr(d))
	if e := lastPushErr(d); len(e) > pushErrMax || !strings.Contains(e, "500") {
		t.Errorf("kept push error is %d bytes (bound %d), want the status in it: %.300q", len(e), pushErrMax, e)
	}
	for _, path := range []string{"/healthz", "/"} {
		if n := len(get(t, addr, path)); n > 64<<10 {
			t.Errorf("%s is %d bytes", path, n)
		}
	}
	if n := len(logs.String()); n > 64<<10 {
		t.Errorf("the log is %d bytes", n)
	}
}

// A push endpoint that echoes what it was sent (the Authorization value
// and its token, the push headers, the URL's credentials) in its error
// answer: none of it shows in the log, /healthz or /.
func TestPushErrorNeverShowsSecrets(t *testing.T) {
	const token = "push-token-0123456789abcdef"
	const headerValue = "tenant-4711-do-not-show"
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, _ := r.BasicAuth()
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, "denied: authorization %q, token %s, x-scope %s, user %s, password %s",
			r.Header.Get("Authorization"), strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "), r.Header.Get("X-Scope"), user, pass)
	}))
	defer echo.Close()
	withCreds, _ := url.Parse(echo.URL + "/api/v1/import/prometheus")
	withCreds.User = url.UserPassword("pushuser", "url-password-s3cret")
	for _, tc := range []struct {
		name, url, extra string
		secrets          []string
	}{
		// An Authorization header of its own replaces the URL's Basic
		// credentials: one case each.
		{"authorization and headers", echo.URL + "/api/v1/import/prometheus",
			"authorization_env = \"PUSH_AUTH\"\n[push.headers]\nX-Scope = \"" + headerValue + "\"\n", []string{token, headerValue}},
		{"credentials in the URL", withCreds.String(), "", []string{"url-password-s3cret", base64.StdEncoding.EncodeToString([]byte("pushuser:url-password-s3cret"))}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, logs, addr := pushDaemon(t, tc.url, tc.extra, map[string]string{"PUSH_AUTH": "Bearer " + token})
			waitFor(t, "a failed push", 30*time.Second, func() bool { return lastPushErr(d) != "" })
			t.Logf("kept: %s", lastPushErr(d))
			shown := map[string]string{"log": logs.String(), "/healthz": get(t, addr, "/healthz"), "/": get(t, addr, "/")}
			if !regexp.MustCompile(`<span id="push">Last push \d{4}-\d\d-\d\dT[0-9:]+Z <span class="fail">failed</span>: <span class="err">[^<]*401`).MatchString(shown["/"]) {
				t.Errorf("the status page does not say when the last push failed and why:\n%.2000s", shown["/"])
			}
			for where, text := range shown {
				if !strings.Contains(text, "401") || !strings.Contains(text, "denied") {
					t.Errorf("%s does not show the push failure: %.500s", where, text)
				}
				for _, secret := range tc.secrets {
					if strings.Contains(text, secret) {
						t.Errorf("%s shows %q", where, secret)
					}
				}
			}
		})
	}
}

// A push that cannot connect names the endpoint without its user info.
func TestPushTransportErrorHidesUserInfo(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	u, _ := url.Parse(dead.URL + "/api/v1/import/prometheus")
	dead.Close()
	u.User = url.UserPassword("pushuser-name", "url-password-s3cret")
	d, logs, addr := pushDaemon(t, u.String(), "", nil)
	waitFor(t, "a failed push", 30*time.Second, func() bool { return lastPushErr(d) != "" })
	e := lastPushErr(d)
	t.Logf("kept: %s", e)
	if !strings.Contains(e, u.Host) {
		t.Errorf("the error does not name the endpoint: %q", e)
	}
	for where, text := range map[string]string{"error": e, "log": logs.String(), "/healthz": get(t, addr, "/healthz")} {
		for _, secret := range []string{"pushuser-name", "url-password-s3cret"} {
			if strings.Contains(text, secret) {
				t.Errorf("%s shows %q: %.300s", where, secret, text)
			}
		}
	}
}

// A push endpoint redirecting to another host: the push does not follow
// (the metrics and the token would go to a host nobody configured).
func TestPushFollowsNoRedirectToAnotherHost(t *testing.T) {
	var elsewhere atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { elsewhere.Add(1) }))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		http.Redirect(w, r, strings.Replace(other.URL, "127.0.0.1", "localhost", 1)+"/api/v1/import/prometheus", http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	d, _, _ := pushDaemon(t, srv.URL+"/api/v1/import/prometheus", "", nil)
	waitFor(t, "a push", 30*time.Second, func() bool {
		at, _, _ := d.pushed.last()
		return !at.IsZero()
	})
	if n := elsewhere.Load(); n != 0 {
		t.Errorf("%d pushes went to the host the endpoint redirected to", n)
	}
	t.Logf("kept: %s", lastPushErr(d))
	if e := lastPushErr(d); !strings.Contains(e, "307") {
		t.Errorf("push error %q does not say why", e)
	}
}

// A push endpoint that sends its error status and then trickles the body:
// the push ends after pushBodyWait, well before its timeout.
func TestPushSlowErrorBodyDoesNotHoldThePush(t *testing.T) {
	arrived := make(chan time.Time, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		select {
		case arrived <- time.Now():
		default:
		}
		w.WriteHeader(http.StatusServiceUnavailable)
		for {
			if _, err := w.Write([]byte("s")); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}))
	defer srv.Close()
	// A push timeout of 20 s: a push held by the body would take that long.
	d, _ := testDaemon(t, fmt.Sprintf("[push]\nurl = %q\ninterval = \"30s\"\ntimeout = \"20s\"\n[[target]]\nname = \"t\"\nurl = \"http://127.0.0.1:1\"\n", srv.URL), nil)
	t.Cleanup(d.pushTransport().CloseIdleConnections)
	start := time.Now()
	d.push(context.Background())
	took := time.Since(start)
	select {
	case <-arrived:
	default:
		t.Fatal("the push never reached the endpoint")
	}
	t.Logf("took %s; kept: %s", took, lastPushErr(d))
	if took > pushBodyWait+5*time.Second {
		t.Errorf("the push took %s (body wait %s, timeout 20s)", took, pushBodyWait)
	}
	if e := lastPushErr(d); !strings.Contains(e, "503") {
		t.Errorf("push error %q", e)
	}
}

// A push the HTTP client could not make is an error that wraps the
// client's own (*url.Error, and the *net.OpError and errno below it), for
// errors.Is and errors.As, while its text names the URL that failed, after
// a redirect the one redirected to, without the user info the client's
// error quotes.
func TestPushErrorWrapsItsCause(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL, _ := url.Parse(dead.URL + "/api/v1/import/prometheus")
	dead.Close()
	dropped := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.URL.Path != "/dropped" {
			http.Redirect(w, r, "/dropped", http.StatusTemporaryRedirect)
			return
		}
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close() // no answer at all
		}
	}))
	defer dropped.Close()
	droppedURL, _ := url.Parse(dropped.URL + "/api/v1/import/prometheus")
	for _, tc := range []struct {
		name  string
		u     *url.URL
		names string // the URL the error must name
		errno error  // what errors.Is must find, nil for no check
	}{
		{"connection refused", deadURL, deadURL.String(), syscall.ECONNREFUSED},
		{"dropped after a redirect", droppedURL, dropped.URL + "/dropped", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := *tc.u
			u.User = url.UserPassword("pushuser-name", "url-password-s3cret")
			d, _ := testDaemon(t, fmt.Sprintf("[push]\nurl = %q\ninterval = \"30s\"\ntimeout = \"5s\"\n[[target]]\nname = \"t\"\nurl = \"http://127.0.0.1:1\"\n", u.String()), nil)
			t.Cleanup(d.pushTransport().CloseIdleConnections)
			err := d.sendPush(context.Background(), d.pushConfig(), "", nil)
			if err == nil {
				t.Fatal("the push succeeded")
			}
			t.Logf("error: %v", err)
			var ue *url.Error
			if !errors.As(err, &ue) {
				t.Errorf("the error does not wrap the client's *url.Error: %#v", err)
			}
			var oe *net.OpError
			if tc.errno != nil && (!errors.As(err, &oe) || !errors.Is(err, tc.errno)) {
				t.Errorf("the error does not wrap a *net.OpError with %v", tc.errno)
			}
			text := err.Error()
			if !strings.HasPrefix(text, "push to "+tc.names+": ") || len(text) > pushErrMax {
				t.Errorf("the error names another URL than %s, or is over %d bytes: %q", tc.names, pushErrMax, text)
			}
			for _, secret := range []string{"pushuser-name", "url-password-s3cret", "***"} {
				if strings.Contains(text, secret) {
					t.Errorf("the error shows %q: %q", secret, text)
				}
			}
		})
	}
}
