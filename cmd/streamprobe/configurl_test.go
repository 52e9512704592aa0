package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/streamprobe/streamprobe/internal/refserver"
	"github.com/streamprobe/streamprobe/internal/testenv/leak"
)

// configServer serves a config over HTTP on loopback as a fleet's config
// server would: an ETag per version, 304 to a matching If-None-Match, and
// on demand a 500 (echoing the bearer token it was sent), or an answer
// later than the client waits. It wants the bearer token.
type configServer struct {
	*httptest.Server
	mu                 sync.Mutex
	body, etag         string
	status             int           // 0: serve the body
	delay              time.Duration // before answering
	token              string
	ok, notMod, failed int
}

func newConfigServer(t *testing.T, token string) *configServer {
	cs := &configServer{token: token}
	cs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cs.mu.Lock()
		body, etag, status, delay := cs.body, cs.etag, cs.status, cs.delay
		cs.mu.Unlock()
		if delay > 0 {
			select {
			case <-time.After(delay):
			case <-r.Context().Done():
				return
			}
		}
		cs.mu.Lock()
		defer cs.mu.Unlock()
		switch {
		case r.Header.Get("Authorization") != "Bearer "+cs.token:
			http.Error(w, "who are you", http.StatusUnauthorized)
		case status != 0:
			cs.failed++
			http.Error(w, "config store down; you sent "+r.Header.Get("Authorization"), status)
		case r.Header.Get("If-None-Match") == etag:
			cs.notMod++
			w.WriteHeader(http.StatusNotModified)
		default:
			cs.ok++
			w.Header().Set("ETag", etag)
			w.Header().Set("Content-Type", "application/toml")
			io.WriteString(w, body)
		}
	}))
	t.Cleanup(cs.Close)
	return cs
}

func (cs *configServer) set(body, etag string, status int, delay time.Duration) {
	cs.mu.Lock()
	cs.body, cs.etag, cs.status, cs.delay = body, etag, status, delay
	cs.mu.Unlock()
}

func (cs *configServer) counts() (ok, notMod, failed int) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.ok, cs.notMod, cs.failed
}

// until polls cond until it holds, within a generous deadline.
func until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
	}
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

var servingAddr = regexp.MustCompile(`msg="serving /metrics and /healthz" addr=(\S+)`)

// A config from a URL, end to end against a real HTTP server on loopback,
// with a bearer token for the config server: the daemon starts from it,
// polls it (304 while its ETag holds: no reload), takes a change, keeps
// the running config through a 500, a fetch that times out and a config
// that does not load (each named in /healthz and the metrics, the probes
// running on), takes a good one again, and after a restart while the
// server is down starts with the last good copy from its cache. No output
// shows the config server's token, which its 500 echoes.
func TestConfigFromURL(t *testing.T) {
	const token = "cfg-token-0123456789abcdefghij"
	tokFile := filepath.Join(t.TempDir(), "token")
	os.WriteFile(tokFile, []byte(token+"\n"), 0o600)
	cache := filepath.Join(t.TempDir(), "cache")
	srv := refserver.NewServer(refserver.Events(refserver.Ms(5, 10), -1))
	t.Cleanup(srv.Close)
	t.Setenv("STREAMPROBE_TEST_REGION", "eu-test")
	conf := func(rollout, extra string) string {
		return fmt.Sprintf("region_env = \"STREAMPROBE_TEST_REGION\"\nlisten = \"127.0.0.1:0\"\n%s[log]\nformat = \"text\"\nlevel = \"debug\"\n[labels]\nrollout = %q\n[[target]]\nname = \"t\"\nurl = %q\nend_data = \"\"\nsamples = [\"short\"]\nevery = \"200ms\"\njitter = \"0s\"\n", extra, rollout, srv.URL)
	}
	cs := newConfigServer(t, token)
	cs.set(conf("v1", ""), `"v1"`, 0, 0)
	args := []string{"-config", cs.URL + "/probe.toml", "-config-poll", "100ms", "-config-timeout", "500ms", "-config-cache", cache, "-config-bearer-file", tokFile}

	start := func() (*lockedBuffer, string, func() int) {
		ctx, cancel := context.WithCancel(context.Background())
		var out, errb lockedBuffer
		done := make(chan int, 1)
		go func() { done <- cmdRun(ctx, args, &out, &errb) }()
		waitFor(t, &errb, "msg=scheduled")
		waitFor(t, &errb, "serving /metrics")
		base := "http://" + servingAddr.FindStringSubmatch(errb.String())[1]
		return &errb, base, func() int { cancel(); return <-done }
	}
	health := func(base string) (int, map[string]any) {
		code, body := get(t, base+"/healthz")
		var h map[string]any
		json.Unmarshal([]byte(body), &h)
		return code, h
	}
	metricHas := func(base, s string) bool {
		_, m := get(t, base+"/metrics")
		return strings.Contains(m, s)
	}
	runs := func() int { return len(srv.Conns()) }

	logs, base, stop := start()
	var outputs []string
	collect := func() {
		for _, p := range []string{"/healthz", "/", "/metrics"} {
			_, b := get(t, base+p)
			outputs = append(outputs, b)
		}
	}
	until(t, "the first runs and the label of v1", func() bool { return metricHas(base, `rollout="v1"`) && runs() > 0 })
	if !metricHas(base, `region="eu-test"`) {
		t.Errorf("region_env did not set the region")
	}
	// 304s while the ETag holds: no reload.
	until(t, "304s", func() bool { _, n, _ := cs.counts(); return n >= 3 })
	if strings.Contains(logs.String(), "config reloaded") {
		t.Errorf("a 304 reloaded the config:\n%s", logs)
	}
	if _, h := health(base); h["config_url"] != cs.URL+"/probe.toml" || h["config_last_fetch_success"] == nil {
		t.Errorf("/healthz does not name the config's fetches: %v", h)
	}
	// A change is taken.
	cs.set(conf("v2", ""), `"v2"`, 0, 0)
	waitFor(t, logs, "config reloaded")
	until(t, "the label of v2", func() bool { return metricHas(base, `rollout="v2"`) })
	until(t, "the cache holds v2", func() bool {
		m, _ := filepath.Glob(filepath.Join(cache, "config-*.toml"))
		b, _ := os.ReadFile(cachedFile(t, cache))
		return len(m) == 1 && strings.Contains(string(b), `rollout = "v2"`)
	})
	// A 500 that echoes the token: the running config stays, the probes
	// run on, /healthz says so after 5 polls, the metric says 0.
	cs.set(conf("v2", ""), `"v2"`, http.StatusInternalServerError, 0)
	until(t, "/healthz 503 naming the 500", func() bool {
		code, h := health(base)
		return code == http.StatusServiceUnavailable && strings.Contains(fmt.Sprint(h["reasons"]), "the config could not be fetched") &&
			strings.Contains(fmt.Sprint(h["config_last_fetch_error"]), "status 500")
	})
	if !metricHas(base, "streamprobe_config_last_fetch_successful{") || !metricHas(base, `streamprobe_config_last_fetch_successful{region="eu-test",host=`) {
		t.Errorf("no fetch metric")
	}
	until(t, "the fetch metric at 0", func() bool {
		_, m := get(t, base+"/metrics")
		return regexp.MustCompile(`streamprobe_config_last_fetch_successful\{[^}]*\} 0\n`).MatchString(m)
	})
	before := runs()
	until(t, "runs during the outage", func() bool { return runs() > before+2 })
	collect()
	// A fetch that times out.
	cs.set(conf("v2", ""), `"v2"`, 0, 3*time.Second)
	until(t, "a timeout named", func() bool {
		_, h := health(base)
		return strings.Contains(fmt.Sprint(h["config_last_fetch_error"]), "timed out after 500ms")
	})
	// A config that does not load: refused, named by the URL, line and
	// key; v2 keeps running.
	cs.set(conf("v3", "bogus = 1\n"), `"v3"`, 0, 0)
	waitFor(t, logs, "reload failed; the old config keeps running")
	until(t, "/healthz naming the refused config", func() bool {
		code, h := health(base)
		return code == http.StatusServiceUnavailable && strings.Contains(fmt.Sprint(h["reasons"]), cs.URL+"/probe.toml:3: bogus: unknown key")
	})
	if !metricHas(base, `rollout="v2"`) || metricHas(base, `rollout="v3"`) {
		t.Errorf("a refused config changed the labels")
	}
	collect()
	// A good one again: taken, healthy.
	cs.set(conf("v4", ""), `"v4"`, 0, 0)
	until(t, "v4 healthy", func() bool { code, _ := health(base); return code == http.StatusOK && metricHas(base, `rollout="v4"`) })
	collect()
	if code := stop(); code != exitOK {
		t.Fatalf("exit %d:\n%s", code, logs)
	}
	outputs = append(outputs, logs.String())

	// A restart with the config server down: the cached v4 runs.
	cs.Close()
	logs, base, stop = start()
	waitFor(t, logs, "starting with the last good config, cached at")
	until(t, "v4 from the cache, and runs", func() bool { return metricHas(base, `rollout="v4"`) && runs() > before+5 })
	if _, h := health(base); h["config_last_fetch_error"] == nil {
		t.Errorf("/healthz does not say the fetch failed: %v", h)
	}
	collect()
	if code := stop(); code != exitOK {
		t.Fatalf("exit %d:\n%s", code, logs)
	}
	outputs = append(outputs, logs.String())
	for _, o := range outputs {
		if p := leak.Any(o, token); p != "" {
			t.Fatalf("an output shows %q of the config server's token:\n%s", p, o)
		}
	}
	if !strings.Contains(strings.Join(outputs, ""), "[redacted]") {
		t.Errorf("the echoed token is not shown redacted anywhere: the walk proves nothing")
	}
}

func cachedFile(t *testing.T, dir string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, "config-*.toml"))
	if len(m) != 1 {
		t.Fatalf("cache %s holds %v", dir, m)
	}
	return m[0]
}

// validate checks a URL config as a file: its problems named by the URL,
// the line and the key; a good one is ok by its URL.
func TestValidateURL(t *testing.T) {
	cs := newConfigServer(t, "tok-validate-0123456789")
	tok := filepath.Join(t.TempDir(), "t")
	os.WriteFile(tok, []byte("tok-validate-0123456789"), 0o600)
	cs.set("[[target]]\nname = \"a\"\nurl = \"http://x\"\nevery = \"soon\"\n", `"1"`, 0, 0)
	code, stdout, stderr := runCmd(t, "validate", "-config", cs.URL+"/p.toml?tenant=k", "-config-bearer-file", tok)
	want := "streamprobe validate: " + cs.URL + `/p.toml:4: target[0].every: "soon" is neither a duration`
	if code != exitUsage || !strings.HasPrefix(stderr, want) {
		t.Errorf("exit %d\n%s%s\nwant %s", code, stdout, stderr, want)
	}
	cs.set("[[target]]\nname = \"a\"\nurl = \"http://x\"\n", `"2"`, 0, 0)
	if code, stdout, stderr := runCmd(t, "validate", "-config", cs.URL+"/p.toml", "-config-bearer-file", tok); code != exitOK || stdout != cs.URL+"/p.toml: ok (1 targets, 3 jobs)\n" {
		t.Errorf("exit %d\n%s%s", code, stdout, stderr)
	}
	if code, _, stderr := runCmd(t, "validate", "-config", cs.URL+"/p.toml"); code != exitUsage || !strings.Contains(stderr, "status 401") {
		t.Errorf("without the token: exit %d %s", code, stderr)
	}
	if code, _, stderr := runCmd(t, "validate", "-config", "http://192.0.2.1/p.toml"); code != exitUsage || !strings.Contains(stderr, "plain http only on loopback") {
		t.Errorf("http off loopback: exit %d %s", code, stderr)
	}
}
